//===- Generate.h - infer-run generate: text or ids over the engine -------===//
#ifndef INFER_TOOLS_INFER_RUN_GENERATE_H
#define INFER_TOOLS_INFER_RUN_GENERATE_H

#include "runtime/base/Status.h"
#include "runtime/sampling/Sampler.h"
#include "runtime/serving/ServingSession.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::tools {

struct GenerateOptions {
  /// One "1,2,3" list per request (--prompt-ids).
  std::vector<std::string> prompts;
  /// One text per request (--prompt), encoded by the artifact's tokenizer.
  std::vector<std::string> textPrompts;
  /// Each text prompt is a user message through the chat template.
  bool chat = false;
  /// With chat: a system message before it ("" none).
  std::string system;
  /// Generation ends before any of these texts.
  std::vector<std::string> stop;
  /// "text": stream the text (or the ids without a tokenizer), then a
  /// summary; "json": one JSON line with ids and text.
  std::string output = "text";
  /// Generate past the model's stop tokens.
  bool ignoreEos = false;
  int32_t maxNewTokens = 16;
  serving::SessionOptions session;
  /// Greedy unless a sampling option was given (temperature 0: greedy).
  sampling::SamplingParams sampling = greedySampling();

  static sampling::SamplingParams greedySampling() {
    sampling::SamplingParams params;
    params.temperature = 0;
    return params;
  }
};

/// Serves every prompt through a serving::Engine (request i's sampler keyed
/// by i, so a prompt gets the same tokens alone or batched) and prints as
/// `options.output` says.
Status runGenerate(const std::string &artifactPath, const GenerateOptions &options);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_GENERATE_H
