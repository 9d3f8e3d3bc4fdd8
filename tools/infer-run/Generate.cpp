//===- Generate.cpp - infer-run generate: text or ids over the engine -----===//
//
// Turns the prompts (ids, text, or chat messages through the template) into
// requests of a serving::Engine and prints what it generates:
//   --prompt, one request:     the text as it comes, then a summary on stderr
//   --prompt, several:         each request's text when all are done
//   --prompt-ids:              "token: request R id T" lines as they come, a
//                              line per request, then a JSON line
//   --output json:             only the JSON line: ids and text per request
//
//===----------------------------------------------------------------------===//

#include "tools/infer-run/Generate.h"

#include "runtime/serving/Engine.h"
#include "tools/infer-run/Output.h"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>

namespace infer::tools {
namespace {

using json = nlohmann::ordered_json;

/// "1,2,3" as ids (the engine checks them against the vocabulary).
StatusOr<std::vector<int32_t>> parseIds(const std::string &text, size_t index) {
  std::string what = "--prompt-ids #" + std::to_string(index + 1) + " '" + text + "'";
  std::vector<int32_t> ids;
  size_t start = 0;
  if (text.find_first_not_of(" \t") == std::string::npos)
    return invalidArgumentError(what + " is empty: a prompt needs at least one token id");
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    // Digits only: strtoll would also take leading spaces and a sign, so
    // " 1" and "+1" would pass for ids.
    bool digits = !item.empty() && item.find_first_not_of("0123456789") == std::string::npos;
    errno = 0;
    long long value = digits ? std::strtoll(item.c_str(), nullptr, 10) : 0;
    if (!digits || errno != 0)
      return invalidArgumentError(what + ": '" + item +
                                  "' is not a token id (decimal digits only, no spaces or signs)");
    if (value < 0 || value > INT32_MAX)
      return invalidArgumentError(what + ": token id " + std::to_string(value) +
                                  " is outside the vocabulary");
    ids.push_back(static_cast<int32_t>(value));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return ids;
}

/// Every request's prompt ids, in order, with what names it in errors.
StatusOr<std::vector<std::pair<std::vector<int32_t>, std::string>>>
promptIds(const serving::Engine &engine, const GenerateOptions &options) {
  std::vector<std::pair<std::vector<int32_t>, std::string>> prompts;
  for (size_t i = 0; i < options.prompts.size(); ++i) {
    ASSIGN_OR_RETURN(auto ids, parseIds(options.prompts[i], i));
    prompts.emplace_back(std::move(ids), "--prompt-ids #" + std::to_string(i + 1));
  }
  if (options.textPrompts.empty())
    return prompts;
  ASSIGN_OR_RETURN(const serving::TextModel *text, engine.requireText());
  for (size_t i = 0; i < options.textPrompts.size(); ++i) {
    std::string what = "--prompt #" + std::to_string(i + 1);
    StatusOr<std::vector<int32_t>> ids = std::vector<int32_t>();
    if (options.chat) {
      json messages = json::array();
      if (!options.system.empty())
        messages.push_back({{"role", "system"}, {"content", options.system}});
      messages.push_back({{"role", "user"}, {"content", options.textPrompts[i]}});
      ids = text->encodeChat(messages);
    } else {
      ids = text->encodePrompt(options.textPrompts[i]);
    }
    if (!ids.ok())
      return ids.status().withPrefix(what);
    prompts.emplace_back(std::move(ids).value(), what);
  }
  return prompts;
}

Status validate(const GenerateOptions &options) {
  if (options.prompts.empty() && options.textPrompts.empty())
    return invalidArgumentError("generate needs a --prompt \"text\" or a --prompt-ids list");
  if (options.chat && options.textPrompts.empty())
    return invalidArgumentError("--chat applies the chat template to --prompt texts");
  if (!options.system.empty() && !options.chat)
    return invalidArgumentError("--system is a chat message: give --chat too");
  if (options.output != "text" && options.output != "json")
    return invalidArgumentError("--output must be text or json (got '" + options.output + "')");
  if (options.maxNewTokens < 1)
    return invalidArgumentError("--max-new-tokens must be at least 1");
  return sampling::validate(options.sampling);
}

json requestJson(const serving::RequestUpdate &done, bool hasText) {
  json out = {{"id", done.id},
              {"prompt_tokens", done.promptTokens},
              {"generated", done.allTokens},
              {"finish_reason", done.finishReason},
              {"finish_detail", done.finishDetail},
              {"preemptions", done.preemptions},
              {"cached_tokens", done.cachedTokens}};
  if (hasText)
    out["text"] = done.allText;
  if (done.stopString)
    out["stop_string"] = *done.stopString;
  if (!done.error.empty())
    out["error"] = done.error;
  return out;
}

} // namespace

Status runGenerate(const std::string &artifactPath, const GenerateOptions &options) {
  RETURN_IF_ERROR(validate(options));
  ASSIGN_OR_RETURN(auto engine, serving::Engine::open(artifactPath, options.session));
  ASSIGN_OR_RETURN(auto prompts, promptIds(*engine, options));
  bool hasText = engine->text() != nullptr;
  for (size_t i = 0; i < prompts.size(); ++i) {
    serving::GenerationParams params;
    params.maxNewTokens = options.maxNewTokens;
    params.sampling = options.sampling;
    params.samplerKey = static_cast<int64_t>(i);
    params.stop = options.stop;
    params.ignoreStopTokens = options.ignoreEos;
    auto id = engine->submit(std::move(prompts[i].first), params);
    if (!id.ok())
      return id.status().withPrefix(prompts[i].second);
  }

  // What is printed as it comes: one request's text, or every token's id.
  bool asJson = options.output == "json";
  bool streamText = !asJson && !options.textPrompts.empty() && prompts.size() == 1;
  bool streamIds = !asJson && options.textPrompts.empty();
  auto start = std::chrono::steady_clock::now();
  std::map<serving::RequestId, serving::RequestUpdate> done;
  std::string failure;
  int failures = 0;
  while (engine->hasUnfinished()) {
    ASSIGN_OR_RETURN(std::vector<serving::RequestUpdate> updates, engine->step());
    for (serving::RequestUpdate &update : updates) {
      if (streamText)
        std::fputs(update.text.c_str(), stdout);
      if (streamIds)
        for (int32_t token : update.tokens)
          std::printf("token: request %lld id %d\n", static_cast<long long>(update.id), token);
      if (!update.finished)
        continue;
      if (update.finishReason == "error" && update.finishDetail == "refused")
        return invalidArgumentError(prompts[update.id].second + " cannot run: " + update.error);
      // Any other error ends only its request (e.g. non-finite logits): the
      // others go on; the command fails at the end, naming it.
      if (update.finishReason == "error" && failure.empty())
        failure = prompts[update.id].second + " (request " + std::to_string(update.id) +
                  ") ended with an error: " + update.error;
      failures += update.finishReason == "error";
      done.emplace(update.id, std::move(update));
    }
    RETURN_IF_ERROR(flushStdout());
  }
  auto result = [&]() -> Status {
    RETURN_IF_ERROR(flushStdout());
    if (failures == 0)
      return okStatus();
    return internalError(failure +
                         (failures > 1 ? " (and " + std::to_string(failures - 1) + " more requests)"
                                       : std::string()));
  };
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  serving::ServingSession &session = engine->session();
  if (streamText) {
    const serving::RequestUpdate &only = done.begin()->second;
    std::printf("\n");
    std::fflush(stdout); // the summary on stderr comes after the text
    std::fprintf(stderr, "[%d prompt tokens, %zu generated in %.2f s, finish: %s%s, device %s]\n",
                 only.promptTokens, only.allTokens.size(), seconds, only.finishReason.c_str(),
                 only.stopString ? (" at \"" + *only.stopString + "\"").c_str() : "",
                 session.deviceName().c_str());
    return result();
  }
  if (!asJson) {
    for (auto &[id, request] : done) {
      std::string ids;
      for (int32_t token : request.allTokens)
        ids += (ids.empty() ? "" : " ") + std::to_string(token);
      std::printf("request %lld: %d prompt tokens, %zu generated (%s): %s\n",
                  static_cast<long long>(id), request.promptTokens, request.allTokens.size(),
                  request.finishDetail.c_str(), ids.c_str());
      if (hasText && !options.textPrompts.empty())
        std::printf("%s\n", request.allText.c_str());
    }
  }
  json summary = {{"requests", json::array()}};
  for (auto &[id, request] : done)
    summary["requests"].push_back(requestJson(request, hasText));
  summary["steps"] = session.steps();
  summary["computed_tokens"] = session.computedTokens();
  summary["preemptions"] = session.scheduler().numPreemptions();
  summary["kv_blocks"] = session.kvBlocks();
  summary["steps_ahead"] = session.stepsAhead();
  summary["steps_ahead_dropped"] = session.stepsAheadDropped();
  std::printf("%s\n", summary.dump(-1, ' ', false, json::error_handler_t::replace).c_str());
  return result();
}

} // namespace infer::tools
