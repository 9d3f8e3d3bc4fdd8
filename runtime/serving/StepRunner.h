//===- StepRunner.h - the serving loop's steps, one decode step ahead -*- C++ -*-===//
//
// Runs the Scheduler's steps on a Backend: schedule → buildStepBatch → the
// backend (device sampling, or logits and the host sampler) → update.
//
// On a backend that queues steps (Backend::queuesSteps), a step's successor
// is enqueued before the step's tokens are back, so the device goes from one
// step to the next without waiting for the host (docs/kv-cache.md, "Running a
// decode step ahead"). The successor is predicted: when no request waits (or
// none can join: every sequence slot is taken) and every sequence of the step ends in a logit row and does not finish by its
// token count or the context limit, the next step is those sequences decoding
// one token each (a sequence whose next slot starts a block takes that block
// now, as the scheduler would at that step; none free, no prediction), their
// tokens taken on the device from this step's sampled rows. After update() the
// scheduler's real next step is compared with the prediction: the same, and
// the queued step is that step; different (a stop token, a cancellation, a
// new arrival), and the queued step is waited for and dropped — its KV writes
// went to slots the sequences own and that are rewritten before they are
// read — and the real step runs. A dropped step's sampling rows are kept for
// the same tokens' next draw, so seeded sampling gives the same tokens either
// way.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVING_STEPRUNNER_H
#define INFER_RUNTIME_SERVING_STEPRUNNER_H

#include "runtime/base/Status.h"
#include "runtime/exec/Backend.h"
#include "runtime/scheduler/Scheduler.h"
#include "runtime/scheduler/StepBatch.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace infer::serving {

struct SampledToken {
  scheduler::RequestId request;
  int32_t token;
};

/// How the next token of `request` is drawn (called once per token it gets).
using SamplingFn = std::function<RowSampling(scheduler::RequestId request)>;

/// What one finished step computed.
struct StepResult {
  std::vector<SampledToken> drawn; ///< (request, token), in logit-row order
  /// Requests whose logit row was not finite (NaN or infinity, sampling.h's
  /// nonFiniteLogits): ended as kError by the scheduler, no token drawn.
  std::vector<std::pair<scheduler::RequestId, std::string>> failed;
  int64_t tokens = 0;              ///< tokens whose KV the step computed
  int64_t logitRows = 0;           ///< logit rows it computed (at least 1)
};

/// The next step as the scheduler would build it after `current` if no
/// sequence of it finishes on a stop token, or nothing when that is not
/// certain enough to run ahead (see the file comment). Token ids are 0:
/// placeholders for the tokens `current` draws. Sequences whose next slot
/// starts a block take that block (Scheduler::reserveBlocks).
std::optional<scheduler::ScheduledStep> predictNextDecode(scheduler::Scheduler &sched,
                                                          const scheduler::ScheduledStep &current);

class StepRunner {
public:
  /// `runAhead`: enqueue predicted decode steps early when the backend
  /// queues steps. Both must outlive the runner.
  StepRunner(scheduler::Scheduler &sched, Backend &backend, bool runAhead)
      : sched_(sched), backend_(backend), runAhead_(runAhead && backend.queuesSteps()) {}

  /// Finishes one step and returns what it drew; a step for the next call
  /// may be left running. Internal error when the scheduler made no progress
  /// with requests left.
  StatusOr<StepResult> step(const SamplingFn &sampling);

  /// Wall seconds inside the backend's calls (launches, waiting for the GPU).
  double backendSeconds() const { return backendSeconds_; }
  /// Most KV blocks in use (by running requests) after any step's scheduling.
  int64_t peakUsedBlocks() const { return peakUsedBlocks_; }
  void resetPeakUsedBlocks() { peakUsedBlocks_ = 0; }
  /// Steps enqueued ahead, and how many of them were dropped.
  int64_t stepsAhead() const { return stepsAhead_; }
  int64_t stepsAheadDropped() const { return stepsAheadDropped_; }

private:
  /// A step handed to the backend and not yet passed to update().
  struct Pending {
    scheduler::ScheduledStep step;
    scheduler::StepBatch batch;
    std::vector<scheduler::RequestId> sampledFor; ///< per logit row
    std::vector<RowSampling> rows;                ///< per logit row
    StepArrays arrays; ///< the step entry's inputs (token ids: placeholders ahead)
    bool placeholderRow = false; ///< a step without logit rows runs one, dropped
    uint64_t ticket = 0;         ///< enqueueStep's, on a queuing backend
  };
  /// Builds `step`'s metadata and sampling rows; on a queuing backend also
  /// enqueues it (its tokens from the last enqueued step's rows when
  /// `tokensFromPrevious`).
  StatusOr<Pending> launch(scheduler::ScheduledStep step, const SamplingFn &sampling,
                           bool tokensFromPrevious);
  /// Runs (or waits for) `pending` and passes its tokens to update().
  StatusOr<StepResult> finish(Pending &pending);
  /// The scheduler's next step (empty when nothing runs), its peak noted.
  StatusOr<scheduler::ScheduledStep> schedule();
  template <typename Call> auto inBackend(Call &&call) -> decltype(call());

  scheduler::Scheduler &sched_;
  Backend &backend_;
  bool runAhead_;
  std::optional<Pending> current_; ///< scheduled and enqueued, not yet finished
  /// Rows drawn for a dropped step: the same tokens' next draw takes them.
  std::unordered_map<scheduler::RequestId, RowSampling> predrawn_;
  double backendSeconds_ = 0;
  int64_t peakUsedBlocks_ = 0, stepsAhead_ = 0, stepsAheadDropped_ = 0;
};

} // namespace infer::serving

#endif // INFER_RUNTIME_SERVING_STEPRUNNER_H
