//===- JinjaUnicode.h - the code-point facts Python's str methods use -*- C++ -*-===//
//
// Strings are UTF-8 in the interpreter, but Python measures, slices, strips
// and case-maps them by code point. This is the small subset of the Unicode
// database those operations need. Case mapping and printability are known
// exactly for ASCII, Latin-1 and a list of scripts without case (CJK, kana,
// Hangul, Indic, Arabic, Hebrew, symbols, emoji); for other code points the
// case queries answer "unknown" so callers can refuse instead of guessing.
// Printability is known for all code points.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CHAT_JINJAUNICODE_H
#define INFER_RUNTIME_CHAT_JINJAUNICODE_H

#include "runtime/base/Utf8.h"

#include <optional>
#include <string>
#include <string_view>

namespace infer::chat::jinja {

// UTF-8 decoding and encoding are runtime/base/Utf8.h's (decodeUtf8 is false
// on malformed input: overlong forms, surrogates, truncated sequences, values
// past U+10FFFF).
using infer::appendUtf8;
using infer::decodeUtf8;

/// Decodes UTF-8 that is known to be valid (everything inside the
/// interpreter is validated on the way in).
std::u32string toCodePoints(std::string_view text);
std::string toUtf8(std::u32string_view codePoints);
/// Python's len() of a str.
size_t codePointCount(std::string_view text);

/// Python's str.isspace() for one code point (also what `\s` matches).
bool isPySpace(char32_t c);
/// The boundaries str.splitlines() splits at (\r\n counts as one).
bool isLineBoundary(char32_t c);

enum class CaseOp { kUpper, kLower, kTitle };
/// Appends Python's full case mapping of `c` (ß upper is "SS"); false when
/// the code point is outside the subset whose case behaviour is known.
bool appendCaseMapped(char32_t c, CaseOp op, std::u32string &out);
/// Whether `c` is a cased letter, and whether it is lowercase / uppercase;
/// nullopt when unknown (see above).
struct CaseInfo {
  bool cased = false;
  bool lower = false;
  bool upper = false;
};
std::optional<CaseInfo> caseInfo(char32_t c);

/// Python's str.isprintable() for one code point (whether repr() keeps it),
/// from the Unicode database of the Python that generated
/// JinjaPrintable.inc.
bool isPrintable(char32_t c);

} // namespace infer::chat::jinja

#endif // INFER_RUNTIME_CHAT_JINJAUNICODE_H
