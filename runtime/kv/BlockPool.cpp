//===- BlockPool.cpp - fixed pool of paged-KV blocks ----------------------===//

#include "runtime/kv/BlockPool.h"

#include <xxhash.h>

#include <string>

namespace infer::kv {

uint64_t hashBlockTokens(uint64_t parentHash, const int32_t *tokens, size_t count) {
  return XXH64(tokens, count * sizeof(int32_t), parentHash);
}

StatusOr<BlockPool> BlockPool::create(int32_t numBlocks) {
  if (numBlocks < 2)
    return invalidArgumentError("a KV block pool needs at least 2 blocks (block 0 is the null "
                                "block), got " +
                                std::to_string(numBlocks));
  return BlockPool(numBlocks);
}

BlockPool::BlockPool(int32_t numBlocks)
    : refCounts_(numBlocks, 0), hashes_(numBlocks), evictablePos_(numBlocks),
      isEvictable_(numBlocks, false) {
  for (BlockId block = 1; block < numBlocks; ++block)
    freeList_.push_back(block);
}

int32_t BlockPool::numFreeBlocks() const {
  return static_cast<int32_t>(freeList_.size() + evictable_.size());
}

std::optional<std::vector<BlockId>> BlockPool::allocate(int32_t n) {
  if (n < 0 || n > numFreeBlocks())
    return std::nullopt;
  std::vector<BlockId> blocks;
  blocks.reserve(n);
  for (int32_t i = 0; i < n; ++i) {
    BlockId block;
    if (!freeList_.empty()) {
      block = freeList_.front();
      freeList_.pop_front();
    } else {
      // Evict lazily: the cached contents are overwritten by the new owner,
      // so the hash must stop resolving to this block.
      block = evictable_.front();
      evictable_.pop_front();
      isEvictable_[block] = false;
      cache_.erase(*hashes_[block]);
      hashes_[block].reset();
    }
    refCounts_[block] = 1;
    ++numUsed_;
    blocks.push_back(block);
  }
  return blocks;
}

Status BlockPool::free(const std::vector<BlockId> &blocks) {
  // Validate everything first so a bad list leaves the pool untouched.
  std::unordered_map<BlockId, int32_t> decrements;
  for (BlockId block : blocks) {
    if (!inRange(block))
      return invalidArgumentError("cannot free KV block " + std::to_string(block) +
                                  (block == kNullBlock ? " (the null block)" : " (out of range)"));
    if (++decrements[block] > refCounts_[block])
      return invalidArgumentError("KV block " + std::to_string(block) +
                                  " freed more often than it is referenced");
  }
  for (BlockId block : blocks)
    if (--refCounts_[block] == 0)
      release(block);
  return okStatus();
}

void BlockPool::release(BlockId block) {
  --numUsed_;
  if (hashes_[block]) {
    evictablePos_[block] = evictable_.insert(evictable_.end(), block);
    isEvictable_[block] = true;
  } else {
    freeList_.push_back(block);
  }
}

StatusOr<bool> BlockPool::registerHash(BlockId block, uint64_t hash) {
  if (!inRange(block) || refCounts_[block] == 0)
    return invalidArgumentError("cannot cache KV block " + std::to_string(block) +
                                ": it is not in use");
  if (hashes_[block])
    return *hashes_[block] == hash
               ? StatusOr<bool>(true)
               : StatusOr<bool>(invalidArgumentError(
                     "KV block " + std::to_string(block) + " is already cached under another hash"));
  auto [it, inserted] = cache_.emplace(hash, block);
  if (!inserted)
    return false;
  hashes_[block] = hash;
  return true;
}

std::optional<BlockId> BlockPool::cachedBlock(uint64_t hash) const {
  auto it = cache_.find(hash);
  if (it == cache_.end())
    return std::nullopt;
  return it->second;
}

std::optional<BlockId> BlockPool::lookup(uint64_t hash) {
  std::optional<BlockId> block = cachedBlock(hash);
  if (!block)
    return std::nullopt;
  if (isEvictable_[*block]) {
    evictable_.erase(evictablePos_[*block]);
    isEvictable_[*block] = false;
  }
  if (refCounts_[*block]++ == 0)
    ++numUsed_;
  return block;
}

int32_t BlockPool::refCount(BlockId block) const {
  return block >= 0 && block < numBlocks() ? refCounts_[block] : 0;
}

bool BlockPool::isEvictable(BlockId block) const {
  return block >= 0 && block < numBlocks() && isEvictable_[block];
}

} // namespace infer::kv
