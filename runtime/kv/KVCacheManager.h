//===- KVCacheManager.h - per-sequence block tables -------------*- C++ -*-===//
//
// The middle KV layer (CONVENTIONS.md rule 10, docs/kv-cache.md): owns a
// BlockPool and gives each sequence a block table, i.e. the physical block
// holding positions [i*blockSize, (i+1)*blockSize). A sequence's first
// allocation reuses cached full prefix blocks; commitFullBlocks() makes the
// sequence's own computed full blocks findable by later sequences.
//
// The manager tracks, per sequence, how many leading tokens have slots; the
// scheduler keeps that equal to the tokens it has scheduled. Not having enough
// free blocks is a value (SlotAllocation::allocated == false) with the state
// unchanged; Statuses are caller bugs.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_KV_KVCACHEMANAGER_H
#define INFER_RUNTIME_KV_KVCACHEMANAGER_H

#include "runtime/base/Status.h"
#include "runtime/kv/BlockPool.h"

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace infer::kv {

using SeqId = int64_t;

struct SlotAllocation {
  /// False when the pool lacks free blocks; then nothing changed.
  bool allocated = false;
  /// On a sequence's first allocation: leading tokens found in the prefix
  /// cache (whole blocks, always fewer than the tokens passed, so at least one
  /// token is computed and yields logits). 0 on later allocations.
  int32_t numCachedTokens = 0;
};

class KVCacheManager {
public:
  /// A pool of `numBlocks` blocks (counting the null block) of `blockSize`
  /// tokens. Slot ids (block * blockSize + offset) must fit in int32.
  static StatusOr<KVCacheManager> create(int32_t numBlocks, int32_t blockSize,
                                         bool enablePrefixCaching = true);

  int32_t blockSize() const { return blockSize_; }
  bool prefixCachingEnabled() const { return enablePrefixCaching_; }
  const BlockPool &pool() const { return pool_; }

  /// How many leading tokens of `tokens` a first allocation would find in the
  /// prefix cache right now (a multiple of blockSize, < tokens.size()).
  int32_t numCachedPrefixTokens(const std::vector<int32_t> &tokens) const;

  /// Ensures slots for the next `numNewTokens` tokens of `seq`. `tokens` is
  /// every token of the sequence known so far, including the new ones. On the
  /// first call for `seq` the new tokens start after the prefix-cache hit
  /// (see numCachedPrefixTokens), later they start after the tokens that
  /// already have slots. Fails if the new tokens run past `tokens`.
  StatusOr<SlotAllocation> allocateSlots(SeqId seq, const std::vector<int32_t> &tokens,
                                         int32_t numNewTokens);

  /// Makes `seq` hold the blocks of its first `numTokens` slots without
  /// giving it those slots (allocateSlots does, later, and then allocates
  /// nothing): a step enqueued ahead writes its next position into a block
  /// the scheduler would allocate for it at that step anyway. False, and
  /// nothing changed, when `seq` is unknown or the pool lacks free blocks.
  bool reserveBlocks(SeqId seq, int64_t numTokens);

  /// Registers the hashes of `seq`'s full blocks within its first
  /// `numComputedTokens` tokens that are not registered yet. Call it once the
  /// step that wrote those blocks has run: a cached block must hold real KV.
  Status commitFullBlocks(SeqId seq, const std::vector<int32_t> &tokens,
                          int32_t numComputedTokens);

  /// Releases `seq`'s blocks (tail first, so its tail is evicted before the
  /// prefix other sequences are more likely to share). No-op if unknown.
  void free(SeqId seq);

  bool contains(SeqId seq) const { return seqs_.count(seq) != 0; }
  size_t numSequences() const { return seqs_.size(); }
  /// `seq`'s block table, or nullptr if it has none.
  const std::vector<BlockId> *blockTable(SeqId seq) const;
  /// Leading tokens of `seq` that have slots (0 if unknown).
  int32_t numSlotTokens(SeqId seq) const;
  /// Where position `position` of `seq` keeps its K/V: block * blockSize + offset.
  StatusOr<int32_t> slotFor(SeqId seq, int32_t position) const;

private:
  struct Sequence {
    std::vector<BlockId> blocks;
    int32_t numSlotTokens = 0;
    /// Chain hashes of the first blockHashes.size() full blocks, whether or
    /// not the pool took them (another block may already hold a hash).
    std::vector<uint64_t> blockHashes;
  };

  KVCacheManager(BlockPool pool, int32_t blockSize, bool enablePrefixCaching)
      : pool_(std::move(pool)), blockSize_(blockSize),
        enablePrefixCaching_(enablePrefixCaching) {}
  /// Chain hashes of the leading full blocks of `tokens` that are cached,
  /// leaving at least one token uncached.
  std::vector<uint64_t> cachedPrefixHashes(const std::vector<int32_t> &tokens) const;
  /// Takes `count` blocks from the pool onto the end of `state`'s table;
  /// false (nothing taken) when the pool has fewer free.
  bool appendBlocks(Sequence &state, int32_t count);
  int32_t blocksFor(int64_t numTokens) const {
    return static_cast<int32_t>((numTokens + blockSize_ - 1) / blockSize_);
  }

  BlockPool pool_;
  int32_t blockSize_;
  bool enablePrefixCaching_;
  std::unordered_map<SeqId, Sequence> seqs_;
};

} // namespace infer::kv

#endif // INFER_RUNTIME_KV_KVCACHEMANAGER_H
