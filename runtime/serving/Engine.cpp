//===- Engine.cpp - requests in, tokens and text out -----------------------===//

#include "runtime/serving/Engine.h"

#include "runtime/artifact/ArtifactReader.h"

namespace infer::serving {
namespace {

/// The OpenAI API's names: a stop token or string is "stop", a limit "length".
const char *openAiReason(scheduler::FinishReason reason) {
  switch (reason) {
  case scheduler::FinishReason::kStopToken:
    return "stop";
  case scheduler::FinishReason::kMaxNewTokens:
  case scheduler::FinishReason::kContextLimit:
    return "length";
  case scheduler::FinishReason::kCancelled:
    return "cancelled";
  default:
    return "error";
  }
}

} // namespace

Engine::~Engine() = default;

StatusOr<std::unique_ptr<Engine>> Engine::open(const std::string &artifactPath,
                                               const SessionOptions &options) {
  std::unique_ptr<Engine> engine(new Engine());
  ASSIGN_OR_RETURN(engine->session_, ServingSession::open(artifactPath, options));
  const artifact::Manifest &manifest = engine->session_->reader().manifest();
  if (manifest.has_text()) {
    auto text = TextModel::fromArtifact(manifest.text());
    if (!text.ok())
      return text.status().withPrefix(artifactPath);
    engine->text_ = std::move(text).value();
  }
  return engine;
}

StatusOr<const TextModel *> Engine::requireText() const {
  if (!text_)
    return failedPreconditionError(
        "this artifact has no tokenizer, so it takes and gives token ids only (compile the model "
        "with its tokenizer.json beside it, or with infer-compile --tokenizer DIR)");
  return text_.get();
}

StatusOr<RequestId> Engine::submit(std::vector<int32_t> promptIds, const GenerationParams &params) {
  RETURN_IF_ERROR(sampling::validate(params.sampling));
  if (promptIds.empty())
    return invalidArgumentError("the prompt is empty: a request needs at least one token");
  if (params.maxNewTokens < 1)
    return invalidArgumentError("max new tokens must be at least 1 (got " +
                                std::to_string(params.maxNewTokens) + ")");
  int64_t vocab = session_->vocab();
  for (int32_t id : promptIds)
    if (id < 0 || (vocab > 0 && id >= vocab))
      return invalidArgumentError("token id " + std::to_string(id) +
                                  " is outside the vocabulary [0, " + std::to_string(vocab) + ")");
  if (static_cast<int64_t>(promptIds.size()) > session_->maxSeqLen())
    return invalidArgumentError("the prompt has " + std::to_string(promptIds.size()) +
                                " tokens, more than the artifact's context of " +
                                std::to_string(session_->maxSeqLen()) +
                                " (infer-compile --max-seq-len)");
  bool hasStop = false;
  for (const std::string &stop : params.stop)
    hasStop |= !stop.empty();
  if (hasStop && !text_)
    return requireText().status().withPrefix("stop strings need a tokenizer");
  RequestId id = nextId_++;
  std::vector<int32_t> stopIds;
  if (text_ && !params.ignoreStopTokens)
    stopIds = text_->stopTokenIds();
  RETURN_IF_ERROR(session_->scheduler().addRequest(id, std::move(promptIds), params.maxNewTokens,
                                                   std::move(stopIds)));
  auto [it, inserted] = live_.try_emplace(id, params.sampling, params.samplerKey);
  if (text_)
    it->second.text.emplace(text_->tokenizer(), params.stop);
  return id;
}

Status Engine::cancel(RequestId id) {
  auto it = live_.find(id);
  if (it == live_.end())
    return notFoundError("no live request " + std::to_string(id));
  it->second.cancelled = true;
  return session_->scheduler().cancel(id);
}

void Engine::finish(scheduler::Request &request, Live &live, RequestUpdate &update) {
  update.finished = true;
  update.promptTokens = request.numPromptTokens;
  update.cachedTokens = request.numCachedTokens;
  update.preemptions = request.numPreemptions;
  update.allTokens = request.generatedTokens();
  update.finishDetail = std::string(scheduler::finishReasonName(request.finishReason));
  update.finishReason = openAiReason(request.finishReason);
  if (request.finishReason == scheduler::FinishReason::kRefused) {
    update.error = request.error;
    return;
  }
  if (request.finishReason == scheduler::FinishReason::kError)
    update.error = request.error;
  if (live.text) {
    update.text += live.text->finish();
    update.allText = live.text->text();
    if (live.text->stopped() && !live.cancelled) {
      update.stopString = live.text->stopped();
      update.finishReason = "stop";
      update.finishDetail = "stop-string";
    }
  }
}

StatusOr<std::vector<RequestUpdate>> Engine::step() {
  scheduler::Scheduler &sched = session_->scheduler();
  std::map<RequestId, RequestUpdate> updates;
  if (sched.hasUnfinished()) {
    auto sample = [&](RequestId id) {
      RowSampling row; // greedy for a request the engine does not know (none is expected)
      auto it = live_.find(id);
      if (it == live_.end())
        return row;
      sampling::RequestSampler &sampler = it->second.sampler;
      row.temperature = sampler.params().temperature;
      row.topK = sampler.params().topK;
      row.topP = sampler.params().topP;
      row.uniform = sampler.nextUniform();
      return row;
    };
    ASSIGN_OR_RETURN(std::vector<SampledToken> drawn, session_->step(sample));
    for (const SampledToken &token : drawn) {
      auto it = live_.find(token.request);
      if (it == live_.end())
        continue; // reported finished already
      Live &live = it->second;
      RequestUpdate &update = updates[token.request];
      update.id = token.request;
      update.tokens.push_back(token.token);
      if (!live.text)
        continue;
      ASSIGN_OR_RETURN(std::string piece, live.text->push(token.token));
      update.text += piece;
      // A stop string ends the request now; its sequence leaves the batch.
      if (live.text->stopped() && sched.request(token.request))
        RETURN_IF_ERROR(sched.cancel(token.request));
    }
  }
  for (scheduler::Request &request : sched.takeFinished()) {
    auto it = live_.find(request.id);
    if (it == live_.end())
      continue;
    RequestUpdate &update = updates[request.id];
    update.id = request.id;
    finish(request, it->second, update);
    live_.erase(it);
  }
  std::vector<RequestUpdate> out;
  out.reserve(updates.size());
  for (auto &[id, update] : updates)
    out.push_back(std::move(update));
  return out;
}

} // namespace infer::serving
