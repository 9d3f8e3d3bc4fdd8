//===- TuningRecordsTest.cpp - GEMM tuning records in the manifest --------===//

#include "runtime/artifact/TuningRecords.h"

#include <gtest/gtest.h>

#include <cmath>

namespace infer::artifact {
namespace {

/// A program of `gemms` GEMM launches of k 64, n 128 (bf16; the last with a
/// residual), over buffers 0 (input), 1 (output).
ExecProgram gemmProgram(int gemms) {
  ExecProgram program;
  for (int i = 0; i < 2; ++i)
    program.add_buffers()->set_element_type(ELEMENT_TYPE_BF16);
  for (int i = 0; i < gemms; ++i) {
    Launch *launch = program.add_launches();
    launch->set_kind(Launch::GEMM);
    Operand *input = launch->add_operands();
    input->set_role(ROLE_INPUT);
    input->mutable_ref()->set_buffer(0);
    if (i + 1 == gemms) {
      Operand *residual = launch->add_operands();
      residual->set_role(ROLE_RESIDUAL);
      residual->mutable_ref()->set_buffer(0);
    }
    launch->add_outputs(1);
    for (auto [name, value] : {std::pair{"k", 64}, std::pair{"n", 128}}) {
      Attribute *attribute = launch->add_attributes();
      attribute->set_name(name);
      attribute->set_int_value(value);
    }
  }
  return program;
}

GemmTuningRecord record(int64_t tokens, double heuristic, double tuned) {
  GemmShape shape;
  shape.type = ELEMENT_TYPE_BF16;
  shape.k = 64;
  shape.n = 128;
  shape.tokens = tokens;
  GemmTuningRecord result = recordOf(shape);
  result.set_algorithm(std::string(64, '\1'));
  result.set_heuristic_us(heuristic);
  result.set_tuned_us(tuned);
  result.set_candidates(8);
  return result;
}

TEST(TuningRecordsTest, ShapesAreCountedInTheStepProgram) {
  Manifest manifest;
  *manifest.mutable_exec() = gemmProgram(2);
  *manifest.mutable_step() = gemmProgram(3);
  std::vector<GemmUse> uses = gemmUses(manifest);
  ASSERT_EQ(uses.size(), 2u); // with and without the residual
  EXPECT_FALSE(uses[0].shape.residual);
  EXPECT_EQ(uses[0].launches, 2); // the step's two; the forward program's are not counted
  EXPECT_TRUE(uses[1].shape.residual);
  EXPECT_EQ(uses[1].launches, 1);
  EXPECT_EQ(uses[0].shape.key(), "bf16 k64 n128 kn bias0 residual0");
  // Every shape at every bucket, shape by shape.
  manifest.mutable_options()->set_max_batch_tokens(4);
  std::vector<GemmShape> buckets = gemmBuckets(manifest);
  ASSERT_EQ(buckets.size(), 6u);
  EXPECT_EQ(buckets[0].key(), "bf16 k64 n128 T1 kn bias0 residual0");
  EXPECT_EQ(buckets[2].key(), "bf16 k64 n128 T4 kn bias0 residual0");
  EXPECT_EQ(buckets[3].key(), "bf16 k64 n128 T1 kn bias0 residual1");
}

TEST(TuningRecordsTest, BucketsArePowersOfTwoUpToTheLargestStep) {
  Manifest manifest;
  manifest.mutable_options()->set_max_batch_tokens(100);
  EXPECT_EQ(tokenBuckets(manifest), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128}));
  manifest.mutable_options()->set_max_batch_tokens(64);
  EXPECT_EQ(tokenBuckets(manifest).back(), 64);
  GemmShape shape;
  shape.tokens = 33;
  EXPECT_EQ(shape.bucket().tokens, 64);
  EXPECT_EQ(powerOfTwoAtLeast(0), 1);
}

TEST(TuningRecordsTest, ChecksRefuseMalformedRecords) {
  TuningRecords records;
  records.set_device("gpu");
  *records.add_gemm() = record(16, 2.0, 1.0);
  EXPECT_TRUE(checkTuningRecords(records).ok());
  TuningRecords twice = records;
  *twice.add_gemm() = record(16, 2.0, 1.0);
  EXPECT_NE(checkTuningRecords(twice).message().find("appears twice"), std::string::npos);
  TuningRecords shortAlgorithm = records;
  shortAlgorithm.mutable_gemm(0)->set_algorithm("x");
  EXPECT_NE(checkTuningRecords(shortAlgorithm).message().find("not 64"), std::string::npos);
  TuningRecords notPowerOfTwo = records;
  notPowerOfTwo.mutable_gemm(0)->set_tokens(12);
  EXPECT_FALSE(checkTuningRecords(notPowerOfTwo).ok());
  TuningRecords nan = records;
  nan.mutable_gemm(0)->set_tuned_us(std::nan(""));
  EXPECT_FALSE(checkTuningRecords(nan).ok());
  TuningRecords integer = records;
  integer.mutable_gemm(0)->set_element_type(ELEMENT_TYPE_I32);
  EXPECT_FALSE(checkTuningRecords(integer).ok());
}

TEST(TuningRecordsTest, TheReportSumsEachStepOverItsLaunches) {
  Manifest manifest;
  *manifest.mutable_step() = gemmProgram(3);
  TuningRecords records;
  records.set_device("gpu");
  records.set_cublaslt_version(1);
  *records.add_gemm() = record(16, 3.0, 2.0); // two launches without the residual
  std::string report = tuningReport(manifest, records);
  EXPECT_NE(report.find("bf16 k64 n128 T16 kn bias0 residual0"), std::string::npos) << report;
  EXPECT_NE(report.find("1.50x"), std::string::npos) << report;
  // One step of 16 tokens: 2 launches x 3.0 us heuristic, 2 x 2.0 tuned.
  EXPECT_NE(report.find("      16           6.0       4.0   33.3%"), std::string::npos) << report;
}

} // namespace
} // namespace infer::artifact
