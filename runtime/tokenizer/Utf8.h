//===- Utf8.h - UTF-8 walking and the Unicode predicates HF uses -*- C++ -*-===//
//
// The character classes here are the ones the Rust `tokenizers` crate asks of
// Rust's `char` and its other crates (White_Space, `is_numeric`, `\w`, ...),
// answered from tables generated from the library, so that splits agree.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_UTF8_H
#define INFER_RUNTIME_TOKENIZER_UTF8_H

#include "runtime/base/Utf8.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace infer::tokenizer {

// The UTF-8 coding itself is runtime/base/Utf8.h's.
using infer::appendLossyUtf8;
using infer::appendUtf8;
using infer::firstCodePoint;
using infer::isValidUtf8;
using infer::kReplacementChar;
using infer::nextCodePoint;
using infer::utf8Length;
using infer::validUtf8Prefix;

/// The code point that ends valid, non-empty `text`, and its byte offset.
char32_t lastCodePoint(std::string_view text, size_t *start = nullptr);

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
