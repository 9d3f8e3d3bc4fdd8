//===- Generate.h - infer-run generate: decoding over the step entry -------===//
#ifndef INFER_TOOLS_INFER_RUN_GENERATE_H
#define INFER_TOOLS_INFER_RUN_GENERATE_H

#include "runtime/base/Status.h"
#include "runtime/sampling/Sampler.h"
#include "tools/infer-run/ServingSession.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::tools {

struct GenerateOptions {
  /// One "1,2,3" list per request.
  std::vector<std::string> prompts;
  int32_t maxNewTokens = 16;
  SessionOptions session;
  /// Greedy unless a sampling option was given (temperature 0: greedy).
  sampling::SamplingParams sampling = greedySampling();

  static sampling::SamplingParams greedySampling() {
    sampling::SamplingParams params;
    params.temperature = 0;
    return params;
  }
};

/// Serves every prompt through the scheduler, sampling each request's tokens
/// with its own seeded sampler (greedy: argmax, lowest id on ties), and
/// prints one line per request and a JSON line.
Status runGenerate(const std::string &artifactPath, const GenerateOptions &options);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_GENERATE_H
