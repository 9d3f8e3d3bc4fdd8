//===- ByteLevel.cpp - GPT-2's byte <-> printable character map -----------===//
#include "runtime/tokenizer/ByteLevel.h"

#include "runtime/tokenizer/Utf8.h"

#include <array>

namespace infer::tokenizer {
namespace {

struct Table {
  std::array<char32_t, 256> charOf{};
  std::array<char, 512> spelling{}; // two bytes a byte; the second is 0 when unused
  std::array<uint8_t, 256> spellingLength{};
  std::array<int16_t, 0x144> byteOf{};

  Table() {
    byteOf.fill(-1);
    auto printable = [](int b) {
      return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      charOf[b] = printable(b) ? static_cast<char32_t>(b) : next++;
      byteOf[charOf[b]] = static_cast<int16_t>(b);
      std::string utf8;
      appendUtf8(utf8, charOf[b]);
      spelling[2 * b] = utf8[0];
      spelling[2 * b + 1] = utf8.size() > 1 ? utf8[1] : 0;
      spellingLength[b] = static_cast<uint8_t>(utf8.size());
    }
  }
};

const Table &table() {
  static const Table instance;
  return instance;
}

} // namespace

std::string_view byteLevelChar(uint8_t b) {
  const Table &t = table();
  return std::string_view(&t.spelling[2 * b], t.spellingLength[b]);
}

int byteLevelByte(char32_t cp) { return cp < 0x144 ? table().byteOf[cp] : -1; }

void appendByteLevel(std::string &out, std::string_view text) {
  const Table &t = table();
  for (char c : text) {
    auto b = static_cast<uint8_t>(c);
    out.push_back(t.spelling[2 * b]);
    if (t.spellingLength[b] == 2)
      out.push_back(t.spelling[2 * b + 1]);
  }
}

} // namespace infer::tokenizer
