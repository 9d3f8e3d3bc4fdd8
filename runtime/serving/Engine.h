//===- Engine.h - requests in, tokens and text out -------------*- C++ -*-===//
//
// The serving engine that `infer-run generate`, the C API (the Python
// package) and the server share: a ServingSession (artifact, backend, paged KV
// cache, scheduler) plus, per request, its seeded sampler and its TextStream
// (UTF-8-whole text, stop strings). The caller submits requests and calls
// step() until nothing is left; each step reports the tokens and text each
// request got and which requests ended, with the OpenAI finish reason.
//
// Not thread-safe: one thread owns an Engine (a server's engine thread).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVING_ENGINE_H
#define INFER_RUNTIME_SERVING_ENGINE_H

#include "runtime/base/Status.h"
#include "runtime/sampling/Sampler.h"
#include "runtime/serving/ServingSession.h"
#include "runtime/serving/TextModel.h"
#include "runtime/serving/TextStream.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infer::serving {

using scheduler::RequestId;

struct GenerationParams {
  int32_t maxNewTokens = 16;
  /// temperature 0: greedy (argmax, lowest id on ties).
  sampling::SamplingParams sampling;
  /// The request's RNG is seeded from (sampling.seed, samplerKey), so its
  /// tokens depend on neither the id the engine gives it nor its batch.
  int64_t samplerKey = 0;
  /// Generation ends before any of these texts (needs a tokenizer).
  std::vector<std::string> stop;
  /// Generate past the model's stop tokens (benchmarks).
  bool ignoreStopTokens = false;
};

/// What one step did to one request.
struct RequestUpdate {
  RequestId id = 0;
  /// Sampled this step (at most one).
  std::vector<int32_t> tokens;
  /// Text that is now certain (the artifact has a tokenizer).
  std::string text;
  bool finished = false;
  /// When finished: "stop" (a stop token or stop string), "length" (the
  /// token limit or the context), "cancelled", or "error" (see `error`).
  std::string finishReason;
  /// When finished: the reason in detail (the scheduler's "stop-token",
  /// "max-new-tokens", "context-limit", "cancelled", "refused", "error" (the
  /// model's logits for it were not finite: NaN or infinity); or
  /// "stop-string").
  std::string finishDetail;
  std::optional<std::string> stopString;
  std::string error; ///< why a request could not run ("error")
  /// When finished: every generated id (a stop token included) and the text.
  std::vector<int32_t> allTokens;
  std::string allText;
  int32_t promptTokens = 0, cachedTokens = 0, preemptions = 0;
};

class Engine {
public:
  static StatusOr<std::unique_ptr<Engine>> open(const std::string &artifactPath,
                                                const SessionOptions &options);
  ~Engine();

  /// The tokenizer and chat template; null when the artifact has none.
  const TextModel *text() const { return text_.get(); }
  /// text(), or FailedPrecondition saying the artifact has no tokenizer.
  StatusOr<const TextModel *> requireText() const;
  ServingSession &session() { return *session_; }

  /// Queues a request. InvalidArgument for an empty prompt, an id outside
  /// the vocabulary, a prompt longer than the context, bad sampling
  /// parameters, or stop strings without a tokenizer.
  StatusOr<RequestId> submit(std::vector<int32_t> promptIds, const GenerationParams &params);
  /// Ends a request; it is reported finished ("cancelled") by the next step.
  Status cancel(RequestId id);
  bool hasUnfinished() const { return !live_.empty(); }

  /// Runs one step (or only reports requests that ended without one).
  StatusOr<std::vector<RequestUpdate>> step();

private:
  struct Live {
    Live(const sampling::SamplingParams &params, int64_t key) : sampler(params, key) {}
    sampling::RequestSampler sampler;
    std::optional<TextStream> text;
    bool cancelled = false; ///< by cancel(), not by a stop string
  };
  Engine() = default;
  /// Fills `update`'s final fields from the scheduler's finished request.
  void finish(scheduler::Request &request, Live &live, RequestUpdate &update);

  std::unique_ptr<ServingSession> session_;
  std::unique_ptr<TextModel> text_;
  std::map<RequestId, Live> live_;
  RequestId nextId_ = 0;
};

} // namespace infer::serving

#endif // INFER_RUNTIME_SERVING_ENGINE_H
