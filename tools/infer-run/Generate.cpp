//===- Generate.cpp - infer-run generate: greedy decoding over the step entry ===//
//
// The serving loop of issue 5 on the cpu backend: requests go into the
// Scheduler (continuous batching, chunked prefill, prefix caching, preemption
// by recompute over the KVCacheManager's blocks); each step's metadata is
// flattened by buildStepBatch, widened to the step program's i64 inputs and run
// by CpuBackend::step; the logit rows the step needs are sampled greedily and
// fed back with update(). Output: one line per request, then a JSON line.
//
//===----------------------------------------------------------------------===//

#include "tools/infer-run/Generate.h"

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/cpu/CpuBackend.h"
#ifdef INFER_HAVE_CUDA
#include "runtime/cuda/CudaBackend.h"
#endif
#include "runtime/scheduler/Scheduler.h"
#include "runtime/scheduler/StepBatch.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace infer::tools {
namespace {

namespace art = artifact;

/// "1,2,3" as ids in [0, vocab) (vocab 0: unknown, no upper check).
StatusOr<std::vector<int32_t>> parseIds(const std::string &text, int64_t vocab, size_t index) {
  std::string what = "--prompt-ids #" + std::to_string(index + 1) + " '" + text + "'";
  std::vector<int32_t> ids;
  size_t start = 0;
  if (text.find_first_not_of(" \t") == std::string::npos)
    return invalidArgumentError(what + " is empty: a prompt needs at least one token id");
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos
                                                                     : comma - start);
    errno = 0;
    char *end = nullptr;
    long long value = std::strtoll(item.c_str(), &end, 10);
    bool blank = item.find_first_not_of(" \t") == std::string::npos;
    if (blank || errno != 0 || *end != '\0')
      return invalidArgumentError(what + ": '" + item + "' is not a token id");
    if (value < 0 || (vocab > 0 && value >= vocab))
      return invalidArgumentError(what + ": token id " + std::to_string(value) +
                                  " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
    ids.push_back(static_cast<int32_t>(value));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return ids;
}

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

Status runGenerate(const std::string &artifactPath, const GenerateOptions &options) {
  if (options.device != "cpu" && options.device != "cuda" && !options.device.empty())
    return invalidArgumentError("unknown device '" + options.device + "' (cpu or cuda)");
  if (options.prompts.empty())
    return invalidArgumentError("generate needs at least one --prompt-ids list");
  if (options.maxNewTokens < 1)
    return invalidArgumentError("--max-new-tokens must be at least 1");
  ASSIGN_OR_RETURN(auto reader, art::ArtifactReader::open(artifactPath));
  const art::Manifest &manifest = reader->manifest();
  std::unique_ptr<Backend> backend;
#ifdef INFER_HAVE_CUDA
  bool gpuStep = manifest.has_step() && manifest.cuda().step_launches_size() > 0;
  if (options.device == "cuda" ||
      (options.device.empty() && gpuStep && cuda::loadCudaApi().ok())) {
    ASSIGN_OR_RETURN(backend, cuda::CudaBackend::create(*reader));
  }
#else
  if (options.device == "cuda")
    return failedPreconditionError("this infer-run was built without the CUDA toolkit; use "
                                   "--device cpu");
#endif
  if (!backend) {
    ASSIGN_OR_RETURN(backend, cpu::CpuBackend::create(*reader));
  }
  if (!backend->hasStep())
    return failedPreconditionError(artifactPath +
                                   ": the artifact has no step program, so it cannot generate "
                                   "(recompile it; infer-compile prints why a model has none)");
  const art::KvCacheLayout &layout = manifest.kv_cache();
  int64_t bound = manifest.step().arena().bound_tokens();
  int64_t maxSeqLen = layout.max_seq_len();
  int64_t vocab = vocabularyOf(manifest.model());

  std::vector<std::vector<int32_t>> prompts;
  for (size_t i = 0; i < options.prompts.size(); ++i) {
    ASSIGN_OR_RETURN(auto ids, parseIds(options.prompts[i], vocab, i));
    if (static_cast<int64_t>(ids.size()) > maxSeqLen)
      return invalidArgumentError("--prompt-ids #" + std::to_string(i + 1) + " has " +
                                  std::to_string(ids.size()) +
                                  " tokens, more than the artifact's context of " +
                                  std::to_string(maxSeqLen) + " (--max-seq-len)");
    prompts.push_back(std::move(ids));
  }

  scheduler::SchedulerConfig config;
  config.blockSize = static_cast<int32_t>(layout.block_size());
  config.maxSeqLen = static_cast<int32_t>(maxSeqLen);
  int64_t tokens = options.maxBatchTokens ? options.maxBatchTokens : bound;
  if (tokens < 1 || tokens > bound)
    return invalidArgumentError("--max-batch-tokens " + std::to_string(tokens) +
                                " is outside [1, the artifact's bound of " +
                                std::to_string(bound) + "]");
  config.maxBatchTokens = static_cast<int32_t>(tokens);
  config.maxSequences =
      static_cast<int32_t>(options.maxSequences ? std::min(options.maxSequences, tokens)
                                                : std::min<int64_t>(tokens, 256));
  int64_t blocks = options.kvBlocks ? options.kvBlocks
                                    : 4 * layout.max_blocks_per_sequence() + 1;
  if (blocks < 2 || blocks > (int64_t(1) << 31) / std::max<int64_t>(1, layout.block_size()))
    return invalidArgumentError("--kv-blocks " + std::to_string(blocks) +
                                " is outside [2, 2^31 / block size]");
  config.numBlocks = static_cast<int32_t>(blocks);
  config.enablePrefixCaching = options.prefixCaching;
  RETURN_IF_ERROR(backend->allocateKvCache(blocks));
  ASSIGN_OR_RETURN(auto sched, scheduler::Scheduler::create(config));

  for (size_t i = 0; i < prompts.size(); ++i)
    RETURN_IF_ERROR(sched.addRequest(static_cast<scheduler::RequestId>(i), prompts[i],
                                     options.maxNewTokens));
  std::map<scheduler::RequestId, scheduler::Request> done;
  auto collect = [&]() -> Status {
    for (scheduler::Request &request : sched.takeFinished()) {
      if (request.finishReason == scheduler::FinishReason::kRefused)
        return invalidArgumentError("request " + std::to_string(request.id) +
                                    " (--prompt-ids #" + std::to_string(request.id + 1) +
                                    ") cannot run: " + request.error);
      done.emplace(request.id, std::move(request));
    }
    return okStatus();
  };
  RETURN_IF_ERROR(collect());

  scheduler::StepBatch batch;
  StepArrays arrays;
  int64_t steps = 0, computedTokens = 0;
  while (sched.hasUnfinished()) {
    ASSIGN_OR_RETURN(scheduler::ScheduledStep step, sched.schedule());
    if (step.empty())
      return internalError("the scheduler made no progress with requests left (KV pool of " +
                           std::to_string(blocks) + " blocks)");
    RETURN_IF_ERROR(scheduler::buildStepBatch(step, sched.maxBlocksPerSequence(), batch));
    arrays.tokenIds = widen(batch.tokenIds);
    arrays.positions = widen(batch.positions);
    arrays.seqStarts = widen(batch.seqStarts);
    arrays.contextLens = widen(batch.contextLens);
    arrays.blockTables = widen(batch.blockTables);
    arrays.slotIds = widen(batch.slotIds);
    int64_t rowWidth = 0;
    ASSIGN_OR_RETURN(std::vector<float> logits, backend->step(arrays, batch.logitRows, rowWidth));
    // Greedy: the highest logit, the lowest id on ties.
    std::vector<int32_t> perRow;
    for (size_t r = 0; r < batch.logitRows.size(); ++r) {
      const float *values = logits.data() + r * static_cast<size_t>(rowWidth);
      int64_t best = 0;
      for (int64_t v = 1; v < rowWidth; ++v)
        if (values[v] > values[best])
          best = v;
      perRow.push_back(static_cast<int32_t>(best));
    }
    ASSIGN_OR_RETURN(auto sampled, scheduler::sampledPerSequence(batch, perRow));
    RETURN_IF_ERROR(sched.update(step, sampled));
    RETURN_IF_ERROR(collect());
    ++steps;
    computedTokens += batch.numTokens();
  }

  std::string json = "{\"requests\": [";
  for (auto &[id, request] : done) {
    std::vector<int32_t> generated = request.generatedTokens();
    std::string ids, list;
    for (int32_t token : generated) {
      ids += (ids.empty() ? "" : " ") + std::to_string(token);
      list += (list.empty() ? "" : ", ") + std::to_string(token);
    }
    std::string reason(scheduler::finishReasonName(request.finishReason));
    std::printf("request %lld: %d prompt tokens, %zu generated (%s): %s\n",
                static_cast<long long>(id), request.numPromptTokens, generated.size(),
                reason.c_str(), ids.c_str());
    json += std::string(id ? ", " : "") + "{\"id\": " + std::to_string(id) +
            ", \"prompt_tokens\": " + std::to_string(request.numPromptTokens) +
            ", \"generated\": [" + list + "], \"finish_reason\": \"" + reason +
            "\", \"preemptions\": " + std::to_string(request.numPreemptions) +
            ", \"cached_tokens\": " + std::to_string(request.numCachedTokens) + "}";
  }
  json += "], \"steps\": " + std::to_string(steps) +
          ", \"computed_tokens\": " + std::to_string(computedTokens) +
          ", \"preemptions\": " + std::to_string(sched.numPreemptions()) +
          ", \"kv_blocks\": " + std::to_string(blocks) + "}";
  std::printf("%s\n", json.c_str());
  return okStatus();
}

} // namespace infer::tools
