//===- StageStep.cuh - a step ahead's token ids, from the step before -===//
//
// infer_stage_step (KernelParams.h, StageStepParams): the first kernel of a
// step with device sampling. The step's metadata was uploaded into its
// device staging area by a copy on the backend's upload stream, which runs
// while the previous step computes (CudaStep.cpp); a copy in the step's own
// stream between two graph replays cost ~5 us of scheduling latency besides
// the copy (session 33, bench/results), and reading the host memory from a
// kernel ~12 us. What only the device knows is finished here: a step that
// runs ahead of its predecessor's tokens (docs/kv-cache.md) takes its first F
// token ids from that step's draws, where the host left placeholders. The
// area's 16-byte header holds F and the token ids' byte offset; with F = 0
// the kernel only reads the header.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_STAGESTEP_CUH
#define INFER_CODEGEN_CUDA_KERNELS_STAGESTEP_CUH

#include "codegen/cuda/kernels/Common.cuh"

namespace infer {
namespace kernels {

__global__ void __launch_bounds__(kStageStepThreads) infer_stage_step(StageStepParams p) {
  waitForPreviousKernel();
  const long long *header = static_cast<const long long *>(p.staging);
  const long long fed = header[0], idsAt = header[1];
  long long *ids = reinterpret_cast<long long *>(static_cast<char *>(p.staging) + idsAt);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < fed;
       i += (long long)gridDim.x * blockDim.x)
    ids[i] = p.sampledTokens[i];
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_STAGESTEP_CUH
