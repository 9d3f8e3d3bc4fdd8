//===- JinjaString.cpp - Python str methods on UTF-8 strings --------------===//

#include "runtime/chat/JinjaString.h"

#include "runtime/chat/JinjaUnicode.h"

#include <algorithm>
#include <cstdio>

namespace infer::chat::jinja {
namespace {

Status unknownCase(char32_t c) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "case conversion of U+%04X is not supported",
                static_cast<unsigned>(c));
  return invalidArgumentError(buf);
}

StatusOr<std::u32string> mapCase(const std::u32string &in, CaseOp op) {
  std::u32string out;
  out.reserve(in.size());
  for (char32_t c : in)
    if (!appendCaseMapped(c, op, out))
      return unknownCase(c);
  return out;
}

StatusOr<CaseInfo> info(char32_t c) {
  std::optional<CaseInfo> i = caseInfo(c);
  if (!i)
    return unknownCase(c);
  return *i;
}

} // namespace

std::string pyStrip(const std::string &s, const std::optional<std::string> &chars, bool left,
                    bool right) {
  std::u32string cps = toCodePoints(s);
  std::u32string set = chars ? toCodePoints(*chars) : std::u32string();
  auto strip = [&](char32_t c) {
    return chars ? set.find(c) != std::u32string::npos : isPySpace(c);
  };
  size_t begin = 0, end = cps.size();
  if (left)
    while (begin < end && strip(cps[begin]))
      ++begin;
  if (right)
    while (end > begin && strip(cps[end - 1]))
      --end;
  return toUtf8(std::u32string_view(cps).substr(begin, end - begin));
}

StatusOr<std::vector<std::string>> pySplit(const std::string &s,
                                           const std::optional<std::string> &sep, int64_t maxsplit,
                                           bool fromRight) {
  std::vector<std::string> parts;
  if (maxsplit < 0)
    maxsplit = INT64_MAX;
  if (sep) {
    if (sep->empty())
      return invalidArgumentError("empty separator");
    if (!fromRight) {
      size_t start = 0;
      while (maxsplit-- > 0) {
        size_t at = s.find(*sep, start);
        if (at == std::string::npos)
          break;
        parts.push_back(s.substr(start, at - start));
        start = at + sep->size();
      }
      parts.push_back(s.substr(start));
      return parts;
    }
    size_t end = s.size();
    while (maxsplit-- > 0 && end >= sep->size()) {
      size_t at = s.rfind(*sep, end - sep->size());
      if (at == std::string::npos)
        break;
      parts.push_back(s.substr(at + sep->size(), end - at - sep->size()));
      end = at;
    }
    parts.push_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
  }
  std::u32string cps = toCodePoints(s);
  size_t n = cps.size();
  if (!fromRight) {
    size_t i = 0;
    while (maxsplit-- > 0) {
      while (i < n && isPySpace(cps[i]))
        ++i;
      if (i == n)
        break;
      size_t j = i;
      while (i < n && !isPySpace(cps[i]))
        ++i;
      parts.push_back(toUtf8(std::u32string_view(cps).substr(j, i - j)));
    }
    while (i < n && isPySpace(cps[i]))
      ++i;
    if (i < n)
      parts.push_back(toUtf8(std::u32string_view(cps).substr(i)));
    return parts;
  }
  size_t i = n;
  while (maxsplit-- > 0) {
    while (i > 0 && isPySpace(cps[i - 1]))
      --i;
    if (i == 0)
      break;
    size_t j = i;
    while (i > 0 && !isPySpace(cps[i - 1]))
      --i;
    parts.push_back(toUtf8(std::u32string_view(cps).substr(i, j - i)));
  }
  while (i > 0 && isPySpace(cps[i - 1]))
    --i;
  if (i > 0)
    parts.push_back(toUtf8(std::u32string_view(cps).substr(0, i)));
  std::reverse(parts.begin(), parts.end());
  return parts;
}

std::vector<std::string> pySplitLines(const std::string &s, bool keepends) {
  std::u32string cps = toCodePoints(s);
  std::vector<std::string> lines;
  size_t start = 0, i = 0;
  while (i < cps.size()) {
    if (!isLineBoundary(cps[i])) {
      ++i;
      continue;
    }
    size_t eol = i;
    if (cps[i] == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n')
      ++i;
    ++i;
    lines.push_back(toUtf8(std::u32string_view(cps).substr(start, (keepends ? i : eol) - start)));
    start = i;
  }
  if (start < cps.size())
    lines.push_back(toUtf8(std::u32string_view(cps).substr(start)));
  return lines;
}

std::string pyReplace(const std::string &s, const std::string &old, const std::string &with,
                      int64_t count) {
  if (count < 0)
    count = INT64_MAX;
  std::string out;
  if (old.empty()) {
    // Inserts before every code point and at the end.
    std::u32string cps = toCodePoints(s);
    for (char32_t c : cps) {
      if (count > 0) {
        out += with;
        --count;
      }
      appendUtf8(out, c);
    }
    if (count > 0)
      out += with;
    return out;
  }
  size_t start = 0;
  while (count-- > 0) {
    size_t at = s.find(old, start);
    if (at == std::string::npos)
      break;
    out.append(s, start, at - start);
    out += with;
    start = at + old.size();
  }
  out.append(s, start, std::string::npos);
  return out;
}

int64_t pyFind(const std::string &s, const std::string &sub, bool fromRight) {
  size_t at = fromRight ? s.rfind(sub) : s.find(sub);
  if (at == std::string::npos)
    return -1;
  return static_cast<int64_t>(codePointCount(std::string_view(s).substr(0, at)));
}

int64_t pyCount(const std::string &s, const std::string &sub) {
  if (sub.empty())
    return static_cast<int64_t>(codePointCount(s)) + 1;
  int64_t n = 0;
  for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size()))
    ++n;
  return n;
}

StatusOr<std::string> pyUpper(const std::string &s) {
  ASSIGN_OR_RETURN(std::u32string out, mapCase(toCodePoints(s), CaseOp::kUpper));
  return toUtf8(out);
}

StatusOr<std::string> pyLower(const std::string &s) {
  ASSIGN_OR_RETURN(std::u32string out, mapCase(toCodePoints(s), CaseOp::kLower));
  return toUtf8(out);
}

StatusOr<std::string> pyTitle(const std::string &s) {
  std::u32string out;
  bool previousCased = false;
  for (char32_t c : toCodePoints(s)) {
    if (!appendCaseMapped(c, previousCased ? CaseOp::kLower : CaseOp::kTitle, out))
      return unknownCase(c);
    ASSIGN_OR_RETURN(CaseInfo i, info(c));
    previousCased = i.cased;
  }
  return toUtf8(out);
}

StatusOr<std::string> pyCapitalize(const std::string &s) {
  std::u32string in = toCodePoints(s), out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!appendCaseMapped(in[i], i == 0 ? CaseOp::kTitle : CaseOp::kLower, out))
      return unknownCase(in[i]);
  return toUtf8(out);
}

StatusOr<std::string> jinjaTitle(const std::string &s) {
  // re.split(r"([-\s({\[<]+)") keeps the separators; each piece becomes
  // piece[0].upper() + piece[1:].lower().
  auto isSeparator = [](char32_t c) {
    return c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || isPySpace(c);
  };
  std::u32string in = toCodePoints(s), out;
  size_t i = 0;
  while (i < in.size()) {
    size_t j = i;
    bool sep = isSeparator(in[i]);
    while (j < in.size() && isSeparator(in[j]) == sep)
      ++j;
    for (size_t k = i; k < j; ++k)
      if (!appendCaseMapped(in[k], k == i ? CaseOp::kUpper : CaseOp::kLower, out))
        return unknownCase(in[k]);
    i = j;
  }
  return toUtf8(out);
}

StatusOr<bool> pyIsLower(const std::string &s) {
  bool cased = false;
  for (char32_t c : toCodePoints(s)) {
    ASSIGN_OR_RETURN(CaseInfo i, info(c));
    if (i.upper)
      return false;
    cased = cased || i.lower;
  }
  return cased;
}

StatusOr<bool> pyIsUpper(const std::string &s) {
  bool cased = false;
  for (char32_t c : toCodePoints(s)) {
    ASSIGN_OR_RETURN(CaseInfo i, info(c));
    if (i.lower)
      return false;
    cased = cased || i.upper;
  }
  return cased;
}

std::string pySliceIndices(const std::u32string &s, int64_t start, int64_t stop, int64_t step) {
  std::u32string out;
  if (step > 0)
    for (int64_t i = start; i < stop; i += step)
      out.push_back(s[static_cast<size_t>(i)]);
  else
    for (int64_t i = start; i > stop; i += step)
      out.push_back(s[static_cast<size_t>(i)]);
  return toUtf8(out);
}

} // namespace infer::chat::jinja
