//===- SharedCarveoutTest.cpp - INFER_SMEM_CARVEOUT, INFER_GEMV_MMA_MIN ---===//

#include "runtime/cuda/CudaApi.h"

#include "runtime/cuda/abi/GemvGeometry.h"

#include <gtest/gtest.h>

namespace infer::cuda {
namespace {

TEST(SharedCarveoutTest, UnsetAsksTheMostSharedMemoryOfEveryKernel) {
  StatusOr<int> carveout = sharedCarveoutSetting(nullptr);
  ASSERT_TRUE(carveout.ok());
  EXPECT_EQ(carveout.value(), 100);
}

TEST(SharedCarveoutTest, TakesMinusOneAndPercentages) {
  for (const auto &[text, value] :
       std::vector<std::pair<const char *, int>>{{"-1", -1}, {"0", 0}, {"50", 50}, {"100", 100}}) {
    StatusOr<int> carveout = sharedCarveoutSetting(text);
    ASSERT_TRUE(carveout.ok()) << text;
    EXPECT_EQ(carveout.value(), value) << text;
  }
}

TEST(SharedCarveoutTest, RejectsAnythingElseNamingTheVariable) {
  for (const char *text : {"", "abc", "101", "-2", "50%", "7 "}) {
    StatusOr<int> carveout = sharedCarveoutSetting(text);
    ASSERT_FALSE(carveout.ok()) << "'" << text << "'";
    EXPECT_NE(carveout.status().message().find("INFER_SMEM_CARVEOUT"), std::string::npos);
    EXPECT_NE(carveout.status().message().find(std::string("'") + text + "'"), std::string::npos);
  }
}

TEST(GemvMmaMinTokensTest, UnsetRunsTheTensorCoreGemvFromThreeTokens) {
  StatusOr<int> fewest = gemvMmaMinTokensSetting(nullptr);
  ASSERT_TRUE(fewest.ok());
  EXPECT_EQ(fewest.value(), 3);
}

TEST(GemvMmaMinTokensTest, TakesZeroAndTokenCountsUpToTheKernelsRows) {
  for (const auto &[text, value] :
       std::vector<std::pair<const char *, int>>{{"0", 0}, {"1", 1}, {"4", 4}, {"8", 8}}) {
    StatusOr<int> fewest = gemvMmaMinTokensSetting(text);
    ASSERT_TRUE(fewest.ok()) << text;
    EXPECT_EQ(fewest.value(), value) << text;
  }
}

TEST(GemvMmaMinTokensTest, RejectsAnythingElseNamingTheVariable) {
  for (const char *text : {"", "-1", "9", "three", "3 "}) {
    StatusOr<int> fewest = gemvMmaMinTokensSetting(text);
    ASSERT_FALSE(fewest.ok()) << "'" << text << "'";
    EXPECT_NE(fewest.status().message().find("INFER_GEMV_MMA_MIN"), std::string::npos);
    EXPECT_NE(fewest.status().message().find(std::string("'") + text + "'"), std::string::npos);
    EXPECT_NE(fewest.status().message().find("up to " + std::to_string(kernels::kGemvMmaRows)),
              std::string::npos);
  }
}

} // namespace
} // namespace infer::cuda
