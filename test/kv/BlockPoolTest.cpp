//===- BlockPoolTest.cpp - free list, ref counts, prefix cache ------------===//

#include "runtime/kv/BlockPool.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace infer::kv {
namespace {

BlockPool makePool(int32_t numBlocks) {
  StatusOr<BlockPool> pool = BlockPool::create(numBlocks);
  EXPECT_TRUE(pool.ok()) << pool.status().toString();
  return std::move(pool).value();
}

TEST(BlockPoolTest, RejectsPoolWithoutUsableBlocks) {
  EXPECT_EQ(BlockPool::create(1).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BlockPool::create(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(BlockPool::create(2).ok());
}

TEST(BlockPoolTest, ExhaustionIsAValueAndChangesNothing) {
  BlockPool pool = makePool(5); // 4 usable
  EXPECT_EQ(pool.numFreeBlocks(), 4);
  auto first = pool.allocate(3);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->size(), 3u);
  EXPECT_FALSE(pool.allocate(2));
  EXPECT_EQ(pool.numFreeBlocks(), 1);
  EXPECT_EQ(pool.numUsedBlocks(), 3);
  ASSERT_TRUE(pool.allocate(1));
  EXPECT_FALSE(pool.allocate(1));
  EXPECT_FALSE(pool.allocate(-1));
  auto none = pool.allocate(0);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(pool.numUsedBlocks(), 4);
  EXPECT_EQ(pool.numFreeBlocks(), 0);
}

TEST(BlockPoolTest, NullBlockIsNeverHandedOutOrFreed) {
  BlockPool pool = makePool(4);
  for (int round = 0; round < 3; ++round) {
    auto blocks = pool.allocate(3);
    ASSERT_TRUE(blocks);
    EXPECT_EQ(std::count(blocks->begin(), blocks->end(), kNullBlock), 0);
    ASSERT_TRUE(pool.free(*blocks).ok());
  }
  EXPECT_EQ(pool.free({kNullBlock}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.free({4}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.refCount(kNullBlock), 0);
}

TEST(BlockPoolTest, FreeListIsFirstInFirstOut) {
  BlockPool pool = makePool(6);
  auto first = pool.allocate(3);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, (std::vector<BlockId>{1, 2, 3}));
  ASSERT_TRUE(pool.free({2}).ok());
  auto second = pool.allocate(3);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, (std::vector<BlockId>{4, 5, 2}));
}

TEST(BlockPoolTest, RefCountsAndBadFreesLeaveStateUnchanged) {
  BlockPool pool = makePool(4);
  auto blocks = pool.allocate(2);
  ASSERT_TRUE(blocks);
  BlockId a = (*blocks)[0], b = (*blocks)[1];
  ASSERT_TRUE(*pool.registerHash(a, 7));
  ASSERT_EQ(pool.lookup(7), a);
  EXPECT_EQ(pool.refCount(a), 2);
  EXPECT_EQ(pool.refCount(b), 1);
  // b once too often: the whole call is refused, a keeps both references.
  EXPECT_EQ(pool.free({a, b, b}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.refCount(a), 2);
  EXPECT_EQ(pool.refCount(b), 1);
  ASSERT_TRUE(pool.free({a, b}).ok());
  EXPECT_EQ(pool.refCount(a), 1);
  EXPECT_EQ(pool.refCount(b), 0);
  EXPECT_EQ(pool.numUsedBlocks(), 1);
  EXPECT_EQ(pool.free({b}).code(), StatusCode::kInvalidArgument);
}

TEST(BlockPoolTest, PrefixCacheHitAndMiss) {
  BlockPool pool = makePool(4);
  auto blocks = pool.allocate(2);
  ASSERT_TRUE(blocks);
  BlockId a = (*blocks)[0], b = (*blocks)[1];
  EXPECT_FALSE(pool.lookup(11));
  ASSERT_TRUE(*pool.registerHash(a, 11));
  EXPECT_TRUE(*pool.registerHash(a, 11)); // same pair again is fine
  EXPECT_FALSE(pool.registerHash(a, 12).ok());
  // Another block with the same contents stays private.
  EXPECT_FALSE(*pool.registerHash(b, 11));
  EXPECT_EQ(pool.numCachedBlocks(), 1);
  EXPECT_EQ(pool.cachedBlock(11), a);
  EXPECT_EQ(pool.refCount(a), 1); // cachedBlock() does not touch
  EXPECT_EQ(pool.lookup(11), a);
  EXPECT_EQ(pool.refCount(a), 2);
  EXPECT_FALSE(pool.lookup(12));
  // Only used blocks can be cached.
  auto c = pool.allocate(1);
  ASSERT_TRUE(c);
  ASSERT_TRUE(pool.free(*c).ok());
  EXPECT_FALSE(pool.registerHash((*c)[0], 13).ok());
}

TEST(BlockPoolTest, FreedCachedBlockStaysFindableAndLookupRevivesIt) {
  BlockPool pool = makePool(4);
  auto blocks = pool.allocate(1);
  ASSERT_TRUE(blocks);
  BlockId a = (*blocks)[0];
  ASSERT_TRUE(*pool.registerHash(a, 5));
  ASSERT_TRUE(pool.free({a}).ok());
  EXPECT_TRUE(pool.isEvictable(a));
  EXPECT_EQ(pool.numUsedBlocks(), 0);
  EXPECT_EQ(pool.numFreeBlocks(), 3); // evictable blocks count as free
  EXPECT_EQ(pool.numCachedBlocks(), 1);
  EXPECT_EQ(pool.numEvictableBlocks(), 1);
  EXPECT_EQ(pool.lookup(5), a);
  EXPECT_FALSE(pool.isEvictable(a));
  EXPECT_EQ(pool.refCount(a), 1);
  EXPECT_EQ(pool.numUsedBlocks(), 1);
  EXPECT_EQ(pool.numFreeBlocks(), 2);
  EXPECT_EQ(pool.numEvictableBlocks(), 0);
}

TEST(BlockPoolTest, EvictsOnlyWhenFreeListIsEmptyLeastRecentlyFreedFirst) {
  BlockPool pool = makePool(5);
  auto blocks = pool.allocate(4);
  ASSERT_TRUE(blocks);
  EXPECT_EQ(*blocks, (std::vector<BlockId>{1, 2, 3, 4}));
  ASSERT_TRUE(*pool.registerHash(1, 101));
  ASSERT_TRUE(*pool.registerHash(2, 102));
  ASSERT_TRUE(*pool.registerHash(3, 103));
  ASSERT_TRUE(pool.free({2, 3, 1, 4}).ok()); // LRU order: 2, 3, 1
  EXPECT_EQ(pool.allocate(1), std::vector<BlockId>{4}); // never-hashed first
  EXPECT_EQ(pool.numCachedBlocks(), 3);
  EXPECT_EQ(pool.allocate(1), std::vector<BlockId>{2});
  EXPECT_FALSE(pool.cachedBlock(102)); // its hash went with it
  EXPECT_EQ(pool.numCachedBlocks(), 2);
  EXPECT_EQ(pool.allocate(1), std::vector<BlockId>{3});
  EXPECT_EQ(pool.lookup(101), BlockId{1}); // revived, so not evictable
  EXPECT_FALSE(pool.allocate(1));
  EXPECT_EQ(pool.numUsedBlocks(), 4);
  // Freed again, it becomes the most recently freed.
  ASSERT_TRUE(pool.free({1, 4}).ok());
  EXPECT_EQ(pool.allocate(1), std::vector<BlockId>{4});
  EXPECT_EQ(pool.allocate(1), std::vector<BlockId>{1});
  EXPECT_EQ(pool.numCachedBlocks(), 0);
}

TEST(BlockPoolTest, HashChainsOnTheParent) {
  std::vector<int32_t> tokens = {1, 2, 3, 4};
  uint64_t root = hashBlockTokens(kRootBlockHash, tokens.data(), tokens.size());
  EXPECT_EQ(root, hashBlockTokens(kRootBlockHash, tokens.data(), tokens.size()));
  EXPECT_NE(root, hashBlockTokens(root, tokens.data(), tokens.size()));
  std::vector<int32_t> other = {1, 2, 3, 5};
  EXPECT_NE(root, hashBlockTokens(kRootBlockHash, other.data(), other.size()));
}

} // namespace
} // namespace infer::kv
