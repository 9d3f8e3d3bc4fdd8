//===- FuseHorizontal.cpp - one GEMM for Q/K/V and for gate/up ------------===//
//
//   q = linear(x, Wq) [rotary]      qkv = linear(x, pack(Wq, Wk, Wv))
//   k = linear(x, Wk) [rotary]  →   qkv = rotary(qkv) {rotated_heads = q + kv heads}
//   v = linear(x, Wv)               o = attention(qkv)
//   o = attention(q, k, v)
//
//   gated_activation(linear(x, Wg), linear(x, Wu)) → gated_activation(linear(x, pack(Wg, Wu)))
//
// A model that already projects in one GEMM (Phi-3's qkv_proj, gate_up_proj)
// splits or slices its output; the consumers then read the packed tensor:
//
//   attention([rotary](part0(t)), [rotary](part1(t)), part2(t))
//       →   attention([rotary {rotated_heads = q + kv heads}](t))
//   gated_activation(part0(t), part1(t)) → gated_activation(t)
//
//   part_i = split(t, last)#i or slice(t, last axis, constant bounds, step 1),
//   consecutive and covering t's last dim
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace infer::graph {
#define GEN_PASS_DEF_FUSEHORIZONTALPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// Linears that can share one GEMM: same input and layout, one use each, no
/// residual, biases on all or none.
bool packable(ArrayRef<LinearOp> linears) {
  LinearOp first = linears.front();
  for (LinearOp linear : linears) {
    // Weights the model brings quantized (graph.dequantize) stay one a linear.
    if (!linear || !linear->hasOneUse() || linear.getResidual() ||
        linear.getWeight().getDefiningOp<DequantizeOp>() || linear.getInput() != first.getInput() ||
        linear.getTransposeWeight() != first.getTransposeWeight() ||
        bool(linear.getBias()) != bool(first.getBias()) || !rankOf(linear.getResult()) ||
        !staticDim(linear.getResult(), -1) ||
        cast<TensorType>(linear.getWeight().getType()).getElementType() !=
            cast<TensorType>(first.getWeight().getType()).getElementType())
      return false;
  }
  return true;
}

Value packWeights(OpBuilder &builder, Location loc, ValueRange weights, int64_t axis) {
  auto first = cast<RankedTensorType>(weights.front().getType());
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value weight : weights)
    shape[axis] += cast<RankedTensorType>(weight.getType()).getDimSize(axis);
  OpBuilder::InsertionGuard guard(builder);
  setInsertionAfterOperands(builder, weights);
  return PackWeightsOp::create(builder, loc, RankedTensorType::get(shape, first.getElementType()),
                               weights, builder.getI64IntegerAttr(axis));
}

/// One linear computing all of `linears` side by side in the last dim.
LinearOp packLinears(OpBuilder &builder, ArrayRef<LinearOp> linears) {
  LinearOp first = linears.front();
  Location loc = first.getLoc();
  SmallVector<Value> weights, biases;
  int64_t features = 0;
  for (LinearOp linear : linears) {
    weights.push_back(linear.getWeight());
    if (linear.getBias())
      biases.push_back(linear.getBias());
    features += *staticDim(linear.getResult(), -1);
  }
  Value weight = packWeights(builder, loc, weights, first.getTransposeWeight() ? 0 : 1);
  Value bias = biases.empty() ? Value() : packWeights(builder, loc, biases, 0);
  auto type = cast<RankedTensorType>(first.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = features;
  return LinearOp::create(builder, loc, RankedTensorType::get(shape, type.getElementType()),
                          first.getInput(), weight, bias, Value(), first.getTransposeWeightAttr());
}

/// The rotary applied to `value`, and the linear under it.
std::pair<RotaryOp, LinearOp> projection(Value value) {
  auto rotary = value.getDefiningOp<RotaryOp>();
  if (rotary) {
    if (!rotary->hasOneUse() || rotary.getRotatedHeads() != rotary.getNumHeads())
      return {RotaryOp(), LinearOp()};
    value = rotary.getInput();
  }
  return {rotary, value.getDefiningOp<LinearOp>()};
}

bool sameRotation(RotaryOp a, RotaryOp b) {
  return a.getInvFreq() == b.getInvFreq() && a.getCosCache() == b.getCosCache() &&
         a.getSinCache() == b.getSinCache() && a.getPositions() == b.getPositions() &&
         a.getHeadDim() == b.getHeadDim() && a.getRotaryDim() == b.getRotaryDim() &&
         a.getInterleaved() == b.getInterleaved();
}

/// A piece [offset, offset + size) of `source`'s last dim.
struct LastDimPart {
  Value source;
  int64_t offset = 0, size = 0;
};

/// `value` as a part of a larger tensor: a result of a split along the last
/// axis, or a slice of the last axis with constant bounds and step 1.
std::optional<LastDimPart> lastDimPart(Value value) {
  std::optional<int64_t> rank = rankOf(value), size = staticDim(value, -1);
  if (!rank || !size)
    return std::nullopt;
  if (auto split = value.getDefiningOp<SplitOp>()) {
    if (int64_t(split.getAxis()) != *rank - 1)
      return std::nullopt;
    SmallVector<int64_t> sizes;
    for (Value result : split.getResults()) {
      std::optional<int64_t> resultSize = staticDim(result, -1);
      if (!resultSize)
        return std::nullopt;
      sizes.push_back(*resultSize);
    }
    if (split.getSplit() && getConstantInts(split.getSplit()) != std::optional(sizes))
      return std::nullopt;
    unsigned index = cast<OpResult>(value).getResultNumber();
    int64_t offset = 0;
    for (unsigned i = 0; i < index; ++i)
      offset += sizes[i];
    return LastDimPart{split.getInput(), offset, *size};
  }
  if (auto slice = value.getDefiningOp<SliceOp>()) {
    auto starts = getConstantInts(slice.getStarts()), ends = getConstantInts(slice.getEnds());
    auto steps = getConstantInts(slice.getSteps());
    std::optional<int64_t> dim = staticDim(slice.getData(), -1);
    if (!starts || !ends || !steps || !dim || starts->size() != 1 || ends->size() != 1 ||
        steps->size() != 1 || (*steps)[0] != 1 || !isLastAxis(slice.getAxes(), slice.getData()))
      return std::nullopt;
    int64_t begin = (*starts)[0], stop = (*ends)[0];
    if (begin < 0)
      begin += *dim;
    if (stop < 0)
      stop += *dim;
    stop = std::min(stop, *dim);
    if (begin < 0 || stop - begin != *size)
      return std::nullopt;
    return LastDimPart{slice.getData(), begin, *size};
  }
  return std::nullopt;
}

/// The tensor `parts` cut into consecutive pieces of `sizes`, covering all
/// of its last dim; null if they are not that.
Value packedSource(ArrayRef<Value> parts, ArrayRef<int64_t> sizes) {
  Value source;
  int64_t offset = 0;
  for (auto [value, size] : llvm::zip_equal(parts, sizes)) {
    std::optional<LastDimPart> part = lastDimPart(value);
    if (!part || part->offset != offset || part->size != size || (source && part->source != source))
      return Value();
    source = part->source;
    offset += size;
  }
  return staticDim(source, -1) == offset ? source : Value();
}

/// Erases the ops defining `values` that nothing reads any more (a split
/// defines several of them: each op once).
void eraseUnused(ArrayRef<Value> values) {
  llvm::SmallSetVector<Operation *, 4> ops;
  for (Value value : values)
    if (Operation *op = value.getDefiningOp())
      ops.insert(op);
  for (Operation *op : ops)
    if (op->use_empty())
      op->erase();
}

/// Replaces `attention` by the same attention of `packed` [q | k | v] (the
/// packed heads rotated by one rotary when qRotary is set, built at
/// `builder`'s point).
void replaceWithPacked(OpBuilder &builder, AttentionOp attention,
                       RotaryOp qRotary, Value packed) {
  int64_t heads = attention.getNumHeads(), kvHeads = attention.getNumKvHeads();
  if (qRotary)
    packed = RotaryOp::create(
        builder, qRotary.getLoc(), packed.getType(), packed,
        qRotary.getInvFreq(), qRotary.getCosCache(), qRotary.getSinCache(),
        qRotary.getPositions(), builder.getI64IntegerAttr(heads + 2 * kvHeads),
        builder.getI64IntegerAttr(heads + kvHeads), qRotary.getHeadDimAttr(),
        qRotary.getRotaryDimAttr(), qRotary.getInterleavedAttr());
  builder.setInsertionPoint(attention);
  auto fused =
      AttentionOp::create(builder, attention.getLoc(), attention.getType(),
                          ValueRange{packed}, attention->getAttrs());
  attention.replaceAllUsesWith(fused.getResult());
  attention.erase();
}

/// attention([rotary](q), [rotary](k), v) with q, k, v consecutive parts of
/// one tensor (a model that already projects QKV in one GEMM) → attention
/// of that tensor, its Q and K heads rotated by one rotary.
bool usePackedParts(AttentionOp attention) {
  ValueRange inputs = attention.getInputs();
  int64_t heads = attention.getNumHeads(), kvHeads = attention.getNumKvHeads();
  int64_t q = heads * attention.getHeadDim(), kv = kvHeads * attention.getHeadDim();
  auto qRotary = inputs[0].getDefiningOp<RotaryOp>();
  auto kRotary = inputs[1].getDefiningOp<RotaryOp>();
  if (bool(qRotary) != bool(kRotary))
    return false;
  Value qPart = inputs[0], kPart = inputs[1], vPart = inputs[2];
  if (qRotary) {
    if (!qRotary->hasOneUse() || !kRotary->hasOneUse() || !sameRotation(qRotary, kRotary) ||
        int64_t(qRotary.getNumHeads()) != heads || int64_t(kRotary.getNumHeads()) != kvHeads ||
        int64_t(qRotary.getRotatedHeads()) != heads || int64_t(kRotary.getRotatedHeads()) != kvHeads)
      return false;
    qPart = qRotary.getInput();
    kPart = kRotary.getInput();
  }
  Value packed = packedSource({qPart, kPart, vPart}, {q, kv, kv});
  if (!packed)
    return false;
  OpBuilder builder(attention);
  replaceWithPacked(builder, attention, qRotary, packed);
  for (RotaryOp rotary : {qRotary, kRotary})
    if (rotary)
      rotary.erase();
  eraseUnused({qPart, kPart, vPart});
  return true;
}

void fuseQkv(AttentionOp attention) {
  if (attention.getInputs().size() != 3 || usePackedParts(attention))
    return;
  auto [qRotary, q] = projection(attention.getInputs()[0]);
  auto [kRotary, k] = projection(attention.getInputs()[1]);
  auto v = attention.getInputs()[2].getDefiningOp<LinearOp>();
  if (!q || !k || !v || bool(qRotary) != bool(kRotary) || !packable({q, k, v}))
    return;
  if (qRotary && !sameRotation(qRotary, kRotary))
    return;
  // Everything the packed ops read dominates the attention: build them there.
  OpBuilder builder(attention);
  LinearOp qkv = packLinears(builder, {q, k, v});
  replaceWithPacked(builder, attention, qRotary, qkv.getResult());
  for (Operation *op : {qRotary.getOperation(), kRotary.getOperation()})
    if (op)
      op->erase();
  for (LinearOp linear : {q, k, v})
    linear.erase();
}

/// gated_activation(gate, up) with gate and up the two halves of one tensor
/// (a fused gate_up projection) → gated_activation(that tensor).
bool usePackedGateUp(GatedActivationOp activation) {
  Value gate = activation.getInputs()[0], up = activation.getInputs()[1];
  std::optional<int64_t> size = staticDim(gate, -1);
  Value packed = size ? packedSource({gate, up}, {*size, *size}) : Value();
  if (!packed)
    return false;
  OpBuilder builder(activation);
  auto fused = GatedActivationOp::create(builder, activation.getLoc(), activation.getType(),
                                         ValueRange{packed}, activation.getActivationAttr());
  activation.replaceAllUsesWith(fused.getResult());
  activation.erase();
  eraseUnused({gate, up});
  return true;
}

void fuseGateUp(GatedActivationOp activation) {
  if (activation.getInputs().size() != 2 || usePackedGateUp(activation))
    return;
  auto gate = activation.getInputs()[0].getDefiningOp<LinearOp>();
  auto up = activation.getInputs()[1].getDefiningOp<LinearOp>();
  if (!gate || !up || !packable({gate, up}) ||
      staticDim(gate.getResult(), -1) != staticDim(up.getResult(), -1))
    return;
  OpBuilder builder(activation);
  LinearOp gateUp = packLinears(builder, {gate, up});
  builder.setInsertionPoint(activation);
  auto fused = GatedActivationOp::create(builder, activation.getLoc(), activation.getType(),
                                         ValueRange{gateUp.getResult()},
                                         activation.getActivationAttr());
  activation.replaceAllUsesWith(fused.getResult());
  activation.erase();
  gate.erase();
  up.erase();
}

struct FuseHorizontalPass : public infer::graph::impl::FuseHorizontalPassBase<FuseHorizontalPass> {
  void runOnOperation() override {
    SmallVector<AttentionOp> attentions;
    getOperation().walk([&](AttentionOp op) { attentions.push_back(op); });
    for (AttentionOp attention : attentions)
      fuseQkv(attention);
    SmallVector<GatedActivationOp> activations;
    getOperation().walk([&](GatedActivationOp op) { activations.push_back(op); });
    for (GatedActivationOp activation : activations)
      fuseGateUp(activation);
  }
};

} // namespace
