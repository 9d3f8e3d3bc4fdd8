//===- Utf8.cpp - UTF-8 walking and the Unicode predicates HF uses --------===//
#include "runtime/tokenizer/Utf8.h"

#include "runtime/tokenizer/UnicodeTables.h"

namespace infer::tokenizer {

char32_t lastCodePoint(std::string_view text, size_t *start) {
  size_t pos = text.size() - 1;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80)
    --pos;
  if (start)
    *start = pos;
  size_t at = pos;
  return nextCodePoint(text, at);
}

bool isWhiteSpace(char32_t cp) {
  if (cp < 0x80)
    return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20;
  switch (cp) {
  case 0x85:
  case 0xA0:
  case 0x1680:
  case 0x2028:
  case 0x2029:
  case 0x202F:
  case 0x205F:
  case 0x3000:
    return true;
  default:
    return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool isNumeric(char32_t cp) {
  if (cp < 0x80)
    return cp >= '0' && cp <= '9';
  return unicode::inRanges(unicode::kRustNumeric, unicode::kRustNumericSize, cp);
}

bool isPunctuation(char32_t cp) {
  if (cp < 0x80)
    return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
           (cp >= 0x7B && cp <= 0x7E);
  return unicode::inRanges(unicode::kHfPunctuation, unicode::kHfPunctuationSize, cp);
}

bool isRustWordChar(char32_t cp) {
  if (cp < 0x80)
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           cp == '_';
  return unicode::inRanges(unicode::kRustWord, unicode::kRustWordSize, cp);
}

bool isCombiningMark(char32_t cp) {
  return cp >= 0x300 &&
         unicode::inRanges(unicode::kHfCombiningMark, unicode::kHfCombiningMarkSize, cp);
}

bool isNormalizationFrozen(char32_t cp) {
  return cp >= 0x300 &&
         unicode::inRanges(unicode::kNormalizationFrozen, unicode::kNormalizationFrozenSize, cp);
}

void appendLowercase(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
    return;
  }
  if (cp == 0x130) { // İ lowercases to i + COMBINING DOT ABOVE
    out.append("i\xCC\x87");
    return;
  }
  const unicode::CaseRun *runs = unicode::kRustLowercase;
  size_t lo = 0, hi = unicode::kRustLowercaseSize;
  while (lo < hi) { // the first run ending at or after cp
    size_t mid = (lo + hi) / 2;
    if (runs[mid].last < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < unicode::kRustLowercaseSize && runs[lo].first <= cp &&
      (cp - runs[lo].first) % static_cast<char32_t>(runs[lo].stride) == 0)
    cp = static_cast<char32_t>(static_cast<int32_t>(cp) + runs[lo].delta);
  appendUtf8(out, cp);
}

} // namespace infer::tokenizer
