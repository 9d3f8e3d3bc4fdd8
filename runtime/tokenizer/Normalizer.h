//===- Normalizer.h - tokenizer.json normalizers ----------------*- C++ -*-===//
//
// Sequence, NFC, NFD, NFKC, NFKD, Prepend, Replace (String or Regex),
// Lowercase, Strip, StripAccents and Nmt, with HF's semantics on the text.
// HF also tracks offsets into the original string; we keep only the one bit
// that changes ids: whether the first character still maps to the start of
// the original text (Metaspace's prepend_scheme "first" reads it).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_NORMALIZER_H
#define INFER_RUNTIME_TOKENIZER_NORMALIZER_H

#include "runtime/tokenizer/JsonFields.h"

#include <memory>
#include <string>

namespace infer::tokenizer {

class Normalizer {
public:
  virtual ~Normalizer() = default;
  /// Rewrites valid UTF-8 `text` in place. Clears `originKept` when the new
  /// first character no longer aligns with the first original one (HF's
  /// offsets would then start past 0). Fails only if a Replace regex fails.
  virtual Status normalize(std::string &text, bool &originKept) const = 0;
};

/// The `normalizer` field: nullptr for null; Unimplemented naming the type
/// for the ones we do not have (Bert, Precompiled, ByteLevel).
StatusOr<std::unique_ptr<Normalizer>> parseNormalizer(const Json &json);

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_NORMALIZER_H
