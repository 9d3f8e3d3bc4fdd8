//===- Bpe.h - the BPE model of tokenizer.json ------------------*- C++ -*-===//
//
// HF's BPE: a word starts as one symbol per character (a vocabulary token,
// else its <0xXX> byte tokens with byte_fallback, else unk, fused with
// fuse_unk); then the adjacent pair of lowest merge rank merges, leftmost
// first on ties, until no pair has a merge. A priority queue keyed by (rank,
// position) with stale entries skipped makes that O(n log n) (HF's
// Word::merge_all, reproduced decision for decision). ignore_merges
// (Llama-3) returns a word found whole in the vocabulary as one token.
//
// SentencePiece-style files have no pre-tokenizer: the whole text is one
// word. To keep such inputs fast and cacheable the model cuts a word before a
// `▁` wherever it proved at load time that no merge can join the two sides
// (see `chunkable_` in Bpe.cpp); elsewhere the word stays whole.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_BPE_H
#define INFER_RUNTIME_TOKENIZER_BPE_H

#include "runtime/tokenizer/HashMaps.h"
#include "runtime/tokenizer/JsonFields.h"
#include "runtime/tokenizer/WordCache.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infer::tokenizer {

class BpeModel {
public:
  /// The `model` field. Unimplemented for other model types and for dropout.
  static StatusOr<std::unique_ptr<BpeModel>> fromJson(const Json &json);

  /// Appends the ids of one pre-token. Fails only when a character needs
  /// the unk token and the vocabulary lacks it.
  Status tokenize(std::string_view word, std::vector<int32_t> &ids) const;

  std::optional<int32_t> tokenToId(std::string_view token) const;
  /// The token spelled by `id`, or nullptr.
  const std::string *idToToken(int32_t id) const;
  /// The number of vocabulary entries (HF's get_vocab_size).
  int64_t size() const { return static_cast<int64_t>(vocab_.size()); }
  /// Whether words are cut before `▁` (see the file comment).
  bool chunksWords() const { return chunkable_; }

private:
  BpeModel() = default;
  Status loadMerges(const Json &merges);
  void prepareChunking();
  Status tokenizeChunk(std::string_view chunk, std::vector<int32_t> &ids) const;
  /// HF's merge_word + merge_all for one word.
  Status mergeWord(std::string_view word, std::vector<int32_t> &ids) const;
  int32_t charId(std::string_view word, size_t start, size_t end, char32_t cp, bool first,
                 bool last) const;
  bool safeBeforeMeta(char32_t cp) const;

  StringMap vocab_;
  std::vector<std::string> tokens_; // by id; "" and !hasToken_ for holes
  std::vector<bool> hasToken_;
  PairMap merges_;
  std::vector<int32_t> bmpIds_; // single-character tokens of the BMP, else -1
  std::array<int32_t, 256> byteIds_{};
  std::optional<std::string> unkToken_;
  std::string prefix_, suffix_; // continuing_subword_prefix, end_of_word_suffix
  bool fuseUnk_ = false, byteFallback_ = false, ignoreMerges_ = false;

  bool chunkable_ = false;
  std::vector<bool> bmpSafeBeforeMeta_;
  std::vector<char32_t> unsafeBeforeMeta_; // sorted

  mutable WordCache cache_;
};

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_BPE_H
