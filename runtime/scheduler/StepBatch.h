//===- StepBatch.h - the step entry's flat metadata arrays ------*- C++ -*-===//
//
// Turns a ScheduledStep into the host arrays of the `step` entry
// (DESIGN.md, docs/kv-cache.md), built once per step and uploaded to the
// device in one copy (CONVENTIONS.md rule 11). Sequences keep the step's
// order; logit rows follow it too, one per sequence that needs logits.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SCHEDULER_STEPBATCH_H
#define INFER_RUNTIME_SCHEDULER_STEPBATCH_H

#include "runtime/base/Status.h"
#include "runtime/scheduler/Scheduler.h"

#include <cstdint>
#include <vector>

namespace infer::scheduler {

struct StepBatch {
  std::vector<int32_t> tokenIds;    ///< [T] new tokens, packed sequence after sequence
  std::vector<int32_t> positions;   ///< [T] absolute position of each
  std::vector<int32_t> seqStarts;   ///< [S+1] prefix sums of tokens per sequence
  std::vector<int32_t> contextLens; ///< [S] cached + new tokens after the step
  /// [S, B] row-major; entries past a sequence's blocks are the null block.
  std::vector<int32_t> blockTables;
  std::vector<int32_t> slotIds;   ///< [T] block * blockSize + offset
  std::vector<int32_t> logitRows; ///< [R] packed rows whose logits are needed
  /// [R] the sequence (index into the step) each logit row belongs to.
  std::vector<int32_t> logitSequences;
  int32_t maxBlocksPerSequence = 0; ///< B

  int32_t numTokens() const { return static_cast<int32_t>(tokenIds.size()); }
  int32_t numSequences() const { return static_cast<int32_t>(contextLens.size()); }
};

/// Fills `out` (reusing its capacity) from `step` with block tables padded to
/// `maxBlocksPerSequence`. Fails on a sequence with more blocks than that or
/// with token, position and slot lists of different lengths.
Status buildStepBatch(const ScheduledStep &step, int32_t maxBlocksPerSequence, StepBatch &out);

/// Spreads tokens sampled per logit row back to one entry per sequence, as
/// Scheduler::update() takes them (-1 for sequences without logits).
StatusOr<std::vector<int32_t>> sampledPerSequence(const StepBatch &batch,
                                                  const std::vector<int32_t> &sampledPerRow);

} // namespace infer::scheduler

#endif // INFER_RUNTIME_SCHEDULER_STEPBATCH_H
