//===- ServingSession.cpp - artifact + backend + KV cache + scheduler -----===//
//
// The serving loop of issue 5 (docs/kv-cache.md, "Serving loop"): requests go
// into the Scheduler (continuous batching, chunked prefill, prefix caching,
// preemption by recompute over the KVCacheManager's blocks); each step's
// metadata is flattened by buildStepBatch, widened to the step program's i64
// inputs and run by Backend::step (cpu or cuda); the logit rows the step
// needs go to the caller's sampler and the tokens back through update().
//
//===----------------------------------------------------------------------===//

#include "tools/infer-run/ServingSession.h"

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/cpu/CpuBackend.h"
#ifdef INFER_HAVE_CUDA
#include "runtime/cuda/CudaBackend.h"
#endif

#include "runtime/sampling/Sampler.h"

#include <algorithm>
#include <chrono>

namespace infer::tools {
namespace {

namespace art = artifact;

/// The model's vocabulary: the last dimension of its logits output, or 0.
int64_t vocabularyOf(const art::ModelInfo &model) {
  for (const art::TensorSpec &output : model.outputs())
    if (output.dims_size() > 0 && output.dims(output.dims_size() - 1).kind_case() == art::Dim::kSize)
      return output.dims(output.dims_size() - 1).size();
  return 0;
}

std::vector<int64_t> widen(const std::vector<int32_t> &values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

} // namespace

ServingSession::~ServingSession() = default;

StatusOr<std::unique_ptr<ServingSession>> ServingSession::open(const std::string &artifactPath,
                                                               const SessionOptions &options) {
  if (options.device != "cpu" && options.device != "cuda" && !options.device.empty())
    return invalidArgumentError("unknown device '" + options.device + "' (cpu or cuda)");
  std::unique_ptr<ServingSession> session(new ServingSession());
  ASSIGN_OR_RETURN(session->reader_, art::ArtifactReader::open(artifactPath));
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
  if (!session->backend_->hasStep())
    return failedPreconditionError(artifactPath +
                                   ": the artifact has no step program, so it cannot generate "
                                   "(recompile it; infer-compile prints why a model has none)");
  const art::KvCacheLayout &layout = manifest.kv_cache();
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
  config.numBlocks = static_cast<int32_t>(blocks);
  config.enablePrefixCaching = options.prefixCaching;
  session->kvBlocks_ = blocks;
  RETURN_IF_ERROR(session->backend_->allocateKvCache(blocks));
  ASSIGN_OR_RETURN(auto sched, scheduler::Scheduler::create(config));
  session->sched_ = std::make_unique<scheduler::Scheduler>(std::move(sched));
  return session;
}

StatusOr<std::vector<SampledToken>> ServingSession::step(const SamplingFn &sampling) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point start = Clock::now();
  ASSIGN_OR_RETURN(scheduler::ScheduledStep step, sched_->schedule());
  if (step.empty())
    return internalError("the scheduler made no progress with requests left (KV pool of " +
                         std::to_string(kvBlocks_) + " blocks)");
  // After scheduling, before update() frees finished requests' blocks: the
  // step's high-water mark.
  peakUsedBlocks_ = std::max<int64_t>(peakUsedBlocks_, sched_->kvCache().pool().numUsedBlocks());
  RETURN_IF_ERROR(scheduler::buildStepBatch(step, sched_->maxBlocksPerSequence(), batch_));
  StepArrays arrays;
  arrays.tokenIds = widen(batch_.tokenIds);
  arrays.positions = widen(batch_.positions);
  arrays.seqStarts = widen(batch_.seqStarts);
  arrays.contextLens = widen(batch_.contextLens);
  arrays.blockTables = widen(batch_.blockTables);
  arrays.slotIds = widen(batch_.slotIds);
  arrays.logitIndices = widen(batch_.logitRows);
  std::vector<RowSampling> rows;
  std::vector<scheduler::RequestId> sampledFor;
  for (size_t r = 0; r < batch_.logitRows.size(); ++r) {
    scheduler::RequestId id = step.sequences[batch_.logitSequences[r]].requestId;
    rows.push_back(sampling(id));
    sampledFor.push_back(id);
  }
  // A step of only middle prefill chunks needs no logits; the step program
  // still computes one row (R >= 1), which is dropped.
  bool placeholderRow = rows.empty();
  if (placeholderRow) {
    arrays.logitIndices.push_back(0);
    rows.emplace_back();
  }
  std::vector<int32_t> perRow;
  Clock::time_point backendStart = Clock::now();
  if (backend_->samplesOnDevice()) {
    ASSIGN_OR_RETURN(perRow, backend_->stepAndSample(arrays, rows));
    backendSeconds_ += std::chrono::duration<double>(Clock::now() - backendStart).count();
  } else {
    int64_t rowWidth = 0;
    ASSIGN_OR_RETURN(std::vector<float> logits, backend_->step(arrays, rowWidth));
    backendSeconds_ += std::chrono::duration<double>(Clock::now() - backendStart).count();
    for (size_t r = 0; r < rows.size(); ++r) {
      sampling::SamplingParams params;
      params.temperature = rows[r].temperature;
      params.topK = rows[r].topK;
      params.topP = rows[r].topP;
      perRow.push_back(sampling::sampleWithUniform(
          logits.data() + r * static_cast<size_t>(rowWidth), rowWidth, params, rows[r].uniform));
    }
  }
  if (placeholderRow)
    perRow.clear();
  std::vector<SampledToken> drawn;
  for (size_t r = 0; r < perRow.size(); ++r)
    drawn.push_back({sampledFor[r], perRow[r]});
  ASSIGN_OR_RETURN(auto sampled, scheduler::sampledPerSequence(batch_, perRow));
  RETURN_IF_ERROR(sched_->update(step, sampled));
  ++steps_;
  computedTokens_ += batch_.numTokens();
  floorSeconds_ += exec::stepFloorSeconds(costs_, batch_.numTokens(),
                                          int64_t(arrays.logitIndices.size()));
  stepSeconds_ += std::chrono::duration<double>(Clock::now() - start).count();
  return drawn;
}

} // namespace infer::tools
