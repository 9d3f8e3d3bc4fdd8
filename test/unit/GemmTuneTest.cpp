//===- GemmTuneTest.cpp - INFER_GEMM_TUNE settings -------------------------===//

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

} // namespace
} // namespace infer::cuda
