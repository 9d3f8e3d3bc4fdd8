//===- UnicodeTables.h - HF's character classes, as data --------*- C++ -*-===//
//
// HF's components classify characters with tables of several Unicode
// versions (Oniguruma's for regexes, Rust std's, the regex crate's, and older
// crates' for Punctuation, StripAccents and the NFx forms). PCRE2 and
// utf8proc know other versions, so UnicodeTables.cpp (generated from the
// `tokenizers` library by test/tokenizer/gen_unicode_tables.py) spells HF's
// answers out; the tokenizer.unicode test checks every code point.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_UNICODETABLES_H
#define INFER_RUNTIME_TOKENIZER_UNICODETABLES_H

#include <cstddef>
#include <cstdint>

namespace infer::tokenizer::unicode {

/// An inclusive range of code points; tables are sorted and disjoint.
struct Range {
  char32_t first, last;
};

/// How PCRE2 spells Oniguruma's \p{name}: the body of a character class.
struct PropertyClass {
  const char *name;
  const char *members;
};

/// Code points first..last, every `stride`, lowercase to cp + delta.
struct CaseRun {
  char32_t first, last;
  int32_t delta, stride;
};

/// General categories (L, Lu, ..., Zp) and common scripts (Han, Latin, ...).
extern const PropertyClass kRegexClasses[];
extern const size_t kRegexClassesSize;
/// Oniguruma's \w as a class body.
extern const char kOnigWordClass[];

/// Rust's char::is_numeric.
extern const Range kRustNumeric[];
extern const size_t kRustNumericSize;
/// HF's Punctuation (ASCII punctuation or the unicode_categories crate's P*).
extern const Range kHfPunctuation[];
extern const size_t kHfPunctuationSize;
/// The regex crate's \w.
extern const Range kRustWord[];
extern const size_t kRustWordSize;
/// What HF's StripAccents removes.
extern const Range kHfCombiningMark[];
extern const size_t kHfCombiningMarkSize;
/// Characters HF's normalization crate does not know: the NFx forms leave
/// them as they are, and nothing composes or reorders across them.
extern const Range kNormalizationFrozen[];
extern const size_t kNormalizationFrozenSize;
/// Rust's char::to_lowercase where it maps to one other character.
extern const CaseRun kRustLowercase[];
extern const size_t kRustLowercaseSize;

/// Whether `cp` is in the sorted `ranges`.
inline bool inRanges(const Range *ranges, size_t size, char32_t cp) {
  size_t lo = 0, hi = size;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (ranges[mid].last < cp)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < size && ranges[lo].first <= cp;
}

} // namespace infer::tokenizer::unicode

#endif // INFER_RUNTIME_TOKENIZER_UNICODETABLES_H
