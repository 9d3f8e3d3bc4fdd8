//===- SharedCarveoutTest.cpp - INFER_SMEM_CARVEOUT -----------------------===//

#include "runtime/cuda/CudaApi.h"

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

} // namespace
} // namespace infer::cuda
