//===- JinjaLexer.h - template text to tokens -------------------*- C++ -*-===//
//
// Follows jinja2's lexer (3.1) with transformers' settings: trim_blocks
// (a block or comment tag eats the newline after it), lstrip_blocks (the
// whitespace from the start of a line up to a block or comment tag is
// dropped), `-` strips all whitespace on its side, `+` keeps it, and one
// trailing newline of the template is dropped. Comments vanish here and
// `{% raw %}` bodies come out as plain data.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJALEXER_H
#define INFER_RUNTIME_CHAT_JINJALEXER_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infer::chat::jinja {

enum class TokenKind : uint8_t {
  kData,          ///< template text, whitespace control applied
  kBlockBegin,    ///< {%
  kBlockEnd,      ///< %}
  kVariableBegin, ///< {{
  kVariableEnd,   ///< }}
  kName,
  kString, ///< text holds the unescaped value
  kInteger,
  kFloat,
  kOperator, ///< text holds the operator, e.g. "//"
  kEof,
};

struct Token {
  TokenKind kind;
  std::string text;
  int64_t intValue = 0;
  double floatValue = 0;
  int line = 1;
};

/// Tokenizes `source`; errors carry the line ("chat template line 3:
/// missing end of comment tag").
StatusOr<std::vector<Token>> tokenize(std::string_view source);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJALEXER_H
