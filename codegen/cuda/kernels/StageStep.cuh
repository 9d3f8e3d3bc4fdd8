//===- StageStep.cuh - the step's metadata upload as a kernel -------------===//
//
// infer_stage_step (KernelParams.h, StageStepParams): the first kernel of a
// step, which copies the step's metadata from pinned host memory mapped into
// the device to the device staging area the step's kernels read. As a kernel
// it sits inside the step's CUDA graph: a copy-engine upload between two
// replays cost ~5 us of scheduling latency on top of each copy (session 33,
// bench/results). A step that runs ahead of its predecessor's tokens
// (docs/kv-cache.md) also takes its first F token ids from that step's draws
// here, where the host has placeholders.
//
// Each thread moves 16-byte units; a unit that holds fed token ids gets them
// from sampledTokens before it is stored, so every unit is written once.
// Reads of the host memory bypass the caches (it changes between replays).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_STAGESTEP_CUH
#define INFER_CODEGEN_CUDA_KERNELS_STAGESTEP_CUH

#include "codegen/cuda/kernels/Common.cuh"

namespace infer {
namespace kernels {

__global__ void __launch_bounds__(kStageStepThreads) infer_stage_step(StageStepParams p) {
  waitForPreviousKernel();
  const uint4 *source = static_cast<const uint4 *>(p.source);
  uint4 *staging = static_cast<uint4 *>(p.staging);
  // The header: the fed token count and the token ids' byte offset.
  const uint4 header = __ldcv(source);
  const long long fed = (long long)(((unsigned long long)header.y << 32) | header.x);
  const long long idsAt = (long long)(((unsigned long long)header.w << 32) | header.z);
  const long long units = p.bytes / 16;
  for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < units;
       u += (long long)gridDim.x * blockDim.x) {
    uint4 value = __ldcv(source + u);
    const long long first = (u * 16 - idsAt) / 8; // the token index of the unit's first int64
    if (u * 16 >= idsAt && first < fed) {
      const long long low = p.sampledTokens[first];
      value.x = unsigned(low), value.y = unsigned((unsigned long long)low >> 32);
      if (first + 1 < fed) {
        const long long high = p.sampledTokens[first + 1];
        value.z = unsigned(high), value.w = unsigned((unsigned long long)high >> 32);
      }
    }
    staging[u] = value;
  }
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_STAGESTEP_CUH
