//===- JinjaUnicode.cpp - code-point facts for Python's str methods -------===//

#include "runtime/chat/JinjaUnicode.h"

#include <algorithm>
#include <iterator>

namespace infer::chat::jinja {
namespace {

struct Range {
  char32_t first;
  char32_t last;
};

bool inRanges(const Range *begin, const Range *end, char32_t c) {
  const Range *it =
      std::upper_bound(begin, end, c, [](char32_t v, const Range &r) { return v < r.first; });
  return it != begin && c <= std::prev(it)->last;
}

// Code points without case in Python 3.11 (upper, lower and title map them to
// themselves and they are neither upper nor lower), computed from
// unicodedata over the scripts listed in the header; runs shorter than four
// were dropped outside Latin-1.
constexpr Range kCaseless[] = {
    {0x80, 0xA9},       {0xAB, 0xB4},       {0xB6, 0xB9},       {0xBB, 0xBF},
    {0xD7, 0xD7},       {0xF7, 0xF7},       {0x1C0, 0x1C3},     {0x2B9, 0x2BF},
    {0x2C2, 0x2DF},     {0x2E5, 0x2FF},     {0x590, 0x6FF},     {0x900, 0xE7F},
    {0x2000, 0x2070},   {0x2072, 0x207E},   {0x2080, 0x208F},   {0x209D, 0x2101},
    {0x2103, 0x2106},   {0x211E, 0x2123},   {0x2135, 0x2138},   {0x2140, 0x2144},
    {0x214A, 0x214D},   {0x214F, 0x215F},   {0x2185, 0x24B5},   {0x24EA, 0x2BFF},
    {0x2E80, 0x2FDF},   {0x3000, 0xA4CF},   {0xAC00, 0xD7AF},   {0xF900, 0xFAFF},
    {0xFE30, 0xFE4F},   {0xFF00, 0xFF20},   {0xFF3B, 0xFF40},   {0xFF5B, 0xFFEF},
    {0x1F000, 0x1F12F}, {0x1F14A, 0x1F14F}, {0x1F16A, 0x1F16F}, {0x1F18A, 0x1FAFF},
    {0x20000, 0x2FFFF},
};

// Code points Python's repr() escapes, in ascending ranges.
constexpr Range kNonPrintable[] = {
#include "runtime/chat/JinjaPrintable.inc"
};

bool isCaseless(char32_t c) { return inRanges(std::begin(kCaseless), std::end(kCaseless), c); }

// Upper- and lowercase letters that map one-to-one by a fixed offset:
// ASCII, Latin-1 (minus ×, ÷, ß, ÿ) and basic Cyrillic.
bool isSimpleUpper(char32_t c) {
  return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7) ||
         (c >= 0x400 && c <= 0x42F);
}
bool isSimpleLower(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 0xE0 && c <= 0xFE && c != 0xF7) ||
         (c >= 0x430 && c <= 0x45F);
}
char32_t simpleToLower(char32_t c) { return c >= 0x400 && c <= 0x40F ? c + 0x50 : c + 0x20; }
char32_t simpleToUpper(char32_t c) { return c >= 0x450 && c <= 0x45F ? c - 0x50 : c - 0x20; }

} // namespace

std::u32string toCodePoints(std::string_view text) {
  std::u32string out;
  if (!decodeUtf8(text, out)) {
    // Callers validate first; degrade to replacement characters rather than
    // reading out of bounds if one forgot.
    out.clear();
    for (unsigned char b : text)
      out.push_back(b < 0x80 ? b : 0xFFFD);
  }
  return out;
}

std::string toUtf8(std::u32string_view codePoints) {
  std::string out;
  out.reserve(codePoints.size());
  for (char32_t c : codePoints)
    appendUtf8(out, c);
  return out;
}

size_t codePointCount(std::string_view text) {
  size_t n = 0;
  for (char ch : text)
    if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80)
      ++n;
  return n;
}

bool isPySpace(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

bool isLineBoundary(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || c == 0x1C || c == 0x1D || c == 0x1E ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

bool appendCaseMapped(char32_t c, CaseOp op, std::u32string &out) {
  if (c < 0x80 || isSimpleUpper(c) || isSimpleLower(c)) {
    if (op == CaseOp::kLower)
      out.push_back(isSimpleUpper(c) ? simpleToLower(c) : c);
    else
      out.push_back(isSimpleLower(c) ? simpleToUpper(c) : c);
    return true;
  }
  switch (c) {
  case 0xAA: // ª and º are lowercase without an uppercase form.
  case 0xBA:
    out.push_back(c);
    return true;
  case 0xB5: // µ uppercases to Greek capital mu.
    out.push_back(op == CaseOp::kLower ? c : 0x39C);
    return true;
  case 0xDF: // ß: "SS" upper, "Ss" title.
    if (op == CaseOp::kLower) {
      out.push_back(c);
    } else {
      out.push_back('S');
      out.push_back(op == CaseOp::kUpper ? 'S' : 's');
    }
    return true;
  case 0xFF: // ÿ uppercases to Ÿ (U+0178).
    out.push_back(op == CaseOp::kLower ? c : 0x178);
    return true;
  default:
    break;
  }
  if (isCaseless(c)) {
    out.push_back(c);
    return true;
  }
  return false;
}

std::optional<CaseInfo> caseInfo(char32_t c) {
  if (isSimpleUpper(c))
    return CaseInfo{true, false, true};
  if (isSimpleLower(c) || c == 0xAA || c == 0xBA || c == 0xB5 || c == 0xDF || c == 0xFF)
    return CaseInfo{true, true, false};
  if (c < 0x80 || isCaseless(c))
    return CaseInfo{};
  return std::nullopt;
}

bool isPrintable(char32_t c) {
  return !inRanges(std::begin(kNonPrintable), std::end(kNonPrintable), c);
}

} // namespace infer::chat::jinja
