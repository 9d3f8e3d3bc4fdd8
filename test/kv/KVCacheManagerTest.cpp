//===- KVCacheManagerTest.cpp - block tables and prefix sharing -----------===//

#include "runtime/kv/KVCacheManager.h"

#include <gtest/gtest.h>

#include <numeric>

namespace infer::kv {
namespace {

KVCacheManager makeManager(int32_t numBlocks, int32_t blockSize, bool prefixCaching = true) {
  StatusOr<KVCacheManager> kv = KVCacheManager::create(numBlocks, blockSize, prefixCaching);
  EXPECT_TRUE(kv.ok()) << kv.status().toString();
  return std::move(kv).value();
}

std::vector<int32_t> iota(int32_t count, int32_t first = 100) {
  std::vector<int32_t> tokens(count);
  std::iota(tokens.begin(), tokens.end(), first);
  return tokens;
}

/// Allocates, and expects the allocation to succeed.
int32_t allocate(KVCacheManager &kv, SeqId seq, const std::vector<int32_t> &tokens, int32_t n) {
  StatusOr<SlotAllocation> slots = kv.allocateSlots(seq, tokens, n);
  EXPECT_TRUE(slots.ok()) << slots.status().toString();
  EXPECT_TRUE(slots.ok() && slots->allocated);
  return slots.ok() ? slots->numCachedTokens : -1;
}

TEST(KVCacheManagerTest, RejectsBadShapes) {
  EXPECT_FALSE(KVCacheManager::create(8, 0).ok());
  EXPECT_FALSE(KVCacheManager::create(1, 16).ok());
  EXPECT_FALSE(KVCacheManager::create(1 << 20, 1 << 12).ok()); // slots beyond int32
}

TEST(KVCacheManagerTest, TablesGrowAcrossBlockBoundaries) {
  KVCacheManager kv = makeManager(10, 4);
  std::vector<int32_t> tokens = iota(3);
  EXPECT_EQ(allocate(kv, 1, tokens, 3), 0);
  EXPECT_EQ(kv.blockTable(1)->size(), 1u);
  tokens.push_back(7);
  allocate(kv, 1, tokens, 1); // fills block 0 exactly
  EXPECT_EQ(kv.blockTable(1)->size(), 1u);
  tokens.push_back(8);
  allocate(kv, 1, tokens, 1); // position 4 opens a second block
  EXPECT_EQ(kv.blockTable(1)->size(), 2u);
  tokens.resize(13, 9);
  allocate(kv, 1, tokens, 8);
  const std::vector<BlockId> &table = *kv.blockTable(1);
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(kv.numSlotTokens(1), 13);
  for (int32_t position = 0; position < 13; ++position)
    EXPECT_EQ(*kv.slotFor(1, position), table[position / 4] * 4 + position % 4);
  EXPECT_FALSE(kv.slotFor(1, 13).ok());
  EXPECT_FALSE(kv.slotFor(2, 0).ok());
  EXPECT_EQ(kv.pool().numUsedBlocks(), 4);
}

TEST(KVCacheManagerTest, ReservedBlocksAreTheOnesTheSlotsTakeLater) {
  KVCacheManager kv = makeManager(4, 4); // the null block and three
  std::vector<int32_t> tokens = iota(4);
  allocate(kv, 1, tokens, 4);
  EXPECT_FALSE(kv.reserveBlocks(2, 5)); // unknown sequence
  EXPECT_TRUE(kv.reserveBlocks(1, 4));  // held already: nothing taken
  EXPECT_EQ(kv.pool().numFreeBlocks(), 2);
  EXPECT_TRUE(kv.reserveBlocks(1, 5)); // position 4 opens a second block
  EXPECT_EQ(kv.pool().numFreeBlocks(), 1);
  const std::vector<BlockId> reserved = *kv.blockTable(1);
  ASSERT_EQ(reserved.size(), 2u);
  EXPECT_EQ(kv.numSlotTokens(1), 4); // no slot given yet
  EXPECT_FALSE(kv.slotFor(1, 4).ok());
  tokens.push_back(7);
  allocate(kv, 1, tokens, 1); // takes the reserved block, nothing more
  EXPECT_EQ(*kv.blockTable(1), reserved);
  EXPECT_EQ(*kv.slotFor(1, 4), reserved[1] * 4);
  EXPECT_EQ(kv.pool().numFreeBlocks(), 1);
  EXPECT_FALSE(kv.reserveBlocks(1, 13)); // two more blocks, one free: nothing changes
  EXPECT_EQ(kv.blockTable(1)->size(), 2u);
  EXPECT_EQ(kv.pool().numFreeBlocks(), 1);
  kv.free(1);
  EXPECT_EQ(kv.pool().numFreeBlocks(), 3);
}

TEST(KVCacheManagerTest, RequestsPastTheKnownTokensAreErrors) {
  KVCacheManager kv = makeManager(10, 4);
  EXPECT_EQ(kv.allocateSlots(1, iota(3), 4).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kv.allocateSlots(1, iota(3), -1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(kv.contains(1));
  allocate(kv, 1, iota(3), 3);
  EXPECT_EQ(kv.allocateSlots(1, iota(4), 2).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kv.commitFullBlocks(1, iota(3), 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(kv.commitFullBlocks(2, iota(3), 1).code(), StatusCode::kNotFound);
}

TEST(KVCacheManagerTest, NotEnoughBlocksLeavesStateUnchanged) {
  KVCacheManager kv = makeManager(4, 4); // 3 usable blocks
  std::vector<int32_t> tokens = iota(8);
  allocate(kv, 1, tokens, 8);
  StatusOr<SlotAllocation> second = kv.allocateSlots(2, iota(8, 500), 8);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->allocated);
  EXPECT_FALSE(kv.contains(2));
  EXPECT_EQ(kv.pool().numUsedBlocks(), 2);

  std::vector<BlockId> before = *kv.blockTable(1);
  tokens.resize(13, 1);
  StatusOr<SlotAllocation> grow = kv.allocateSlots(1, tokens, 5); // needs 2 more
  ASSERT_TRUE(grow.ok());
  EXPECT_FALSE(grow->allocated);
  EXPECT_EQ(*kv.blockTable(1), before);
  EXPECT_EQ(kv.numSlotTokens(1), 8);
  EXPECT_EQ(kv.pool().numFreeBlocks(), 1);
  allocate(kv, 1, tokens, 4); // one more block is fine
  EXPECT_EQ(kv.blockTable(1)->size(), 3u);
}

TEST(KVCacheManagerTest, SharedPromptPrefixSharesBlocks) {
  KVCacheManager kv = makeManager(16, 4);
  std::vector<int32_t> a = iota(10);
  allocate(kv, 1, a, 10);
  ASSERT_TRUE(kv.commitFullBlocks(1, a, 10).ok());
  EXPECT_EQ(kv.pool().numCachedBlocks(), 2); // the partial third block is not cached

  std::vector<int32_t> b(a.begin(), a.begin() + 8);
  b.insert(b.end(), {1, 2, 3});
  EXPECT_EQ(kv.numCachedPrefixTokens(b), 8);
  EXPECT_EQ(allocate(kv, 2, b, 3), 8);
  const std::vector<BlockId> &tableA = *kv.blockTable(1), &tableB = *kv.blockTable(2);
  ASSERT_EQ(tableB.size(), 3u);
  EXPECT_EQ(tableB[0], tableA[0]);
  EXPECT_EQ(tableB[1], tableA[1]);
  EXPECT_NE(tableB[2], tableA[2]);
  EXPECT_EQ(kv.pool().refCount(tableA[0]), 2);
  EXPECT_EQ(kv.pool().refCount(tableA[1]), 2);
  EXPECT_EQ(kv.pool().refCount(tableA[2]), 1);
  EXPECT_EQ(kv.pool().numUsedBlocks(), 4);

  std::vector<BlockId> keptB = tableB;
  kv.free(1);
  EXPECT_FALSE(kv.contains(1));
  EXPECT_EQ(*kv.blockTable(2), keptB);
  EXPECT_EQ(kv.pool().refCount(keptB[0]), 1);
  EXPECT_EQ(kv.pool().refCount(keptB[1]), 1);
  EXPECT_EQ(kv.pool().numUsedBlocks(), 3);
  kv.free(2);
  EXPECT_EQ(kv.pool().numUsedBlocks(), 0);
  EXPECT_EQ(kv.pool().numEvictableBlocks(), 2);
  kv.free(2); // unknown: no-op
}

TEST(KVCacheManagerTest, HitOnExactMultipleLeavesATokenToCompute) {
  KVCacheManager kv = makeManager(16, 4);
  std::vector<int32_t> prompt = iota(8);
  allocate(kv, 1, prompt, 8);
  ASSERT_TRUE(kv.commitFullBlocks(1, prompt, 8).ok());
  kv.free(1);
  EXPECT_EQ(kv.numCachedPrefixTokens(prompt), 4);
  EXPECT_EQ(allocate(kv, 2, prompt, 4), 4);
  EXPECT_EQ(kv.numSlotTokens(2), 8);
  std::vector<int32_t> single = {100};
  EXPECT_EQ(kv.numCachedPrefixTokens(single), 0);
}

TEST(KVCacheManagerTest, HashesChainThroughThePrefix) {
  KVCacheManager kv = makeManager(16, 4);
  std::vector<int32_t> a = iota(9);
  allocate(kv, 1, a, 9);
  ASSERT_TRUE(kv.commitFullBlocks(1, a, 9).ok());
  std::vector<int32_t> c = a;
  c[0] = 1; // second block's tokens equal a's, but its prefix differs
  EXPECT_EQ(kv.numCachedPrefixTokens(c), 0);
}

TEST(KVCacheManagerTest, RevivingEvictableHitsCountsAgainstTheFreeBlocks) {
  KVCacheManager kv = makeManager(4, 4); // 3 usable blocks
  std::vector<int32_t> a = iota(8);
  allocate(kv, 1, a, 8);
  ASSERT_TRUE(kv.commitFullBlocks(1, a, 8).ok());
  kv.free(1);
  EXPECT_EQ(kv.pool().numFreeBlocks(), 3);
  EXPECT_EQ(kv.pool().numEvictableBlocks(), 2);

  // 2 hits + 2 new blocks > 3: refused, and the hits stay evictable.
  std::vector<int32_t> longer = a;
  longer.resize(16, 1);
  EXPECT_EQ(kv.numCachedPrefixTokens(longer), 8);
  StatusOr<SlotAllocation> tooMany = kv.allocateSlots(2, longer, 8);
  ASSERT_TRUE(tooMany.ok());
  EXPECT_FALSE(tooMany->allocated);
  EXPECT_EQ(kv.pool().numEvictableBlocks(), 2);
  EXPECT_EQ(kv.pool().numUsedBlocks(), 0);

  // 2 hits + 1 new block fits exactly.
  EXPECT_EQ(allocate(kv, 2, longer, 4), 8);
  EXPECT_EQ(kv.pool().numUsedBlocks(), 3);
  EXPECT_EQ(kv.pool().numFreeBlocks(), 0);
}

TEST(KVCacheManagerTest, PrefixCachingCanBeTurnedOff) {
  KVCacheManager kv = makeManager(16, 4, /*prefixCaching=*/false);
  std::vector<int32_t> a = iota(9);
  allocate(kv, 1, a, 9);
  ASSERT_TRUE(kv.commitFullBlocks(1, a, 9).ok());
  EXPECT_EQ(kv.pool().numCachedBlocks(), 0);
  EXPECT_EQ(allocate(kv, 2, a, 9), 0);
  EXPECT_EQ(kv.pool().numUsedBlocks(), 6);
}

} // namespace
} // namespace infer::kv
