//===- StepBatch.cpp - the step entry's flat metadata arrays --------------===//

#include "runtime/scheduler/StepBatch.h"

#include <algorithm>
#include <string>

namespace infer::scheduler {

Status buildStepBatch(const ScheduledStep &step, int32_t maxBlocksPerSequence, StepBatch &out) {
  if (maxBlocksPerSequence < 1)
    return invalidArgumentError("step batch needs at least one block per sequence, got " +
                                std::to_string(maxBlocksPerSequence));
  size_t numSeqs = step.sequences.size();
  out.tokenIds.clear();
  out.positions.clear();
  out.slotIds.clear();
  out.seqStarts.assign(1, 0);
  out.contextLens.clear();
  out.logitRows.clear();
  out.logitSequences.clear();
  // Padding with the null block keeps every entry a valid block id, so a
  // kernel that reads past a sequence's blocks still touches real memory.
  out.blockTables.assign(numSeqs * maxBlocksPerSequence, kv::kNullBlock);
  out.maxBlocksPerSequence = maxBlocksPerSequence;
  for (size_t s = 0; s < numSeqs; ++s) {
    const ScheduledSequence &seq = step.sequences[s];
    std::string name = "request " + std::to_string(seq.requestId);
    if (seq.positions.size() != seq.tokenIds.size() || seq.slotIds.size() != seq.tokenIds.size())
      return invalidArgumentError(name + ": token, position and slot lists differ in length");
    if (seq.blockTable.size() > static_cast<size_t>(maxBlocksPerSequence))
      return invalidArgumentError(name + " has " + std::to_string(seq.blockTable.size()) +
                                  " KV blocks, more than the bound " +
                                  std::to_string(maxBlocksPerSequence));
    out.tokenIds.insert(out.tokenIds.end(), seq.tokenIds.begin(), seq.tokenIds.end());
    out.positions.insert(out.positions.end(), seq.positions.begin(), seq.positions.end());
    out.slotIds.insert(out.slotIds.end(), seq.slotIds.begin(), seq.slotIds.end());
    out.seqStarts.push_back(static_cast<int32_t>(out.tokenIds.size()));
    out.contextLens.push_back(seq.contextLen);
    std::copy(seq.blockTable.begin(), seq.blockTable.end(),
              out.blockTables.begin() + s * maxBlocksPerSequence);
    if (seq.needsLogits && !seq.tokenIds.empty()) {
      out.logitRows.push_back(out.seqStarts.back() - 1);
      out.logitSequences.push_back(static_cast<int32_t>(s));
    }
  }
  return okStatus();
}

StatusOr<std::vector<int32_t>> sampledPerSequence(const StepBatch &batch,
                                                  const std::vector<int32_t> &sampledPerRow) {
  if (sampledPerRow.size() != batch.logitSequences.size())
    return invalidArgumentError("step has " + std::to_string(batch.logitSequences.size()) +
                                " logit rows but " + std::to_string(sampledPerRow.size()) +
                                " sampled tokens");
  std::vector<int32_t> perSequence(batch.numSequences(), -1);
  for (size_t row = 0; row < sampledPerRow.size(); ++row)
    perSequence[batch.logitSequences[row]] = sampledPerRow[row];
  return perSequence;
}

} // namespace infer::scheduler
