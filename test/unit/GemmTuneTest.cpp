//===- GemmTuneTest.cpp - INFER_GEMM_TUNE settings, split-k candidates ----===//

#include "runtime/cuda/GemmRunner.h"

#include <gtest/gtest.h>

namespace infer::cuda {
namespace {

TEST(GemmTuneTest, UnsetOrEmptyTimesTheDefaultEight) {
  std::string warning;
  EXPECT_EQ(gemmTuneCandidates(nullptr, &warning), 8);
  EXPECT_EQ(gemmTuneCandidates("", &warning), 8);
  EXPECT_TRUE(warning.empty());
}

TEST(GemmTuneTest, ZeroTakesTheHeuristicsFirstOnly) {
  std::string warning;
  EXPECT_EQ(gemmTuneCandidates("0", &warning), 1);
  EXPECT_TRUE(warning.empty());
}

TEST(GemmTuneTest, CountsUpToSixtyFour) {
  std::string warning;
  EXPECT_EQ(gemmTuneCandidates("1", &warning), 1);
  EXPECT_EQ(gemmTuneCandidates("32", &warning), 32);
  EXPECT_EQ(gemmTuneCandidates("64", &warning), 64);
  EXPECT_TRUE(warning.empty());
}

TEST(GemmTuneTest, AnythingElseWarnsAndKeepsTheDefault) {
  for (const char *bad : {"65", "-1", "abc", "8x", "1.5"}) {
    std::string warning;
    EXPECT_EQ(gemmTuneCandidates(bad, &warning), 8) << bad;
    EXPECT_NE(warning.find(std::string("INFER_GEMM_TUNE=") + bad), std::string::npos) << warning;
  }
}

// TinyLlama's 128-token prefill on an H200 (132 SMs): the o and down
// projections fill 16 tiles of 128 x 128, the fused qkv 20, gate/up 88.
TEST(GemmTuneTest, SplitsOverKOnlyWhereTilesLeaveSmsIdle) {
  EXPECT_EQ(gemmSplitKCounts(128, 2048, 2048, 132), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(gemmSplitKCounts(128, 2048, 5632, 132), (std::vector<int>{2, 4, 8, 16}));
  EXPECT_EQ(gemmSplitKCounts(128, 2560, 2048, 132), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(gemmSplitKCounts(128, 11264, 2048, 132), (std::vector<int>{2}));
  // A partial tile counts as a tile: 100 tokens tile like 128.
  EXPECT_EQ(gemmSplitKCounts(100, 2048, 2048, 132), gemmSplitKCounts(128, 2048, 2048, 132));
}

TEST(GemmTuneTest, NoSplitsWhereTilesCoverTheSmsOrKIsShort) {
  EXPECT_TRUE(gemmSplitKCounts(2048, 2048, 2048, 132).empty()); // 256 tiles
  EXPECT_TRUE(gemmSplitKCounts(128, 2048, 256, 132).empty());   // < 256 of k a split
  EXPECT_EQ(gemmSplitKCounts(128, 2048, 1024, 132), (std::vector<int>{2, 4}));
  EXPECT_TRUE(gemmSplitKCounts(128, 2048, 2048, 0).empty()); // SMs unknown
}

} // namespace
} // namespace infer::cuda
