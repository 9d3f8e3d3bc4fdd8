//===- StepMetadataTest.cpp - step sizes and checks (runtime/exec/ProgramIO) ===//
//
// The host-side rules every backend applies to a step (docs/kv-cache.md, "The
// step program"): sizes derived from the metadata, per-logit-row buffers sized
// by R, the logit-row checks, on a hand-made program whose output is gathered.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/ProgramIO.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace art = infer::artifact;
using ::testing::HasSubstr;

namespace {

/// Buffers: 0 token ids (8*T), 1 logit_indices (8*R), 2 logits (1024*R, f32);
/// one launch writing buffer 2.
art::ExecProgram gatheredProgram() {
  art::ExecProgram program;
  program.mutable_arena()->set_bound_tokens(16);
  auto buffer = [&](int64_t perToken, art::ElementType type, bool perRow) {
    art::Buffer *entry = program.add_buffers();
    entry->set_id(uint32_t(program.buffers_size() - 1));
    entry->mutable_size()->set_a(perToken);
    entry->set_element_type(type);
    entry->set_per_logit_row(perRow);
  };
  buffer(8, art::ELEMENT_TYPE_I64, false);
  buffer(8, art::ELEMENT_TYPE_I64, true);
  buffer(1024, art::ELEMENT_TYPE_F32, true);
  art::Binding *output = program.add_outputs();
  output->set_name("logits");
  output->set_buffer(2);
  program.add_launches()->add_outputs(2);
  return program;
}

/// Two sequences: 3 prompt tokens of the first, 1 decode token of the second.
infer::StepArrays twoSequences() {
  infer::StepArrays arrays;
  arrays.tokenIds = {5, 6, 7, 8};
  arrays.positions = {0, 1, 2, 9};
  arrays.seqStarts = {0, 3, 4};
  arrays.contextLens = {3, 10};
  arrays.blockTables = {1, 0, 2, 3};
  arrays.slotIds = {16, 17, 18, 41};
  arrays.logitIndices = {2, 3};
  return arrays;
}

TEST(StepMetadataTest, SizesComeFromTheMetadata) {
  infer::exec::BoundInputs sizes = infer::exec::stepSizes(twoSequences());
  EXPECT_EQ(sizes.tokens, 4);
  EXPECT_EQ(sizes.sequences, 2);
  EXPECT_EQ(sizes.maxNewTokens, 3);
  EXPECT_EQ(sizes.logitRows, 2);
}

TEST(StepMetadataTest, PerLogitRowBuffersCountR) {
  art::ExecProgram program = gatheredProgram();
  EXPECT_EQ(infer::exec::bufferElements(program.buffers(0), 4, 2), 4);
  EXPECT_EQ(infer::exec::bufferElements(program.buffers(1), 4, 2), 2);
  EXPECT_EQ(infer::exec::bufferElements(program.buffers(2), 4, 2), 2 * 256);
  EXPECT_TRUE(infer::exec::gathersLogitRows(program));
  EXPECT_TRUE(infer::exec::runsPerLogitRow(program, program.launches(0)));
  program.mutable_buffers(2)->set_per_logit_row(false);
  EXPECT_FALSE(infer::exec::gathersLogitRows(program));
}

TEST(StepMetadataTest, LogitRowsMustBeTokensOfTheStep) {
  art::ExecProgram program = gatheredProgram();
  infer::StepArrays arrays = twoSequences();
  EXPECT_TRUE(infer::exec::checkStepArrays(program, arrays, 2).ok());
  arrays.logitIndices = {2, 4};
  infer::Status outside = infer::exec::checkStepArrays(program, arrays, 2);
  ASSERT_FALSE(outside.ok());
  EXPECT_THAT(outside.message(), HasSubstr("logit row 4 is not one of the 4 tokens"));
  arrays.logitIndices.clear();
  EXPECT_THAT(infer::exec::checkStepArrays(program, arrays, 2).message(),
              HasSubstr("0 logit rows"));
  arrays = twoSequences();
  arrays.blockTables.pop_back();
  EXPECT_THAT(infer::exec::checkStepArrays(program, arrays, 2).message(),
              HasSubstr("inconsistent sizes"));
}

} // namespace
