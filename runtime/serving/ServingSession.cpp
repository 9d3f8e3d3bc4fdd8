//===- ServingSession.cpp - artifact + backend + KV cache + scheduler -----===//
//
// The serving loop of issue 5 (docs/kv-cache.md, "Serving loop"): requests go
// into the Scheduler (continuous batching, chunked prefill, prefix caching,
// preemption by recompute over the KVCacheManager's blocks); each step's
// metadata is flattened by buildStepBatch, widened to the step program's i64
// inputs and run on the backend (cpu or cuda) by serving::StepRunner, which
// samples (on the device, or the logit rows on the host with the caller's
// draws) and passes the tokens back through update().
//
//===----------------------------------------------------------------------===//

#include "runtime/serving/ServingSession.h"

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/base/HostMemory.h"
#include "runtime/cpu/CpuBackend.h"
#ifdef INFER_HAVE_CUDA
#include "runtime/cuda/CudaBackend.h"
#endif

#include <algorithm>
#include <chrono>

namespace infer::serving {
namespace {

namespace art = artifact;

/// The model's vocabulary: the last dimension of its logits output, or 0.
int64_t vocabularyOf(const art::ModelInfo &model) {
  for (const art::TensorSpec &output : model.outputs())
    if (output.dims_size() > 0 && output.dims(output.dims_size() - 1).kind_case() == art::Dim::kSize)
      return output.dims(output.dims_size() - 1).size();
  return 0;
}

/// The host memory the scheduler's bookkeeping takes per KV block (the
/// block pool's ref count, hash, free-list and eviction entries, a prefix
/// cache entry), rounded up.
constexpr uint64_t kHostBytesPerBlock = 128;

/// Refuses a pool the backend's memory cannot hold, naming the flag and the
/// limit, before anything is allocated.
Status checkKvCacheFits(Backend &backend, int64_t blocks, bool defaulted) {
  std::string flag = defaulted ? "the default KV pool of " + std::to_string(blocks) +
                                     " blocks (4 sequences at the artifact's max-seq-len; give a "
                                     "smaller --kv-blocks)"
                               : "--kv-blocks " + std::to_string(blocks);
  Backend::KvCacheCapacity capacity = backend.kvCacheCapacity();
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(uint64_t(blocks), capacity.blockBytes, &bytes))
    bytes = UINT64_MAX;
  if (capacity.blockBytes == 0 || bytes <= capacity.availableBytes)
    return checkHostMemory(flag + ": the scheduler's block table",
                           uint64_t(blocks) * kHostBytesPerBlock, availableHostMemoryBytes());
  return resourceExhaustedError(
      flag + ": a KV cache of " + std::to_string(blocks) + " blocks needs " + formatBytes(bytes) +
      " of " + capacity.memory + " memory (" + formatBytes(capacity.blockBytes) +
      " a block), more than the " + formatBytes(capacity.availableBytes) + " available: at most " +
      std::to_string(capacity.availableBytes / capacity.blockBytes) + " blocks fit");
}

} // namespace

ServingSession::~ServingSession() = default;

StatusOr<std::unique_ptr<ServingSession>> ServingSession::open(const std::string &artifactPath,
                                                               const SessionOptions &options) {
  if (options.device != "cpu" && options.device != "cuda" && !options.device.empty())
    return invalidArgumentError("unknown device '" + options.device + "' (cpu or cuda)");
  std::unique_ptr<ServingSession> session(new ServingSession());
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  // The weights' checksum chunks are hashed as the backend reads them (the
  // cuda backend's upload streams them; the cpu backend's first read hashes
  // them all): one pass over a large file instead of two.
  art::ArtifactReader::Options readerOptions;
  readerOptions.deferWeightChecksum = true;
  ASSIGN_OR_RETURN(session->reader_, art::ArtifactReader::open(artifactPath, readerOptions));
  const Clock::time_point opened = Clock::now();
  session->openSeconds_ = std::chrono::duration<double>(opened - start).count();
  const art::Manifest &manifest = session->reader_->manifest();
  session->costs_ = exec::stepCosts(manifest, manifest.step());
#ifdef INFER_HAVE_CUDA
  bool gpuStep = manifest.has_step() && manifest.cuda().step_launches_size() > 0;
  if (options.device == "cuda" ||
      (options.device.empty() && gpuStep && cuda::loadCudaApi().ok())) {
    ASSIGN_OR_RETURN(session->backend_, cuda::CudaBackend::create(*session->reader_));
    session->deviceName_ = "cuda";
  }
#else
  if (options.device == "cuda")
    return failedPreconditionError("this infer-run was built without the CUDA toolkit; use "
                                   "--device cpu");
#endif
  if (!session->backend_) {
    ASSIGN_OR_RETURN(session->backend_, cpu::CpuBackend::create(*session->reader_));
    session->deviceName_ = "cpu";
  }
  session->backendLoadSeconds_ = std::chrono::duration<double>(Clock::now() - opened).count();
  if (!session->backend_->hasStep())
    return failedPreconditionError(artifactPath +
                                   ": the artifact has no step program, so it cannot generate "
                                   "(recompile it; infer-compile prints why a model has none)");
  const art::KvCacheLayout &layout = manifest.kv_cache();
  if (layout.num_layers() == 0)
    return failedPreconditionError(artifactPath +
                                   ": the step program has no attention layer, so no KV cache "
                                   "to serve from (generate needs one; forward runs the model)");
  int64_t bound = manifest.step().arena().bound_tokens();
  session->maxSeqLen_ = layout.max_seq_len();
  session->vocab_ = vocabularyOf(manifest.model());

  scheduler::SchedulerConfig config;
  config.blockSize = static_cast<int32_t>(layout.block_size());
  config.maxSeqLen = static_cast<int32_t>(session->maxSeqLen_);
  int64_t tokens = options.maxBatchTokens ? options.maxBatchTokens : bound;
  if (tokens < 1 || tokens > bound)
    return invalidArgumentError("--max-batch-tokens " + std::to_string(tokens) +
                                " is outside [1, the artifact's bound of " +
                                std::to_string(bound) + "]");
  config.maxBatchTokens = static_cast<int32_t>(tokens);
  config.maxSequences =
      static_cast<int32_t>(options.maxSequences ? std::min(options.maxSequences, tokens)
                                                : std::min<int64_t>(tokens, 256));
  // Default pool: every sequence of a full step at the full context (plus
  // the null block), within the device's free memory; cpu: 4 sequences.
  int64_t blocks = options.kvBlocks;
  if (blocks == 0) {
    uint64_t budget = session->backend_->kvCacheBudgetBytes();
    uint64_t blockBytes = uint64_t(layout.bytes_per_token()) * uint64_t(layout.block_size());
    if (budget > 0 && blockBytes > 0)
      blocks = std::max<int64_t>(
          2, std::min<int64_t>(int64_t(config.maxSequences) * layout.max_blocks_per_sequence() + 1,
                               int64_t(budget / blockBytes)));
    else
      blocks = 4 * layout.max_blocks_per_sequence() + 1;
  }
  if (blocks < 2 || blocks > (int64_t(1) << 31) / std::max<int64_t>(1, layout.block_size()))
    return invalidArgumentError("--kv-blocks " + std::to_string(blocks) +
                                " is outside [2, 2^31 / block size]");
  RETURN_IF_ERROR(checkKvCacheFits(*session->backend_, blocks, options.kvBlocks == 0));
  config.numBlocks = static_cast<int32_t>(blocks);
  config.enablePrefixCaching = options.prefixCaching;
  session->kvBlocks_ = blocks;
  RETURN_IF_ERROR(session->backend_->allocateKvCache(blocks));
  ASSIGN_OR_RETURN(auto sched, scheduler::Scheduler::create(config));
  session->sched_ = std::make_unique<scheduler::Scheduler>(std::move(sched));
  session->runner_ = std::make_unique<StepRunner>(*session->sched_, *session->backend_,
                                                           options.runAhead);
  return session;
}

StatusOr<std::vector<SampledToken>> ServingSession::step(const SamplingFn &sampling) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  ASSIGN_OR_RETURN(StepResult result, runner_->step(sampling));
  ++steps_;
  computedTokens_ += result.tokens;
  floorSeconds_ += exec::stepFloorSeconds(costs_, result.tokens, result.logitRows);
  stepSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  return std::move(result.drawn);
}

} // namespace infer::serving
