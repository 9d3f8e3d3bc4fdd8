//===- OpenAiResponse.h - completions, chunks and SSE as OpenAI's -*- C++ -*-===//
//
// The response bodies of /v1/completions ("text_completion") and
// /v1/chat/completions ("chat.completion", streamed as
// "chat.completion.chunk"), shaped as the OpenAI API's, and their
// server-sent-event framing: `data: {json}\n\n` per chunk, `data: [DONE]\n\n`
// at the end.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_OPENAIRESPONSE_H
#define INFER_RUNTIME_SERVER_OPENAIRESPONSE_H

#include "runtime/server/OpenAiRequest.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace infer::server {

/// What every chunk and the response of one request share.
struct ResponseHeader {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;      ///< "cmpl-..." or "chatcmpl-..."
  int64_t created = 0; ///< Unix seconds
  std::string model;
};

/// A fresh header: a unique id and the current time.
ResponseHeader makeHeader(Endpoint endpoint, std::string model);

struct Usage {
  int64_t promptTokens = 0, completionTokens = 0;
  nlohmann::ordered_json toJson() const;
};

/// The whole (non-streamed) response.
nlohmann::ordered_json completionResponse(const ResponseHeader &header, const std::string &text,
                                          const std::string &finishReason, const Usage &usage,
                                          const std::vector<int32_t> *promptIds,
                                          const std::vector<int32_t> *tokenIds);

/// One streamed chunk: `text` (a chat's first chunk carries the role too),
/// `finishReason` ("" none) and `usage` (null: none) when the request ended.
nlohmann::ordered_json chunk(const ResponseHeader &header, const std::string &text, bool first,
                             const std::string &finishReason, const nlohmann::ordered_json &usage,
                             const std::vector<int32_t> *tokenIds);
/// stream_options.include_usage's last chunk: no choices, the usage.
nlohmann::ordered_json usageChunk(const ResponseHeader &header, const Usage &usage);

/// `data: {json}\n\n`.
std::string sseEvent(const nlohmann::ordered_json &value);
/// `data: [DONE]\n\n`.
std::string sseDone();

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_OPENAIRESPONSE_H
