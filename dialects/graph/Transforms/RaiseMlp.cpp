//===- RaiseMlp.cpp - gated MLP activations, decomposed GELU, embeddings --===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/Validation.h"

#include "mlir/IR/IRMapping.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace infer::graph {
#define GEN_PASS_DEF_RAISEMLPPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// g when `value` is silu(g) = g * sigmoid(g).
Value matchSilu(Value value) {
  auto mul = value.getDefiningOp<MulOp>();
  if (!mul)
    return Value();
  auto sigmoid = mul.getRhs().getDefiningOp<SigmoidOp>();
  if (sigmoid && sigmoid.getInput() == mul.getLhs())
    return mul.getLhs();
  sigmoid = mul.getLhs().getDefiningOp<SigmoidOp>();
  if (sigmoid && sigmoid.getInput() == mul.getRhs())
    return mul.getRhs();
  return Value();
}

/// {g, activation name} when `value` is an activation of g that a gated MLP uses.
std::optional<std::pair<Value, StringRef>> matchGateActivation(Value value) {
  if (Value gate = matchSilu(value))
    return std::make_pair(gate, StringRef("silu"));
  if (auto gelu = value.getDefiningOp<GeluOp>())
    return std::make_pair(gelu.getInput(), gelu.getApproximate() == "tanh" ? StringRef("gelu_tanh")
                                                                             : StringRef("gelu"));
  return std::nullopt;
}

/// mul(act(g), u) with g and u of one type → gated_activation(g, u).
struct RaiseGatedActivation : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (auto [activated, up] : {std::make_pair(op.getLhs(), op.getRhs()),
                                 std::make_pair(op.getRhs(), op.getLhs())}) {
      auto gate = matchGateActivation(activated);
      if (!gate || gate->first.getType() != up.getType() || up.getType() != op.getType())
        continue;
      // The up projection must not itself be the gate (x * silu(x) is not gated).
      if (up == gate->first)
        continue;
      rewriter.replaceOpWithNewOp<GatedActivationOp>(op, op.getType(), ValueRange{gate->first, up},
                                                     rewriter.getStringAttr(gate->second));
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not act(gate) * up");
  }
};

/// The other operand of a commutative `op` whose one operand is the splat c.
Value operandBeside(Operation *op, double c) {
  auto parts = commutedOperands(op, [&](Value v) { return isSplat(v, c); });
  return parts ? parts->second : Value();
}

/// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))) or
/// 0.5 * x * (1 + erf(x / sqrt(2))) → graph.gelu.
struct RaiseDecomposedGelu : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  static std::optional<std::pair<Value, StringRef>> matchInner(Value onePlus) {
    Value inner = operandBeside(onePlus.getDefiningOp<AddOp>(), 1.0);
    if (!inner)
      return std::nullopt;
    if (auto tanh = inner.getDefiningOp<TanhOp>()) {
      Value sum = operandBeside(tanh.getInput().getDefiningOp<MulOp>(), std::sqrt(2.0 / M_PI));
      auto add = sum ? sum.getDefiningOp<AddOp>() : AddOp();
      if (!add)
        return std::nullopt;
      for (auto [x, cubic] : {std::make_pair(add.getLhs(), add.getRhs()),
                              std::make_pair(add.getRhs(), add.getLhs())}) {
        Value cube = operandBeside(cubic.getDefiningOp<MulOp>(), 0.044715);
        auto pow = cube ? cube.getDefiningOp<PowOp>() : PowOp();
        if (pow && pow.getLhs() == x && isSplat(pow.getRhs(), 3.0))
          return std::make_pair(x, StringRef("tanh"));
      }
      return std::nullopt;
    }
    if (auto erf = inner.getDefiningOp<ErfOp>()) {
      Operation *scale = erf.getInput().getDefiningOp();
      if (auto div = dyn_cast_or_null<DivOp>(scale); div && isSplat(div.getRhs(), std::sqrt(2.0)))
        return std::make_pair(div.getLhs(), StringRef("none"));
      if (Value x = operandBeside(scale, 1.0 / std::sqrt(2.0)))
        return std::make_pair(x, StringRef("none"));
    }
    return std::nullopt;
  }

  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (auto [lhs, rhs] : {std::make_pair(op.getLhs(), op.getRhs()),
                            std::make_pair(op.getRhs(), op.getLhs())}) {
      // (0.5 * x) * (1 + inner), or (x * (1 + inner)) * 0.5 as TorchScript writes it.
      Value x = operandBeside(lhs.getDefiningOp<MulOp>(), 0.5);
      Value onePlus = rhs;
      if (!x && isSplat(rhs, 0.5))
        if (auto product = lhs.getDefiningOp<MulOp>())
          for (auto [candidate, other] : {std::make_pair(product.getLhs(), product.getRhs()),
                                          std::make_pair(product.getRhs(), product.getLhs())})
            if (auto inner = matchInner(other); inner && inner->first == candidate) {
              x = candidate;
              onePlus = other;
              break;
            }
      auto inner = x ? matchInner(onePlus) : std::nullopt;
      if (!inner || inner->first != x || x.getType() != op.getType())
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(op, op.getType(), x, rewriter.getStringAttr(inner->second));
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a decomposed GELU");
  }
};

/// gather(table, ids, axis 0) of a 2-D weight by integer ids → embedding.
struct RaiseEmbedding : public OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    if (op.getAxis() != 0 || !isWeight(op.getData()) || rankOf(op.getData()) != 2)
      return rewriter.notifyMatchFailure(op, "not rows of a 2-D weight");
    // Gather wraps negative ids; embedding does not. Token ids are never
    // negative, but only graph inputs (or values derived from them without
    // arithmetic) are known to be token ids.
    Value ids = op.getIndices();
    while (auto reshape = ids.getDefiningOp<ReshapeOp>())
      ids = reshape.getData();
    if (!isa<BlockArgument>(ids))
      return rewriter.notifyMatchFailure(op, "indices are not the model's token ids");
    rewriter.replaceOpWithNewOp<EmbeddingOp>(op, op.getType(), op.getData(), op.getIndices(), Value(),
                                             rewriter.getI64IntegerAttr(0));
    return success();
  }
};

/// embedding(wte, ids) + gather(wpe, offset + [0, seq)) → embedding with
/// learned positions. The positions must come from the sequence length alone
/// (checked by evaluation) and the rewrite is proven on the interpreter.
struct RaisePositionEmbedding : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  /// The offset when `indices` is offset + t for token t, at every size tried.
  static std::optional<int64_t> positionOffset(func::FuncOp func, Value indices) {
    std::optional<int64_t> offset;
    for (auto [batch, seq] : {std::pair<int64_t, int64_t>{1, 3}, {2, 5}}) {
      auto values = evaluateShapeOnly(func, indices, batch, seq);
      if (!values || values->shape.empty() || values->shape.back() != seq)
        return std::nullopt;
      for (size_t i = 0; i < values->values.size(); ++i) {
        int64_t expected = int64_t(values->values[i]) - int64_t(i % seq);
        if (offset && *offset != expected)
          return std::nullopt;
        offset = expected;
      }
    }
    return offset;
  }

  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (auto [tokens, positions] : {std::make_pair(op.getLhs(), op.getRhs()),
                                     std::make_pair(op.getRhs(), op.getLhs())}) {
      auto embedding = tokens.getDefiningOp<EmbeddingOp>();
      auto gather = positions.getDefiningOp<GatherOp>();
      if (!embedding || embedding.getPositionTable() || !gather ||
          gather.getAxis() != 0 || !isWeight(gather.getData()) || rankOf(gather.getData()) != 2 ||
          !gather.getData().getDefiningOp() || !embedding.getTable().getDefiningOp())
        continue;
      auto func = op->getParentOfType<func::FuncOp>();
      std::optional<int64_t> offset = positionOffset(func, gather.getIndices());
      if (!offset)
        continue;
      Value ids = embedding.getIds();
      auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
        IRMapping mapping;
        Value table = builder.clone(*embedding.getTable().getDefiningOp(), mapping)->getResult(0);
        Value positionTable = builder.clone(*gather.getData().getDefiningOp(), mapping)->getResult(0);
        return EmbeddingOp::create(builder, loc, op.getType(), table, inputs[0], positionTable,
                                   builder.getI64IntegerAttr(*offset));
      };
      if (!validateReplacement(func, {ids}, op.getResult(), build))
        continue;
      rewriter.replaceOpWithNewOp<EmbeddingOp>(op, op.getType(), embedding.getTable(), ids,
                                               gather.getData(), rewriter.getI64IntegerAttr(*offset));
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not token plus learned position embeddings");
  }
};

struct RaiseMlpPass : public infer::graph::impl::RaiseMlpPassBase<RaiseMlpPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseMlpPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void infer::graph::populateRaiseMlpPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseGatedActivation, RaiseDecomposedGelu, RaiseEmbedding, RaisePositionEmbedding>(
      patterns.getContext());
}
