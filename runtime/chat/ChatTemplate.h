//===- ChatTemplate.h - Hugging Face chat templates in C++ ------*- C++ -*-===//
//
// The subset of Jinja that Hugging Face chat templates use, rendering as
// transformers does (jinja2's ImmutableSandboxedEnvironment with
// trim_blocks, lstrip_blocks and loop controls; raise_exception,
// strftime_now and a json.dumps tojson). docs/chat-templates.md lists the
// subset. A template using anything outside it fails to parse, naming the
// construct and line, rather than rendering a different prompt.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_CHATTEMPLATE_H
#define INFER_RUNTIME_CHAT_CHATTEMPLATE_H

#include "runtime/base/Status.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace infer::chat {

namespace jinja {
struct Template;
}

/// A parsed template; immutable, so render() may run on several threads.
class ChatTemplate {
public:
  /// Parses a template. Anything outside the supported subset (a tag,
  /// filter, test, method, operator or global it does not know) is an error
  /// naming the construct and its line, e.g. "chat template line 3: filter
  /// 'wordwrap' is not supported".
  static StatusOr<ChatTemplate> parse(std::string_view source);

  /// Renders with `context` as the template's variables (messages,
  /// add_generation_prompt, bos_token, eos_token, tools, ... any JSON).
  /// Objects iterate in nlohmann::json's key order (sorted); use the
  /// ordered_json overload to keep the caller's order, as Python dicts do.
  /// Errors: raise_exception('msg') gives code FailedPrecondition and a
  /// message ending in msg; anything else the template does wrong (a type
  /// error, an undefined value used) gives InvalidArgument naming it.
  StatusOr<std::string> render(const nlohmann::json &context) const;
  StatusOr<std::string> render(const nlohmann::ordered_json &context) const;

private:
  explicit ChatTemplate(std::shared_ptr<const jinja::Template> tmpl) : template_(std::move(tmpl)) {}

  std::shared_ptr<const jinja::Template> template_;
};

/// Convenience used by the CLI: messages as [{"role":..,"content":..}]
/// (ordered: their keys iterate as the caller wrote them, as in Python),
/// tokens as strings. Passes `tools` and `documents` as None, as
/// transformers' apply_chat_template does when none are given.
StatusOr<std::string> applyChatTemplate(const ChatTemplate &chatTemplate,
                                        const nlohmann::ordered_json &messages, bool addGenerationPrompt,
                                        const std::string &bosToken, const std::string &eosToken);

} // namespace infer::chat

#endif // INFER_RUNTIME_CHAT_CHATTEMPLATE_H
