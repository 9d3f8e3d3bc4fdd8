//===- StepRunner.cpp - the serving loop's steps, one decode step ahead ---===//

#include "runtime/serving/StepRunner.h"

#include "runtime/sampling/Sampler.h"

#include <chrono>
#include <utility>

namespace infer::serving {
namespace {

using scheduler::ScheduledSequence;
using scheduler::ScheduledStep;

std::vector<int64_t> widen(const std::vector<int32_t> &values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

/// The step entry's i64 inputs.
StepArrays stepArrays(const scheduler::StepBatch &batch) {
  StepArrays arrays;
  arrays.tokenIds = widen(batch.tokenIds);
  arrays.positions = widen(batch.positions);
  arrays.seqStarts = widen(batch.seqStarts);
  arrays.contextLens = widen(batch.contextLens);
  arrays.blockTables = widen(batch.blockTables);
  arrays.slotIds = widen(batch.slotIds);
  arrays.logitIndices = widen(batch.logitRows);
  return arrays;
}

/// Whether the scheduler's `real` step is the `predicted` one: the same
/// sequences in the same order, positions, slots, blocks and contexts (the
/// predicted token ids are placeholders).
bool sameStep(const ScheduledStep &real, const ScheduledStep &predicted) {
  if (!real.preempted.empty() || real.sequences.size() != predicted.sequences.size())
    return false;
  for (size_t s = 0; s < real.sequences.size(); ++s) {
    const ScheduledSequence &a = real.sequences[s], &b = predicted.sequences[s];
    if (a.requestId != b.requestId || a.positions != b.positions || a.slotIds != b.slotIds ||
        a.blockTable != b.blockTable || a.contextLen != b.contextLen ||
        a.needsLogits != b.needsLogits || a.tokenIds.size() != b.tokenIds.size())
      return false;
  }
  return true;
}

} // namespace

std::optional<ScheduledStep> predictNextDecode(scheduler::Scheduler &sched,
                                               const ScheduledStep &current) {
  const scheduler::SchedulerConfig &config = sched.config();
  if (current.empty() || !current.preempted.empty())
    return std::nullopt;
  // A waiting request may join the next step only while a sequence slot is
  // free (at saturation none is, and the device should not wait for the host).
  if (sched.numWaiting() != 0 && sched.numRunning() < static_cast<size_t>(config.maxSequences))
    return std::nullopt;
  ScheduledStep next;
  for (const ScheduledSequence &seq : current.sequences) {
    const scheduler::Request *request = sched.request(seq.requestId);
    if (!request || request->state != scheduler::RequestState::kRunning || !seq.needsLogits ||
        request->numTokens() != seq.contextLen)
      return std::nullopt;
    // After update(): one more token, which must not end the request.
    int32_t position = seq.contextLen;
    if (request->numGeneratedTokens() + 1 >= request->maxNewTokens ||
        position + 1 >= config.maxSeqLen)
      return std::nullopt;
    // A slot in a new block: the sequence takes that block now. With no
    // request waiting and every sequence of the step decoding on, the
    // scheduler would give it that block at the next step anyway (and a
    // sequence that ends on a stop token frees it). None free: no prediction.
    if (!sched.reserveBlocks(seq.requestId, position + 1))
      return std::nullopt;
    const std::vector<kv::BlockId> &table = *sched.kvCache().blockTable(seq.requestId);
    ScheduledSequence decode;
    decode.requestId = seq.requestId;
    decode.tokenIds = {0};
    decode.positions = {position};
    decode.slotIds = {table[size_t(position / config.blockSize)] * config.blockSize +
                      position % config.blockSize};
    decode.blockTable = table;
    decode.contextLen = position + 1;
    decode.needsLogits = true;
    next.sequences.push_back(std::move(decode));
  }
  return next;
}

template <typename Call> auto StepRunner::inBackend(Call &&call) -> decltype(call()) {
  auto start = std::chrono::steady_clock::now();
  auto result = call();
  backendSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

StatusOr<ScheduledStep> StepRunner::schedule() {
  ASSIGN_OR_RETURN(ScheduledStep step, sched_.schedule());
  // After scheduling, before update() frees finished requests' blocks: the
  // step's high-water mark.
  peakUsedBlocks_ = std::max<int64_t>(peakUsedBlocks_, sched_.kvCache().pool().numUsedBlocks());
  return step;
}

StatusOr<StepRunner::Pending> StepRunner::launch(ScheduledStep step, const SamplingFn &sampling,
                                                 bool tokensFromPrevious) {
  Pending pending;
  pending.step = std::move(step);
  scheduler::StepBatch &batch = pending.batch;
  RETURN_IF_ERROR(scheduler::buildStepBatch(pending.step, sched_.maxBlocksPerSequence(), batch));
  for (size_t r = 0; r < batch.logitRows.size(); ++r) {
    scheduler::RequestId id = pending.step.sequences[size_t(batch.logitSequences[r])].requestId;
    auto predrawn = predrawn_.find(id);
    if (predrawn != predrawn_.end()) {
      pending.rows.push_back(predrawn->second);
      predrawn_.erase(predrawn);
    } else {
      pending.rows.push_back(sampling(id));
    }
    pending.sampledFor.push_back(id);
  }
  StepArrays arrays = stepArrays(batch);
  // A step of only middle prefill chunks needs no logits; the step program
  // still computes one row (R >= 1), which is dropped.
  pending.placeholderRow = pending.rows.empty();
  if (pending.placeholderRow) {
    arrays.logitIndices.push_back(0);
    pending.rows.emplace_back();
  }
  if (backend_.queuesSteps()) {
    ASSIGN_OR_RETURN(pending.ticket, inBackend([&] {
                       return backend_.enqueueStep(arrays, pending.rows, tokensFromPrevious);
                     }));
  } else if (tokensFromPrevious) {
    return internalError("a step ahead on a backend that does not queue steps");
  }
  pending.arrays = std::move(arrays);
  return pending;
}

StatusOr<StepResult> StepRunner::finish(Pending &pending) {
  std::vector<int32_t> perRow;
  std::vector<std::pair<size_t, std::string>> failedRows; ///< host sampling: (row, why)
  const std::vector<RowSampling> &rows = pending.rows;
  if (backend_.queuesSteps()) {
    ASSIGN_OR_RETURN(perRow, inBackend([&] { return backend_.waitStep(pending.ticket); }));
  } else if (backend_.samplesOnDevice()) {
    ASSIGN_OR_RETURN(perRow, inBackend([&] { return backend_.stepAndSample(pending.arrays, rows); }));
  } else {
    int64_t rowWidth = 0;
    ASSIGN_OR_RETURN(std::vector<float> logits,
                     inBackend([&] { return backend_.step(pending.arrays, rowWidth); }));
    for (size_t r = 0; r < rows.size(); ++r) {
      const float *row = logits.data() + r * static_cast<size_t>(rowWidth);
      // A row that is not finite ends its request with an error; the
      // placeholder row of a step without logit rows belongs to no request.
      if (!pending.placeholderRow) {
        std::string bad = sampling::nonFiniteLogits(row, rowWidth);
        if (!bad.empty()) {
          failedRows.emplace_back(r, std::move(bad));
          perRow.push_back(0);
          continue;
        }
      }
      sampling::SamplingParams params;
      params.temperature = rows[r].temperature;
      params.topK = rows[r].topK;
      params.topP = rows[r].topP;
      perRow.push_back(sampling::sampleWithUniform(row, rowWidth, params, rows[r].uniform));
    }
  }
  StepResult result;
  result.tokens = pending.batch.numTokens();
  result.logitRows = static_cast<int64_t>(rows.size());
  if (pending.placeholderRow)
    perRow.clear();
  // Failed requests leave the scheduler before update(), which then skips
  // their sequences as it skips cancelled ones.
  std::vector<bool> failedRow(perRow.size(), false);
  for (auto &[r, why] : failedRows) {
    failedRow[r] = true;
    scheduler::RequestId id = pending.sampledFor[r];
    if (sched_.request(id))
      RETURN_IF_ERROR(sched_.fail(id, why));
    result.failed.emplace_back(id, std::move(why));
  }
  for (size_t r = 0; r < perRow.size(); ++r)
    if (!failedRow[r])
      result.drawn.push_back({pending.sampledFor[r], perRow[r]});
  ASSIGN_OR_RETURN(auto sampled, scheduler::sampledPerSequence(pending.batch, perRow));
  RETURN_IF_ERROR(sched_.update(pending.step, sampled));
  return result;
}

StatusOr<StepResult> StepRunner::step(const SamplingFn &sampling) {
  if (!current_) {
    ASSIGN_OR_RETURN(ScheduledStep next, schedule());
    if (next.empty())
      return internalError("the scheduler made no progress with requests left (KV pool of " +
                           std::to_string(sched_.config().numBlocks) + " blocks)");
    ASSIGN_OR_RETURN(current_, launch(std::move(next), sampling, false));
  }
  std::optional<Pending> ahead;
  if (runAhead_) {
    if (std::optional<ScheduledStep> predicted = predictNextDecode(sched_, current_->step)) {
      ASSIGN_OR_RETURN(ahead, launch(std::move(*predicted), sampling, true));
      ++stepsAhead_;
    }
  }
  Pending done = std::move(*current_);
  current_.reset();
  ASSIGN_OR_RETURN(StepResult result, finish(done));
  if (!ahead)
    return result;
  ASSIGN_OR_RETURN(ScheduledStep next, schedule());
  if (sameStep(next, ahead->step)) {
    ahead->step = std::move(next);
    current_ = std::move(ahead);
    return result;
  }
  // Dropped: wait for it (the backend's tickets go in order), keep its draws.
  ++stepsAheadDropped_;
  RETURN_IF_ERROR(inBackend([&] { return backend_.waitStep(ahead->ticket).status(); }));
  for (size_t r = 0; r < ahead->sampledFor.size(); ++r)
    if (sched_.request(ahead->sampledFor[r]))
      predrawn_[ahead->sampledFor[r]] = ahead->rows[r];
  for (auto it = predrawn_.begin(); it != predrawn_.end();)
    it = sched_.request(it->first) ? std::next(it) : predrawn_.erase(it);
  if (!next.empty()) {
    ASSIGN_OR_RETURN(current_, launch(std::move(next), sampling, false));
  }
  return result;
}

} // namespace infer::serving
