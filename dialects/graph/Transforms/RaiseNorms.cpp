//===- RaiseNorms.cpp - decomposed RMSNorm → graph.rms_norm ---------------===//
//
// Exporters write RMSNorm as
//   w * (x * reciprocal(sqrt(reduce_mean(x^2, last) + eps)))
// with the square as Pow or Mul, the inverse root as Reciprocal(Sqrt) or a Div,
// and the weight on either side or as (1 + w) for Gemma. Norms of transposed
// heads move above the transpose.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISENORMSPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// x when `square` is x^2 (Pow by 2 or x*x).
Value squaredValue(Value square) {
  if (auto pow = square.getDefiningOp<PowOp>(); pow && isSplat(pow.getRhs(), 2.0))
    return pow.getLhs();
  if (auto mul = square.getDefiningOp<MulOp>(); mul && mul.getLhs() == mul.getRhs())
    return mul.getLhs();
  return Value();
}

/// Matches `sqrt(reduce_mean(x^2, last, keepdims) + eps)`; returns x and eps.
std::optional<std::pair<Value, double>> matchRootMeanSquare(Value root) {
  auto sqrt = root.getDefiningOp<SqrtOp>();
  if (!sqrt)
    return std::nullopt;
  auto add = sqrt.getInput().getDefiningOp<AddOp>();
  auto parts = commutedOperands(add, [](Value v) { return splatValue(v).has_value(); });
  if (!parts)
    return std::nullopt;
  auto mean = parts->second.getDefiningOp<ReduceMeanOp>();
  if (!mean || !mean.getKeepdims() || !mean.getAxes())
    return std::nullopt;
  Value x = squaredValue(mean.getInput());
  if (!x || !isLastAxis(mean.getAxes(), x))
    return std::nullopt;
  return std::make_pair(x, *splatValue(parts->first));
}

/// Matches the normalised x: x * reciprocal(rms), x / rms; returns x and eps.
std::optional<std::pair<Value, double>> matchNormalized(Value normalized) {
  if (auto div = normalized.getDefiningOp<DivOp>()) {
    auto rms = matchRootMeanSquare(div.getRhs());
    if (rms && rms->first == div.getLhs())
      return rms;
    return std::nullopt;
  }
  auto mul = normalized.getDefiningOp<MulOp>();
  if (!mul)
    return std::nullopt;
  for (auto [x, inverse] : {std::make_pair(mul.getLhs(), mul.getRhs()),
                            std::make_pair(mul.getRhs(), mul.getLhs())}) {
    Value rootValue;
    if (auto reciprocal = inverse.getDefiningOp<ReciprocalOp>())
      rootValue = reciprocal.getInput();
    else if (auto div = inverse.getDefiningOp<DivOp>(); div && isSplat(div.getLhs(), 1.0))
      rootValue = div.getRhs();
    if (!rootValue)
      continue;
    auto rms = matchRootMeanSquare(rootValue);
    if (rms && rms->first == x)
      return rms;
  }
  return std::nullopt;
}

/// A rank-1 weight of the normalised dim, or (1 + weight) for Gemma.
std::optional<std::pair<Value, double>> matchScale(Value scale, Value x) {
  std::optional<int64_t> features = staticDim(x, -1);
  auto isScaleVector = [&](Value v) {
    return isWeight(v) && rankOf(v) == 1 && features && staticDim(v, 0) == features;
  };
  if (isScaleVector(scale))
    return std::make_pair(scale, 0.0);
  auto add = scale.getDefiningOp<AddOp>();
  auto parts = commutedOperands(add, [](Value v) { return isSplat(v, 1.0); });
  if (parts && isScaleVector(parts->second))
    return std::make_pair(parts->second, 1.0);
  return std::nullopt;
}

struct RaiseRmsNorm : public OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (auto [scaleValue, normalized] : {std::make_pair(op.getLhs(), op.getRhs()),
                                          std::make_pair(op.getRhs(), op.getLhs())}) {
      // Low-precision exports normalise in f32 between two casts:
      //   w * cast<bf16>(cast<f32>(x) * rsqrt(...)).
      if (auto cast = normalized.getDefiningOp<CastOp>())
        normalized = cast.getInput();
      auto rms = matchNormalized(normalized);
      if (!rms)
        continue;
      auto [x, epsilon] = *rms;
      if (auto cast = x.getDefiningOp<CastOp>(); cast && cast.getInput().getType() == op.getType())
        x = cast.getInput();
      auto scale = matchScale(scaleValue, x);
      if (!scale || x.getType() != op.getType())
        continue;
      rewriter.replaceOpWithNewOp<RmsNormOp>(op, op.getType(), x, scale->first,
                                             rewriter.getF32FloatAttr(epsilon),
                                             rewriter.getF32FloatAttr(scale->second));
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not the scale of an RMSNorm");
  }
};

/// x - mean(x, last, keepdims) → x.
Value centeredValue(Value centered) {
  auto sub = centered.getDefiningOp<SubOp>();
  auto mean = sub ? sub.getRhs().getDefiningOp<ReduceMeanOp>() : ReduceMeanOp();
  if (!mean || mean.getInput() != sub.getLhs() || !mean.getKeepdims() || !mean.getAxes() ||
      !isLastAxis(mean.getAxes(), sub.getLhs()))
    return Value();
  return sub.getLhs();
}

/// (x - mean) / sqrt(mean((x - mean)^2) + eps) → {x, eps}: LayerNorm as
/// exporters before opset 17 write it.
std::optional<std::pair<Value, double>> matchStandardized(Value value) {
  auto div = value.getDefiningOp<DivOp>();
  if (!div)
    return std::nullopt;
  Value x = centeredValue(div.getLhs());
  auto rms = x ? matchRootMeanSquare(div.getRhs()) : std::nullopt;
  if (!rms || rms->first != div.getLhs())
    return std::nullopt;
  return std::make_pair(x, rms->second);
}

/// standardized(x) * w [+ b] with w, b weight vectors → layer_normalization.
struct RaiseLayerNorm : public OpRewritePattern<MulOp> {
  // Ahead of RaiseRmsNorm, which would otherwise take (x - mean) as its x.
  explicit RaiseLayerNorm(MLIRContext *context) : OpRewritePattern(context, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(MulOp op, PatternRewriter &rewriter) const override {
    for (auto [scale, standardized] : {std::make_pair(op.getLhs(), op.getRhs()),
                                       std::make_pair(op.getRhs(), op.getLhs())}) {
      auto match = matchStandardized(standardized);
      if (!match || match->first.getType() != op.getType())
        continue;
      Value x = match->first;
      std::optional<int64_t> features = staticDim(x, -1);
      if (!isWeight(scale) || rankOf(scale) != 1 || !features || staticDim(scale, 0) != features)
        continue;
      // A bias add of a weight vector joins the op.
      Value bias;
      Operation *replaced = op;
      if (op->hasOneUse())
        if (auto add = dyn_cast<AddOp>(*op->getUsers().begin())) {
          Value other = add.getLhs() == op.getResult() ? add.getRhs() : add.getLhs();
          if (isWeight(other) && rankOf(other) == 1 && staticDim(other, 0) == features &&
              add.getType() == op.getType()) {
            bias = other;
            replaced = add;
          }
        }
      rewriter.setInsertionPoint(replaced);
      Value norm = LayerNormOp::create(rewriter, replaced->getLoc(), op.getType(), x, scale, bias,
                                       rewriter.getI64IntegerAttr(*rankOf(x) - 1),
                                       rewriter.getF32FloatAttr(match->second));
      rewriter.replaceOp(replaced, norm);
      if (replaced != op.getOperation())
        rewriter.eraseOp(op);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not the scale of a decomposed LayerNorm");
  }
};

/// norm(transpose(x)) → transpose(norm(x)) when the transpose keeps the last
/// axis, which the norm reduces over (Gemma3's q/k norms of [b, h, s, d]
/// heads): the norm then meets the projection's token-major rows and the
/// transposes around it cancel (ComposeTransposes).
template <typename NormOp>
struct HoistNormAboveTranspose : public OpRewritePattern<NormOp> {
  using OpRewritePattern<NormOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(NormOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op->getOperand(0).template getDefiningOp<TransposeOp>();
    auto inputType =
        transpose ? dyn_cast<RankedTensorType>(transpose.getInput().getType())
                  : RankedTensorType();
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    if (!inputType || !resultType)
      return rewriter.notifyMatchFailure(op,
                                         "not a norm of a ranked transpose");
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t rank = int64_t(perm.size());
    if (perm.back() != rank - 1)
      return rewriter.notifyMatchFailure(op,
                                         "the transpose moves the last axis");
    if constexpr (std::is_same_v<NormOp, LayerNormOp>)
      if (int64_t axis = int64_t(op.getAxis()); axis != rank - 1 && axis != -1)
        return rewriter.notifyMatchFailure(op, "not over the last axis");
    Operation *norm = rewriter.clone(*op);
    norm->setOperand(0, transpose.getInput());
    norm->getResult(0).setType(inputType.clone(resultType.getElementType()));
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, op.getType(), norm->getResult(0), transpose.getPermAttr());
    return success();
  }
};

/// transpose(transpose(x, p), q) → transpose(x, p∘q), or x when that is the
/// identity and the types agree.
struct ComposeTransposes : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<TransposeOp>();
    if (!inner)
      return rewriter.notifyMatchFailure(op, "not a transpose of a transpose");
    SmallVector<int64_t> composed;
    bool identity = true;
    for (auto [i, axis] : llvm::enumerate(op.getPerm())) {
      composed.push_back(inner.getPerm()[size_t(axis)]);
      identity &= composed.back() == int64_t(i);
    }
    if (identity && inner.getInput().getType() == op.getType()) {
      rewriter.replaceOp(op, inner.getInput());
      return success();
    }
    if (identity)
      return rewriter.notifyMatchFailure(op, "the identity changes the type");
    rewriter.replaceOpWithNewOp<TransposeOp>(
        op, op.getType(), inner.getInput(),
        rewriter.getDenseI64ArrayAttr(composed));
    return success();
  }
};

/// rms_norm(x - reduce_mean(x, last, keepdims)) → layer_normalization(x)
/// without bias: the RMS of the centred x is its standard deviation (Cohere's
/// and OLMo's bias-free LayerNorm, which RaiseRmsNorm reads as an RMSNorm of
/// x - mean). The backends then have no per-row mean inside an elementwise
/// group to compute.
struct CenteredRmsNormIsLayerNorm : public OpRewritePattern<RmsNormOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RmsNormOp op, PatternRewriter &rewriter) const override {
    auto sub = op.getInput().getDefiningOp<SubOp>();
    auto mean = sub ? sub.getRhs().getDefiningOp<ReduceMeanOp>() : ReduceMeanOp();
    if (!mean || mean.getInput() != sub.getLhs() || !mean.getKeepdims() || !mean.getAxes() ||
        !isLastAxis(mean.getAxes(), sub.getLhs()) || op.getWeightOffset().convertToFloat() != 0 ||
        sub.getLhs().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "not an RMSNorm of x - mean(x)");
    Value x = sub.getLhs();
    rewriter.replaceOpWithNewOp<LayerNormOp>(op, op.getType(), x, op.getWeight(), Value(),
                                             rewriter.getI64IntegerAttr(*rankOf(x) - 1),
                                             op.getEpsilonAttr());
    return success();
  }
};

struct RaiseNormsPass : public infer::graph::impl::RaiseNormsPassBase<RaiseNormsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseNormsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void infer::graph::populateRaiseNormsPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseRmsNorm, RaiseLayerNorm, HoistNormAboveTranspose<RmsNormOp>,
               HoistNormAboveTranspose<LayerNormOp>, ComposeTransposes, CenteredRmsNormIsLayerNorm>(
      patterns.getContext());
}
