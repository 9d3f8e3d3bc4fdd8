//===- KVCacheManager.cpp - per-sequence block tables ---------------------===//

#include "runtime/kv/KVCacheManager.h"

#include <algorithm>
#include <limits>
#include <string>

namespace infer::kv {

StatusOr<KVCacheManager> KVCacheManager::create(int32_t numBlocks, int32_t blockSize,
                                                bool enablePrefixCaching) {
  if (blockSize < 1)
    return invalidArgumentError("KV block size must be positive, got " +
                                std::to_string(blockSize));
  if (static_cast<int64_t>(numBlocks) * blockSize > std::numeric_limits<int32_t>::max())
    return invalidArgumentError("KV pool of " + std::to_string(numBlocks) + " blocks of " +
                                std::to_string(blockSize) +
                                " tokens has slot ids beyond int32");
  ASSIGN_OR_RETURN(BlockPool pool, BlockPool::create(numBlocks));
  return KVCacheManager(std::move(pool), blockSize, enablePrefixCaching);
}

std::vector<uint64_t>
KVCacheManager::cachedPrefixHashes(const std::vector<int32_t> &tokens) const {
  std::vector<uint64_t> hashes;
  if (!enablePrefixCaching_ || tokens.empty())
    return hashes;
  // Stop one token short of the end: the last token must be computed to get
  // the logits that predict the next one.
  size_t maxBlocks = (tokens.size() - 1) / blockSize_;
  uint64_t parent = kRootBlockHash;
  for (size_t i = 0; i < maxBlocks; ++i) {
    uint64_t hash = hashBlockTokens(parent, tokens.data() + i * blockSize_, blockSize_);
    if (!pool_.cachedBlock(hash))
      break;
    hashes.push_back(hash);
    parent = hash;
  }
  return hashes;
}

int32_t KVCacheManager::numCachedPrefixTokens(const std::vector<int32_t> &tokens) const {
  return static_cast<int32_t>(cachedPrefixHashes(tokens).size()) * blockSize_;
}

StatusOr<SlotAllocation> KVCacheManager::allocateSlots(SeqId seq,
                                                       const std::vector<int32_t> &tokens,
                                                       int32_t numNewTokens) {
  if (numNewTokens < 0)
    return invalidArgumentError("negative number of new tokens for sequence " +
                                std::to_string(seq));
  auto existing = seqs_.find(seq);
  std::vector<uint64_t> hits;
  if (existing == seqs_.end())
    hits = cachedPrefixHashes(tokens);
  int64_t numCached = static_cast<int64_t>(hits.size()) * blockSize_;
  int64_t start = existing == seqs_.end() ? numCached : existing->second.numSlotTokens;
  int64_t end = start + numNewTokens;
  if (end > static_cast<int64_t>(tokens.size()))
    return invalidArgumentError("sequence " + std::to_string(seq) + ": slots up to token " +
                                std::to_string(end) + " requested but only " +
                                std::to_string(tokens.size()) + " tokens are known");

  int32_t haveBlocks = existing == seqs_.end() ? static_cast<int32_t>(hits.size())
                                               : static_cast<int32_t>(existing->second.blocks.size());
  int32_t newBlocks = std::max(0, blocksFor(end) - haveBlocks);
  // Reviving an evictable hit takes it out of the free count, so plan with
  // what will be left after the hits are taken.
  int32_t revived = 0;
  for (uint64_t hash : hits)
    revived += pool_.refCount(*pool_.cachedBlock(hash)) == 0;
  if (newBlocks > pool_.numFreeBlocks() - revived)
    return SlotAllocation{};

  if (existing == seqs_.end()) {
    Sequence fresh;
    for (uint64_t hash : hits)
      fresh.blocks.push_back(*pool_.lookup(hash));
    fresh.blockHashes = std::move(hits);
    existing = seqs_.emplace(seq, std::move(fresh)).first;
  }
  Sequence &state = existing->second;
  if (!appendBlocks(state, newBlocks))
    return internalError("KV pool refused blocks it reported free");
  state.numSlotTokens = static_cast<int32_t>(end);
  return SlotAllocation{true, static_cast<int32_t>(numCached)};
}

bool KVCacheManager::appendBlocks(Sequence &state, int32_t count) {
  std::optional<std::vector<BlockId>> taken = pool_.allocate(count);
  if (!taken)
    return false;
  state.blocks.insert(state.blocks.end(), taken->begin(), taken->end());
  return true;
}

bool KVCacheManager::reserveBlocks(SeqId seq, int64_t numTokens) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return false;
  int32_t missing = blocksFor(numTokens) - static_cast<int32_t>(it->second.blocks.size());
  return missing <= 0 || appendBlocks(it->second, missing);
}

Status KVCacheManager::commitFullBlocks(SeqId seq, const std::vector<int32_t> &tokens,
                                        int32_t numComputedTokens) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return notFoundError("sequence " + std::to_string(seq) + " has no KV blocks");
  Sequence &state = it->second;
  if (numComputedTokens < 0 || numComputedTokens > state.numSlotTokens ||
      static_cast<size_t>(numComputedTokens) > tokens.size())
    return invalidArgumentError("sequence " + std::to_string(seq) + ": " +
                                std::to_string(numComputedTokens) +
                                " computed tokens but " + std::to_string(state.numSlotTokens) +
                                " have slots and " + std::to_string(tokens.size()) + " are known");
  if (!enablePrefixCaching_)
    return okStatus();
  size_t fullBlocks = numComputedTokens / blockSize_;
  for (size_t i = state.blockHashes.size(); i < fullBlocks; ++i) {
    uint64_t parent = i == 0 ? kRootBlockHash : state.blockHashes[i - 1];
    uint64_t hash = hashBlockTokens(parent, tokens.data() + i * blockSize_, blockSize_);
    // False means an identical block computed by another sequence is cached
    // already; this one stays private and returns to the free list later.
    RETURN_IF_ERROR(pool_.registerHash(state.blocks[i], hash));
    state.blockHashes.push_back(hash);
  }
  return okStatus();
}

void KVCacheManager::free(SeqId seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return;
  std::vector<BlockId> tailFirst(it->second.blocks.rbegin(), it->second.blocks.rend());
  // Cannot fail: the table holds exactly one reference to each of its blocks.
  pool_.free(tailFirst).ignoreError();
  seqs_.erase(it);
}

const std::vector<BlockId> *KVCacheManager::blockTable(SeqId seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? nullptr : &it->second.blocks;
}

int32_t KVCacheManager::numSlotTokens(SeqId seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : it->second.numSlotTokens;
}

StatusOr<int32_t> KVCacheManager::slotFor(SeqId seq, int32_t position) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end())
    return notFoundError("sequence " + std::to_string(seq) + " has no KV blocks");
  if (position < 0 || position >= it->second.numSlotTokens)
    return invalidArgumentError("sequence " + std::to_string(seq) + " has no slot for position " +
                                std::to_string(position));
  return it->second.blocks[position / blockSize_] * blockSize_ + position % blockSize_;
}

} // namespace infer::kv
