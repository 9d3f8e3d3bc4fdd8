//===- SchedulerTestUtils.h - driving the scheduler in tests ----*- C++ -*-===//
//
// A request's reference output (the request run alone) and a loop that feeds
// requests through a Scheduler and FakePagedModel until all of them end.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TEST_KV_SCHEDULERTESTUTILS_H
#define INFER_TEST_KV_SCHEDULERTESTUTILS_H

#include "runtime/scheduler/Scheduler.h"
#include "runtime/scheduler/StepBatch.h"
#include "test/kv/FakePagedModel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <ostream>

namespace infer::scheduler::kvtest {

inline constexpr int32_t kVocab = 64;

struct RequestSpec {
  RequestId id = 0;
  std::vector<int32_t> prompt;
  int32_t maxNewTokens = 1;
  std::vector<int32_t> stopTokenIds;
  int64_t arrivalStep = 0;
  /// Cancelled right after this step is scheduled (in flight), if still live.
  int64_t cancelStep = -1;
};

struct Outcome {
  std::vector<int32_t> generated;
  FinishReason reason = FinishReason::kNone;
  int32_t numCachedTokens = 0;
  bool operator==(const Outcome &other) const {
    return generated == other.generated && reason == other.reason;
  }
};

inline std::ostream &operator<<(std::ostream &os, const Outcome &outcome) {
  os << finishReasonName(outcome.reason) << " [";
  for (int32_t token : outcome.generated)
    os << token << ' ';
  return os << ']';
}

/// The request run alone, with the scheduler's stopping rules.
inline Outcome reference(const RequestSpec &spec, int32_t maxSeqLen) {
  Outcome outcome;
  std::vector<int32_t> tokens = spec.prompt;
  while (true) {
    int32_t token = nextToken(tokens, kVocab);
    tokens.push_back(token);
    outcome.generated.push_back(token);
    auto &stops = spec.stopTokenIds;
    if (std::find(stops.begin(), stops.end(), token) != stops.end())
      outcome.reason = FinishReason::kStopToken;
    else if (static_cast<int32_t>(outcome.generated.size()) >= spec.maxNewTokens)
      outcome.reason = FinishReason::kMaxNewTokens;
    else if (static_cast<int32_t>(tokens.size()) >= maxSeqLen)
      outcome.reason = FinishReason::kContextLimit;
    if (outcome.reason != FinishReason::kNone)
      return outcome;
  }
}

inline Scheduler makeScheduler(const SchedulerConfig &config) {
  StatusOr<Scheduler> scheduler = Scheduler::create(config);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status().toString();
  return std::move(scheduler).value();
}

struct RunStats {
  int64_t steps = 0;
  int64_t chunksWithoutLogits = 0;
  int64_t cachedTokens = 0;
};

/// Runs one step through the model; returns false on a failure.
inline bool runStep(Scheduler &scheduler, FakePagedModel &model, StepBatch &batch,
             const ScheduledStep &step) {
  const SchedulerConfig &config = scheduler.config();
  EXPECT_LE(step.numTokens(), config.maxBatchTokens);
  EXPECT_LE(step.sequences.size(), static_cast<size_t>(config.maxSequences));
  Status built = buildStepBatch(step, scheduler.maxBlocksPerSequence(), batch);
  EXPECT_TRUE(built.ok()) << built.toString();
  StatusOr<std::vector<int32_t>> sampled = sampledPerSequence(batch, model.run(batch));
  EXPECT_TRUE(sampled.ok()) << sampled.status().toString();
  if (!built.ok() || !sampled.ok())
    return false;
  Status updated = scheduler.update(step, *sampled);
  EXPECT_TRUE(updated.ok()) << updated.toString();
  return updated.ok();
}

/// Feeds `specs` (by arrival step) through the scheduler until all end.
/// `model` holds the KV written so far, so a scheduler that already ran steps
/// must keep its model.
inline std::map<RequestId, Outcome> drive(Scheduler &scheduler, FakePagedModel &model,
                                          std::vector<RequestSpec> specs, RunStats &stats) {
  std::stable_sort(specs.begin(), specs.end(), [](const RequestSpec &a, const RequestSpec &b) {
    return a.arrivalStep < b.arrivalStep;
  });
  StepBatch batch;
  std::map<RequestId, Outcome> outcomes;
  size_t nextArrival = 0;
  for (int64_t stepIndex = 0; stepIndex < 1000000; ++stepIndex) {
    for (; nextArrival < specs.size() && specs[nextArrival].arrivalStep <= stepIndex;
         ++nextArrival) {
      const RequestSpec &spec = specs[nextArrival];
      Status added = scheduler.addRequest(spec.id, spec.prompt, spec.maxNewTokens,
                                          spec.stopTokenIds);
      EXPECT_TRUE(added.ok()) << added.toString();
    }
    if (!scheduler.hasUnfinished() && nextArrival == specs.size())
      break;
    StatusOr<ScheduledStep> step = scheduler.schedule();
    if (!step.ok()) {
      ADD_FAILURE() << step.status().toString();
      break;
    }
    if (step->empty()) {
      if (scheduler.hasUnfinished()) {
        ADD_FAILURE() << "no progress with unfinished requests at step " << stepIndex;
        break;
      }
      continue; // idle until the next arrival
    }
    for (const RequestSpec &spec : specs) {
      if (spec.cancelStep == stepIndex && scheduler.request(spec.id)) {
        EXPECT_TRUE(scheduler.cancel(spec.id).ok());
      }
    }
    ++stats.steps;
    for (const ScheduledSequence &seq : step->sequences)
      stats.chunksWithoutLogits += !seq.needsLogits;
    if (!runStep(scheduler, model, batch, *step))
      break;
    for (Request &request : scheduler.takeFinished()) {
      EXPECT_EQ(outcomes.count(request.id), 0u) << "request " << request.id << " ended twice";
      stats.cachedTokens += request.numCachedTokens;
      outcomes[request.id] = {request.generatedTokens(), request.finishReason,
                              request.numCachedTokens};
    }
  }
  for (size_t i = 0; i < model.errors.size() && i < 5; ++i)
    ADD_FAILURE() << "fake model: " << model.errors[i];
  model.errors.clear();
  return outcomes;
}

/// drive() for a fresh scheduler.
inline std::map<RequestId, Outcome> drive(Scheduler &scheduler, std::vector<RequestSpec> specs,
                                          RunStats &stats) {
  const SchedulerConfig &config = scheduler.config();
  FakePagedModel model(config.numBlocks, config.blockSize, kVocab);
  return drive(scheduler, model, std::move(specs), stats);
}

} // namespace infer::scheduler::kvtest

#endif // INFER_TEST_KV_SCHEDULERTESTUTILS_H
