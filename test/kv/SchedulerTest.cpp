//===- SchedulerTest.cpp - scheduling policy on small hand-checked cases --===//

#include "test/kv/SchedulerTestUtils.h"

#include <numeric>

namespace infer::scheduler {
namespace {

using namespace kvtest;

SchedulerConfig smallConfig() {
  SchedulerConfig config;
  config.numBlocks = 64;
  config.blockSize = 4;
  config.maxBatchTokens = 64;
  config.maxSequences = 8;
  config.maxSeqLen = 64;
  return config;
}

std::vector<int32_t> prompt(int32_t count, int32_t first = 1) {
  std::vector<int32_t> tokens(count);
  std::iota(tokens.begin(), tokens.end(), first);
  for (int32_t &token : tokens)
    token %= kVocab;
  return tokens;
}

/// schedule() that must succeed.
ScheduledStep scheduleOk(Scheduler &scheduler) {
  StatusOr<ScheduledStep> step = scheduler.schedule();
  EXPECT_TRUE(step.ok()) << step.status().toString();
  return step.ok() ? std::move(step).value() : ScheduledStep{};
}

/// Sampled tokens for `step` that nothing looks at (no sequence finishes on them).
std::vector<int32_t> dummySamples(const ScheduledStep &step) {
  return std::vector<int32_t>(step.sequences.size(), 0);
}

TEST(SchedulerTest, RejectsBadConfigs) {
  SchedulerConfig config = smallConfig();
  config.maxBatchTokens = 0;
  EXPECT_FALSE(Scheduler::create(config).ok());
  config = smallConfig();
  config.numBlocks = 1;
  EXPECT_FALSE(Scheduler::create(config).ok());
  config = smallConfig();
  config.maxSeqLen = 0;
  EXPECT_FALSE(Scheduler::create(config).ok());
}

TEST(SchedulerTest, RefusesRequestsThatCanNeverRunWithAReason) {
  SchedulerConfig config = smallConfig();
  config.maxSeqLen = 16;
  config.numBlocks = 4; // 3 usable blocks = 12 tokens
  Scheduler scheduler = makeScheduler(config);
  ASSERT_TRUE(scheduler.addRequest(1, prompt(17), 4).ok());  // beyond maxSeqLen
  ASSERT_TRUE(scheduler.addRequest(2, prompt(10), 20).ok()); // 15 tokens > the pool
  ASSERT_TRUE(scheduler.addRequest(3, {}, 4).ok());
  ASSERT_TRUE(scheduler.addRequest(4, prompt(3), 0).ok());
  ASSERT_TRUE(scheduler.addRequest(5, prompt(10), 3).ok()); // 12 tokens: fits
  EXPECT_EQ(scheduler.numWaiting(), 1u);
  std::vector<Request> refused = scheduler.takeFinished();
  ASSERT_EQ(refused.size(), 4u);
  for (const Request &request : refused) {
    EXPECT_EQ(request.finishReason, FinishReason::kRefused);
    EXPECT_EQ(request.state, RequestState::kFinished);
    EXPECT_TRUE(request.generatedTokens().empty());
  }
  EXPECT_NE(refused[0].error.find("longer than the context limit of 16"), std::string::npos)
      << refused[0].error;
  EXPECT_NE(refused[1].error.find("KV blocks"), std::string::npos) << refused[1].error;
  EXPECT_NE(refused[2].error.find("empty prompt"), std::string::npos) << refused[2].error;
  EXPECT_NE(refused[3].error.find("maxNewTokens"), std::string::npos) << refused[3].error;

  RunStats stats;
  std::map<RequestId, Outcome> outcomes = drive(scheduler, {}, stats);
  EXPECT_EQ(outcomes[5], reference({5, prompt(10), 3, {}, 0}, config.maxSeqLen));
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 0);
}

TEST(SchedulerTest, PromptAtTheContextLimitYieldsOneToken) {
  SchedulerConfig config = smallConfig();
  config.maxSeqLen = 12;
  Scheduler scheduler = makeScheduler(config);
  RunStats stats;
  RequestSpec atLimit{1, prompt(12), 10, {}, 0}, belowLimit{2, prompt(9, 20), 10, {}, 0};
  std::map<RequestId, Outcome> outcomes = drive(scheduler, {atLimit, belowLimit}, stats);
  EXPECT_EQ(outcomes[1].generated.size(), 1u);
  EXPECT_EQ(outcomes[1].reason, FinishReason::kContextLimit);
  EXPECT_EQ(outcomes[2].generated.size(), 3u); // 9 + 3 = 12 tokens
  EXPECT_EQ(outcomes[2], reference(belowLimit, config.maxSeqLen));
}

TEST(SchedulerTest, StopTokensAndMaxNewTokens) {
  SchedulerConfig config = smallConfig();
  Outcome free = reference({1, prompt(7), 12, {}, 0}, config.maxSeqLen);
  ASSERT_EQ(free.generated.size(), 12u);
  // The first generated token (past the first) not seen before it.
  size_t k = 1;
  while (std::count(free.generated.begin(), free.generated.begin() + k, free.generated[k]))
    ++k;
  ASSERT_LT(k, free.generated.size());
  RequestSpec stopped{1, prompt(7), 12, {free.generated[k]}, 0};
  RequestSpec capped{2, prompt(7), 3, {}, 0};
  Scheduler scheduler = makeScheduler(config);
  RunStats stats;
  std::map<RequestId, Outcome> outcomes = drive(scheduler, {stopped, capped}, stats);
  EXPECT_EQ(outcomes[1].reason, FinishReason::kStopToken);
  EXPECT_EQ(outcomes[1].generated,
            std::vector<int32_t>(free.generated.begin(), free.generated.begin() + k + 1));
  EXPECT_EQ(outcomes[2].reason, FinishReason::kMaxNewTokens);
  EXPECT_EQ(outcomes[2].generated,
            std::vector<int32_t>(free.generated.begin(), free.generated.begin() + 3));
}

TEST(SchedulerTest, ChunkedPrefillSplitsALongPrompt) {
  SchedulerConfig config = smallConfig();
  config.maxBatchTokens = 8;
  Scheduler scheduler = makeScheduler(config);
  ASSERT_TRUE(scheduler.addRequest(1, prompt(30), 2).ok());
  int32_t position = 0;
  for (int32_t chunk : {8, 8, 8, 6}) {
    ScheduledStep step = scheduleOk(scheduler);
    ASSERT_EQ(step.sequences.size(), 1u);
    const ScheduledSequence &seq = step.sequences[0];
    ASSERT_EQ(seq.tokenIds.size(), static_cast<size_t>(chunk));
    EXPECT_EQ(seq.positions.front(), position);
    EXPECT_EQ(seq.contextLen, position + chunk);
    EXPECT_EQ(seq.needsLogits, chunk == 6);
    EXPECT_EQ(seq.blockTable.size(), static_cast<size_t>((position + chunk + 3) / 4));
    position += chunk;
    ASSERT_TRUE(scheduler.update(step, dummySamples(step)).ok());
  }
  ScheduledStep decode = scheduleOk(scheduler);
  ASSERT_EQ(decode.sequences.size(), 1u);
  EXPECT_EQ(decode.sequences[0].tokenIds, std::vector<int32_t>{0}); // the sampled token
  EXPECT_EQ(decode.sequences[0].positions, std::vector<int32_t>{30});
  EXPECT_TRUE(decode.sequences[0].needsLogits);
}

TEST(SchedulerTest, RunningRequestsGoBeforeNewOnes) {
  SchedulerConfig config = smallConfig();
  config.maxBatchTokens = 8;
  Scheduler scheduler = makeScheduler(config);
  ASSERT_TRUE(scheduler.addRequest(1, prompt(4), 5).ok());
  ScheduledStep first = scheduleOk(scheduler);
  ASSERT_TRUE(scheduler.update(first, dummySamples(first)).ok());
  ASSERT_TRUE(scheduler.addRequest(2, prompt(20, 30), 5).ok());
  ScheduledStep second = scheduleOk(scheduler);
  ASSERT_EQ(second.sequences.size(), 2u);
  EXPECT_EQ(second.sequences[0].requestId, 1);
  EXPECT_EQ(second.sequences[0].tokenIds.size(), 1u);
  EXPECT_EQ(second.sequences[1].requestId, 2);
  EXPECT_EQ(second.sequences[1].tokenIds.size(), 7u);
  EXPECT_FALSE(second.sequences[1].needsLogits);
}

TEST(SchedulerTest, PreemptsTheNewestRunningRequestByRecompute) {
  SchedulerConfig config = smallConfig();
  config.blockSize = 2;
  config.numBlocks = 5; // 4 usable: two 3-token prompts fill the pool
  config.maxSeqLen = 8;
  Scheduler scheduler = makeScheduler(config);
  RequestSpec a{1, prompt(3), 5, {}, 0}, b{2, prompt(3, 40), 5, {}, 0};
  ASSERT_TRUE(scheduler.addRequest(a.id, a.prompt, a.maxNewTokens).ok());
  ASSERT_TRUE(scheduler.addRequest(b.id, b.prompt, b.maxNewTokens).ok());
  FakePagedModel model(config.numBlocks, config.blockSize, kVocab);
  StepBatch batch;
  for (int i = 0; i < 2; ++i) { // prefill, then decodes at position 3
    ScheduledStep step = scheduleOk(scheduler);
    EXPECT_EQ(step.sequences.size(), 2u);
    EXPECT_TRUE(step.preempted.empty());
    ASSERT_TRUE(runStep(scheduler, model, batch, step));
  }
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 4);
  // Position 4 needs a third block for each: b, admitted last, gives way.
  ScheduledStep step = scheduleOk(scheduler);
  EXPECT_EQ(step.preempted, std::vector<RequestId>{b.id});
  ASSERT_EQ(step.sequences.size(), 1u);
  EXPECT_EQ(step.sequences[0].requestId, a.id);
  const Request *preempted = scheduler.request(b.id);
  ASSERT_NE(preempted, nullptr);
  EXPECT_EQ(preempted->state, RequestState::kWaiting);
  EXPECT_EQ(preempted->numComputedTokens, 0);
  EXPECT_EQ(preempted->numGeneratedTokens(), 2); // kept: recomputed, not resampled
  EXPECT_EQ(scheduler.numPreemptions(), 1);
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 3);
  ASSERT_TRUE(runStep(scheduler, model, batch, step));

  RunStats stats;
  std::map<RequestId, Outcome> outcomes = drive(scheduler, model, {}, stats);
  EXPECT_EQ(outcomes[a.id], reference(a, config.maxSeqLen));
  EXPECT_EQ(outcomes[b.id], reference(b, config.maxSeqLen));
  EXPECT_TRUE(model.errors.empty());
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 0);
}

TEST(SchedulerTest, CancelFreesBlocks) {
  SchedulerConfig config = smallConfig();
  config.maxSequences = 2;
  Scheduler scheduler = makeScheduler(config);
  ASSERT_TRUE(scheduler.addRequest(1, prompt(10), 20).ok());
  ASSERT_TRUE(scheduler.addRequest(2, prompt(6, 20), 20).ok());
  ASSERT_TRUE(scheduler.addRequest(3, prompt(6, 30), 20).ok()); // waits: maxSequences
  ScheduledStep step = scheduleOk(scheduler);
  ASSERT_TRUE(scheduler.update(step, dummySamples(step)).ok());
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 3 + 2);

  EXPECT_EQ(scheduler.cancel(3).code(), StatusCode::kOk); // waiting
  EXPECT_EQ(scheduler.cancel(2).code(), StatusCode::kOk); // running
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 3);
  EXPECT_EQ(scheduler.cancel(2).code(), StatusCode::kNotFound);
  EXPECT_EQ(scheduler.cancel(99).code(), StatusCode::kNotFound);

  // Cancelled while its step is in flight: update() skips it.
  ScheduledStep inFlight = scheduleOk(scheduler);
  ASSERT_EQ(inFlight.sequences.size(), 1u);
  ASSERT_TRUE(scheduler.cancel(1).ok());
  EXPECT_EQ(scheduler.kvCache().pool().numUsedBlocks(), 0);
  EXPECT_TRUE(scheduler.update(inFlight, dummySamples(inFlight)).ok());
  std::vector<Request> finished = scheduler.takeFinished();
  ASSERT_EQ(finished.size(), 3u);
  for (const Request &request : finished)
    EXPECT_EQ(request.finishReason, FinishReason::kCancelled);
  EXPECT_FALSE(scheduler.hasUnfinished());
  EXPECT_TRUE(scheduleOk(scheduler).empty());
}

TEST(SchedulerTest, RepeatedPromptHitsThePrefixCache) {
  SchedulerConfig config = smallConfig();
  Scheduler scheduler = makeScheduler(config);
  RequestSpec first{1, prompt(13), 4, {}, 0}, again{2, prompt(13), 4, {}, 0};
  FakePagedModel model(config.numBlocks, config.blockSize, kVocab);
  RunStats stats;
  std::map<RequestId, Outcome> outcomes = drive(scheduler, model, {first}, stats);
  outcomes.merge(drive(scheduler, model, {again}, stats));
  EXPECT_EQ(outcomes[1].numCachedTokens, 0);
  // 13 prompt tokens + 3 computed generated ones = 16 cached; the hit stops
  // at 12 because the prompt's 13th token must be computed for its logits.
  EXPECT_EQ(outcomes[2].numCachedTokens, 12);
  EXPECT_EQ(outcomes[2], reference(again, config.maxSeqLen));
  EXPECT_EQ(outcomes[1], outcomes[2]);
}

TEST(SchedulerTest, ProtocolMisuseIsAnError) {
  Scheduler scheduler = makeScheduler(smallConfig());
  ASSERT_TRUE(scheduler.addRequest(1, prompt(5), 3).ok());
  EXPECT_EQ(scheduler.addRequest(1, prompt(5), 3).code(), StatusCode::kInvalidArgument);
  ScheduledStep step = scheduleOk(scheduler);
  EXPECT_EQ(scheduler.schedule().status().code(), StatusCode::kFailedPrecondition);
  ScheduledStep wrong = step;
  wrong.stepId += 1;
  EXPECT_EQ(scheduler.update(wrong, dummySamples(step)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(scheduler.update(step, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(scheduler.update(step, dummySamples(step)).ok());
  EXPECT_EQ(scheduler.update(step, dummySamples(step)).code(), StatusCode::kFailedPrecondition);
}

} // namespace
} // namespace infer::scheduler
