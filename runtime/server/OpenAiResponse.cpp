//===- OpenAiResponse.cpp - completions, chunks and SSE as OpenAI's -------===//

#include "runtime/server/OpenAiResponse.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace infer::server {
namespace {

using json = nlohmann::ordered_json;

bool isChat(const ResponseHeader &header) { return header.endpoint == Endpoint::kChat; }

json base(const ResponseHeader &header, const char *object) {
  return {
      {"id", header.id}, {"object", object}, {"created", header.created}, {"model", header.model}};
}

json orNull(const std::string &text) { return text.empty() ? json() : json(text); }

/// The fields every choice ends with, whole response or chunk.
void closeChoice(json &choice, const std::string &finishReason,
                 const std::vector<int32_t> *tokenIds) {
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = orNull(finishReason);
  if (tokenIds)
    choice["token_ids"] = *tokenIds;
}

} // namespace

ResponseHeader makeHeader(Endpoint endpoint, std::string model) {
  // A random process prefix and a counter: unique within and across runs.
  static const uint64_t prefix = std::random_device{}();
  static std::atomic<uint64_t> counter{0};
  char id[64];
  std::snprintf(id, sizeof(id), "%s-%08llx%08llx",
                endpoint == Endpoint::kChat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(prefix & 0xffffffffu),
                static_cast<unsigned long long>(counter++));
  int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count();
  return {endpoint, id, now, std::move(model)};
}

json Usage::toJson() const {
  return {{"prompt_tokens", promptTokens},
          {"completion_tokens", completionTokens},
          {"total_tokens", promptTokens + completionTokens}};
}

json completionResponse(const ResponseHeader &header, const std::string &text,
                        const std::string &finishReason, const Usage &usage,
                        const std::vector<int32_t> *promptIds,
                        const std::vector<int32_t> *tokenIds) {
  json choice = {{"index", 0}};
  if (isChat(header))
    choice["message"] = {{"role", "assistant"}, {"content", text}};
  else
    choice["text"] = text;
  closeChoice(choice, finishReason, tokenIds);
  json out = base(header, isChat(header) ? "chat.completion" : "text_completion");
  out["choices"] = json::array({choice});
  out["usage"] = usage.toJson();
  if (promptIds)
    out["prompt_token_ids"] = *promptIds;
  return out;
}

json chunk(const ResponseHeader &header, const std::string &text, bool first,
           const std::string &finishReason, const json &usage,
           const std::vector<int32_t> *tokenIds) {
  json choice = {{"index", 0}};
  if (isChat(header)) {
    json delta = json::object();
    if (first)
      delta["role"] = "assistant";
    if (!text.empty() || first)
      delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  closeChoice(choice, finishReason, tokenIds);
  json out = base(header, isChat(header) ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array({choice});
  if (!usage.is_null())
    out["usage"] = usage;
  return out;
}

json usageChunk(const ResponseHeader &header, const Usage &usage) {
  json out = base(header, isChat(header) ? "chat.completion.chunk" : "text_completion");
  out["choices"] = json::array();
  out["usage"] = usage.toJson();
  return out;
}

std::string sseEvent(const json &value) { return "data: " + dumpJson(value) + "\n\n"; }

std::string sseDone() { return "data: [DONE]\n\n"; }

} // namespace infer::server
