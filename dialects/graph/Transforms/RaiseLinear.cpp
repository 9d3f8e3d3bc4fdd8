//===- RaiseLinear.cpp - MatMul/Gemm by a weight → graph.linear -----------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/Validation.h"

#include "mlir/IR/IRMapping.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISELINEARPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// A rank-2 weight, possibly behind a 2-D Transpose: {weight, transposed}.
std::optional<std::pair<Value, bool>> matchWeight(Value value, bool transposed) {
  if (auto transpose = value.getDefiningOp<TransposeOp>()) {
    if (transpose.getPerm() != ArrayRef<int64_t>{1, 0})
      return std::nullopt;
    value = transpose.getInput();
    transposed = !transposed;
  }
  if (!isWeight(value) || rankOf(value) != 2)
    return std::nullopt;
  return std::make_pair(value, transposed);
}

struct RaiseMatMul : public OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp op, PatternRewriter &rewriter) const override {
    auto weight = matchWeight(op.getRhs(), false);
    if (!weight || !rankOf(op.getLhs()) || *rankOf(op.getLhs()) < 2)
      return rewriter.notifyMatchFailure(op, "not an activation times a 2-D weight");
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), op.getLhs(), weight->first, Value(),
                                          Value(), rewriter.getBoolAttr(weight->second));
    return success();
  }
};

struct RaiseGemm : public OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp op, PatternRewriter &rewriter) const override {
    if (op.getTransA() || op.getAlpha().convertToFloat() != 1.0f)
      return rewriter.notifyMatchFailure(op, "transposed input or alpha != 1");
    auto weight = matchWeight(op.getB(), op.getTransB());
    if (!weight)
      return rewriter.notifyMatchFailure(op, "B is not a weight");
    Value bias = op.getC();
    if (bias) {
      std::optional<int64_t> n = staticDim(op.getResult(), -1);
      if (op.getBeta().convertToFloat() != 1.0f || !isWeight(bias) || rankOf(bias) != 1 ||
          !n || staticDim(bias, 0) != n)
        return rewriter.notifyMatchFailure(op, "C is not a bias vector");
    }
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), op.getA(), weight->first, bias, Value(),
                                          rewriter.getBoolAttr(weight->second));
    return success();
  }
};

/// add(linear(x, W), b) with b a weight vector of N entries → linear with bias.
struct AbsorbBiasAdd : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (auto [product, bias] : {std::make_pair(op.getLhs(), op.getRhs()),
                                 std::make_pair(op.getRhs(), op.getLhs())}) {
      auto linear = product.getDefiningOp<LinearOp>();
      if (!linear || linear.getBias() || linear.getResidual() || !linear->hasOneUse())
        continue;
      std::optional<int64_t> n = staticDim(linear.getResult(), -1);
      if (!isWeight(bias) || rankOf(bias) != 1 || !n || staticDim(bias, 0) != n ||
          linear.getType() != op.getType())
        continue;
      rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), linear.getInput(), linear.getWeight(),
                                            bias, Value(), linear.getTransposeWeightAttr());
      rewriter.eraseOp(linear);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a bias add after a linear");
  }
};

/// reshape(linear(reshape(x, [-1, K])), [b, s, N]) → linear(x): Conv1D-style
/// exports flatten tokens around each GEMM; linear takes [..., K] directly.
/// The rewrite is checked on the interpreter (the reshape targets are runtime
/// values).
struct FoldFlattenAroundLinear : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    auto linear = op.getData().getDefiningOp<LinearOp>();
    auto flatten = linear ? linear.getInput().getDefiningOp<ReshapeOp>() : ReshapeOp();
    if (!flatten || !linear->hasOneUse() || linear.getResidual() || rankOf(linear.getResult()) != 2 ||
        rankOf(op.getResult()) != 3 || rankOf(flatten.getData()) != 3 ||
        staticDim(flatten.getData(), -1) != staticDim(flatten.getResult(), -1) ||
        !staticDim(op.getResult(), -1) || staticDim(op.getResult(), -1) != staticDim(linear.getResult(), -1))
      return rewriter.notifyMatchFailure(op, "not a flatten around a linear");
    Value x = flatten.getData();
    auto x3 = cast<RankedTensorType>(x.getType());
    auto type = RankedTensorType::get({x3.getDimSize(0), x3.getDimSize(1), *staticDim(op.getResult(), -1)},
                                      x3.getElementType());
    auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
      // Weights are cloned into the probe by value: rebuild them from the originals.
      IRMapping mapping;
      Value weight = builder.clone(*linear.getWeight().getDefiningOp(), mapping)->getResult(0);
      Value bias = linear.getBias() ? builder.clone(*linear.getBias().getDefiningOp(), mapping)->getResult(0)
                                    : Value();
      Value result = LinearOp::create(builder, loc, type, inputs[0], weight, bias, Value(),
                                      linear.getTransposeWeightAttr());
      if (result.getType() != op.getType())
        result = CastOp::create(builder, loc, op.getType(), result);
      return result;
    };
    auto func = op->getParentOfType<func::FuncOp>();
    if (!linear.getWeight().getDefiningOp() || (linear.getBias() && !linear.getBias().getDefiningOp()) ||
        !validateReplacement(func, {x}, op.getResult(), build))
      return rewriter.notifyMatchFailure(op, "the reshapes do not restore the token dims");
    Value replacement = LinearOp::create(rewriter, op.getLoc(), type, x, linear.getWeight(),
                                         linear.getBias(), Value(), linear.getTransposeWeightAttr());
    if (replacement.getType() != op.getType())
      replacement = CastOp::create(rewriter, op.getLoc(), op.getType(), replacement);
    rewriter.replaceOp(op, replacement);
    return success();
  }
};

struct RaiseLinearPass : public infer::graph::impl::RaiseLinearPassBase<RaiseLinearPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseLinearPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void infer::graph::populateRaiseLinearPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseMatMul, RaiseGemm, AbsorbBiasAdd, FoldFlattenAroundLinear>(patterns.getContext());
}
