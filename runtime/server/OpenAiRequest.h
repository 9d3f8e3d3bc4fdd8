//===- OpenAiRequest.h - OpenAI request bodies into engine requests -*- C++ -*-===//
//
// Two stages, both on the HTTP thread (the tokenizer and chat template may run
// on several threads: Tokenizer.h, ChatTemplate.h):
//   parseRequest:   the JSON body → ParsedRequest, checking every field the
//                   server knows for its type and range (unknown fields are
//                   ignored, as the OpenAI API and vLLM do);
//   prepareRequest: the prompt (text, token ids or chat messages) → prompt
//                   ids, checked against the model's vocabulary and context.
// Either stage answers a bad request with one ApiError naming the field.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_OPENAIREQUEST_H
#define INFER_RUNTIME_SERVER_OPENAIREQUEST_H

#include "runtime/server/ApiError.h"
#include "runtime/serving/Engine.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace infer::server {

enum class Endpoint { kCompletions, kChat };

struct ParsedRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;
  /// Completions: the prompt as text or as token ids (exactly one is set).
  std::optional<std::string> promptText;
  std::optional<std::vector<int32_t>> promptIds;
  /// Chat: [{"role", "content"}, ...] with content as a string.
  nlohmann::ordered_json messages;
  /// max_tokens (or chat's max_completion_tokens); unset: 16 for
  /// completions as in the OpenAI API, the rest of the context for chat.
  std::optional<int64_t> maxTokens;
  /// Sampling (seed unset: a fresh random seed), stop strings, ignore_eos.
  serving::GenerationParams params;
  bool seedGiven = false;
  bool stream = false;
  /// stream_options.include_usage: a last chunk with only the usage.
  bool includeUsage = false;
  /// vLLM's extension: the prompt's and the completion's token ids in the
  /// response.
  bool returnTokenIds = false;
};

/// The body of a request to `endpoint`, or the 400 saying what is wrong.
std::variant<ParsedRequest, ApiError> parseRequest(Endpoint endpoint, std::string_view body);

/// What prepareRequest checks the prompt against.
struct ModelLimits {
  const serving::TextModel *text = nullptr; ///< null: token-id prompts only
  int64_t vocab = 0;                        ///< 0: unknown
  int64_t maxSeqLen = 0;
};

/// The prompt ids and the engine's parameters (max new tokens filled in), or
/// a 400: no tokenizer or chat template for a text prompt, an id outside the
/// vocabulary, a prompt (plus max_tokens) longer than the context.
std::variant<std::pair<std::vector<int32_t>, serving::GenerationParams>, ApiError>
prepareRequest(const ParsedRequest &request, const ModelLimits &limits);

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_OPENAIREQUEST_H
