//===- RaisePrequantized.cpp - linear of dequantize → quantized_linear ----===//
//
// A model that brings its weights quantized (graph.dequantize, made by the
// ONNX importer) keeps them quantized: the linears reading them become
// quantized GEMMs of the stored integers, scales and zero points.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISEPREQUANTIZEDPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct RaisePrequantizedPass
    : public infer::graph::impl::RaisePrequantizedPassBase<RaisePrequantizedPass> {
  using RaisePrequantizedPassBase::RaisePrequantizedPassBase;

  void runOnOperation() override {
    SmallVector<LinearOp> linears;
    getOperation().walk([&](LinearOp linear) {
      if (linear.getWeight().getDefiningOp<DequantizeOp>())
        linears.push_back(linear);
    });
    for (LinearOp linear : linears) {
      auto weight = linear.getWeight().getDefiningOp<DequantizeOp>();
      // The linear reads [n, k] rows when transpose_weight; the dequantize
      // gives [n, k] without transpose. Anything else puts k across groups.
      if (linear.getTransposeWeight() == weight.getTranspose()) {
        linear.emitError() << "this linear reads a weight the model stores quantized across its "
                              "reduction axis (its quantization groups do not run along k); only "
                              "MatMul's B and MatMulNBits' B layouts are supported";
        return signalPassFailure();
      }
      OpBuilder builder(linear);
      auto replacement = QuantizedLinearOp::create(
          builder, linear.getLoc(), linear.getType(), linear.getInput(), weight.getQ(),
          weight.getScales(), linear.getBias(), linear.getResidual(), /*input_scale=*/Value(),
          weight.getZeros(), weight.getSchemeAttr(), weight.getGroupSizeAttr());
      linear.replaceAllUsesWith(replacement.getResult());
      linear.erase();
    }
    WalkResult walked = getOperation().walk([&](DequantizeOp op) {
      for (Operation *user : op->getUsers()) {
        user->emitError() << "'" << user->getName()
                          << "' reads a weight the model stores quantized (DequantizeLinear or "
                             "MatMulNBits); only MatMul and Gemm weights may be quantized";
        return WalkResult::interrupt();
      }
      op.erase();
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
