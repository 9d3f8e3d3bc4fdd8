//===- OpenAiRequest.cpp - OpenAI request bodies into engine requests -----===//

#include "runtime/server/OpenAiRequest.h"

#include <cmath>
#include <limits>
#include <random>

namespace infer::server {
namespace {

using json = nlohmann::ordered_json;

/// The OpenAI API takes at most 4 stop sequences.
constexpr size_t kMaxStopStrings = 4;

const char *typeName(const json &value) {
  if (value.is_number_integer())
    return "an integer";
  if (value.is_number())
    return "a number";
  if (value.is_boolean())
    return "a boolean";
  if (value.is_string())
    return "a string";
  if (value.is_array())
    return "an array";
  if (value.is_object())
    return "an object";
  return "null";
}

ApiError wrongType(const std::string &field, const char *expected, const json &value) {
  return badRequest("'" + field + "' must be " + expected + " (got " + typeName(value) + ")",
                    field);
}

/// The fields below are optional; JSON null counts as absent, as the OpenAI
/// API treats it.
const json *field(const json &body, const char *name) {
  auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

/// Integers only: 16.0, true and "16" are refused, as the OpenAI API does.
std::optional<ApiError> getInteger(const json &body, const char *name, int64_t lo, int64_t hi,
                                   std::optional<int64_t> &out) {
  const json *value = field(body, name);
  if (!value)
    return std::nullopt;
  if (!value->is_number_integer())
    return wrongType(name, "an integer", *value);
  if (value->is_number_unsigned() && value->get<uint64_t>() > uint64_t(INT64_MAX))
    return badRequest("'" + std::string(name) + "' is out of range", name);
  int64_t v = value->get<int64_t>();
  if (v < lo || v > hi)
    return badRequest("'" + std::string(name) + "' must be in [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "] (got " + std::to_string(v) + ")",
                      name);
  out = v;
  return std::nullopt;
}

std::optional<ApiError> getNumber(const json &body, const char *name, double lo, double hi,
                                  bool loOpen, double &out) {
  const json *value = field(body, name);
  if (!value)
    return std::nullopt;
  if (!value->is_number())
    return wrongType(name, "a number", *value);
  double v = value->get<double>();
  if (!std::isfinite(v) || v > hi || v < lo || (loOpen && v == lo))
    return badRequest("'" + std::string(name) + "' must be in " + (loOpen ? "(" : "[") +
                          json(lo).dump() + ", " + json(hi).dump() + "] (got " + value->dump() +
                          ")",
                      name);
  out = v;
  return std::nullopt;
}

std::optional<ApiError> getBool(const json &body, const char *name, bool &out) {
  const json *value = field(body, name);
  if (!value)
    return std::nullopt;
  if (!value->is_boolean())
    return wrongType(name, "a boolean", *value);
  out = value->get<bool>();
  return std::nullopt;
}

/// Token ids as JSON integers in [0, 2^31).
std::optional<ApiError> getIds(const json &array, std::vector<int32_t> &out) {
  for (const json &id : array) {
    if (!id.is_number_integer())
      return badRequest("'prompt' as token ids must hold integers only (got " +
                            std::string(typeName(id)) + ")",
                        "prompt");
    if (id.is_number_unsigned() ? id.get<uint64_t>() > uint64_t(INT32_MAX)
                                : id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
      return badRequest("token id " + id.dump() + " in 'prompt' is outside the vocabulary",
                        "prompt");
    out.push_back(id.get<int32_t>());
  }
  return std::nullopt;
}

/// A string, [string], [id, ...] or [[id, ...]]: one prompt (n = 1).
std::optional<ApiError> getPrompt(const json &body, ParsedRequest &out) {
  const json *prompt = field(body, "prompt");
  if (!prompt)
    return badRequest("'prompt' is required", "prompt");
  if (prompt->is_string()) {
    out.promptText = prompt->get<std::string>();
    return std::nullopt;
  }
  if (!prompt->is_array())
    return wrongType("prompt", "a string or an array of token ids", *prompt);
  if (prompt->empty())
    return badRequest("'prompt' is empty", "prompt");
  const json &first = prompt->front();
  if (first.is_string() || first.is_array()) {
    if (prompt->size() != 1)
      return badRequest("one prompt per request: 'prompt' holds " + std::to_string(prompt->size()) +
                            " prompts",
                        "prompt");
    if (first.is_string()) {
      out.promptText = first.get<std::string>();
      return std::nullopt;
    }
    out.promptIds.emplace();
    return getIds(first, *out.promptIds);
  }
  out.promptIds.emplace();
  return getIds(*prompt, *out.promptIds);
}

/// A message's content: a string, or an array of {"type": "text", "text"}
/// parts (joined) as the OpenAI API also takes.
std::optional<ApiError> getContent(const json &message, size_t index, std::string &out) {
  std::string where = "messages[" + std::to_string(index) + "].content";
  auto content = message.find("content");
  if (content == message.end() || content->is_null())
    return std::nullopt;
  if (content->is_string()) {
    out = content->get<std::string>();
    return std::nullopt;
  }
  if (!content->is_array())
    return wrongType(where, "a string or an array of text parts", *content);
  for (const json &part : *content) {
    auto type = part.is_object() ? part.find("type") : part.end();
    auto text = part.is_object() ? part.find("text") : part.end();
    if (type == part.end() || *type != "text" || text == part.end() || !text->is_string())
      return badRequest("'" + where + "' parts must be {\"type\": \"text\", \"text\": string}",
                        "messages");
    out += text->get<std::string>();
  }
  return std::nullopt;
}

std::optional<ApiError> getMessages(const json &body, ParsedRequest &out) {
  const json *messages = field(body, "messages");
  if (!messages)
    return badRequest("'messages' is required", "messages");
  if (!messages->is_array())
    return wrongType("messages", "an array", *messages);
  if (messages->empty())
    return badRequest("'messages' is empty", "messages");
  out.messages = json::array();
  for (size_t i = 0; i < messages->size(); ++i) {
    const json &message = (*messages)[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!message.is_object())
      return wrongType(where, "an object", message);
    auto role = message.find("role");
    if (role == message.end() || !role->is_string())
      return badRequest("'" + where + ".role' must be a string", "messages");
    std::string content;
    if (auto error = getContent(message, i, content))
      return error;
    out.messages.push_back({{"role", *role}, {"content", content}});
  }
  return std::nullopt;
}

std::optional<ApiError> getStop(const json &body, std::vector<std::string> &out) {
  const json *stop = field(body, "stop");
  if (!stop)
    return std::nullopt;
  if (stop->is_string()) {
    out.push_back(stop->get<std::string>());
    return std::nullopt;
  }
  if (!stop->is_array())
    return wrongType("stop", "a string or an array of strings", *stop);
  if (stop->size() > kMaxStopStrings)
    return badRequest("'stop' holds " + std::to_string(stop->size()) + " strings, at most " +
                          std::to_string(kMaxStopStrings),
                      "stop");
  for (const json &item : *stop) {
    if (!item.is_string())
      return wrongType("stop", "a string or an array of strings", item);
    out.push_back(item.get<std::string>());
  }
  return std::nullopt;
}

/// Features the server does not have, refused rather than ignored when they
/// ask for something (a default value is fine).
std::optional<ApiError> refuseUnsupported(const json &body) {
  bool echo = false;
  if (auto error = getBool(body, "echo", echo))
    return error;
  if (echo)
    return badRequest("'echo' is not supported", "echo");
  if (const json *logprobs = field(body, "logprobs"))
    if (!(logprobs->is_boolean() && !logprobs->get<bool>()))
      return badRequest("'logprobs' is not supported", "logprobs");
  for (const char *penalty : {"presence_penalty", "frequency_penalty"}) {
    double value = 0;
    if (auto error = getNumber(body, penalty, -2.0, 2.0, false, value))
      return error;
    if (value != 0)
      return badRequest(std::string("'") + penalty + "' is not supported (only 0)", penalty);
  }
  std::optional<int64_t> bestOf;
  if (auto error = getInteger(body, "best_of", 1, 1, bestOf))
    return badRequest("'best_of' must be 1 (one completion per request)", "best_of");
  if (const json *bias = field(body, "logit_bias"))
    if (!bias->is_object() || !bias->empty())
      return badRequest("'logit_bias' is not supported", "logit_bias");
  if (field(body, "suffix"))
    return badRequest("'suffix' is not supported", "suffix");
  if (const json *user = field(body, "user"))
    if (!user->is_string())
      return wrongType("user", "a string", *user);
  return std::nullopt;
}

std::optional<ApiError> parseFields(const json &body, ParsedRequest &out) {
  if (const json *model = field(body, "model")) {
    if (!model->is_string())
      return wrongType("model", "a string", *model);
    out.model = model->get<std::string>();
  }
  if (auto error = out.endpoint == Endpoint::kChat ? getMessages(body, out) : getPrompt(body, out))
    return error;
  constexpr int64_t kMaxInt32 = std::numeric_limits<int32_t>::max();
  if (auto error = getInteger(body, "max_tokens", 1, kMaxInt32, out.maxTokens))
    return error;
  if (out.endpoint == Endpoint::kChat)
    if (auto error = getInteger(body, "max_completion_tokens", 1, kMaxInt32, out.maxTokens))
      return error;
  std::optional<int64_t> n;
  if (auto error = getInteger(body, "n", 1, 1, n))
    return badRequest("'n' must be 1 (one completion per request)", "n");
  sampling::SamplingParams &sampling = out.params.sampling;
  if (auto error = getNumber(body, "temperature", 0.0, 2.0, false, sampling.temperature))
    return error;
  if (auto error = getNumber(body, "top_p", 0.0, 1.0, true, sampling.topP))
    return error;
  std::optional<int64_t> topK, seed;
  // -1 is vLLM's "off", 0 ours.
  if (auto error = getInteger(body, "top_k", -1, kMaxInt32, topK))
    return error;
  sampling.topK = topK && *topK > 0 ? static_cast<int32_t>(*topK) : 0;
  if (auto error = getInteger(body, "seed", std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), seed))
    return error;
  out.seedGiven = seed.has_value();
  sampling.seed = seed ? static_cast<uint64_t>(*seed) : std::random_device{}();
  if (auto error = getStop(body, out.params.stop))
    return error;
  if (auto error = getBool(body, "ignore_eos", out.params.ignoreStopTokens))
    return error;
  if (auto error = getBool(body, "stream", out.stream))
    return error;
  if (auto error = getBool(body, "return_token_ids", out.returnTokenIds))
    return error;
  if (const json *options = field(body, "stream_options")) {
    if (!options->is_object())
      return wrongType("stream_options", "an object", *options);
    if (!out.stream)
      return badRequest("'stream_options' needs 'stream': true", "stream_options");
    if (auto error = getBool(*options, "include_usage", out.includeUsage))
      return badRequest("'stream_options.include_usage' must be a boolean", "stream_options");
  }
  return refuseUnsupported(body);
}

} // namespace

std::variant<ParsedRequest, ApiError> parseRequest(Endpoint endpoint, std::string_view body) {
  json parsed;
  try {
    parsed = json::parse(body);
  } catch (const json::exception &error) {
    // what() is "[json.exception.parse_error.101] parse error at line 1, ..."
    // or, for a number past double's range, "[json.exception.out_of_range.406]
    // number overflow parsing '1e999'" (which once ended the server).
    std::string detail = error.what();
    size_t start = detail.find("] ");
    return badRequest("the body is not valid JSON: " +
                          (start == std::string::npos ? detail : detail.substr(start + 2)),
                      "", "invalid_json");
  }
  if (!parsed.is_object())
    return badRequest("the body must be a JSON object (got " + std::string(typeName(parsed)) + ")");
  ParsedRequest out;
  out.endpoint = endpoint;
  out.params.sampling.temperature = 1.0; // the OpenAI API's default
  if (auto error = parseFields(parsed, out))
    return *error;
  return out;
}

std::variant<std::pair<std::vector<int32_t>, serving::GenerationParams>, ApiError>
prepareRequest(const ParsedRequest &request, const ModelLimits &limits) {
  const char *promptField = request.endpoint == Endpoint::kChat ? "messages" : "prompt";
  bool needsText = request.endpoint == Endpoint::kChat || request.promptText.has_value();
  if (needsText && !limits.text)
    return badRequest("this model has no tokenizer: give 'prompt' as token ids", promptField);
  if (request.endpoint == Endpoint::kChat && !limits.text->hasChatTemplate())
    return badRequest("this model has no chat template: use /v1/completions", "messages");
  bool hasStop = false;
  for (const std::string &stop : request.params.stop)
    hasStop |= !stop.empty();
  if (hasStop && !limits.text)
    return badRequest("this model has no tokenizer, so it cannot match stop strings", "stop");

  StatusOr<std::vector<int32_t>> ids = std::vector<int32_t>();
  if (request.endpoint == Endpoint::kChat)
    ids = limits.text->encodeChat(request.messages);
  else if (request.promptText)
    ids = limits.text->encodePrompt(*request.promptText);
  else
    ids = *request.promptIds;
  if (!ids.ok())
    return badRequest(ids.status().message(), promptField);
  if (ids->empty())
    return badRequest("the prompt is empty: a request needs at least one token", promptField);
  for (int32_t id : *ids)
    if (limits.vocab > 0 && id >= limits.vocab)
      return badRequest("token id " + std::to_string(id) + " is outside the vocabulary [0, " +
                            std::to_string(limits.vocab) + ")",
                        promptField);
  int64_t promptTokens = static_cast<int64_t>(ids->size());
  int64_t room = limits.maxSeqLen - promptTokens;
  if (room < 1)
    return badRequest("the prompt has " + std::to_string(promptTokens) +
                          " tokens; this model's context is " + std::to_string(limits.maxSeqLen) +
                          " tokens, prompt and completion together",
                      promptField, "context_length_exceeded");
  int64_t maxTokens = request.maxTokens.value_or(
      request.endpoint == Endpoint::kChat ? room : std::min<int64_t>(16, room));
  if (maxTokens > room)
    return badRequest("max_tokens " + std::to_string(maxTokens) + " plus the prompt's " +
                          std::to_string(promptTokens) + " tokens is more than this model's " +
                          "context of " + std::to_string(limits.maxSeqLen) + " tokens",
                      "max_tokens", "context_length_exceeded");
  serving::GenerationParams params = request.params;
  params.maxNewTokens = static_cast<int32_t>(maxTokens);
  // Every request's RNG has the same key, so a seed gives the same tokens
  // whatever else is running.
  params.samplerKey = 0;
  return std::make_pair(std::move(ids).value(), std::move(params));
}

} // namespace infer::server
