//===- Utf8.cpp - UTF-8 coding shared by the tokenizer and the chat templates -===//
#include "runtime/base/Utf8.h"

namespace infer {
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

bool decodeUtf8(std::string_view text, std::u32string &out) {
  out.clear();
  if (!isValidUtf8(text))
    return false;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();)
    out.push_back(nextCodePoint(text, pos));
  return true;
}

} // namespace infer
