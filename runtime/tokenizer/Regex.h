//===- Regex.h - PCRE2 patterns with Oniguruma's meaning --------*- C++ -*-===//
//
// HF `tokenizers` compiles its Split/Replace patterns with Oniguruma (Ruby
// syntax). We compile them with PCRE2 (UTF, UCP, JIT) after rewriting the
// constructs whose meaning differs: `\s` (Oniguruma's has U+0085, not
// U+180E), `\w`, `\b`, `\d`, `\h`, `\p{..}` of a general category or common
// script (Oniguruma's tables are newer than PCRE2's: UnicodeTables.h spells
// them out), `^`/`$` (Ruby's are line anchors) and the `m` flag (Ruby's
// dotall). Iteration follows the `onig` crate's find_iter, which decides
// where empty matches fall. Left as PCRE2 means them: negated classes
// (`\S`, `\P{..}`) inside brackets, and other properties.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_REGEX_H
#define INFER_RUNTIME_TOKENIZER_REGEX_H

#include "runtime/base/Status.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace infer::tokenizer {

/// A half-open byte range of a string.
struct Span {
  size_t start, end;
};

class Regex {
public:
  /// Compiles an HF pattern: `literal` for a `{"String": ...}` pattern, else
  /// a `{"Regex": ...}` one in Oniguruma syntax. InvalidArgument when PCRE2
  /// rejects it.
  static StatusOr<std::unique_ptr<Regex>> compile(std::string_view pattern, bool literal);
  ~Regex();
  Regex(const Regex &) = delete;
  Regex &operator=(const Regex &) = delete;

  /// The matches in valid UTF-8 `subject`, in order, as the `onig` crate's
  /// find_iter yields them (an empty match right after a match is skipped).
  /// Fails only when PCRE2 runs out of memory or backtracking budget.
  Status findAll(std::string_view subject, std::vector<Span> &matches) const;

  /// The pattern given to PCRE2 (after the Oniguruma rewrite), for messages.
  const std::string &translated() const { return translated_; }

private:
  Regex() = default;
  struct Code;
  std::unique_ptr<Code> code_;
  std::string translated_;
};

/// Replaces each of `matches` (in order, not overlapping) in `text` with
/// `content`.
void replaceMatches(std::string &text, const std::vector<Span> &matches, std::string_view content);

/// Regex::compile for a component's pattern, its error prefixed by `where`
/// (the component, e.g. "normalizer Replace").
StatusOr<std::unique_ptr<Regex>> compileRegex(std::string_view where, std::string_view pattern,
                                              bool literal);

/// Rewrites an Oniguruma (Ruby syntax) pattern into PCRE2 syntax with the same
/// meaning for the constructs tokenizers use (see the file comment).
std::string translateOnigurumaPattern(std::string_view pattern);

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_REGEX_H
