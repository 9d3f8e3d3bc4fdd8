//===- RuntimeOptionsTest.cpp - the cuda backend's INFER_* switches -------===//

#include "runtime/cuda/RuntimeOptions.h"

#include <gtest/gtest.h>

#include <map>

namespace infer::cuda {
namespace {

/// parseRuntimeOptions of an environment holding `variables` only.
StatusOr<RuntimeOptions> parse(const std::map<std::string, std::string> &variables) {
  return parseRuntimeOptions([&](const char *name) -> const char * {
    auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(RuntimeOptionsTest, UnsetGivesTheDocumentedDefaults) {
  StatusOr<RuntimeOptions> options = parse({{"HOME", "/home/u"}});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_TRUE(options->graphs && options->prefillGraphs && options->uploadStream);
  EXPECT_EQ(options->programmaticLaunch, ProgrammaticLaunch::Decode);
  EXPECT_EQ(options->sharedCarveout, 100);
  EXPECT_TRUE(options->profiledSteps.empty());
  EXPECT_TRUE(options->warnings.empty());
}

TEST(RuntimeOptionsTest, TakesEachSwitch) {
  StatusOr<RuntimeOptions> options = parse({{"INFER_CUDA_GRAPHS", "0"},
                                            {"INFER_PREFILL_GRAPHS", "0"},
                                            {"INFER_UPLOAD_STREAM", "0"},
                                            {"INFER_PDL", "1"},
                                            {"INFER_SMEM_CARVEOUT", "-1"},
                                            {"INFER_PROFILE_STEPS", "3,40"}});
  ASSERT_TRUE(options.ok()) << options.status().message();
  EXPECT_FALSE(options->graphs || options->prefillGraphs || options->uploadStream);
  EXPECT_EQ(options->programmaticLaunch, ProgrammaticLaunch::All);
  EXPECT_EQ(options->sharedCarveout, -1);
  EXPECT_EQ(options->profiledSteps, (std::vector<int64_t>{3, 40}));
  StatusOr<RuntimeOptions> off = parse({{"INFER_PDL", "0"}});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->programmaticLaunch, ProgrammaticLaunch::Off);
}

TEST(RuntimeOptionsTest, RefusesValuesASwitchDoesNotTakeNamingIt) {
  for (const auto &[name, value] :
       std::vector<std::pair<std::string, std::string>>{{"INFER_CUDA_GRAPHS", "off"},
                                                        {"INFER_PREFILL_GRAPHS", ""},
                                                        {"INFER_UPLOAD_STREAM", "2"},
                                                        {"INFER_PDL", "yes"},
                                                        {"INFER_SMEM_CARVEOUT", "101"},
                                                        {"INFER_PROFILE_STEPS", "3,,40"},
                                                        {"INFER_PROFILE_STEPS", "0"},
                                                        {"INFER_PROFILE_STEPS", "x"}}) {
    StatusOr<RuntimeOptions> options = parse({{name, value}});
    ASSERT_FALSE(options.ok()) << name << "=" << value;
    EXPECT_NE(options.status().message().find(name), std::string::npos)
        << options.status().message();
    EXPECT_NE(options.status().message().find("'" + value + "'"), std::string::npos)
        << options.status().message();
  }
}

TEST(RuntimeOptionsTest, TheRetiredTuningSwitchesWarnThatTheCompileTunesNow) {
  StatusOr<RuntimeOptions> options =
      parse({{"INFER_GEMM_TUNE", "4"}, {"INFER_GEMM_TUNING_CACHE", "0"}});
  ASSERT_TRUE(options.ok());
  ASSERT_EQ(options->warnings.size(), 2u);
  EXPECT_NE(options->warnings[0].find("INFER_GEMM_TUNE is ignored"), std::string::npos);
  EXPECT_NE(options->warnings[1].find("--tune"), std::string::npos);
}

TEST(RuntimeOptionsTest, TheRetiredKernelSwitchesWarnThatTheArtifactDecides) {
  StatusOr<RuntimeOptions> options = parse({{"INFER_GEMV_MMA_MIN", "0"},
                                            {"INFER_KV_PREFILL", "0"},
                                            {"INFER_GEMV", "0"},
                                            {"INFER_GEMV_ROWS", "0"}});
  ASSERT_TRUE(options.ok());
  ASSERT_EQ(options->warnings.size(), 4u);
  EXPECT_NE(options->warnings[0].find("INFER_GEMV_MMA_MIN is ignored"), std::string::npos);
  EXPECT_NE(options->warnings[0].find("--mma-gemv-min-tokens"), std::string::npos);
  EXPECT_NE(options->warnings[1].find("INFER_KV_PREFILL is ignored"), std::string::npos);
  EXPECT_NE(options->warnings[1].find("--no-prefill-kernel"), std::string::npos);
  EXPECT_NE(options->warnings[2].find("INFER_GEMV is ignored"), std::string::npos);
  EXPECT_NE(options->warnings[3].find("INFER_GEMV_ROWS is ignored"), std::string::npos);
}

} // namespace
} // namespace infer::cuda
