//===- SelectKernels.cpp - each launch's decode GEMV and prefill kernels --===//
//
// Decides, on the planned program, which of the cuda backend's GEMV kernels
// each exec.gemm has and on what grid, and which tensor-core prefill kernel
// each exec.kv_attention has; Passes.td states the rules. The shapes each
// kernel runs are the kernels' own (runtime/cuda/abi), so the pass and
// codegen agree; codegen only reads the attributes.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/IR/ExecOps.h"
#include "dialects/exec/Transforms/LaunchNeighbours.h"
#include "dialects/exec/Transforms/Passes.h"
#include "runtime/cuda/abi/GemvGeometry.h"
#include "runtime/cuda/abi/KvPrefillGeometry.h"
#include "runtime/cuda/abi/QuantizedFp8Gemm.h"
#include "runtime/cuda/abi/QuantizedGemvGeometry.h"

#include "mlir/IR/Builders.h"

namespace infer::exec {
#define GEN_PASS_DEF_SELECTKERNELSPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;
namespace kernels = infer::kernels;

namespace {

void selectGemv(GemmOp gemm, int64_t mmaMinTokens, Builder &builder) {
  gemm.removeGemvGridAttr();
  gemm.removeRowGemvRowsAttr();
  gemm.removeMmaGemvAttr();
  const int64_t k = int64_t(gemm.getK()), n = int64_t(gemm.getN());
  const int transposed = gemm.getTransposeWeight();
  const int bytes = elementBytesOf(elementTypeOf(gemm.getOut(), Type()));
  if (k <= 0 || n <= 0 || bytes == 0)
    return;
  const kernels::GemvGrid grid = kernels::gemvGrid(k, n, transposed);
  gemm.setGemvGridAttr(
      builder.getDenseI64ArrayAttr({int64_t(grid.x), int64_t(grid.y), int64_t(grid.z)}));
  if (kernels::gemvMultiRowsSupported(k, n, transposed, bytes))
    gemm.setRowGemvRowsAttr(builder.getI64IntegerAttr(kernels::kGemvRowsMultiRows));
  else if (kernels::gemvRowsSupported(k, n, transposed, bytes))
    gemm.setRowGemvRowsAttr(builder.getI64IntegerAttr(1));
  const int64_t rows = kernels::gemvMmaMaxRows(k, n, transposed, bytes);
  if (rows >= 2 && mmaMinTokens > 0 && mmaMinTokens <= rows)
    gemm.setMmaGemvAttr(
        builder.getDenseI64ArrayAttr({mmaMinTokens, rows, int64_t(kernels::gemvMmaSplits(n))}));
}

void selectPrefill(KvAttentionOp attention, bool prefillKernels, bool fp8CachePrefill,
                   Builder &builder) {
  attention.removePrefillKernelAttr();
  if (!prefillKernels)
    return;
  const int64_t headDim = int64_t(attention.getHeadDim());
  const int bytes = elementBytesOf(elementTypeOf(attention.getOut(), Type()));
  const bool fp8Cache = attention.getKCacheScale().convertToDouble() > 0 ||
                        attention.getVCacheScale().convertToDouble() > 0;
  // A window and ALiBi run on infer_kv_attention's general path alone; an
  // FP8 cache's prefill on the mma.sync kernel (decoding E4M3 as it loads).
  if (int64_t(attention.getWindow()) > 0 || attention.getAlibi().convertToDouble() != 0.0 ||
      (fp8Cache && !fp8CachePrefill) || !kernels::kvPrefillSupported(headDim, bytes))
    return;
  attention.setPrefillKernelAttr(builder.getStringAttr(
      !fp8Cache && kernels::kvPrefillWgmmaSupported(headDim, bytes) ? "wgmma" : "mma"));
}

void selectQuantized(QuantizedGemmOp gemm, bool quantizedMma, bool fp8Mma, bool fp8Gemm,
                     Builder &builder) {
  gemm.removeMmaBlockKAttr();
  gemm.removeFp8GemmAttr();
  const int bytes = elementBytesOf(elementTypeOf(gemm.getOut(), Type()));
  const int64_t k = int64_t(gemm.getK()), n = int64_t(gemm.getN());
  const int blockK = kernels::quantizedMmaBlockK(gemm.getScheme() == "int4", bytes, k,
                                                 int64_t(gemm.getGroupSize()));
  if (quantizedMma && blockK > 0 && n > 0)
    gemm.setMmaBlockKAttr(builder.getI64IntegerAttr(blockK));
  if (quantizedMma && fp8Mma &&
      kernels::quantizedFp8MmaSupported(gemm.getScheme() == "fp8", bytes, k, n))
    gemm.setMmaBlockKAttr(builder.getI64IntegerAttr(kernels::kFp8MmaStepK));
  if (fp8Gemm && kernels::quantizedFp8GemmSupported(gemm.getScheme() == "fp8", bytes, k, n))
    gemm.setFp8Gemm(true);
}

struct SelectKernelsPass : public infer::exec::impl::SelectKernelsPassBase<SelectKernelsPass> {
  using SelectKernelsPassBase::SelectKernelsPassBase;

  void runOnOperation() override {
    if (mmaGemvMinTokens < 0 || mmaGemvMinTokens > kernels::kGemvMmaRows) {
      getOperation().emitError() << "mma-gemv-min-tokens must be 0 (never) to "
                                 << kernels::kGemvMmaRows << ", not " << int64_t(mmaGemvMinTokens);
      return signalPassFailure();
    }
    Builder builder(&getContext());
    getOperation().walk([&](Operation *op) {
      if (auto gemm = dyn_cast<GemmOp>(op))
        selectGemv(gemm, mmaGemvMinTokens, builder);
      else if (auto attention = dyn_cast<KvAttentionOp>(op))
        selectPrefill(attention, prefillKernels, fp8CachePrefill, builder);
      else if (auto quantized = dyn_cast<QuantizedGemmOp>(op))
        selectQuantized(quantized, quantizedMma, fp8Mma, fp8Gemm, builder);
    });
  }
};

} // namespace
