//===- RaiseAttention.cpp - rotary embeddings and attention → fused ops ---===//
//
// Both rewrites match loosely and prove themselves on the reference
// interpreter (Validation.h) before they change the graph:
//
//  rotary:    x*cos + rotate_half(x)*sin, x = heads of a token-major X
//             [b, s, h*d] (any reshape/transpose chain), cos/sin computed from
//             the positions 0..s-1 and an inv_freq constant
//         →   transpose(reshape(graph.rotary(X)))
//
//  attention: softmax(q·kᵀ·scale (+ mask)) · v with q, k, v heads of
//             token-major tensors (GQA repeat-kv, K transposes, scales on q,
//             k or the scores, NaN guards), followed by the merge of heads
//             back to [b, s, h*d]
//         →   graph.attention(Q, K, V) {causal iff the mask is causal}
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/Validation.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace infer::graph {
#define GEN_PASS_DEF_RAISEATTENTIONPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// Follows pure data movement (and multiplications by scalar constants, whose
/// product goes to `scale`) back to the tensor it starts from.
Value dataMovementRoot(Value value, double *scale = nullptr) {
  while (Operation *op = value.getDefiningOp()) {
    if (isa<TransposeOp, ReshapeOp, UnsqueezeOp, SqueezeOp, ExpandOp>(op)) {
      value = op->getOperand(0);
      continue;
    }
    if (scale && isa<MulOp>(op)) {
      auto parts = commutedOperands(op, [](Value v) { return splatValue(v).has_value(); });
      if (parts) {
        *scale *= *splatValue(parts->first);
        value = parts->second;
        continue;
      }
    }
    if (auto div = dyn_cast<DivOp>(op); scale && div && splatValue(div.getRhs())) {
      *scale /= *splatValue(div.getRhs());
      value = div.getLhs();
      continue;
    }
    break;
  }
  return value;
}

/// A token-major tensor [?, ?, features] with static features.
std::optional<int64_t> tokenMajorFeatures(Value value) {
  if (rankOf(value) != 3)
    return std::nullopt;
  return staticDim(value, 2);
}

/// Splits token-major [b, s, h*d] into heads [b, h, s, d].
Value splitHeads(OpBuilder &builder, Location loc, Value tokens, int64_t heads, int64_t headDim) {
  Type element = cast<TensorType>(tokens.getType()).getElementType();
  auto target = ConstantOp::create(
      builder, loc,
      DenseIntElementsAttr::get(RankedTensorType::get({4}, builder.getI64Type()),
                                ArrayRef<int64_t>{0, 0, heads, headDim}));
  auto split = ReshapeOp::create(builder, loc,
                                 RankedTensorType::get({kDynamic, kDynamic, heads, headDim}, element),
                                 tokens, target, builder.getBoolAttr(false));
  return TransposeOp::create(builder, loc,
                             RankedTensorType::get({kDynamic, heads, kDynamic, headDim}, element),
                             split, builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
}

//===----------------------------------------------------------------------===//
// Rotary
//===----------------------------------------------------------------------===//

/// Float constants of `count` elements in the backward slice of `value`:
/// candidates for inv_freq.
SmallVector<DenseElementsAttr> frequencyCandidates(Value value, int64_t count) {
  SmallVector<DenseElementsAttr> candidates;
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  if (Operation *def = value.getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  auto vectorType = RankedTensorType::get({count}, Float32Type::get(value.getContext()));
  for (Operation *op : slice) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
          dense && dense.getElementType().isF32() && dense.getNumElements() == count && !dense.isSplat())
        candidates.push_back(dense.reshape(vectorType));
    } else if (auto weight = dyn_cast<WeightOp>(op)) {
      // Larger models keep inv_freq as an initializer big enough to be a weight.
      auto type = cast<ShapedType>(weight.getType());
      ArrayRef<char> data = weight.getValue().getData();
      if (type.getElementType().isF32() && type.getNumElements() == count &&
          data.size() == size_t(count) * sizeof(float))
        candidates.push_back(DenseElementsAttr::getFromRawBuffer(vectorType, data));
    }
  }
  return candidates;
}

/// rotate_half(x) = concat(-x[..., d/2:], x[..., :d/2]) on the last axis.
bool isRotateHalfOf(Value value, Value x) {
  auto concat = value.getDefiningOp<ConcatOp>();
  if (!concat || concat.getInputs().size() != 2 || concat.getAxis() != rankOf(x).value_or(0) - 1)
    return false;
  auto neg = concat.getInputs()[0].getDefiningOp<NegOp>();
  auto firstHalf = concat.getInputs()[1].getDefiningOp<SliceOp>();
  auto secondHalf = neg ? neg.getInput().getDefiningOp<SliceOp>() : SliceOp();
  return firstHalf && secondHalf && firstHalf.getData() == x && secondHalf.getData() == x;
}

struct RotaryMatch {
  Value x, cos, sin;
};

std::optional<RotaryMatch> matchRotary(AddOp add) {
  for (auto [plain, rotated] : {std::make_pair(add.getLhs(), add.getRhs()),
                                std::make_pair(add.getRhs(), add.getLhs())}) {
    auto plainMul = plain.getDefiningOp<MulOp>();
    auto rotatedMul = rotated.getDefiningOp<MulOp>();
    if (!plainMul || !rotatedMul)
      continue;
    for (auto [x, cos] : {std::make_pair(plainMul.getLhs(), plainMul.getRhs()),
                          std::make_pair(plainMul.getRhs(), plainMul.getLhs())}) {
      for (auto [half, sin] : {std::make_pair(rotatedMul.getLhs(), rotatedMul.getRhs()),
                               std::make_pair(rotatedMul.getRhs(), rotatedMul.getLhs())}) {
        if (rankOf(x) == 4 && isRotateHalfOf(half, x))
          return RotaryMatch{x, cos, sin};
      }
    }
  }
  return std::nullopt;
}

bool raiseRotary(func::FuncOp func, AddOp add) {
  std::optional<RotaryMatch> match = matchRotary(add);
  if (!match || add.getType() != match->x.getType())
    return false;
  std::optional<int64_t> heads = staticDim(match->x, 1), headDim = staticDim(match->x, 3);
  Value tokens = dataMovementRoot(match->x);
  std::optional<int64_t> features = tokenMajorFeatures(tokens);
  if (!heads || !headDim || !features || *features != *heads * *headDim || *headDim % 2)
    return false;
  Type element = cast<TensorType>(tokens.getType()).getElementType();
  for (DenseElementsAttr invFreq : frequencyCandidates(match->cos, *headDim / 2)) {
    for (bool interleaved : {false, true}) {
      auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
        Value freqs = ConstantOp::create(builder, loc, cast<ElementsAttr>(invFreq));
        Value rotated = RotaryOp::create(
            builder, loc, inputs[0].getType(), inputs[0], freqs, Value(), Value(), Value(),
            builder.getI64IntegerAttr(*heads), builder.getI64IntegerAttr(*heads),
            builder.getI64IntegerAttr(*headDim), builder.getI64IntegerAttr(*headDim),
            builder.getBoolAttr(interleaved));
        (void)element;
        return splitHeads(builder, loc, rotated, *heads, *headDim);
      };
      if (!validateReplacement(func, {tokens}, add.getResult(), build))
        continue;
      OpBuilder builder(add);
      Value replacement = build(builder, add.getLoc(), ValueRange{tokens});
      if (replacement.getType() != add.getType())
        replacement = CastOp::create(builder, add.getLoc(), add.getType(), replacement);
      add.replaceAllUsesWith(replacement);
      return true;
    }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttentionMatch {
  Value q, k, v;          // token-major sources
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  double scale = 1.0;
  double softcap = 0.0;
  bool masked = false;
  Value mask;
  Value output;           // token-major [b, s, heads * headDim] the rewrite replaces
};

/// The value the heads output `o` [b, h, s, d] is merged into: token-major
/// [b, s, h*d], or flattened [b*s, h*d] (exporters of Conv1D-style models).
Value mergedHeads(Value o, int64_t features) {
  if (!o.hasOneUse())
    return Value();
  auto transpose = dyn_cast<TransposeOp>(*o.getUsers().begin());
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3} ||
      !transpose.getResult().hasOneUse())
    return Value();
  auto reshape = dyn_cast<ReshapeOp>(*transpose.getResult().getUsers().begin());
  if (!reshape || staticDim(reshape.getResult(), -1) != features ||
      (rankOf(reshape.getResult()) != 3 && rankOf(reshape.getResult()) != 2))
    return Value();
  return reshape.getResult();
}

std::optional<AttentionMatch> matchAttention(func::FuncOp func, SoftmaxOp softmax) {
  AttentionMatch match;
  if (rankOf(softmax.getInput()) != 4 || softmax.getAxis() != 3)
    return std::nullopt;
  // Output side: [where(is_nan(p), 0, p)] · v, then merged heads.
  Value probs = softmax.getResult();
  for (Operation *user : probs.getUsers())
    if (auto where = dyn_cast<WhereOp>(user)) {
      auto isNan = where.getCondition().getDefiningOp<IsNaNOp>();
      if (!isNan || isNan.getInput() != probs || !isSplat(where.getX(), 0.0) || where.getY() != probs)
        return std::nullopt;
      probs = where.getResult();
      break;
    }
  if (!probs.hasOneUse())
    return std::nullopt;
  auto pv = dyn_cast<MatMulOp>(*probs.getUsers().begin());
  if (!pv || pv.getLhs() != probs)
    return std::nullopt;

  // Scores: [softcap(] q·kᵀ [* scale] [)] [+ mask].
  Value scores = softmax.getInput();
  if (auto add = scores.getDefiningOp<AddOp>()) {
    for (auto [s, m] : {std::make_pair(add.getLhs(), add.getRhs()),
                        std::make_pair(add.getRhs(), add.getLhs())}) {
      if (s.getDefiningOp<MatMulOp>() || s.getDefiningOp<MulOp>() || s.getDefiningOp<DivOp>()) {
        if (!evaluateShapeOnly(func, m, 1, 2))
          continue;
        scores = s, match.mask = m, match.masked = true;
        break;
      }
    }
    if (!match.masked)
      return std::nullopt;
  }
  if (auto capMul = scores.getDefiningOp<MulOp>()) {
    auto parts = commutedOperands(capMul, [](Value v) { return splatValue(v).has_value(); });
    auto tanh = parts ? parts->second.getDefiningOp<TanhOp>() : TanhOp();
    if (tanh) {
      match.softcap = *splatValue(parts->first);
      Value inner = tanh.getInput();
      if (auto div = inner.getDefiningOp<DivOp>(); div && isSplat(div.getRhs(), match.softcap))
        scores = div.getLhs();
      else if (Value x = commutedOperands(inner.getDefiningOp(), [&](Value v) {
                           return isSplat(v, 1.0 / match.softcap);
                         }).value_or(std::make_pair(Value(), Value())).second)
        scores = x;
      else
        return std::nullopt;
    }
  }
  double scale = 1.0;
  Value product = dataMovementRoot(scores, &scale);
  auto qk = product.getDefiningOp<MatMulOp>();
  if (!qk || rankOf(qk.getLhs()) != 4)
    return std::nullopt;
  std::optional<int64_t> heads = staticDim(qk.getLhs(), 1), headDim = staticDim(qk.getLhs(), 3);
  if (!heads || !headDim)
    return std::nullopt;
  match.q = dataMovementRoot(qk.getLhs(), &scale);
  match.k = dataMovementRoot(qk.getRhs(), &scale);
  match.v = dataMovementRoot(pv.getRhs());
  std::optional<int64_t> qFeatures = tokenMajorFeatures(match.q);
  std::optional<int64_t> kFeatures = tokenMajorFeatures(match.k);
  std::optional<int64_t> vFeatures = tokenMajorFeatures(match.v);
  if (!qFeatures || !kFeatures || !vFeatures || *qFeatures != *heads * *headDim ||
      *kFeatures != *vFeatures || *kFeatures % *headDim || *heads % (*kFeatures / *headDim))
    return std::nullopt;
  match.heads = *heads;
  match.headDim = *headDim;
  match.kvHeads = *kFeatures / *headDim;
  match.scale = scale;
  match.output = mergedHeads(pv.getResult(), *qFeatures);
  if (!match.output)
    return std::nullopt;
  return match;
}

/// The largest plausible window constant in the mask's slice: a sliding
/// window of W tokens looks causal until the sequence is longer than W.
std::optional<int64_t> largestMaskConstant(Value mask) {
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  if (Operation *def = mask.getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  int64_t largest = 0;
  for (Operation *op : slice)
    if (auto values = intElements(op->getNumResults() ? op->getResult(0) : Value()))
      for (int64_t v : *values)
        if (std::llabs(v) < (int64_t(1) << 40))
          largest = std::max<int64_t>(largest, std::llabs(v));
  return largest;
}

bool raiseAttention(func::FuncOp func, SoftmaxOp softmax) {
  std::optional<AttentionMatch> match = matchAttention(func, softmax);
  if (!match)
    return false;
  ValidationOptions options;
  if (match->masked) {
    int64_t window = *largestMaskConstant(match->mask);
    if (window + 2 > 1024)
      return false; // cannot afford to check past a window this large
    if (window + 2 > 17)
      options.sizes.push_back({1, window + 2});
  }
  Type resultType = match->output.getType();
  int64_t features = match->heads * match->headDim;
  Type element = cast<TensorType>(resultType).getElementType();
  auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
    Value attention = AttentionOp::create(
        builder, loc, RankedTensorType::get({kDynamic, kDynamic, features}, element), inputs,
        builder.getI64IntegerAttr(match->heads), builder.getI64IntegerAttr(match->kvHeads),
        builder.getI64IntegerAttr(match->headDim), builder.getF32FloatAttr(match->scale),
        builder.getBoolAttr(match->masked), builder.getF32FloatAttr(match->softcap));
    if (rankOf(match->output) == 3)
      return attention;
    // The model flattens tokens for its output projection; so does this.
    auto target = ConstantOp::create(
        builder, loc,
        DenseIntElementsAttr::get(RankedTensorType::get({2}, builder.getI64Type()),
                                  ArrayRef<int64_t>{-1, features}));
    return ReshapeOp::create(builder, loc, resultType, attention, target, builder.getBoolAttr(false));
  };
  if (!validateReplacement(func, {match->q, match->k, match->v}, match->output, build, options))
    return false;
  Operation *outputOp = match->output.getDefiningOp();
  OpBuilder builder(outputOp);
  Value attention = build(builder, softmax.getLoc(), ValueRange{match->q, match->k, match->v});
  if (attention.getType() != match->output.getType())
    attention = CastOp::create(builder, softmax.getLoc(), match->output.getType(), attention);
  match->output.replaceAllUsesWith(attention);
  return true;
}

void eraseDeadOps(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op != func.getOperation() && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead)) {
      op->erase();
      changed = true;
    }
  }
}

struct RaiseAttentionPass : public infer::graph::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<AddOp> adds;
    func.walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds)
      (void)raiseRotary(func, add);
    eraseDeadOps(func);
    SmallVector<SoftmaxOp> softmaxes;
    func.walk([&](SoftmaxOp softmax) { softmaxes.push_back(softmax); });
    for (SoftmaxOp softmax : softmaxes)
      (void)raiseAttention(func, softmax);
    eraseDeadOps(func);
  }
};

} // namespace
