//===- Utf8.cpp - UTF-8 walking and the Unicode predicates HF uses --------===//
#include "runtime/tokenizer/Utf8.h"

#include "runtime/tokenizer/UnicodeTables.h"

namespace infer::tokenizer {
namespace {

/// At `p` (n > 0 bytes left): the length of the well-formed sequence there,
/// or 0 with `*invalid` set to the length of its maximal invalid subpart
/// (Unicode 3.9, "U+FFFD substitution of maximal subparts"), at least 1.
size_t sequenceAt(const unsigned char *p, size_t n, size_t *invalid) {
  unsigned char b0 = p[0];
  if (b0 < 0x80)
    return 1;
  size_t width;
  unsigned char lo = 0x80, hi = 0xBF; // the range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    width = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    width = 3;
    if (b0 == 0xE0)
      lo = 0xA0;
    else if (b0 == 0xED)
      hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    width = 4;
    if (b0 == 0xF0)
      lo = 0x90;
    else if (b0 == 0xF4)
      hi = 0x8F;
  } else {
    *invalid = 1;
    return 0;
  }
  for (size_t i = 1; i < width; ++i) {
    bool ok = i < n && p[i] >= (i == 1 ? lo : 0x80) && p[i] <= (i == 1 ? hi : 0xBF);
    if (!ok) {
      *invalid = i;
      return 0;
    }
  }
  return width;
}

} // namespace

size_t validUtf8Prefix(std::string_view text) {
  auto *p = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size(), i = 0;
  while (i < n) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    size_t invalid = 0;
    size_t len = sequenceAt(p + i, n - i, &invalid);
    if (len == 0)
      return i;
    i += len;
  }
  return n;
}

char32_t lastCodePoint(std::string_view text, size_t *start) {
  size_t pos = text.size() - 1;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80)
    --pos;
  if (start)
    *start = pos;
  size_t at = pos;
  return nextCodePoint(text, at);
}

void appendUtf8(std::string &out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

void appendLossyUtf8(std::string &out, std::string_view bytes) {
  auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
  size_t n = bytes.size(), i = 0;
  while (i < n) {
    size_t invalid = 0;
    size_t len = sequenceAt(p + i, n - i, &invalid);
    if (len) {
      out.append(bytes.data() + i, len);
      i += len;
    } else {
      out.append(kReplacementChar);
      i += invalid;
    }
  }
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
