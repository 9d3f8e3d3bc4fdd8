//===- TuningDatabaseTest.cpp - tuning records kept across compiles -------===//

#include "codegen/cuda/TuningDatabase.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace infer::codegen {
namespace {

namespace art = artifact;
namespace fs = std::filesystem;

class TuningDatabaseTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("infer-tuning-db-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file() const { return (dir_ / "tuning.json").string(); }
  fs::path dir_;
};

art::GemmShape shape(int64_t tokens) {
  art::GemmShape result;
  result.type = art::ELEMENT_TYPE_BF16;
  result.k = 2048;
  result.n = 2560;
  result.tokens = tokens;
  result.transposed = true;
  return result;
}

art::GemmTuningRecord record(int64_t tokens, char fill) {
  art::GemmTuningRecord result = art::recordOf(shape(tokens));
  std::string algorithm(64, fill);
  algorithm[0] = '\xfe'; // bytes above 127 survive the hex
  result.set_algorithm(algorithm);
  result.set_tuned_us(9.5);
  result.set_heuristic_us(10.25);
  result.set_candidates(8);
  return result;
}

TEST_F(TuningDatabaseTest, ALaterCompileFindsWhatOneSaved) {
  StatusOr<TuningDatabase> first = TuningDatabase::open(file()); // missing: empty
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->find("H200, 132 SMs", 130200, shape(16)), nullptr);
  first->add("H200, 132 SMs", 130200, record(16, 'a'));
  ASSERT_TRUE(first->save().ok());
  StatusOr<TuningDatabase> second = TuningDatabase::open(file());
  ASSERT_TRUE(second.ok()) << second.status().message();
  const art::GemmTuningRecord *found = second->find("H200, 132 SMs", 130200, shape(16));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->SerializeAsString(), record(16, 'a').SerializeAsString());
  // Another GPU, or another cuBLASLt, has its own records.
  EXPECT_EQ(second->find("H100, 132 SMs", 130200, shape(16)), nullptr);
  EXPECT_EQ(second->find("H200, 132 SMs", 130100, shape(16)), nullptr);
  EXPECT_EQ(second->find("H200, 132 SMs", 130200, shape(32)), nullptr);
}

TEST_F(TuningDatabaseTest, SelectGivesEachGpuItsRecordsOfTheProgramsShapes) {
  StatusOr<TuningDatabase> database = TuningDatabase::open(file());
  ASSERT_TRUE(database.ok());
  database->add("a", 1, record(16, 'a'));
  database->add("a", 1, record(32, 'a'));
  database->add("b", 1, record(16, 'b'));
  std::vector<art::TuningRecords> sets = database->select({shape(16)});
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].device(), "a");
  EXPECT_EQ(sets[0].gemm_size(), 1);
  EXPECT_EQ(sets[1].device(), "b");
  EXPECT_TRUE(database->select({shape(64)}).empty());
}

TEST_F(TuningDatabaseTest, TheFilesRecordWinsOverAConcurrentCompiles) {
  StatusOr<TuningDatabase> a = TuningDatabase::open(file()), b = TuningDatabase::open(file());
  ASSERT_TRUE(a.ok() && b.ok());
  a->add("gpu", 1, record(16, 'a'));
  ASSERT_TRUE(a->save().ok());
  b->add("gpu", 1, record(16, 'b')); // timed before it saw a's
  b->add("gpu", 1, record(32, 'b'));
  ASSERT_TRUE(b->save().ok());
  EXPECT_EQ(b->find("gpu", 1, shape(16))->algorithm(), record(16, 'a').algorithm());
  StatusOr<TuningDatabase> later = TuningDatabase::open(file());
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(later->find("gpu", 1, shape(16))->algorithm(), record(16, 'a').algorithm());
  EXPECT_NE(later->find("gpu", 1, shape(32)), nullptr);
}

TEST_F(TuningDatabaseTest, AFileThatIsNotADatabaseIsAnErrorAndIsKept) {
  const std::string hex(128, '0');
  const std::string good = "{\"type\": \"bf16\", \"k\": 1, \"n\": 1, \"tokens\": 1, "
                           "\"transposed\": false, \"bias\": false, \"residual\": false, "
                           "\"algorithm\": \"" +
                           hex +
                           "\", \"tuned_us\": 1, \"heuristic_us\": 1, "
                           "\"candidates\": 1}";
  auto wrap = [](const std::string &gemm) {
    return "{\"format\": 2, \"record_sets\": [{\"device\": \"gpu\", \"cublaslt_version\": 1, "
           "\"gemm\": [" +
           gemm + "]}]}";
  };
  {
    std::ofstream(file()) << wrap(good);
    StatusOr<TuningDatabase> database = TuningDatabase::open(file());
    ASSERT_TRUE(database.ok()) << database.status().message();
  }
  std::string badAlgorithm = good;
  badAlgorithm.replace(badAlgorithm.find(hex), 2, "zz");
  std::string badTokens = good;
  badTokens.replace(badTokens.find("\"tokens\": 1"), 11, "\"tokens\": 3");
  for (const std::string &text :
       {std::string("not json"), std::string("{\"format\": 1, \"devices\": {}}"),
        std::string("[1, 2]"), std::string("{\"format\": 2}"), wrap("7"), wrap(badAlgorithm),
        wrap(badTokens), wrap(good + ", " + good)}) {
    std::ofstream(file()) << text;
    StatusOr<TuningDatabase> database = TuningDatabase::open(file());
    ASSERT_FALSE(database.ok()) << text;
    EXPECT_NE(database.status().message().find(file()), std::string::npos)
        << database.status().message();
    std::ifstream in(file());
    std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(kept, text);
  }
  EXPECT_FALSE(TuningDatabase::open(dir_.string()).ok()); // a directory
}

} // namespace
} // namespace infer::codegen
