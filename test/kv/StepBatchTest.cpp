//===- StepBatchTest.cpp - the step entry's metadata for a hand-made step -===//

#include "runtime/scheduler/StepBatch.h"

#include <gtest/gtest.h>

namespace infer::scheduler {
namespace {

using V = std::vector<int32_t>;

ScheduledSequence sequence(RequestId id, V tokens, V positions, V slots, V table,
                           int32_t contextLen, bool needsLogits) {
  ScheduledSequence seq;
  seq.requestId = id;
  seq.tokenIds = std::move(tokens);
  seq.positions = std::move(positions);
  seq.slotIds = std::move(slots);
  seq.blockTable = std::move(table);
  seq.contextLen = contextLen;
  seq.needsLogits = needsLogits;
  return seq;
}

/// Block size 4: a 3-token prefill, a decode at position 5, and the first
/// chunk of a prompt that does not reach its end (no logits).
ScheduledStep handMadeStep() {
  ScheduledStep step;
  step.stepId = 1;
  step.sequences.push_back(sequence(7, {5, 6, 7}, {0, 1, 2}, {12, 13, 14}, {3}, 3, true));
  step.sequences.push_back(sequence(9, {42}, {5}, {9}, {1, 2}, 6, true));
  step.sequences.push_back(sequence(4, {1, 2}, {0, 1}, {16, 17}, {4}, 2, false));
  return step;
}

TEST(StepBatchTest, FlattensAHandMadeStep) {
  StepBatch batch;
  ASSERT_TRUE(buildStepBatch(handMadeStep(), 3, batch).ok());
  EXPECT_EQ(batch.numTokens(), 6);
  EXPECT_EQ(batch.numSequences(), 3);
  EXPECT_EQ(batch.tokenIds, (V{5, 6, 7, 42, 1, 2}));
  EXPECT_EQ(batch.positions, (V{0, 1, 2, 5, 0, 1}));
  EXPECT_EQ(batch.seqStarts, (V{0, 3, 4, 6}));
  EXPECT_EQ(batch.contextLens, (V{3, 6, 2}));
  EXPECT_EQ(batch.blockTables, (V{3, 0, 0, /**/ 1, 2, 0, /**/ 4, 0, 0}));
  EXPECT_EQ(batch.slotIds, (V{12, 13, 14, 9, 16, 17}));
  EXPECT_EQ(batch.logitRows, (V{2, 3}));
  EXPECT_EQ(batch.logitSequences, (V{0, 1}));
  EXPECT_EQ(batch.maxBlocksPerSequence, 3);

  StatusOr<V> perSequence = sampledPerSequence(batch, {77, 88});
  ASSERT_TRUE(perSequence.ok());
  EXPECT_EQ(*perSequence, (V{77, 88, -1}));
  EXPECT_FALSE(sampledPerSequence(batch, {77}).ok());
}

TEST(StepBatchTest, RebuildingReusesTheBatch) {
  StepBatch batch;
  ASSERT_TRUE(buildStepBatch(handMadeStep(), 3, batch).ok());
  ScheduledStep decode;
  decode.sequences.push_back(sequence(9, {43}, {6}, {10}, {1, 2}, 7, true));
  ASSERT_TRUE(buildStepBatch(decode, 2, batch).ok());
  EXPECT_EQ(batch.tokenIds, (V{43}));
  EXPECT_EQ(batch.seqStarts, (V{0, 1}));
  EXPECT_EQ(batch.blockTables, (V{1, 2}));
  EXPECT_EQ(batch.logitRows, (V{0}));
}

TEST(StepBatchTest, RejectsMalformedSteps) {
  StepBatch batch;
  EXPECT_EQ(buildStepBatch(handMadeStep(), 1, batch).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(buildStepBatch(handMadeStep(), 0, batch).code(), StatusCode::kInvalidArgument);
  ScheduledStep ragged;
  ragged.sequences.push_back(sequence(1, {1, 2}, {0}, {4, 5}, {1}, 2, true));
  EXPECT_EQ(buildStepBatch(ragged, 2, batch).code(), StatusCode::kInvalidArgument);
}

} // namespace
} // namespace infer::scheduler
