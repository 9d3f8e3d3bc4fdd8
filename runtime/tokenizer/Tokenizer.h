//===- Tokenizer.h - Hugging Face tokenizer.json in C++ ---------*- C++ -*-===//
//
// Encodes and decodes as the Python `tokenizers` library does for the BPE
// tokenizers of LLM families (Llama 2/3, Mistral, Qwen, Gemma, GPT-2, ...):
// added tokens, normalizer, pre-tokenizer, BPE model, post-processor and
// decoder, read from a tokenizer.json. docs/tokenizer.md lists what each
// component supports and what is refused.
//
// A Tokenizer is immutable once built except for an internal word cache
// (mutex-guarded): encode and decode may run concurrently.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_TOKENIZER_H
#define INFER_RUNTIME_TOKENIZER_TOKENIZER_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::tokenizer {

/// The largest tokenizer.json read (real ones reach ~35 MB: Gemma 3's).
inline constexpr uint64_t kMaxTokenizerJsonBytes = 256ull << 20;

class Tokenizer {
public:
  /// Parses a tokenizer.json document; unsupported components (model type,
  /// normalizer, pre-tokenizer, decoder, post-processor types or options) are
  /// an Unimplemented error naming them; malformed ones InvalidArgument.
  static StatusOr<std::unique_ptr<Tokenizer>> fromJson(std::string_view json);
  /// PATH is a tokenizer.json or a directory holding one.
  static StatusOr<std::unique_ptr<Tokenizer>> fromFile(const std::string &path);
  ~Tokenizer();

  /// HF `encode(text, add_special_tokens=...)`: added/special tokens in the
  /// text are matched first; addSpecialTokens applies the post-processor
  /// (e.g. Llama's BOS). Invalid UTF-8 is an InvalidArgument error.
  StatusOr<std::vector<int32_t>> encode(std::string_view text,
                                        bool addSpecialTokens = false) const;
  /// HF `decode(ids, skip_special_tokens=...)`; always valid UTF-8. An id
  /// outside the vocabulary is an InvalidArgument error (HF skips it).
  StatusOr<std::string> decode(const std::vector<int32_t> &ids, bool skipSpecialTokens) const;

  /// HF get_vocab_size(with_added_tokens=True).
  int64_t vocabSize() const;
  /// An added token's id, else the model's; nullopt if neither has it.
  std::optional<int32_t> tokenToId(std::string_view token) const;
  /// Whether `id` is an added token with special=true.
  bool isSpecial(int32_t id) const;

private:
  friend class DecodeStream;
  Tokenizer();
  /// Whether the text decode gives for `ids` may still change when more ids
  /// follow, other than by appending: the last token (skipped specials
  /// aside) is a <0xXX> byte under a ByteFallback decoder, whose runs decode
  /// as a whole.
  bool endsInOpenByteRun(const std::vector<int32_t> &ids, bool skipSpecialTokens) const;
  /// decode's error for an id outside the vocabulary, or ok.
  Status checkId(int32_t id) const;

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace infer::tokenizer

// DecodeStream (streaming detokenization) comes with the Tokenizer.
#include "runtime/tokenizer/DecodeStream.h"

#endif // INFER_RUNTIME_TOKENIZER_TOKENIZER_H
