//===- BlockPool.h - fixed pool of paged-KV blocks --------------*- C++ -*-===//
//
// The bottom KV layer (CONVENTIONS.md rule 10, docs/kv-cache.md): a fixed set
// of block ids with a free list, per-block ref counts, the reserved null block
// and automatic prefix caching. It knows nothing of sequences or tokens beyond
// the hash of a full block; KVCacheManager builds block tables on top of it.
//
// Block states (block 0, the null block, is in none of them):
//   free      ref 0, no hash     on the free list (FIFO)
//   used      ref > 0            possibly hashed (shared prefix blocks)
//   evictable ref 0, hashed      still findable by lookup(); reused (hash
//                                dropped) only when the free list is empty,
//                                least recently freed first
//
// Running out of blocks is a scheduling outcome, not an error: allocate()
// returns std::nullopt. Statuses report caller bugs (bad ids, double frees).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_KV_BLOCKPOOL_H
#define INFER_RUNTIME_KV_BLOCKPOOL_H

#include "runtime/base/Status.h"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace infer::kv {

/// A physical KV block id, an index into the device cache's block dimension.
using BlockId = int32_t;

/// Never handed out; pads block tables so padded entries point at real memory.
inline constexpr BlockId kNullBlock = 0;

/// The hash chain's parent for a sequence's first block.
inline constexpr uint64_t kRootBlockHash = 0;

/// XXH64 of one full block's token ids, seeded with the previous block's hash,
/// so a block's hash names its whole prefix, not only its own tokens.
uint64_t hashBlockTokens(uint64_t parentHash, const int32_t *tokens, size_t count);

class BlockPool {
public:
  /// `numBlocks` counts the null block, so it must be at least 2.
  static StatusOr<BlockPool> create(int32_t numBlocks);

  int32_t numBlocks() const { return static_cast<int32_t>(refCounts_.size()); }
  /// Blocks that allocate() can hand out now: free plus evictable.
  int32_t numFreeBlocks() const;
  /// Blocks with ref count > 0.
  int32_t numUsedBlocks() const { return numUsed_; }
  /// Blocks carrying a hash, used or evictable.
  int32_t numCachedBlocks() const { return static_cast<int32_t>(cache_.size()); }
  /// Cached blocks with ref count 0.
  int32_t numEvictableBlocks() const { return static_cast<int32_t>(evictable_.size()); }

  /// `n` blocks with ref count 1, or nullopt (nothing changed) when fewer
  /// than `n` are free. Never-hashed blocks go first; then evictable blocks,
  /// least recently freed first, whose hashes are dropped.
  std::optional<std::vector<BlockId>> allocate(int32_t n);

  /// Decrements each block's ref count (a block may appear more than once);
  /// blocks reaching 0 join the free list, or the evictable set if hashed.
  /// Fails without changing anything on the null block, an out-of-range id or
  /// a ref count that would go negative.
  Status free(const std::vector<BlockId> &blocks);

  /// Registers a used block under `hash` so later lookups can share it.
  /// Returns false (nothing changed) if another block already holds `hash`;
  /// the caller keeps its block unshared. Re-registering the same pair is ok.
  StatusOr<bool> registerHash(BlockId block, uint64_t hash);

  /// The block cached under `hash`, with its ref count bumped (and taken out
  /// of the evictable set if it was there), or nullopt on a miss.
  std::optional<BlockId> lookup(uint64_t hash);
  /// The block cached under `hash` without touching it (for planning).
  std::optional<BlockId> cachedBlock(uint64_t hash) const;

  /// 0 for out-of-range ids.
  int32_t refCount(BlockId block) const;
  bool isEvictable(BlockId block) const;

private:
  explicit BlockPool(int32_t numBlocks);
  bool inRange(BlockId block) const { return block > kNullBlock && block < numBlocks(); }
  /// Moves a block whose ref count just reached 0 to where it belongs.
  void release(BlockId block);

  std::vector<int32_t> refCounts_;
  std::vector<std::optional<uint64_t>> hashes_;
  std::deque<BlockId> freeList_;
  /// Least recently freed at the front. A std::list so lookup() can take a
  /// revived block out of the middle in O(1) through evictablePos_.
  std::list<BlockId> evictable_;
  std::vector<std::list<BlockId>::iterator> evictablePos_;
  std::vector<bool> isEvictable_;
  std::unordered_map<uint64_t, BlockId> cache_;
  int32_t numUsed_ = 0;
};

} // namespace infer::kv

#endif // INFER_RUNTIME_KV_BLOCKPOOL_H
