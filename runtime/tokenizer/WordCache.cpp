//===- WordCache.cpp - pre-token -> ids, shared across threads ------------===//
#include "runtime/tokenizer/WordCache.h"

namespace infer::tokenizer {

bool WordCache::lookup(std::string_view word, uint64_t hash, std::vector<int32_t> &ids) const {
  Shard &shard = shardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mutex);
  const uint32_t *entry = shard.index.findHashed(word, hash);
  if (!entry)
    return false;
  uint64_t packed = shard.entries[*entry];
  const int32_t *begin = shard.ids.data() + (packed >> 16);
  ids.insert(ids.end(), begin, begin + (packed & 0xFFFF));
  return true;
}

void WordCache::insert(std::string_view word, uint64_t hash, const int32_t *ids, size_t count) {
  if (word.size() >= kMaxWordBytes || count > 0xFFFF)
    return;
  Shard &shard = shardOf(hash);
  std::lock_guard<std::mutex> lock(shard.mutex);
  if (shard.entries.size() >= kWordsPerShard || shard.index.findHashed(word, hash))
    return;
  shard.index.setHashed(word, hash, static_cast<uint32_t>(shard.entries.size()));
  shard.entries.push_back((uint64_t(shard.ids.size()) << 16) | count);
  shard.ids.insert(shard.ids.end(), ids, ids + count);
}

} // namespace infer::tokenizer
