//===- ChatTemplate.cpp - Hugging Face chat templates in C++ --------------===//

#include "runtime/chat/ChatTemplate.h"

#include "runtime/chat/JinjaInterpreter.h"
#include "runtime/chat/JinjaParser.h"
#include "runtime/chat/JinjaUnicode.h"

namespace infer::chat {
namespace {

using jinja::Value;

/// JSON as the Python objects json.loads would give (dict, list, str, int,
/// float, bool, None).
template <typename Json>
StatusOr<Value> fromJson(const Json &json) {
  switch (json.type()) {
  case nlohmann::json::value_t::null:
    return Value::none();
  case nlohmann::json::value_t::boolean:
    return Value::boolean(json.template get<bool>());
  case nlohmann::json::value_t::number_integer:
    return Value::integer(json.template get<int64_t>());
  case nlohmann::json::value_t::number_unsigned: {
    uint64_t u = json.template get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      return invalidArgumentError("integer " + std::to_string(u) +
                                  " in the chat template context is beyond 64 bits");
    return Value::integer(static_cast<int64_t>(u));
  }
  case nlohmann::json::value_t::number_float:
    return Value::floating(json.template get<double>());
  case nlohmann::json::value_t::string: {
    const std::string &s = json.template get_ref<const std::string &>();
    std::u32string check;
    if (!jinja::decodeUtf8(s, check))
      return invalidArgumentError("a string in the chat template context is not valid UTF-8");
    return Value::string(s);
  }
  case nlohmann::json::value_t::array: {
    std::vector<Value> items;
    for (const auto &item : json) {
      ASSIGN_OR_RETURN(Value value, fromJson(item));
      items.push_back(std::move(value));
    }
    return Value::list(std::move(items));
  }
  case nlohmann::json::value_t::object: {
    auto dict = std::make_shared<jinja::Dict>();
    for (auto it = json.begin(); it != json.end(); ++it) {
      ASSIGN_OR_RETURN(Value value, fromJson(it.value()));
      dict->entries.emplace_back(Value::string(it.key()), std::move(value));
    }
    return Value::dict(std::move(dict));
  }
  default:
    return invalidArgumentError("binary values are not supported in the chat template context");
  }
}

template <typename Json>
StatusOr<std::string> renderJson(const jinja::Template &tmpl, const Json &context) {
  if (!context.is_object())
    return invalidArgumentError("chat template context must be a JSON object");
  ASSIGN_OR_RETURN(Value value, fromJson(context));
  return jinja::renderTemplate(tmpl, value);
}

} // namespace

StatusOr<ChatTemplate> ChatTemplate::parse(std::string_view source) {
  ASSIGN_OR_RETURN(jinja::Template tmpl, jinja::parseTemplate(source));
  return ChatTemplate(std::make_shared<const jinja::Template>(std::move(tmpl)));
}

StatusOr<std::string> ChatTemplate::render(const nlohmann::json &context) const {
  return renderJson(*template_, context);
}

StatusOr<std::string> ChatTemplate::render(const nlohmann::ordered_json &context) const {
  return renderJson(*template_, context);
}

StatusOr<std::string> applyChatTemplate(const ChatTemplate &chatTemplate,
                                        const nlohmann::ordered_json &messages, bool addGenerationPrompt,
                                        const std::string &bosToken, const std::string &eosToken) {
  if (!messages.is_array())
    return invalidArgumentError("chat messages must be a JSON array");
  nlohmann::ordered_json context;
  context["messages"] = messages;
  context["tools"] = nullptr;
  context["documents"] = nullptr;
  context["add_generation_prompt"] = addGenerationPrompt;
  context["bos_token"] = bosToken;
  context["eos_token"] = eosToken;
  return chatTemplate.render(context);
}

} // namespace infer::chat
