//===- ServingSession.h - artifact + backend + KV cache + scheduler -*- C++ -*-===//
//
// What generate and bench share: opens the artifact, makes the backend with a
// step program, allocates the paged KV cache, creates the Scheduler, and runs
// one step at a time through a serving::StepRunner (schedule →
// buildStepBatch → the backend → update; on the GPU the next decode step is
// enqueued before this one's tokens are back).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVING_SERVINGSESSION_H
#define INFER_RUNTIME_SERVING_SERVINGSESSION_H

#include "runtime/base/Status.h"
#include "runtime/exec/Backend.h"
#include "runtime/exec/StepCosts.h"
#include "runtime/scheduler/Scheduler.h"
#include "runtime/scheduler/StepBatch.h"
#include "runtime/serving/StepRunner.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace infer {
namespace artifact {
class ArtifactReader;
}

namespace serving {

struct SessionOptions {
  std::string device; ///< "" picks cuda when the artifact has GPU step code and a GPU is there
  /// KV pool blocks, counting the null block (0: 4 sequences at max-seq-len + 1).
  int64_t kvBlocks = 0;
  /// Tokens per step (0: the artifact's bound).
  int64_t maxBatchTokens = 0;
  /// Sequences per step (0: min(T, 256)).
  int64_t maxSequences = 0;
  bool prefixCaching = true;
  /// Enqueue the next decode step before this one's tokens are back
  /// (StepRunner; --no-run-ahead turns it off).
  bool runAhead = true;
};

class ServingSession {
public:
  static StatusOr<std::unique_ptr<ServingSession>> open(const std::string &artifactPath,
                                                        const SessionOptions &options);
  ~ServingSession();

  /// Last dimension of the model's logits (0: unknown).
  int64_t vocab() const { return vocab_; }
  int64_t maxSeqLen() const { return maxSeqLen_; }
  /// KV pool size, counting the null block.
  int64_t kvBlocks() const { return kvBlocks_; }
  const std::string &deviceName() const { return deviceName_; }
  /// Wall seconds open() took to read and verify the artifact, and to load it
  /// onto the backend (Backend::loadPhases() splits the latter).
  double openSeconds() const { return openSeconds_; }
  double backendLoadSeconds() const { return backendLoadSeconds_; }
  std::vector<std::pair<std::string, double>> loadPhases() const { return backend_->loadPhases(); }
  /// The artifact (its manifest: TextInfo, bounds).
  const artifact::ArtifactReader &reader() const { return *reader_; }
  scheduler::Scheduler &scheduler() { return *sched_; }

  /// Runs one step; returns the tokens it drew (request, token), in row
  /// order. Internal error when the scheduler made no progress with requests
  /// left.
  StatusOr<std::vector<SampledToken>> step(const SamplingFn &sampling);

  /// Wall seconds spent on the host side of steps (scheduling, metadata,
  /// host sampling, update) apart from the backend's step call.
  double hostSeconds() const { return stepSeconds_ - backendSeconds(); }
  /// Wall seconds in the backend's step calls (its launches, waiting for the GPU).
  double backendSeconds() const { return runner_->backendSeconds(); }
  /// Decode steps enqueued before the step before them was back, and how
  /// many of those were dropped (the scheduler's next step was another).
  int64_t stepsAhead() const { return runner_->stepsAhead(); }
  int64_t stepsAheadDropped() const { return runner_->stepsAheadDropped(); }

  /// The sum of the steps' H200 floors so far (exec/StepCosts.h): what the
  /// run could take at best on an H200.
  double floorSeconds() const { return floorSeconds_; }
  const exec::StepCosts &stepCosts() const { return costs_; }

  int64_t steps() const { return steps_; }
  int64_t computedTokens() const { return computedTokens_; }
  /// Most KV blocks in use (by running requests) after any step's scheduling.
  int64_t peakUsedBlocks() const { return runner_->peakUsedBlocks(); }
  void resetPeakUsedBlocks() { runner_->resetPeakUsedBlocks(); }

private:
  ServingSession() = default;

  std::unique_ptr<artifact::ArtifactReader> reader_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<scheduler::Scheduler> sched_;
  std::unique_ptr<StepRunner> runner_;
  int64_t vocab_ = 0, maxSeqLen_ = 0, kvBlocks_ = 0;
  std::string deviceName_;
  int64_t steps_ = 0, computedTokens_ = 0;
  double stepSeconds_ = 0, floorSeconds_ = 0;
  double openSeconds_ = 0, backendLoadSeconds_ = 0;
  exec::StepCosts costs_;
};

} // namespace serving
} // namespace infer

#endif // INFER_RUNTIME_SERVING_SERVINGSESSION_H
