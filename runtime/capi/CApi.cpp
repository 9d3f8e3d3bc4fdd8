//===- CApi.cpp - the C API of infer's runtime (infer.h) ------------------===//
//
// Each entry point turns JSON into Engine calls and back; no exception and no
// Status crosses the ABI: both become the `error` string.
//
//===----------------------------------------------------------------------===//

#include "runtime/capi/infer.h"

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/serving/Engine.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>

struct infer_engine {
  std::unique_ptr<infer::serving::Engine> engine;
};

namespace {

using infer::Status;
using infer::StatusOr;
// Ordered: objects keep the caller's key order, as Python dicts do (a chat
// template may iterate a message's keys).
using json = nlohmann::ordered_json;
namespace serving = infer::serving;

char *copyString(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out)
    std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

void setError(char **error, const std::string &message) {
  if (error)
    *error = copyString(message);
}

/// Runs `body` (returning StatusOr<R>); an error or exception goes to
/// `error` and yields `failed`.
template <typename R, typename Body> R guarded(char **error, R failed, Body &&body) {
  if (error)
    *error = nullptr;
  try {
    auto result = body();
    if (!result.ok()) {
      setError(error, result.status().message());
      return failed;
    }
    return std::move(result).value();
  } catch (const std::exception &exception) {
    setError(error, std::string("internal error: ") + exception.what());
  } catch (...) {
    setError(error, "internal error: unknown exception");
  }
  return failed;
}

/// The engine behind `handle`; InvalidArgument for NULL.
StatusOr<serving::Engine *> engineOf(infer_engine *handle) {
  if (!handle || !handle->engine)
    return infer::invalidArgumentError("the engine is NULL (closed or never opened)");
  return handle->engine.get();
}

StatusOr<json> parseJson(const char *text, const char *what) {
  if (!text)
    return infer::invalidArgumentError(std::string(what) + " is NULL");
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded())
    return infer::invalidArgumentError(std::string(what) + " is not valid JSON");
  return value;
}

/// Refuses keys outside `known` (a misspelled option must not be ignored).
Status checkKeys(const json &object, const std::set<std::string> &known, const char *what) {
  if (!object.is_object())
    return infer::invalidArgumentError(std::string(what) + " must be a JSON object");
  for (const auto &item : object.items())
    if (!known.count(item.key()))
      return infer::invalidArgumentError(std::string(what) + " has an unknown field '" +
                                         item.key() + "'");
  return infer::okStatus();
}

/// object[key] as T when present; InvalidArgument when of the wrong type.
template <typename T> Status optional(const json &object, const char *key, T &out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return infer::okStatus();
  bool fits = false;
  if constexpr (std::is_same_v<T, bool>)
    fits = it->is_boolean();
  else if constexpr (std::is_integral_v<T>)
    fits = it->is_number_integer();
  else if constexpr (std::is_floating_point_v<T>)
    fits = it->is_number();
  else
    fits = it->is_string();
  if (!fits)
    return infer::invalidArgumentError(std::string("'") + key + "' has the wrong type (" +
                                       it->dump() + ")");
  out = it->get<T>();
  return infer::okStatus();
}

StatusOr<std::vector<int32_t>> idList(const json &value, const char *what) {
  if (!value.is_array())
    return infer::invalidArgumentError(std::string(what) + " must be a list of token ids");
  std::vector<int32_t> ids;
  for (const json &id : value) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
      return infer::invalidArgumentError(std::string(what) + " holds " + id.dump() +
                                         ", not a token id");
    ids.push_back(static_cast<int32_t>(id.get<int64_t>()));
  }
  return ids;
}

StatusOr<serving::SessionOptions> sessionOptions(const char *optionsJson) {
  serving::SessionOptions options;
  if (!optionsJson)
    return options;
  ASSIGN_OR_RETURN(json object, parseJson(optionsJson, "options"));
  RETURN_IF_ERROR(checkKeys(
      object,
      {"device", "kv_blocks", "max_batch_tokens", "max_sequences", "prefix_caching", "run_ahead"},
      "options"));
  RETURN_IF_ERROR(optional(object, "device", options.device));
  RETURN_IF_ERROR(optional(object, "kv_blocks", options.kvBlocks));
  RETURN_IF_ERROR(optional(object, "max_batch_tokens", options.maxBatchTokens));
  RETURN_IF_ERROR(optional(object, "max_sequences", options.maxSequences));
  RETURN_IF_ERROR(optional(object, "prefix_caching", options.prefixCaching));
  RETURN_IF_ERROR(optional(object, "run_ahead", options.runAhead));
  return options;
}

StatusOr<int64_t> submit(serving::Engine &engine, const char *requestJson) {
  ASSIGN_OR_RETURN(json request, parseJson(requestJson, "request"));
  RETURN_IF_ERROR(checkKeys(request,
                            {"prompt", "prompt_ids", "messages", "max_tokens", "temperature",
                             "top_p", "top_k", "seed", "sampler_key", "stop", "ignore_eos"},
                            "request"));
  int given =
      request.contains("prompt") + request.contains("prompt_ids") + request.contains("messages");
  if (given != 1)
    return infer::invalidArgumentError(
        "a request needs exactly one of 'prompt', 'prompt_ids' and 'messages'");
  std::vector<int32_t> prompt;
  if (request.contains("prompt_ids")) {
    ASSIGN_OR_RETURN(prompt, idList(request["prompt_ids"], "'prompt_ids'"));
  } else if (request.contains("prompt")) {
    if (!request["prompt"].is_string())
      return infer::invalidArgumentError("'prompt' must be a string");
    ASSIGN_OR_RETURN(const serving::TextModel *text, engine.requireText());
    ASSIGN_OR_RETURN(prompt, text->encodePrompt(request["prompt"].get<std::string>()));
  } else {
    ASSIGN_OR_RETURN(const serving::TextModel *text, engine.requireText());
    ASSIGN_OR_RETURN(prompt, text->encodeChat(request["messages"]));
  }
  serving::GenerationParams params;
  params.sampling.temperature = 0;
  RETURN_IF_ERROR(optional(request, "max_tokens", params.maxNewTokens));
  RETURN_IF_ERROR(optional(request, "temperature", params.sampling.temperature));
  RETURN_IF_ERROR(optional(request, "top_p", params.sampling.topP));
  RETURN_IF_ERROR(optional(request, "top_k", params.sampling.topK));
  RETURN_IF_ERROR(optional(request, "seed", params.sampling.seed));
  RETURN_IF_ERROR(optional(request, "sampler_key", params.samplerKey));
  RETURN_IF_ERROR(optional(request, "ignore_eos", params.ignoreStopTokens));
  if (request.contains("stop") && !request["stop"].is_null()) {
    const json &stop = request["stop"];
    if (stop.is_string())
      params.stop.push_back(stop.get<std::string>());
    else if (stop.is_array() &&
             std::all_of(stop.begin(), stop.end(), [](const json &s) { return s.is_string(); }))
      params.stop = stop.get<std::vector<std::string>>();
    else
      return infer::invalidArgumentError("'stop' must be a string or a list of strings");
  }
  ASSIGN_OR_RETURN(serving::RequestId id, engine.submit(std::move(prompt), params));
  return static_cast<int64_t>(id);
}

json updateJson(const serving::RequestUpdate &update) {
  json out = {{"id", update.id},
              {"token_ids", update.tokens},
              {"text", update.text},
              {"finished", update.finished}};
  if (update.finished) {
    out["finish_reason"] = update.finishReason;
    out["finish_detail"] = update.finishDetail;
    out["stop_string"] = update.stopString ? json(*update.stopString) : json();
    out["error"] = update.error;
    out["prompt_tokens"] = update.promptTokens;
    out["cached_tokens"] = update.cachedTokens;
    out["preemptions"] = update.preemptions;
    out["output_ids"] = update.allTokens;
    out["output_text"] = update.allText;
  }
  return out;
}

/// JSON text for the C caller. Text the engine emits is whole UTF-8
/// characters by construction; dump() throws (an internal error) otherwise.
StatusOr<char *> dumped(const json &value) { return copyString(value.dump()); }

} // namespace

extern "C" {

int infer_api_version(void) { return INFER_C_API_VERSION; }

infer_engine *infer_engine_open(const char *artifactPath, const char *optionsJson, char **error) {
  return guarded<infer_engine *>(error, nullptr, [&]() -> StatusOr<infer_engine *> {
    if (!artifactPath)
      return infer::invalidArgumentError("the artifact path is NULL");
    ASSIGN_OR_RETURN(serving::SessionOptions options, sessionOptions(optionsJson));
    ASSIGN_OR_RETURN(auto engine, serving::Engine::open(artifactPath, options));
    return new infer_engine{std::move(engine)};
  });
}

void infer_engine_close(infer_engine *engine) { delete engine; }

char *infer_engine_info(infer_engine *handle, char **error) {
  return guarded<char *>(error, nullptr, [&]() -> StatusOr<char *> {
    ASSIGN_OR_RETURN(serving::Engine * opened, engineOf(handle));
    serving::Engine &engine = *opened;
    serving::ServingSession &session = engine.session();
    const serving::TextModel *text = engine.text();
    json info = {{"model", session.reader().manifest().model().name()},
                 {"device", session.deviceName()},
                 {"vocab", session.vocab()},
                 {"max_seq_len", session.maxSeqLen()},
                 {"kv_blocks", session.kvBlocks()},
                 {"tokenizer", text != nullptr},
                 {"chat_template", text && text->hasChatTemplate()},
                 {"stop_token_ids", text ? text->stopTokenIds() : std::vector<int32_t>()}};
    return dumped(info);
  });
}

char *infer_engine_tokenize(infer_engine *handle, const char *text, int addSpecialTokens,
                            char **error) {
  return guarded<char *>(error, nullptr, [&]() -> StatusOr<char *> {
    if (!text)
      return infer::invalidArgumentError("the text is NULL");
    ASSIGN_OR_RETURN(serving::Engine * engine, engineOf(handle));
    ASSIGN_OR_RETURN(const serving::TextModel *model, engine->requireText());
    ASSIGN_OR_RETURN(std::vector<int32_t> ids,
                     model->tokenizer().encode(text, addSpecialTokens != 0));
    return dumped(json(ids));
  });
}

char *infer_engine_detokenize(infer_engine *handle, const char *idsJson, int skipSpecialTokens,
                              char **error) {
  return guarded<char *>(error, nullptr, [&]() -> StatusOr<char *> {
    ASSIGN_OR_RETURN(serving::Engine * engine, engineOf(handle));
    ASSIGN_OR_RETURN(const serving::TextModel *model, engine->requireText());
    ASSIGN_OR_RETURN(json value, parseJson(idsJson, "ids"));
    ASSIGN_OR_RETURN(std::vector<int32_t> ids, idList(value, "ids"));
    ASSIGN_OR_RETURN(std::string text, model->tokenizer().decode(ids, skipSpecialTokens != 0));
    return dumped(json(text));
  });
}

char *infer_engine_apply_chat_template(infer_engine *handle, const char *messagesJson,
                                       char **error) {
  return guarded<char *>(error, nullptr, [&]() -> StatusOr<char *> {
    ASSIGN_OR_RETURN(serving::Engine * engine, engineOf(handle));
    ASSIGN_OR_RETURN(const serving::TextModel *model, engine->requireText());
    ASSIGN_OR_RETURN(json messages, parseJson(messagesJson, "messages"));
    ASSIGN_OR_RETURN(std::string prompt, model->renderChat(messages));
    return dumped(json(prompt));
  });
}

int64_t infer_engine_submit(infer_engine *handle, const char *requestJson, char **error) {
  return guarded<int64_t>(error, -1, [&]() -> StatusOr<int64_t> {
    ASSIGN_OR_RETURN(serving::Engine * engine, engineOf(handle));
    return submit(*engine, requestJson);
  });
}

int infer_engine_cancel(infer_engine *handle, int64_t request, char **error) {
  return guarded<int>(error, -1, [&]() -> StatusOr<int> {
    ASSIGN_OR_RETURN(serving::Engine * engine, engineOf(handle));
    RETURN_IF_ERROR(engine->cancel(static_cast<serving::RequestId>(request)));
    return 0;
  });
}

int infer_engine_has_unfinished(infer_engine *handle) {
  return handle && handle->engine && handle->engine->hasUnfinished() ? 1 : 0;
}

char *infer_engine_step(infer_engine *handle, char **error) {
  return guarded<char *>(error, nullptr, [&]() -> StatusOr<char *> {
    ASSIGN_OR_RETURN(serving::Engine * engine, engineOf(handle));
    ASSIGN_OR_RETURN(std::vector<serving::RequestUpdate> updates, engine->step());
    json out = json::array();
    for (const serving::RequestUpdate &update : updates)
      out.push_back(updateJson(update));
    return dumped(out);
  });
}

void infer_free(void *pointer) { std::free(pointer); }

} // extern "C"
