//===- FuseHorizontal.cpp - one GEMM for Q/K/V and for gate/up ------------===//
//
//   q = linear(x, Wq) [rotary]      qkv = linear(x, pack(Wq, Wk, Wv))
//   k = linear(x, Wk) [rotary]  →   qkv = rotary(qkv) {rotated_heads = q + kv heads}
//   v = linear(x, Wv)               o = attention(qkv)
//   o = attention(q, k, v)
//
//   gated_activation(linear(x, Wg), linear(x, Wu)) → gated_activation(linear(x, pack(Wg, Wu)))
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

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
    if (!linear || !linear->hasOneUse() || linear.getResidual() ||
        linear.getInput() != first.getInput() ||
        linear.getTransposeWeight() != first.getTransposeWeight() ||
        bool(linear.getBias()) != bool(first.getBias()) || !rankOf(linear.getResult()) ||
        !staticDim(linear.getResult(), -1) ||
        cast<TensorType>(linear.getWeight().getType()).getElementType() !=
            cast<TensorType>(first.getWeight().getType()).getElementType())
      return false;
  }
  return true;
}

/// Places weight packing beside the weights (the top of the function), after
/// the last one it reads.
void setInsertionAfterOperands(OpBuilder &builder, ValueRange values) {
  Operation *last = nullptr;
  for (Value value : values) {
    Operation *def = value.getDefiningOp();
    if (def && (!last || last->isBeforeInBlock(def)))
      last = def;
  }
  builder.setInsertionPointAfter(last);
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

/// attention(split(x)#0, #1, #2) of x split into q, k, v along its last dim
/// (a model that already projects QKV in one GEMM) → attention(x).
bool usePackedSplit(AttentionOp attention) {
  ValueRange inputs = attention.getInputs();
  auto split = inputs[0].getDefiningOp<SplitOp>();
  if (!split || split.getNumResults() != 3 || split.getAxis() != rankOf(split.getInput()).value_or(0) - 1)
    return false;
  for (int i = 0; i < 3; ++i)
    if (inputs[i] != split.getResult(i))
      return false;
  int64_t q = attention.getNumHeads() * attention.getHeadDim();
  int64_t kv = attention.getNumKvHeads() * attention.getHeadDim();
  SmallVector<int64_t> sizes;
  if (split.getSplit()) {
    auto values = intElements(split.getSplit());
    if (!values)
      return false;
    sizes.assign(values->begin(), values->end());
  } else if (q == kv && staticDim(split.getInput(), -1) == 3 * q) {
    sizes = {q, kv, kv};
  }
  if (sizes != SmallVector<int64_t>{q, kv, kv})
    return false;
  OpBuilder builder(attention);
  auto fused = AttentionOp::create(builder, attention.getLoc(), attention.getType(),
                                   ValueRange{split.getInput()}, attention.getNumHeadsAttr(),
                                   attention.getNumKvHeadsAttr(), attention.getHeadDimAttr(),
                                   attention.getScaleAttr(), attention.getCausalAttr(),
                                   attention.getSoftcapAttr());
  attention.replaceAllUsesWith(fused.getResult());
  attention.erase();
  if (split->use_empty())
    split.erase();
  return true;
}

void fuseQkv(AttentionOp attention) {
  if (attention.getInputs().size() != 3 || usePackedSplit(attention))
    return;
  auto [qRotary, q] = projection(attention.getInputs()[0]);
  auto [kRotary, k] = projection(attention.getInputs()[1]);
  auto v = attention.getInputs()[2].getDefiningOp<LinearOp>();
  if (!q || !k || !v || bool(qRotary) != bool(kRotary) || !packable({q, k, v}))
    return;
  if (qRotary && !sameRotation(qRotary, kRotary))
    return;
  int64_t heads = attention.getNumHeads(), kvHeads = attention.getNumKvHeads();
  // Everything the packed ops read dominates the attention: build them there.
  OpBuilder builder(attention);
  LinearOp qkv = packLinears(builder, {q, k, v});
  Value packed = qkv.getResult();
  if (qRotary) {
    packed = RotaryOp::create(builder, qRotary.getLoc(), packed.getType(), packed,
                              qRotary.getInvFreq(), qRotary.getCosCache(),
                              qRotary.getSinCache(), qRotary.getPositions(),
                              builder.getI64IntegerAttr(heads + 2 * kvHeads),
                              builder.getI64IntegerAttr(heads + kvHeads), qRotary.getHeadDimAttr(),
                              qRotary.getRotaryDimAttr(), qRotary.getInterleavedAttr());
  }
  builder.setInsertionPoint(attention);
  auto fused = AttentionOp::create(builder, attention.getLoc(), attention.getType(), ValueRange{packed},
                                   attention.getNumHeadsAttr(), attention.getNumKvHeadsAttr(),
                                   attention.getHeadDimAttr(), attention.getScaleAttr(),
                                   attention.getCausalAttr(), attention.getSoftcapAttr());
  attention.replaceAllUsesWith(fused.getResult());
  attention.erase();
  for (Operation *op : {qRotary.getOperation(), kRotary.getOperation()})
    if (op)
      op->erase();
  for (LinearOp linear : {q, k, v})
    linear.erase();
}

void fuseGateUp(GatedActivationOp activation) {
  if (activation.getInputs().size() != 2)
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
