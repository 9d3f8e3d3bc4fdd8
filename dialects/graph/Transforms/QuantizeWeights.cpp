//===- QuantizeWeights.cpp - linear → quantized_linear of quantize_weight -===//
//
// The weights are quantized by the artifact writer (graph.quantize_weight is
// a compile-time layout like graph.pack_weights); this pass only decides
// which linears are quantized and how, so --emit=optimized shows it.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/Passes.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace infer::graph {
#define GEN_PASS_DEF_QUANTIZEWEIGHTSPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// Whether `linear`'s result reaches the function's results without passing
/// another linear: the LM head (and anything after the last layer).
bool isOutputProjection(LinearOp linear) {
  SmallVector<Operation *> work(linear->getUsers().begin(), linear->getUsers().end());
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!seen.insert(op).second || isa<LinearOp>(op))
      continue;
    if (op->hasTrait<OpTrait::IsTerminator>())
      return true;
    for (Operation *user : op->getUsers())
      work.push_back(user);
  }
  return false;
}

bool isCompileTimeWeight(Value weight) {
  auto type = dyn_cast<RankedTensorType>(weight.getType());
  return type && type.getRank() == 2 && type.hasStaticShape() &&
         isa<FloatType>(type.getElementType()) &&
         isa_and_nonnull<WeightOp, PackWeightsOp>(weight.getDefiningOp());
}

struct QuantizeWeightsPass
    : public infer::graph::impl::QuantizeWeightsPassBase<QuantizeWeightsPass> {
  using QuantizeWeightsPassBase::QuantizeWeightsPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (scheme != "int4" && scheme != "fp8") {
      func.emitError() << "--quantize " << scheme << ": unknown scheme (expected int4 or fp8)";
      return signalPassFailure();
    }
    int64_t group = scheme == "int4" ? int64_t(groupSize) : 0;
    if (scheme == "int4" && (group <= 0 || group % 2)) {
      func.emitError() << "--group-size " << group << " must be a positive even number";
      return signalPassFailure();
    }
    SmallVector<LinearOp> linears;
    func.walk([&](LinearOp linear) {
      if (isCompileTimeWeight(linear.getWeight()) && (lmHead || !isOutputProjection(linear)))
        linears.push_back(linear);
    });
    for (LinearOp linear : linears) {
      auto weight = cast<RankedTensorType>(linear.getWeight().getType());
      bool transposed = linear.getTransposeWeight();
      int64_t n = weight.getDimSize(transposed ? 0 : 1), k = weight.getDimSize(transposed ? 1 : 0);
      if (group && k % group) {
        linear.emitError() << "--quantize int4 --group-size " << group
                           << ": this linear's k = " << k << " is not a multiple of the group size";
        return signalPassFailure();
      }
      OpBuilder builder(linear);
      Location loc = linear.getLoc();
      auto bytes = builder.getIntegerType(8, /*isSigned=*/false);
      auto qType = RankedTensorType::get({n, group ? k / 2 : k}, bytes);
      auto scaleType = group ? RankedTensorType::get({n, k / group}, builder.getF32Type())
                             : RankedTensorType::get({n}, builder.getF32Type());
      auto quantized = QuantizeWeightOp::create(
          builder, loc, TypeRange{qType, scaleType}, linear.getWeight(),
          /*input_scale=*/Value(), /*clip=*/Value(), builder.getStringAttr(scheme),
          builder.getI64IntegerAttr(group), transposed ? UnitAttr() : builder.getUnitAttr());
      auto replacement = QuantizedLinearOp::create(
          builder, loc, linear.getType(), linear.getInput(), quantized.getQ(),
          quantized.getScales(), linear.getBias(), linear.getResidual(), /*input_scale=*/Value(),
          /*zeros=*/Value(), builder.getStringAttr(scheme), builder.getI64IntegerAttr(group));
      linear.replaceAllUsesWith(replacement.getResult());
      linear.erase();
    }
  }
};

} // namespace
