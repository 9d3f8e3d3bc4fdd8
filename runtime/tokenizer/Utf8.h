//===- Utf8.h - UTF-8 walking and the Unicode predicates HF uses -*- C++ -*-===//
//
// The character classes here are the ones the Rust `tokenizers` crate asks of
// Rust's `char` and its other crates (White_Space, `is_numeric`, `\w`, ...),
// answered from tables generated from the library, so that splits agree.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_UTF8_H
#define INFER_RUNTIME_TOKENIZER_UTF8_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace infer::tokenizer {

/// The length in bytes of the well-formed UTF-8 prefix of `text`.
size_t validUtf8Prefix(std::string_view text);
inline bool isValidUtf8(std::string_view text) { return validUtf8Prefix(text) == text.size(); }

/// Decodes the code point at `text[pos]` of VALID UTF-8 and advances `pos`.
inline char32_t nextCodePoint(std::string_view text, size_t &pos) {
  auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  auto cont = [&](size_t i) { return static_cast<char32_t>(text[pos + i] & 0x3F); };
  char32_t cp;
  if (b0 < 0xE0) {
    cp = (static_cast<char32_t>(b0 & 0x1F) << 6) | cont(1);
    pos += 2;
  } else if (b0 < 0xF0) {
    cp = (static_cast<char32_t>(b0 & 0x0F) << 12) | (cont(1) << 6) | cont(2);
    pos += 3;
  } else {
    cp = (static_cast<char32_t>(b0 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3);
    pos += 4;
  }
  return cp;
}

/// The byte length of the UTF-8 sequence that starts with lead byte `b`.
inline size_t utf8Length(unsigned char b) {
  return b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
}

/// The code point at the start of valid, non-empty `text`.
inline char32_t firstCodePoint(std::string_view text) {
  size_t pos = 0;
  return nextCodePoint(text, pos);
}

/// The code point that ends valid, non-empty `text`, and its byte offset.
char32_t lastCodePoint(std::string_view text, size_t *start = nullptr);

void appendUtf8(std::string &out, char32_t cp);

/// Appends `bytes` decoded as Rust's `String::from_utf8_lossy` does: each
/// maximal invalid subpart becomes one U+FFFD.
void appendLossyUtf8(std::string &out, std::string_view bytes);

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD"; // U+FFFD

// The predicates answer as HF's crates do, from UnicodeTables.h.

/// Unicode White_Space (Rust's `char::is_whitespace`, regex `\s`).
bool isWhiteSpace(char32_t cp);
/// Rust's `char::is_numeric` (general category Nd, Nl or No).
bool isNumeric(char32_t cp);
/// HF's Punctuation pre-tokenizer: ASCII punctuation or a P* category.
bool isPunctuation(char32_t cp);
/// Rust regex `\w` (Alphabetic, marks, Nd, Pc, Join_Control).
bool isRustWordChar(char32_t cp);
/// What HF's StripAccents removes (combining marks).
bool isCombiningMark(char32_t cp);
/// A character HF's NFx forms leave alone (see UnicodeTables.h).
bool isNormalizationFrozen(char32_t cp);

/// Appends Rust's `char::to_lowercase(cp)`.
void appendLowercase(std::string &out, char32_t cp);

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_UTF8_H
