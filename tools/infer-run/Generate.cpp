//===- Generate.cpp - infer-run generate: decoding over the step entry ----===//
//
// Parses the prompts, serves them through a ServingSession (the scheduler over
// the paged KV cache and Backend::step) with one RequestSampler per request,
// and prints one line per request, then a JSON line.
//
//===----------------------------------------------------------------------===//

#include "tools/infer-run/Generate.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace infer::tools {
namespace {

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

} // namespace

Status runGenerate(const std::string &artifactPath, const GenerateOptions &options) {
  if (options.prompts.empty())
    return invalidArgumentError("generate needs at least one --prompt-ids list");
  if (options.maxNewTokens < 1)
    return invalidArgumentError("--max-new-tokens must be at least 1");
  RETURN_IF_ERROR(sampling::validate(options.sampling));
  ASSIGN_OR_RETURN(auto session, ServingSession::open(artifactPath, options.session));
  int64_t maxSeqLen = session->maxSeqLen();
  int64_t vocab = session->vocab();

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

  scheduler::Scheduler &sched = session->scheduler();
  std::map<scheduler::RequestId, sampling::RequestSampler> samplers;
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto id = static_cast<scheduler::RequestId>(i);
    samplers.emplace(id, sampling::RequestSampler(options.sampling, id));
    RETURN_IF_ERROR(sched.addRequest(id, prompts[i], options.maxNewTokens));
  }
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

  auto sample = [&](scheduler::RequestId id) {
    sampling::RequestSampler &sampler = samplers.at(id);
    RowSampling row;
    row.temperature = sampler.params().temperature;
    row.topK = sampler.params().topK;
    row.topP = sampler.params().topP;
    row.uniform = sampler.nextUniform();
    return row;
  };
  while (sched.hasUnfinished()) {
    ASSIGN_OR_RETURN(std::vector<SampledToken> drawn, session->step(sample));
    // Streamed as they come (the summary and the JSON line follow at the end).
    for (const SampledToken &token : drawn)
      std::printf("token: request %lld id %d\n", static_cast<long long>(token.request),
                  token.token);
    std::fflush(stdout);
    RETURN_IF_ERROR(collect());
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
  json += "], \"steps\": " + std::to_string(session->steps()) +
          ", \"computed_tokens\": " + std::to_string(session->computedTokens()) +
          ", \"preemptions\": " + std::to_string(sched.numPreemptions()) +
          ", \"kv_blocks\": " + std::to_string(session->kvBlocks()) +
          ", \"steps_ahead\": " + std::to_string(session->stepsAhead()) +
          ", \"steps_ahead_dropped\": " + std::to_string(session->stepsAheadDropped()) + "}";
  std::printf("%s\n", json.c_str());
  return okStatus();
}

} // namespace infer::tools
