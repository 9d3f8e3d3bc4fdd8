//===- ByteLevel.h - GPT-2's byte <-> printable character map ---*- C++ -*-===//
//
// Byte-level BPE vocabularies spell every byte as a printable character
// (GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the
// others to U+0100..U+0143), so a vocabulary of 256 base tokens covers any
// input. The ByteLevel pre-tokenizer maps text into this alphabet and the
// ByteLevel decoder maps it back.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_BYTELEVEL_H
#define INFER_RUNTIME_TOKENIZER_BYTELEVEL_H

#include <cstdint>
#include <string>
#include <string_view>

namespace infer::tokenizer {

/// The UTF-8 spelling of byte `b`'s character (1 or 2 bytes).
std::string_view byteLevelChar(uint8_t b);

/// The byte that character `cp` stands for, or -1 if it is not in the map.
int byteLevelByte(char32_t cp);

/// Appends `text`'s bytes spelled in the byte-level alphabet.
void appendByteLevel(std::string &out, std::string_view text);

/// The GPT-2 split pattern the ByteLevel pre-tokenizer uses with use_regex.
inline constexpr std::string_view kGpt2Pattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_BYTELEVEL_H
