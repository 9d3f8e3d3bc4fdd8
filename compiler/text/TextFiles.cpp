//===- TextFiles.cpp - a model's tokenizer files into the artifact --------===//

#include "compiler/text/TextFiles.h"

#include "runtime/base/FileReader.h"
#include "runtime/chat/ChatTemplate.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace infer::compiler {
namespace {

using nlohmann::json;

// Configs are small; tokenizer.json is bounded by kMaxTokenizerJsonBytes.
constexpr uint64_t kMaxConfigBytes = 16ull << 20;

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The file `name` in `dir` (nullopt when absent), read within `maxBytes`.
StatusOr<std::optional<std::string>> readOptional(const std::string &dir, const std::string &name,
                                                  uint64_t maxBytes) {
  ASSIGN_OR_RETURN(std::string path, fileInsideDirectory(dir, name));
  if (path.empty())
    return std::optional<std::string>();
  ASSIGN_OR_RETURN(std::string bytes, readRegularFile(path, maxBytes));
  return std::optional<std::string>(std::move(bytes));
}

/// `bytes` parsed as a JSON object, or an error naming `what`.
StatusOr<json> parseObject(const std::string &bytes, const std::string &what) {
  json value = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded())
    return invalidArgumentError(what + " is not valid JSON");
  if (!value.is_object())
    return invalidArgumentError(what + " is not a JSON object");
  return value;
}

/// A special token as tokenizer_config.json writes it: a string, an
/// AddedToken object {"content": ...}, or null.
StatusOr<std::string> tokenText(const json &config, const char *key, const std::string &what) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null())
    return std::string();
  if (it->is_string())
    return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  return invalidArgumentError(what + ": '" + key + "' is neither a string nor {\"content\": ...}");
}

/// tokenizer_config.json's chat_template: a string, or a list of
/// {"name", "template"} of which "default" is the chat one.
StatusOr<std::string> configTemplate(const json &config, const std::string &what) {
  auto it = config.find("chat_template");
  if (it == config.end() || it->is_null())
    return std::string();
  if (it->is_string())
    return it->get<std::string>();
  if (it->is_array()) {
    for (const json &entry : *it)
      if (entry.is_object() && entry.value("name", "") == "default" && entry.contains("template") &&
          entry["template"].is_string())
        return entry["template"].get<std::string>();
    return invalidArgumentError(what + ": chat_template is a list without a \"default\" entry");
  }
  return invalidArgumentError(what + ": chat_template is neither a string nor a list");
}

/// generation_config.json's eos_token_id: an id, a list of ids, or null.
StatusOr<std::vector<int64_t>> eosIds(const json &config, const std::string &what) {
  std::vector<int64_t> ids;
  auto it = config.find("eos_token_id");
  if (it == config.end() || it->is_null())
    return ids;
  auto take = [&](const json &value) -> Status {
    if (!value.is_number_integer())
      return invalidArgumentError(what + ": eos_token_id holds " + value.dump() +
                                  ", not a token id");
    ids.push_back(value.get<int64_t>());
    return okStatus();
  };
  if (it->is_array()) {
    for (const json &value : *it)
      RETURN_IF_ERROR(take(value));
  } else {
    RETURN_IF_ERROR(take(*it));
  }
  return ids;
}

} // namespace

StatusOr<std::optional<artifact::TextInfo>> readTextFiles(const TextFileOptions &options,
                                                          std::string &note) {
  bool explicitDir = !options.tokenizerDir.empty();
  std::string dir = explicitDir ? options.tokenizerDir : directoryOf(options.modelPath);
  ASSIGN_OR_RETURN(std::optional<std::string> tokenizerJson,
                   readOptional(dir, "tokenizer.json", tokenizer::kMaxTokenizerJsonBytes));
  if (!tokenizerJson) {
    if (explicitDir)
      return notFoundError("--tokenizer " + dir + ": no tokenizer.json in that directory");
    if (!options.chatTemplatePath.empty())
      return invalidArgumentError("--chat-template needs a tokenizer: no tokenizer.json beside "
                                  "the model (give --tokenizer DIR)");
    note = "no tokenizer.json beside the model: the artifact takes and gives token ids only "
           "(--tokenizer DIR adds one)";
    return std::optional<artifact::TextInfo>();
  }
  artifact::TextInfo info;
  std::string where = dir + "/tokenizer.json";
  auto tokenizer = tokenizer::Tokenizer::fromJson(*tokenizerJson);
  if (!tokenizer.ok())
    return tokenizer.status().withPrefix(where);
  int64_t tokens = (*tokenizer)->vocabSize();
  if (options.modelVocab > 0 && tokens > options.modelVocab)
    return invalidArgumentError(where + " has " + std::to_string(tokens) +
                                " tokens but the model's logits cover " +
                                std::to_string(options.modelVocab) +
                                ": it is not this model's tokenizer (--tokenizer DIR)");
  info.set_tokenizer_json(std::move(*tokenizerJson));
  info.add_sources("tokenizer.json");

  std::string chatTemplate;
  ASSIGN_OR_RETURN(auto configBytes, readOptional(dir, "tokenizer_config.json", kMaxConfigBytes));
  if (configBytes) {
    std::string what = dir + "/tokenizer_config.json";
    ASSIGN_OR_RETURN(json config, parseObject(*configBytes, what));
    ASSIGN_OR_RETURN(std::string bos, tokenText(config, "bos_token", what));
    ASSIGN_OR_RETURN(std::string eos, tokenText(config, "eos_token", what));
    ASSIGN_OR_RETURN(chatTemplate, configTemplate(config, what));
    info.set_bos_token(bos);
    info.set_eos_token(eos);
    info.add_sources("tokenizer_config.json");
  }
  std::string templateSource = "tokenizer_config.json";
  ASSIGN_OR_RETURN(auto templateFile, readOptional(dir, "chat_template.jinja", kMaxConfigBytes));
  if (templateFile) {
    chatTemplate = std::move(*templateFile);
    templateSource = "chat_template.jinja";
    info.add_sources(templateSource);
  }
  if (!options.chatTemplatePath.empty()) {
    ASSIGN_OR_RETURN(chatTemplate, readRegularFile(options.chatTemplatePath, kMaxConfigBytes));
    templateSource = options.chatTemplatePath;
  }
  if (!chatTemplate.empty()) {
    auto parsed = chat::ChatTemplate::parse(chatTemplate);
    if (!parsed.ok())
      return parsed.status().withPrefix(
          templateSource == options.chatTemplatePath ? templateSource : dir + "/" + templateSource);
    info.set_chat_template(chatTemplate);
  }

  // The ids that end a generation: generation_config's, then the eos token.
  std::vector<int64_t> stops;
  ASSIGN_OR_RETURN(auto generationBytes,
                   readOptional(dir, "generation_config.json", kMaxConfigBytes));
  if (generationBytes) {
    std::string what = dir + "/generation_config.json";
    ASSIGN_OR_RETURN(json generation, parseObject(*generationBytes, what));
    ASSIGN_OR_RETURN(stops, eosIds(generation, what));
    for (int64_t id : stops)
      if (id < 0 || id >= tokens)
        return invalidArgumentError(what + ": eos_token_id " + std::to_string(id) +
                                    " is outside the tokenizer's " + std::to_string(tokens) +
                                    " tokens");
    info.add_sources("generation_config.json");
  }
  if (!info.eos_token().empty()) {
    std::optional<int32_t> eos = (*tokenizer)->tokenToId(info.eos_token());
    if (!eos)
      return invalidArgumentError(dir + "/tokenizer_config.json: eos_token '" + info.eos_token() +
                                  "' is not a token of tokenizer.json");
    stops.push_back(*eos);
  }
  for (int64_t id : stops)
    if (std::find(info.stop_token_ids().begin(), info.stop_token_ids().end(), id) ==
        info.stop_token_ids().end())
      info.add_stop_token_ids(static_cast<int32_t>(id));
  return std::optional<artifact::TextInfo>(std::move(info));
}

} // namespace infer::compiler
