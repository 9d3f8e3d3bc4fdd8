//===- GemmFusions.cpp - GEMMs that may do their neighbours' work ---------===//
//
// Decides, on the planned program, which exec.gemm's decode GEMV computes the
// rms_norm or gated activation just before it from that launch's inputs
// (`prologue`), and which batch-1 GEMV writes the gated activation after it
// or folds the logits' argmax (`epilogue`); Passes.td states the rules. The cuda codegen only reads
// the attributes.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/IR/ExecOps.h"
#include "dialects/exec/Transforms/LaunchNeighbours.h"
#include "dialects/exec/Transforms/Passes.h"
#include "runtime/cuda/abi/GemvGeometry.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

namespace infer::exec {
#define GEN_PASS_DEF_FOLDGEMMPROLOGUEPASS
#define GEN_PASS_DEF_FOLDGEMMEPILOGUEPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;

namespace {

/// The prologue GEMM `gemm` may compute ("rms_norm", "gated_activation"), or "".
StringRef foldablePrologue(GemmOp gemm, int64_t maxRows, Type weightType) {
  Operation *previous = previousLaunch(gemm);
  Value out, weight;
  SmallVector<Value> reads;
  int64_t features = 0;
  StringRef kind;
  if (auto norm = dyn_cast_or_null<RmsNormOp>(previous)) {
    out = norm.getOut(), weight = norm.getWeight(), features = int64_t(norm.getFeatures());
    reads.push_back(norm.getInput());
    kind = "rms_norm";
  } else if (auto gated = dyn_cast_or_null<GatedActivationOp>(previous)) {
    out = gated.getOut(), features = int64_t(gated.getFeatures());
    llvm::append_range(reads, gated.getInputs());
    kind = "gated_activation";
  } else {
    return "";
  }
  Type type = elementTypeOf(gemm.getOut(), weightType);
  if (out != gemm.getInput() || features != int64_t(gemm.getK()) || !type ||
      elementTypeOf(out, weightType) != type ||
      (weight && elementTypeOf(weight, weightType) != type))
    return "";
  // The GEMV computes the input where the GEMM reads it: nobody else may read it.
  if (!onlyUsedBy(out, previous, gemm))
    return "";
  for (Value read : reads)
    if (!apartUpTo(read, gemm.getOut(), maxRows))
      return "";
  return kind;
}

/// Whether the batch-1 row GEMV (infer_gemv_rows) runs `gemm`.
bool rowGemvRuns(GemmOp gemm) {
  return infer::kernels::gemvRowsSupported(int64_t(gemm.getK()), int64_t(gemm.getN()),
                                           gemm.getTransposeWeight(),
                                           elementBytesOf(elementTypeOf(gemm.getOut(), Type())));
}

/// Whether `gemm` writes the program's one output, the step's logits.
bool writesLogitRows(GemmOp gemm) {
  auto buffer = gemm.getOut().getDefiningOp<BufferOp>();
  auto outputs = llvm::to_vector(gemm->getParentOp()->getRegion(0).getOps<OutputOp>());
  return buffer && buffer.getPerLogitRow() && outputs.size() == 1 &&
         outputs.front().getBuffer() == gemm.getOut();
}

/// Whether GEMM `gemm`'s batch-1 GEMV may write the gated activation after it.
bool foldableEpilogue(GemmOp gemm) {
  auto gated = dyn_cast_or_null<GatedActivationOp>(nextLaunch(gemm));
  if (!gated || gemm.getResidual() || gated.getInputs().size() != 1 ||
      gated.getInputs().front() != gemm.getOut() ||
      int64_t(gemm.getN()) != 2 * int64_t(gated.getFeatures()) ||
      !llvm::is_contained({"silu", "gelu", "gelu_tanh"}, gated.getActivation()))
    return false;
  Type type = elementTypeOf(gemm.getOut(), Type());
  if (!type || elementTypeOf(gated.getOut(), Type()) != type ||
      !onlyUsedBy(gemm.getOut(), gemm, gated))
    return false;
  // What the GEMV reads while it writes the activation's output: its operands,
  // or the prologue launch's inputs in place of its input.
  SmallVector<Value> reads;
  if (gemm.getPrologue()) {
    Operation *previous = previousLaunch(gemm);
    if (!previous)
      return false;
    for (Value operand : previous->getOperands())
      if (operand != gemm.getInput())
        reads.push_back(operand);
  } else {
    reads.push_back(gemm.getInput());
  }
  reads.push_back(gemm.getWeight());
  if (Value bias = gemm.getBias())
    reads.push_back(bias);
  return llvm::all_of(reads, [&](Value read) {
    return !isa_and_nonnull<BufferOp>(read.getDefiningOp()) || apartUpTo(read, gated.getOut(), 1);
  });
}

struct FoldGemmProloguePass
    : public infer::exec::impl::FoldGemmProloguePassBase<FoldGemmProloguePass> {
  using FoldGemmProloguePassBase::FoldGemmProloguePassBase;

  void runOnOperation() override {
    if (maxRows < 1) {
      getOperation().emitError() << "max-rows must be positive, got " << maxRows;
      return signalPassFailure();
    }
    Builder builder(&getContext());
    Type weightType = weightDtype == "fp32"   ? builder.getF32Type()
                      : weightDtype == "bf16" ? builder.getBF16Type()
                      : weightDtype == "fp16" ? builder.getF16Type()
                                              : Type();
    if (!weightDtype.empty() && !weightType) {
      getOperation().emitError() << "weight-dtype must be fp32, bf16 or fp16, got '" << weightDtype
                                 << "'";
      return signalPassFailure();
    }
    getOperation().walk([&](GemmOp gemm) {
      StringRef kind = foldablePrologue(gemm, maxRows, weightType);
      if (kind.empty())
        gemm.removePrologueAttr();
      else
        gemm.setPrologueAttr(builder.getStringAttr(kind));
    });
  }
};

struct FoldGemmEpiloguePass
    : public infer::exec::impl::FoldGemmEpiloguePassBase<FoldGemmEpiloguePass> {
  using FoldGemmEpiloguePassBase::FoldGemmEpiloguePassBase;

  void runOnOperation() override {
    Builder builder(&getContext());
    getOperation().walk([&](GemmOp gemm) {
      StringRef kind = !rowGemvRuns(gemm)                          ? ""
                       : gatedActivation && foldableEpilogue(gemm) ? "gated_activation"
                       : argmax && writesLogitRows(gemm)           ? "argmax"
                                                                   : "";
      if (kind.empty())
        gemm.removeEpilogueAttr();
      else
        gemm.setEpilogueAttr(builder.getStringAttr(kind));
    });
  }
};

} // namespace
