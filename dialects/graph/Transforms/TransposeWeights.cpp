//===- TransposeWeights.cpp - linear weights stored [n, k] ----------------===//
//
//   linear(x, W [k, n])                 →   linear(x, pack(W){transpose} [n, k])
//                                               {transpose_weight}
//   linear(x, pack(A, B){axis} [k, n])  →   linear(x, pack(A, B){axis, transpose} [n, k])
//                                               {transpose_weight}
//
// The transpose happens once, when the artifact is written; the GEMM only
// changes which index it strides.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_TRANSPOSEWEIGHTSPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// True when every use of `weight` is the weight operand of a linear in the
/// [k, n] layout: then all its readers can switch layout together.
bool onlyUntransposedLinearWeight(Value weight) {
  if (weight.use_empty())
    return false;
  return llvm::all_of(weight.getUses(), [](OpOperand &use) {
    auto linear = dyn_cast<LinearOp>(use.getOwner());
    return linear && &use == &linear.getWeightMutable() && !linear.getTransposeWeight();
  });
}

/// A rank-2 weight the artifact can store transposed: a graph.weight, or a
/// graph.pack_weights not yet transposed.
bool isTransposableWeight(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() != 2)
    return false;
  if (value.getDefiningOp<WeightOp>())
    return true;
  auto pack = value.getDefiningOp<PackWeightsOp>();
  return pack && !pack.getTranspose();
}

void transposeWeight(Value weight) {
  auto pack = weight.getDefiningOp<PackWeightsOp>();
  SmallVector<Value> sources =
      pack ? SmallVector<Value>(pack.getWeights()) : SmallVector<Value>{weight};
  int64_t axis = pack ? pack.getAxis() : 0;
  auto type = cast<RankedTensorType>(weight.getType());
  auto transposedType =
      RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)}, type.getElementType());
  // Taken before the new pack, which reads a lone weight too.
  SmallVector<LinearOp> linears;
  for (Operation *user : weight.getUsers())
    linears.push_back(cast<LinearOp>(user));
  OpBuilder builder(weight.getContext());
  setInsertionAfterOperands(builder, sources);
  auto transposed = PackWeightsOp::create(builder, weight.getLoc(), transposedType, sources,
                                          builder.getI64IntegerAttr(axis), builder.getUnitAttr());
  for (LinearOp linear : linears) {
    linear.getWeightMutable().assign(transposed.getResult());
    linear.setTransposeWeight(true);
  }
  if (pack && pack->use_empty())
    pack.erase();
}

struct TransposeWeightsPass
    : public infer::graph::impl::TransposeWeightsPassBase<TransposeWeightsPass> {
  void runOnOperation() override {
    // Collected first: rewriting adds packs and erases old ones.
    SmallVector<Value> weights;
    getOperation().walk([&](Operation *op) {
      if (isa<WeightOp, PackWeightsOp>(op) && isTransposableWeight(op->getResult(0)) &&
          onlyUntransposedLinearWeight(op->getResult(0)))
        weights.push_back(op->getResult(0));
    });
    // A graph.weight read by a pack is not collected (the pack reads it), so
    // no pack erased here is in the list.
    for (Value weight : weights)
      transposeWeight(weight);
  }
};

} // namespace
