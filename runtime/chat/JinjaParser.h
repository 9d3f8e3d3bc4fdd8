//===- JinjaParser.h - tokens to a checked template AST ---------*- C++ -*-===//
//
// A recursive-descent parser with jinja2's grammar and precedence. It is
// also where the subset is enforced: a tag, filter, test, method or global
// function outside the supported lists is an error naming the construct and
// its line, so an unsupported template never renders.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAPARSER_H
#define INFER_RUNTIME_CHAT_JINJAPARSER_H

#include "runtime/chat/JinjaAst.h"

#include <string_view>

namespace infer::chat::jinja {

/// Lexes and parses `source`, e.g. "chat template line 3: filter 'wordwrap'
/// is not supported".
StatusOr<Template> parseTemplate(std::string_view source);

/// The supported subset, shared with the interpreter and the docs.
bool isSupportedFilter(const std::string &name);
bool isSupportedTest(const std::string &name);
/// Methods of str, dict, list and loop that may be called.
bool isSupportedMethod(const std::string &name);
/// The str ones among them.
bool isSupportedStrMethod(const std::string &name);
/// Global functions: raise_exception, strftime_now, namespace, range, dict.
bool isSupportedGlobal(const std::string &name);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAPARSER_H
