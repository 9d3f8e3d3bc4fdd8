//===- JinjaFormat.h - str(), repr() and json.dumps() of values -*- C++ -*-===//
//
// What a template prints is Python's str() of the value (`{{ x }}`, `~`,
// `|string`), which for containers is repr() of the items; `|tojson` is
// json.dumps as transformers configures it (ensure_ascii=False). Values whose
// Python text includes a memory address (generators, functions) or a code
// point whose repr is not known here are errors rather than a guess.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAFORMAT_H
#define INFER_RUNTIME_CHAT_JINJAFORMAT_H

#include "runtime/chat/JinjaValue.h"

#include <optional>
#include <string>
#include <string_view>

namespace infer::chat::jinja {

/// Python's repr() of a float ("1.0", "1e+16", "0.30000000000000004").
std::string floatRepr(double value);
/// Python's str(value); Undefined prints as "".
StatusOr<std::string> pyStr(const Value &value);
/// Python's repr(value).
StatusOr<std::string> pyRepr(const Value &value);
/// markupsafe.escape: & < > ' " as HTML entities.
std::string htmlEscape(std::string_view text);

/// json.dumps options; the defaults are transformers' `tojson`.
struct JsonOptions {
  bool ensureAscii = false;
  /// Each nesting level is indented by this; nullopt: one line.
  std::optional<std::string> indent;
  /// nullopt: ", " on one line, "," when indenting.
  std::optional<std::string> itemSeparator;
  std::string keySeparator = ": ";
  bool sortKeys = false;
};
StatusOr<std::string> toJson(const Value &value, const JsonOptions &options);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAFORMAT_H
