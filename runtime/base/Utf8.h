//===- Utf8.h - UTF-8 coding shared by the tokenizer and the chat templates -*- C++ -*-===//
//
// Validation, decoding and encoding of UTF-8 as Unicode 3.9 defines it
// (well-formed sequences; U+FFFD for each maximal invalid subpart, as Rust's
// String::from_utf8_lossy and Python's errors="replace" do).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_UTF8_H
#define INFER_RUNTIME_BASE_UTF8_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace infer {

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

void appendUtf8(std::string &out, char32_t cp);

/// Appends `bytes` decoded as Rust's `String::from_utf8_lossy` does: each
/// maximal invalid subpart becomes one U+FFFD.
void appendLossyUtf8(std::string &out, std::string_view bytes);

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD"; // U+FFFD

/// `text` as code points; false when it is not well-formed UTF-8.
bool decodeUtf8(std::string_view text, std::u32string &out);

} // namespace infer

#endif // INFER_RUNTIME_BASE_UTF8_H
