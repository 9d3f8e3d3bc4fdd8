//===- CudaPrefetch.cpp - L2 prefetch beside the decode GEMVs -------------===//
//
// INFER_L2_PREFETCH=1 (off by default; docs/codegen.md, "L2 prefetch"): a
// decode GEMV pays a few microseconds beyond streaming its weights (launch,
// the first loads' DRAM latency, the split-k tail) while HBM idles. Before
// each GEMV launch, launchAll forks a side branch from the step's stream that
// asks L2 for the first kL2PrefetchBytes of the next GEMV's weights
// (infer_prefetch_l2, one warp of bulk prefetches), so those bytes stream
// while this GEMV finishes and the next one starts from L2. The branch joins
// the stream at the end of launchAll; inside a captured step it becomes
// graph nodes beside the GEMVs. Weights are no kernel's output, so the
// prefetches need no ordering beyond "not before the step starts".
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "codegen/cuda/kernels/KernelParams.h"
#include "runtime/artifact/ArtifactFormat.h"

#include <algorithm>

namespace infer::cuda {
namespace art = artifact;

namespace {

/// Bytes of the next GEMV's weights asked for: its first few waves of loads.
/// To be tuned from gemv_test's layer chains (prefetchSpan, "prefetch nodes").
constexpr int64_t kL2PrefetchBytes = int64_t(16) << 20;

} // namespace

Status CudaBackend::setUpL2Prefetch() {
  if (!environmentIs("INFER_L2_PREFETCH", "1") || module_->prefetch_function().empty())
    return okStatus();
  CUresult found = api_->cuModuleGetFunction(&prefetchFunction_, cuModule_,
                                             module_->prefetch_function().c_str());
  if (found != CUDA_SUCCESS)
    return driverError(*api_, found,
                       ("cuModuleGetFunction " + module_->prefetch_function()).c_str());
  INFER_CU_CHECK(*api_, api_->cuStreamCreate(&prefetchStream_, CU_STREAM_NON_BLOCKING));
  INFER_CU_CHECK(*api_, api_->cuEventCreate(&prefetchFork_, CU_EVENT_DISABLE_TIMING));
  INFER_CU_CHECK(*api_, api_->cuEventCreate(&prefetchJoin_, CU_EVENT_DISABLE_TIMING));
  return okStatus();
}

void CudaBackend::releaseL2Prefetch() {
  if (prefetchFork_)
    api_->cuEventDestroy(prefetchFork_);
  if (prefetchJoin_)
    api_->cuEventDestroy(prefetchJoin_);
  if (prefetchStream_) {
    api_->cuStreamSynchronize(prefetchStream_);
    api_->cuStreamDestroy(prefetchStream_);
  }
  prefetchFork_ = prefetchJoin_ = nullptr;
  prefetchStream_ = nullptr;
  prefetchFunction_ = nullptr;
}

Status CudaBackend::prefetchNextGemv(const LoadedProgram &loaded, int index,
                                     const exec::BoundInputs &step) {
  for (int next = index + 1; next < loaded.program->launches_size(); ++next) {
    if (!runsAsGemv(loaded, next, step.tokens))
      continue;
    exec::LaunchArgs args = resolve(loaded, next, step);
    const exec::View *weight = args.operand("weight");
    if (!weight || !weight->data)
      return okStatus();
    kernels::PrefetchParams params{};
    params.data = weight->data;
    params.bytes = std::min<int64_t>(
        weight->elements * int64_t(art::elementSize(weight->type)), kL2PrefetchBytes);
    void *kernelArgs[] = {&params};
    INFER_CU_CHECK(*api_, api_->cuEventRecord(prefetchFork_, stream_));
    INFER_CU_CHECK(*api_, api_->cuStreamWaitEvent(prefetchStream_, prefetchFork_, 0));
    INFER_CU_CHECK(*api_, api_->cuLaunchKernel(prefetchFunction_, 1, 1, 1,
                                               kernels::kPrefetchThreads, 1, 1, 0,
                                               prefetchStream_, kernelArgs, nullptr));
    prefetchBranchOpen_ = true;
    lastLaunchWasKernel_ = false; // an event comes between
    return okStatus();
  }
  return okStatus();
}

Status CudaBackend::joinPrefetchBranch() {
  if (!prefetchBranchOpen_)
    return okStatus();
  prefetchBranchOpen_ = false;
  INFER_CU_CHECK(*api_, api_->cuEventRecord(prefetchJoin_, prefetchStream_));
  INFER_CU_CHECK(*api_, api_->cuStreamWaitEvent(stream_, prefetchJoin_, 0));
  lastLaunchWasKernel_ = false;
  return okStatus();
}

} // namespace infer::cuda
