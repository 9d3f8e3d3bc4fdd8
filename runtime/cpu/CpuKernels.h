//===- CpuKernels.h - the cpu backend's reference kernels -------*- C++ -*-===//
//
// One function per exec kernel family (docs/exec.md), plain loops in fp32
// with double accumulation for sums, norms and softmax, mirroring the
// reference interpreter (dialects/graph/Interpreter/FusedKernels.cpp). A kernel
// gets a LaunchArgs (runtime/exec/LaunchArgs.h): its operands resolved to
// host views (arena buffers at the step's T, f32 weights, constants), its
// output buffers, the attributes and the step's batch and seq. Errors name
// the launch.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CPU_CPUKERNELS_H
#define INFER_RUNTIME_CPU_CPUKERNELS_H

#include "runtime/exec/LaunchArgs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::cpu {

using exec::LaunchArgs;
using exec::View;

Status runEmbedding(const LaunchArgs &args);
Status runRmsNorm(const LaunchArgs &args);
Status runLayerNorm(const LaunchArgs &args);
Status runGemm(const LaunchArgs &args);
Status runQuantizedGemm(const LaunchArgs &args);
Status runRotary(const LaunchArgs &args);
Status runAttention(const LaunchArgs &args);
Status runGatedActivation(const LaunchArgs &args);
Status runMoe(const LaunchArgs &args);
Status runElementwise(const LaunchArgs &args);
Status runCopy(const LaunchArgs &args);
Status runGatherRows(const LaunchArgs &args);

/// One layer's paged KV cache: [numBlocks, 2, blockSize, kvHeads, headDim] f32.
struct KvLayerView {
  float *data = nullptr;
  int64_t numBlocks = 0, blockSize = 0, kvHeads = 0, headDim = 0;
};

/// exec.kv_attention over `cache` (runtime/cpu/KvAttentionKernel.cpp).
Status runKvAttention(const LaunchArgs &args, const KvLayerView &cache);

} // namespace infer::cpu

#endif // INFER_RUNTIME_CPU_CPUKERNELS_H
