//===- GemmTuningCacheTest.cpp - cuBLASLt choices kept across processes ---===//

#include "runtime/cuda/GemmTuningCache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace infer::cuda {
namespace {

namespace fs = std::filesystem;

/// A fresh directory under the test's temporary directory.
class GemmTuningCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("infer-gemm-tuning-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file() const { return (dir_ / "sub" / "gemm-tuning.json").string(); }
  fs::path dir_;
};

const GemmAlgorithmBytes kFirst = {1, 2, 3, 4, 5, 6, 7, 0xfedcba9876543210ull};
const GemmAlgorithmBytes kSecond = {9, 9, 9, 9, 9, 9, 9, 9};

TEST_F(GemmTuningCacheTest, PathFromCacheDirThenXdgThenHome) {
  EXPECT_EQ(GemmTuningCache::pathFor("/c", "/x", "/h"), "/c/gemm-tuning.json");
  EXPECT_EQ(GemmTuningCache::pathFor("", "/x", "/h"), "/x/infer/gemm-tuning.json");
  EXPECT_EQ(GemmTuningCache::pathFor(nullptr, nullptr, "/h"), "/h/.cache/infer/gemm-tuning.json");
  EXPECT_EQ(GemmTuningCache::pathFor(nullptr, "", ""), std::nullopt);
}

TEST_F(GemmTuningCacheTest, AnotherProcessFindsWhatOneRemembered) {
  GemmTuningCache first(file(), "H200, 132 SMs, cuBLASLt 130000");
  EXPECT_EQ(first.find("bf16 k64 n512 T16 nk bias0 residual0"), std::nullopt);
  ASSERT_TRUE(first.remember("bf16 k64 n512 T16 nk bias0 residual0", kFirst).ok());
  GemmTuningCache second(file(), "H200, 132 SMs, cuBLASLt 130000");
  EXPECT_EQ(second.find("bf16 k64 n512 T16 nk bias0 residual0"), kFirst);
  // Another GPU or cuBLASLt version keeps its own entries.
  GemmTuningCache other(file(), "H100, 132 SMs, cuBLASLt 130000");
  EXPECT_EQ(other.find("bf16 k64 n512 T16 nk bias0 residual0"), std::nullopt);
}

TEST_F(GemmTuningCacheTest, TheFilesEntryWinsOverAConcurrentChoice) {
  GemmTuningCache a(file(), "gpu"), b(file(), "gpu");
  ASSERT_TRUE(a.remember("shape", kFirst).ok());
  ASSERT_TRUE(b.remember("shape", kSecond).ok()); // tuned before it saw a's
  EXPECT_EQ(b.find("shape"), kFirst);
  ASSERT_TRUE(b.remember("other", kSecond).ok());
  GemmTuningCache later(file(), "gpu");
  EXPECT_EQ(later.find("shape"), kFirst);
  EXPECT_EQ(later.find("other"), kSecond);
}

TEST_F(GemmTuningCacheTest, AMalformedFileCountsAsEmptyAndIsReplaced) {
  fs::create_directories(fs::path(file()).parent_path());
  for (const char *text : {"not json", "{\"format\": 99, \"devices\": {}}",
                           "{\"format\": \"one\", \"devices\": {}}", "[1, 2]",
                           "{\"format\": 1, \"devices\": {\"gpu\": {\"shape\": \"12zz\"}}}"}) {
    std::ofstream(file()) << text;
    GemmTuningCache cache(file(), "gpu");
    EXPECT_EQ(cache.find("shape"), std::nullopt) << text;
    ASSERT_TRUE(cache.remember("shape", kSecond).ok()) << text;
    EXPECT_EQ(GemmTuningCache(file(), "gpu").find("shape"), kSecond) << text;
  }
}

TEST_F(GemmTuningCacheTest, AnUnwritableDirectoryIsAnErrorNotACrash) {
  fs::create_directories(dir_);
  std::ofstream(dir_ / "sub") << "a file where the directory should be";
  GemmTuningCache cache(file(), "gpu");
  Status status = cache.remember("shape", kFirst);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot"), std::string::npos) << status.message();
  EXPECT_EQ(cache.find("shape"), kFirst); // still used by this process
}

} // namespace
} // namespace infer::cuda
