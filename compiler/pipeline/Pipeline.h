//===- Pipeline.h - the graph optimization pipeline -------------*- C++ -*-===//
//
// One options struct builds the pipeline that `infer-compile --emit=optimized`
// runs and `infer-opt --infer-optimize` registers. It is a list of named
// stages so that --verify-numerics can check the numbers after each one.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_PIPELINE_PIPELINE_H
#define INFER_COMPILER_PIPELINE_PIPELINE_H

#include "runtime/cuda/abi/GemvGeometry.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace infer::pipeline {

struct PipelineOptions {
  /// Test only: insert a deliberately wrong rewrite as stage "test-break-numerics"
  /// after the raising stage, so tests can see --verify-numerics catch it.
  bool testBreakNumerics = false;
  /// --quantize: "" (none), "int4" or "fp8"; --group-size for int4.
  std::string quantize;
  int64_t groupSize = 128;
  /// --quantize-lm-head: the LM head is quantized with the other linears.
  bool quantizeLmHead = false;
  /// --kv-cache-dtype fp8: the quantize stage also sets the attentions' KV
  /// cache scales (applyKvCacheScales, run by the caller after the stage).
  bool kvCacheFp8 = false;
};

/// The kernel fusions the exec passes may decide (docs/exec.md, "Kernel
/// fusions decided in the IR"); infer-compile's --fuse / --no-fuse.
struct KernelFusions {
  bool gemmPrologue = true;   ///< --infer-fold-gemm-prologue
  bool gatedEpilogue = true;  ///< --infer-fold-gemm-epilogue{gated-activation}
  bool argmax = true;         ///< --infer-fold-gemm-epilogue{argmax}
  bool kvDecode = true;       ///< --infer-fold-kv-rotary{decode}
  bool rotaryKvWrite = false; ///< --infer-fold-kv-rotary{kv-write}
  bool qkvDecode = true;      ///< --infer-fold-qkv-decode
  bool identityGather = true; ///< --infer-elide-identity-gather
  /// --infer-select-kernels{mma-gemv-min-tokens}: the fewest tokens of a
  /// decode step on the tensor-core GEMV, 0 never (GemvGeometry.h).
  int64_t mmaGemvMinTokens = kernels::kGemvMmaMinTokens;
  /// --infer-select-kernels{prefill-kernels}: the paged attentions' tensor-core
  /// prefill kernels.
  bool prefillKernels = true;
  /// --infer-select-kernels{fp8-cache-prefill}: also over an FP8 KV cache.
  bool fp8CachePrefill = true;
  /// --infer-select-kernels{quantized-mma}: int4 GEMMs' tensor-core decode
  /// GEMV (QuantizedGemvGeometry.h).
  bool quantizedMma = true;
  /// --infer-select-kernels{fp8-mma}: fp8 GEMMs' tensor-core decode GEMV
  /// (QuantizedGemvGeometry.h).
  bool fp8Mma = true;
  /// --infer-select-kernels{fp8-gemm}: fp8 GEMMs' large steps on cuBLASLt's
  /// FP8 GEMM (QuantizedFp8Gemm.h).
  bool fp8Gemm = true;

  /// The names --fuse and --no-fuse take, comma-separated.
  static const char *names();
  /// Turns fusion `name` on or off; false for an unknown name.
  bool set(const std::string &name, bool on);
};

/// A named group of passes; the unit --verify-numerics reports on.
struct PipelineStage {
  std::string name;
  std::function<void(mlir::OpPassManager &)> addPasses;
  /// Changes the numbers on purpose (quantization): --verify-numerics reports
  /// its error without holding it to the tolerance, and checks the stages
  /// after it against its outputs.
  bool approximates = false;
};

/// The module's only func.func (the interpreter's entry), or null when it
/// holds none or several.
mlir::func::FuncOp singleFunction(mlir::ModuleOp module);

/// The stages of the optimization pipeline, in order.
std::vector<PipelineStage> optimizationStages(const PipelineOptions &options);

/// Adds every stage's passes to `pm` (which runs on a module).
void buildOptimizationPipeline(mlir::OpPassManager &pm, const PipelineOptions &options);

/// Lowers the optimized module's entry function to an exec.program and plans
/// its arena for T <= maxBatchTokens (--infer-convert-graph-to-exec, then
/// --infer-plan-memory). `activationType` ("", "fp32", "bf16", "fp16") sets
/// the element type of float activation buffers (infer-compile --dtype).
void buildExecPipeline(mlir::OpPassManager &pm, int64_t maxBatchTokens,
                       const std::string &activationType = "", const KernelFusions &fusions = {});

/// As buildExecPipeline, with --infer-step-entry between lowering and
/// planning: the paged-KV `step` program (docs/kv-cache.md).
void buildStepPipeline(mlir::OpPassManager &pm, int64_t maxBatchTokens, int64_t blockSize,
                       int64_t maxSeqLen, const std::string &activationType = "",
                       const KernelFusions &fusions = {});

/// Registers `--infer-optimize` and `--infer-lower-to-exec` for infer-opt.
void registerPipelines();

} // namespace infer::pipeline

#endif
