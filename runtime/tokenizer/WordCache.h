//===- WordCache.h - pre-token -> ids, shared across threads ----*- C++ -*-===//
//
// Natural text repeats its words, so the BPE remembers each word's ids (as
// HF's model does). The cache is owned by the tokenizer and sharded by hash,
// each shard behind its own mutex, so concurrent encode calls stay correct and
// rarely contend. Shards stop taking new words once full: a bounded memory
// cost, and the common words come first anyway.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_WORDCACHE_H
#define INFER_RUNTIME_TOKENIZER_WORDCACHE_H

#include "runtime/tokenizer/HashMaps.h"

#include <array>
#include <cstdint>
#include <mutex>
#include <string_view>
#include <vector>

namespace infer::tokenizer {

class WordCache {
public:
  /// Words this long or longer are not cached (as HF).
  static constexpr size_t kMaxWordBytes = 256;

  /// Appends the cached ids of `word` to `ids`; false on a miss.
  bool lookup(std::string_view word, uint64_t hash, std::vector<int32_t> &ids) const;
  /// Remembers `word`'s ids (dropped when the shard is full).
  void insert(std::string_view word, uint64_t hash, const int32_t *ids, size_t count);

private:
  static constexpr size_t kShards = 16;
  static constexpr size_t kWordsPerShard = 8192;
  struct Shard {
    mutable std::mutex mutex;
    StringMap index;                 // word -> entry
    std::vector<uint64_t> entries;   // (offset << 16) | count into ids
    std::vector<int32_t> ids;
  };
  Shard &shardOf(uint64_t hash) const { return shards_[(hash >> 40) % kShards]; }
  mutable std::array<Shard, kShards> shards_;
};

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_WORDCACHE_H
