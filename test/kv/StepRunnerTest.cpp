//===- StepRunnerTest.cpp - decode steps enqueued ahead give the same tokens -===//
//
// serving::StepRunner over a fake backend that, like the cuda backend,
// queues steps and takes a step-ahead's token ids from the previous step's
// sampled rows. The fake's "device" is FakePagedModel (KV written at the
// slots, attention read through the block tables), so a speculative step
// that writes a slot someone else reads, or a wrong feed, changes tokens.
// References: each request run alone (greedy), and the same runner without
// running ahead (seeded draws).
//
//===----------------------------------------------------------------------===//

#include "runtime/serving/StepRunner.h"
#include "test/kv/SchedulerTestUtils.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>

namespace infer::serving {
namespace {

using namespace scheduler;
using scheduler::kvtest::FakePagedModel;
using scheduler::kvtest::kVocab;
using scheduler::kvtest::Outcome;
using scheduler::kvtest::RequestSpec;

/// A Backend whose steps run on FakePagedModel; with `queues`, through
/// enqueueStep / waitStep (computed at enqueue, returned at wait), else
/// through stepAndSample. A row's token is the model's plus a shift of the
/// row's uniform, so draws that go to the wrong token change the output.
class FakeQueuedBackend : public Backend {
public:
  FakeQueuedBackend(const SchedulerConfig &config, bool queues)
      : model_(config.numBlocks, config.blockSize, kVocab), queues_(queues) {}

  StatusOr<std::vector<NamedArray>> forward(const std::vector<NamedArray> &) override {
    return unimplementedError("fake");
  }
  bool hasStep() const override { return true; }
  bool samplesOnDevice() const override { return true; }
  bool queuesSteps() const override { return queues_; }

  StatusOr<std::vector<int32_t>> stepAndSample(const StepArrays &arrays,
                                               const std::vector<RowSampling> &rows) override {
    EXPECT_EQ(outstanding(), 0u) << "a synchronous step with steps outstanding";
    last_ = run(arrays, rows);
    return last_;
  }
  StatusOr<uint64_t> enqueueStep(const StepArrays &given, const std::vector<RowSampling> &rows,
                                 bool tokensFromPrevious) override {
    if (!queues_ || outstanding() >= 2)
      return failedPreconditionError("enqueueStep: not queuing or two outstanding");
    StepArrays arrays = given;
    if (tokensFromPrevious) {
      if (last_.size() < arrays.tokenIds.size())
        return failedPreconditionError("enqueueStep: too few previous rows");
      for (size_t i = 0; i < arrays.tokenIds.size(); ++i) {
        EXPECT_EQ(arrays.tokenIds[i], 0) << "placeholder";
        arrays.tokenIds[i] = last_[i];
      }
      ++fedSteps;
    }
    last_ = run(arrays, rows);
    queue_.push_back(last_);
    return ++enqueued_;
  }
  StatusOr<std::vector<int32_t>> waitStep(uint64_t ticket) override {
    if (ticket != waited_ + 1 || queue_.empty())
      return failedPreconditionError("waitStep: out of order");
    ++waited_;
    std::vector<int32_t> tokens = std::move(queue_.front());
    queue_.pop_front();
    return tokens;
  }

  std::vector<std::string> &errors() { return model_.errors; }
  int64_t fedSteps = 0;

private:
  size_t outstanding() const { return queue_.size(); }

  std::vector<int32_t> run(const StepArrays &arrays, const std::vector<RowSampling> &rows) {
    auto narrow = [](const std::vector<int64_t> &values) {
      return std::vector<int32_t>(values.begin(), values.end());
    };
    StepBatch batch;
    batch.tokenIds = narrow(arrays.tokenIds);
    batch.positions = narrow(arrays.positions);
    batch.seqStarts = narrow(arrays.seqStarts);
    batch.contextLens = narrow(arrays.contextLens);
    batch.blockTables = narrow(arrays.blockTables);
    batch.slotIds = narrow(arrays.slotIds);
    batch.maxBlocksPerSequence =
        static_cast<int32_t>(arrays.blockTables.size() / arrays.contextLens.size());
    // Rows that are not a sequence's last token (a step of middle chunks
    // computes one such row, dropped) are left out of the model's run.
    std::vector<size_t> modelled;
    for (size_t r = 0; r < arrays.logitIndices.size(); ++r) {
      int64_t row = arrays.logitIndices[r];
      size_t s = 0;
      while (arrays.seqStarts[s + 1] <= row)
        ++s;
      if (arrays.positions[size_t(row)] != arrays.contextLens[s] - 1)
        continue;
      batch.logitRows.push_back(static_cast<int32_t>(row));
      batch.logitSequences.push_back(static_cast<int32_t>(s));
      modelled.push_back(r);
    }
    std::vector<int32_t> base = model_.run(batch);
    std::vector<int32_t> tokens(rows.size(), 0);
    for (size_t m = 0; m < modelled.size(); ++m) {
      const RowSampling &row = rows[modelled[m]];
      tokens[modelled[m]] = (base[m] + static_cast<int32_t>(row.uniform * 4)) % kVocab;
    }
    return tokens;
  }

  FakePagedModel model_;
  bool queues_;
  std::deque<std::vector<int32_t>> queue_;
  std::vector<int32_t> last_; ///< the last step's sampled rows
  uint64_t enqueued_ = 0, waited_ = 0;
};

struct RunResult {
  std::map<RequestId, Outcome> outcomes;
  int64_t stepsAhead = 0, dropped = 0, fed = 0;
  int32_t usedBlocksAfter = -1;
};

/// Feeds `specs` (arrivalStep / cancelStep count step() calls) through a
/// StepRunner; `seeded` draws a uniform per token from each request's RNG.
RunResult serve(const SchedulerConfig &config, std::vector<RequestSpec> specs, bool runAhead,
                bool seeded) {
  Scheduler sched = kvtest::makeScheduler(config);
  FakeQueuedBackend backend(config, runAhead);
  StepRunner runner(sched, backend, runAhead);
  std::map<RequestId, std::mt19937> rngs;
  SamplingFn sampling = [&](RequestId id) {
    RowSampling row;
    if (seeded) {
      auto rng = rngs.try_emplace(id, static_cast<uint32_t>(id) * 7919u + 1).first;
      row.temperature = 1.0;
      row.uniform = std::uniform_real_distribution<double>(0.0, 1.0)(rng->second);
    }
    return row;
  };
  RunResult result;
  size_t arrived = 0;
  for (int64_t call = 0; call < 100000; ++call) {
    for (; arrived < specs.size() && specs[arrived].arrivalStep <= call; ++arrived) {
      const RequestSpec &spec = specs[arrived];
      EXPECT_TRUE(
          sched.addRequest(spec.id, spec.prompt, spec.maxNewTokens, spec.stopTokenIds).ok());
    }
    for (const RequestSpec &spec : specs) {
      if (spec.cancelStep == call && sched.request(spec.id)) {
        EXPECT_TRUE(sched.cancel(spec.id).ok());
      }
    }
    for (Request &request : sched.takeFinished())
      result.outcomes[request.id] = {request.generatedTokens(), request.finishReason, 0};
    if (!sched.hasUnfinished()) {
      if (arrived == specs.size())
        break;
      continue;
    }
    StatusOr<StepResult> step = runner.step(sampling);
    if (!step.ok()) {
      ADD_FAILURE() << step.status().toString();
      break;
    }
  }
  for (size_t i = 0; i < backend.errors().size() && i < 5; ++i)
    ADD_FAILURE() << "fake model: " << backend.errors()[i];
  result.stepsAhead = runner.stepsAhead();
  result.dropped = runner.stepsAheadDropped();
  result.fed = backend.fedSteps;
  result.usedBlocksAfter = sched.kvCache().pool().numUsedBlocks();
  return result;
}

SchedulerConfig smallConfig() {
  SchedulerConfig config;
  config.numBlocks = 64;
  config.blockSize = 4;
  config.maxBatchTokens = 12;
  config.maxSequences = 4;
  config.maxSeqLen = 48;
  return config;
}

/// Requests of mixed lengths arriving over time, some ending on a stop
/// token (a dropped step ahead each), one cancelled while a step ahead of it
/// is in flight, one reaching the context limit.
std::vector<RequestSpec> mixedSpecs(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<RequestSpec> specs;
  for (RequestId id = 0; id < 12; ++id) {
    RequestSpec spec;
    spec.id = id;
    int32_t promptLen = 1 + static_cast<int32_t>(rng() % 20);
    for (int32_t t = 0; t < promptLen; ++t)
      spec.prompt.push_back(static_cast<int32_t>(rng() % kVocab));
    spec.maxNewTokens = 2 + static_cast<int32_t>(rng() % 24);
    if (id % 3 == 0)
      spec.stopTokenIds = {static_cast<int32_t>(rng() % kVocab), static_cast<int32_t>(rng() % kVocab),
                           static_cast<int32_t>(rng() % kVocab)};
    spec.arrivalStep = static_cast<int64_t>(rng() % 30);
    specs.push_back(spec);
  }
  specs[5].cancelStep = specs[5].arrivalStep + 6;
  specs[7].maxNewTokens = 100; // up to the 48-token context
  std::stable_sort(specs.begin(), specs.end(), [](const RequestSpec &a, const RequestSpec &b) {
    return a.arrivalStep < b.arrivalStep;
  });
  return specs;
}

TEST(StepRunnerTest, GreedyRunAheadMatchesEachRequestAlone) {
  SchedulerConfig config = smallConfig();
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<RequestSpec> specs = mixedSpecs(seed);
    for (RequestSpec &spec : specs)
      spec.cancelStep = -1; // a cancellation has no run-alone reference
    RunResult ahead = serve(config, specs, /*runAhead=*/true, /*seeded=*/false);
    EXPECT_GT(ahead.stepsAhead, 0) << "seed " << seed;
    EXPECT_EQ(ahead.fed, ahead.stepsAhead) << "every step ahead takes its tokens on the device";
    EXPECT_EQ(ahead.usedBlocksAfter, 0) << "seed " << seed;
    for (const RequestSpec &spec : specs)
      EXPECT_EQ(ahead.outcomes[spec.id], kvtest::reference(spec, config.maxSeqLen))
          << "seed " << seed << " request " << spec.id;
  }
}

TEST(StepRunnerTest, SeededRunAheadMatchesWaitingForEachStep) {
  SchedulerConfig config = smallConfig();
  int64_t dropped = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::vector<RequestSpec> specs = mixedSpecs(seed), uncancelled = specs;
    for (RequestSpec &spec : uncancelled)
      spec.cancelStep = -1;
    RunResult reference = serve(config, uncancelled, false, /*seeded=*/true);
    RunResult ahead = serve(config, specs, true, true);
    EXPECT_EQ(reference.stepsAhead, 0);
    EXPECT_EQ(ahead.usedBlocksAfter, 0) << "seed " << seed;
    dropped += ahead.dropped;
    ASSERT_EQ(ahead.outcomes.size(), specs.size()) << "seed " << seed;
    for (const RequestSpec &spec : specs) {
      const Outcome &got = ahead.outcomes[spec.id], &want = reference.outcomes[spec.id];
      if (spec.cancelStep < 0) {
        EXPECT_EQ(got, want) << "seed " << seed << " request " << spec.id;
        continue;
      }
      // Cancelled between step() calls, with a step ahead of it possibly in
      // flight (its token is dropped): some prefix of the full output. How
      // long depends on timing (a step ahead delays new arrivals by a step).
      if (got.reason != FinishReason::kCancelled) {
        EXPECT_EQ(got, want) << "seed " << seed << " request " << spec.id << " ended first";
        continue;
      }
      ASSERT_LE(got.generated.size(), want.generated.size());
      EXPECT_TRUE(std::equal(got.generated.begin(), got.generated.end(), want.generated.begin()))
          << "seed " << seed << " request " << spec.id;
    }
  }
  EXPECT_GT(dropped, 0) << "no step ahead was dropped: the stop tokens did not exercise it";
}

TEST(StepRunnerTest, PredictsOnlyCertainDecodeSteps) {
  SchedulerConfig config = smallConfig();
  Scheduler sched = kvtest::makeScheduler(config);
  ASSERT_TRUE(sched.addRequest(1, {5, 6, 7}, 3).ok());
  StatusOr<ScheduledStep> prefill = sched.schedule();
  ASSERT_TRUE(prefill.ok());
  std::optional<ScheduledStep> next = predictNextDecode(sched, *prefill);
  ASSERT_TRUE(next.has_value());
  ASSERT_EQ(next->sequences.size(), 1u);
  const ScheduledSequence &decode = next->sequences[0];
  EXPECT_EQ(decode.positions, std::vector<int32_t>{3});
  EXPECT_EQ(decode.contextLen, 4);
  EXPECT_EQ(decode.slotIds,
            std::vector<int32_t>{prefill->sequences[0].blockTable[0] * config.blockSize + 3});

  // A waiting request may join the next step: no prediction.
  ASSERT_TRUE(sched.addRequest(2, {1}, 3).ok());
  EXPECT_FALSE(predictNextDecode(sched, *prefill).has_value());
  ASSERT_TRUE(sched.cancel(2).ok());

  // Position 4 starts a new block: the sequence takes it now, and the
  // scheduler's real next step is the prediction (the same block, nothing
  // more allocated).
  ASSERT_TRUE(sched.update(*prefill, {9}).ok());
  StatusOr<ScheduledStep> first = sched.schedule();
  ASSERT_TRUE(first.ok());
  const int32_t freeBefore = sched.kvCache().pool().numFreeBlocks();
  std::optional<ScheduledStep> crossing = predictNextDecode(sched, *first);
  ASSERT_TRUE(crossing.has_value());
  EXPECT_EQ(sched.kvCache().pool().numFreeBlocks(), freeBefore - 1);
  const ScheduledSequence &second = crossing->sequences.at(0);
  ASSERT_EQ(second.blockTable.size(), 2u);
  EXPECT_EQ(second.blockTable[0], first->sequences[0].blockTable[0]);
  EXPECT_EQ(second.slotIds, std::vector<int32_t>{second.blockTable[1] * config.blockSize});
  ASSERT_TRUE(sched.update(*first, {9}).ok());
  StatusOr<ScheduledStep> real = sched.schedule();
  ASSERT_TRUE(real.ok());
  ASSERT_EQ(real->sequences.size(), 1u);
  EXPECT_EQ(real->sequences[0].blockTable, second.blockTable);
  EXPECT_EQ(real->sequences[0].slotIds, second.slotIds);
  EXPECT_EQ(sched.kvCache().pool().numFreeBlocks(), freeBefore - 1);
  // The request's last token (3 of 3) comes from the step after: no prediction.
  EXPECT_FALSE(predictNextDecode(sched, *real).has_value());
}

TEST(StepRunnerTest, PredictsPastWaitingRequestsWhenEverySlotIsTaken) {
  SchedulerConfig config = smallConfig();
  config.maxSequences = 1;
  Scheduler sched = kvtest::makeScheduler(config);
  ASSERT_TRUE(sched.addRequest(1, {5, 6, 7}, 4).ok());
  ASSERT_TRUE(sched.addRequest(2, {1, 2}, 4).ok());
  StatusOr<ScheduledStep> prefill = sched.schedule();
  ASSERT_TRUE(prefill.ok());
  ASSERT_EQ(prefill->sequences.size(), 1u);
  ASSERT_EQ(sched.numWaiting(), 1u);
  // Request 2 cannot join while request 1 holds the only slot.
  std::optional<ScheduledStep> next = predictNextDecode(sched, *prefill);
  ASSERT_TRUE(next.has_value());
  ASSERT_TRUE(sched.update(*prefill, {9}).ok());
  StatusOr<ScheduledStep> real = sched.schedule();
  ASSERT_TRUE(real.ok());
  ASSERT_EQ(real->sequences.size(), 1u);
  EXPECT_EQ(real->sequences[0].requestId, 1);
  EXPECT_EQ(real->sequences[0].positions, next->sequences[0].positions);
  EXPECT_EQ(real->sequences[0].slotIds, next->sequences[0].slotIds);
}

TEST(StepRunnerTest, PredictsNoBlockCrossingWithoutAFreeBlock) {
  SchedulerConfig config = smallConfig();
  config.numBlocks = 3; // the null block and two
  config.maxSeqLen = 8;
  Scheduler sched = kvtest::makeScheduler(config);
  // One block each after the prefill; both decode on past their first block.
  ASSERT_TRUE(sched.addRequest(1, {5, 6, 7}, 4).ok());
  ASSERT_TRUE(sched.addRequest(2, {1, 2, 3}, 3).ok());
  StatusOr<ScheduledStep> prefill = sched.schedule();
  ASSERT_TRUE(prefill.ok());
  ASSERT_EQ(prefill->sequences.size(), 2u);
  ASSERT_TRUE(sched.update(*prefill, {9, 9}).ok());
  StatusOr<ScheduledStep> first = sched.schedule(); // position 3, the blocks' last slots
  ASSERT_TRUE(first.ok());
  ASSERT_EQ(sched.kvCache().pool().numFreeBlocks(), 0);
  EXPECT_FALSE(predictNextDecode(sched, *first).has_value());
  EXPECT_EQ(sched.kvCache().pool().numFreeBlocks(), 0);
  EXPECT_EQ(sched.kvCache().blockTable(1)->size(), 1u);
}

} // namespace
} // namespace infer::serving
