//===- KernelParamsPacking.h - a launch's kernel argument struct -*- C++ -*-===//
//
// Fills the KernelParams.h struct of a launch's kernel family from its
// resolved operands (device addresses), attributes and the step's sizes,
// mirroring what the cpu kernels (runtime/cpu) derive from the same launch.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_KERNELPARAMSPACKING_H
#define INFER_RUNTIME_CUDA_KERNELPARAMSPACKING_H

#include "runtime/exec/LaunchArgs.h"

#include <vector>

namespace infer::cuda {

struct PackedParams {
  std::vector<unsigned char> bytes; ///< the struct, passed by value as the only argument
};

/// What a step program's kv_attention needs beyond its operands.
struct StepContext {
  int64_t numSeqs = 0, maxBlocksPerSeq = 0, blockSize = 0;
  std::vector<void *> kvLayers; ///< each layer's cache (device addresses)
  /// The cache holds E4M3 bytes (KvCacheLayout ELEMENT_TYPE_F8E4M3): each
  /// KV_ATTENTION must carry k_cache_scale / v_cache_scale > 0, and only then.
  bool kvFp8 = false;
  /// infer_kv_attention's split-KV workspace and counters (zeroed, shared).
  float *kvWorkspace = nullptr;
  unsigned int *kvCounters = nullptr;
  /// EmbeddingParams::fedCount / fedIds of this step (null: none).
  const long long *fedCount = nullptr;
  const int *fedIds = nullptr;
};

StatusOr<PackedParams> packKernelParams(const exec::LaunchArgs &args,
                                        const StepContext *step = nullptr);

/// A QUANTIZED_GEMM's QuantizedGemmParams, with `output` in place of its own
/// when not null (CudaLaunch.dequantize: the quantization scratch).
StatusOr<PackedParams> packQuantizedGemmParams(const exec::LaunchArgs &args, void *output);

/// infer_rotary_kv_write's parameters: the ROTARY launch `rotary` and the
/// KV_ATTENTION parameters `kvAttention` (packKernelParams) that read its
/// output (CudaLaunch.fused_prologue).
StatusOr<PackedParams> packRotaryKvWriteParams(const exec::LaunchArgs &rotary,
                                               const PackedParams &kvAttention);

/// infer_kv_decode's parameters (CudaLaunch.decode): packRotaryKvWriteParams'
/// after the checks the kernel relies on (packed rows, its head sizes, an
/// aligned cache).
StatusOr<PackedParams> packKvDecodeParams(const exec::LaunchArgs &rotary,
                                          const PackedParams &kvAttention);

/// A GEMM launch's GemvParams (the small-T kernel), with the backend's
/// shared workspace and counters; `folded`: the rms_norm or gated activation
/// launch before it, computed inside the GEMV (CudaLaunch.fuses_previous);
/// `prefetchBytes`: GemvParams::prefetchBytes (programmatic launches only);
/// `gatedNext`: the gated activation after it, reading the GEMM's whole
/// output as a packed [gate | up], whose output the GEMV writes instead
/// (CudaLaunch.fuses_next; infer_gemv_rows' gated pairs); `argmax`:
/// GemvParams::argmax, the word per output row where the LM head folds the
/// argmax of its logits (CudaLaunch.folds_argmax), none when null.
StatusOr<PackedParams> packGemvParams(const exec::LaunchArgs &args, float *workspace,
                                      unsigned int *counters,
                                      const exec::LaunchArgs *folded = nullptr,
                                      int64_t prefetchBytes = 0,
                                      const exec::LaunchArgs *gatedNext = nullptr,
                                      unsigned long long *argmax = nullptr);

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_KERNELPARAMSPACKING_H
