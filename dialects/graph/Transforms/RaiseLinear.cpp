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
  // A graph.dequantize is a weight the model brings quantized; RaisePrequantized
  // turns its linears into quantized_linears.
  if ((!isWeight(value) && !value.getDefiningOp<DequantizeOp>()) || rankOf(value) != 2)
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

/// Lifts token-wise ops that an exporter applied to flattened tokens
/// [b*s, H] (Conv1D-style projections, OPT's MLP block) back to [b, s, H]:
///   reshape(f(reshape(x, [-1, H])), [b, s, N]) → f'(x)
/// where f is a chain of linear, layer/RMS norm over the last dim, and
/// elementwise ops. The reshape targets are runtime values, so the rewrite is
/// proven on the interpreter before it is made.
class TokenLifter {
public:
  /// Collects the flatten sources `value` is computed from; false if some op
  /// on the way is not token-wise.
  bool collect(Value value) {
    if (visited.contains(value))
      return true;
    visited.insert(value);
    Operation *op = value.getDefiningOp();
    if (!op || rankOf(value) != 2)
      return false;
    if (auto flatten = dyn_cast<ReshapeOp>(op)) {
      Value x = flatten.getData();
      if (rankOf(x) != 3 || !staticDim(x, -1) || staticDim(x, -1) != staticDim(value, -1))
        return false;
      if (!llvm::is_contained(leaves, x))
        leaves.push_back(x);
      return true;
    }
    if (auto linear = dyn_cast<LinearOp>(op))
      return collect(linear.getInput()) && (!linear.getResidual() || collect(linear.getResidual()));
    if (auto norm = dyn_cast<LayerNormOp>(op))
      return norm.getAxis() == 1 && collect(norm.getInput());
    if (auto norm = dyn_cast<RmsNormOp>(op))
      return collect(norm.getInput());
    if (isa<ReluOp, GeluOp, SigmoidOp, TanhOp, NegOp>(op))
      return collect(op->getOperand(0));
    if (isa<AddOp, MulOp, SubOp>(op))
      return op->getOperand(0).getType() == op->getOperand(1).getType() &&
             collect(op->getOperand(0)) && collect(op->getOperand(1));
    return false;
  }

  SmallVector<Value> leaves;

  /// Rebuilds `value` on [b, s, ...] tensors; `inputs` stand for `leaves`,
  /// `weight` materialises a weight operand where the build happens.
  Value build(OpBuilder &builder, Value value, ValueRange inputs,
              const std::function<Value(Value)> &weight) {
    llvm::DenseMap<Value, Value> lifted;
    for (auto [leaf, input] : llvm::zip(leaves, inputs))
      lifted[leaf] = input;
    return lift(builder, value, lifted, weight);
  }

private:
  Value lift(OpBuilder &builder, Value value, llvm::DenseMap<Value, Value> &lifted,
             const std::function<Value(Value)> &weight) {
    Operation *op = value.getDefiningOp();
    if (auto flatten = dyn_cast<ReshapeOp>(op))
      return lifted.lookup(flatten.getData());
    auto flat = cast<RankedTensorType>(value.getType());
    auto type = RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, flat.getDimSize(1)},
                                      flat.getElementType());
    Location loc = op->getLoc();
    auto get = [&](Value v) { return lift(builder, v, lifted, weight); };
    if (auto linear = dyn_cast<LinearOp>(op))
      return LinearOp::create(builder, loc, type, get(linear.getInput()), weight(linear.getWeight()),
                              linear.getBias() ? weight(linear.getBias()) : Value(),
                              linear.getResidual() ? get(linear.getResidual()) : Value(),
                              linear.getTransposeWeightAttr());
    if (auto norm = dyn_cast<LayerNormOp>(op))
      return LayerNormOp::create(builder, loc, type, get(norm.getInput()), weight(norm.getScale()),
                                 norm.getBias() ? weight(norm.getBias()) : Value(),
                                 builder.getI64IntegerAttr(2), norm.getEpsilonAttr());
    if (auto norm = dyn_cast<RmsNormOp>(op))
      return RmsNormOp::create(builder, loc, type, get(norm.getInput()), weight(norm.getWeight()),
                               norm.getEpsilonAttr(), norm.getWeightOffsetAttr());
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(get(operand));
    OperationState state(loc, op->getName(), operands, {type}, op->getAttrs());
    return builder.create(state)->getResult(0);
  }

  llvm::DenseSet<Value> visited;
};

struct LiftFlattenedTokens : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    Value flat = op.getData();
    if (rankOf(op.getResult()) != 3 || rankOf(flat) != 2 || !staticDim(flat, -1) ||
        staticDim(op.getResult(), -1) != staticDim(flat, -1) || isa_and_nonnull<ReshapeOp>(flat.getDefiningOp()))
      return rewriter.notifyMatchFailure(op, "not an unflatten of token-wise work");
    TokenLifter lifter;
    if (!lifter.collect(flat) || lifter.leaves.empty())
      return rewriter.notifyMatchFailure(op, "an op on the way is not token-wise");
    auto cloneWeight = [](OpBuilder &builder) {
      return [&builder](Value weight) -> Value {
        Operation *def = weight.getDefiningOp();
        return def ? builder.clone(*def)->getResult(0) : Value();
      };
    };
    auto buildLifted = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
      Value lifted = lifter.build(builder, flat, inputs, cloneWeight(builder));
      if (lifted && lifted.getType() != op.getType())
        lifted = CastOp::create(builder, loc, op.getType(), lifted);
      return lifted;
    };
    auto func = op->getParentOfType<func::FuncOp>();
    if (!validateReplacement(func, lifter.leaves, op.getResult(), buildLifted))
      return rewriter.notifyMatchFailure(op, "the reshapes do not restore the token dims");
    Value lifted = lifter.build(rewriter, flat, lifter.leaves, [](Value w) { return w; });
    if (lifted.getType() != op.getType())
      lifted = CastOp::create(rewriter, op.getLoc(), op.getType(), lifted);
    rewriter.replaceOp(op, lifted);
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
  patterns.add<RaiseMatMul, RaiseGemm, AbsorbBiasAdd, LiftFlattenedTokens>(patterns.getContext());
}
