//===- FakePagedModel.h - a deterministic "model" over a paged KV cache ---===//
//
// Stands in for the step entry in scheduler tests. Like a real layer it first
// writes each new token's "K/V" (here: the token and its position) at its slot,
// then every sequence needing logits "attends" to its whole context by reading
// the cache through its block table. The next token depends on the whole
// context read back, so a wrong block table, slot, shared block or evicted
// block changes the output; the reference computes the same function from the
// plain token list, one request at a time.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TEST_KV_FAKEPAGEDMODEL_H
#define INFER_TEST_KV_FAKEPAGEDMODEL_H

#include "runtime/scheduler/StepBatch.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace infer::scheduler::kvtest {

/// next = (31 * last + position + digest(context)) % vocab, where position is
/// the last token's and digest is order-sensitive over the whole context.
inline int32_t nextToken(const std::vector<int32_t> &context, int32_t vocab) {
  uint64_t digest = 0;
  for (int32_t token : context)
    digest = digest * 1000003u + static_cast<uint64_t>(token) + 1;
  uint64_t last = static_cast<uint64_t>(context.back());
  uint64_t position = context.size() - 1;
  return static_cast<int32_t>((31 * last + position + digest % 7919) % vocab);
}

class FakePagedModel {
public:
  FakePagedModel(int32_t numBlocks, int32_t blockSize, int32_t vocab)
      : blockSize_(blockSize), vocab_(vocab),
        cells_(static_cast<size_t>(numBlocks) * blockSize, {-1, -1}) {}

  /// One step: a sampled token per logit row. Problems (a write to the null
  /// block, a cell holding another position) go to `errors`.
  std::vector<int32_t> run(const StepBatch &batch) {
    for (int32_t t = 0; t < batch.numTokens(); ++t) {
      int32_t slot = batch.slotIds[t];
      if (slot < blockSize_ || slot >= static_cast<int32_t>(cells_.size())) {
        errors.push_back("token row " + std::to_string(t) + " writes slot " +
                         std::to_string(slot));
        continue;
      }
      cells_[slot] = {batch.tokenIds[t], batch.positions[t]};
    }
    std::vector<int32_t> sampled;
    for (size_t r = 0; r < batch.logitRows.size(); ++r) {
      int32_t s = batch.logitSequences[r];
      int32_t row = batch.logitRows[r];
      int32_t contextLen = batch.contextLens[s];
      if (batch.positions[row] != contextLen - 1)
        errors.push_back("logit row " + std::to_string(row) + " is not the last position");
      std::vector<int32_t> context;
      for (int32_t p = 0; p < contextLen; ++p) {
        int32_t block = batch.blockTables[s * batch.maxBlocksPerSequence + p / blockSize_];
        const std::pair<int32_t, int32_t> &cell = cells_[block * blockSize_ + p % blockSize_];
        if (cell.second != p)
          errors.push_back("sequence " + std::to_string(s) + " reads position " +
                           std::to_string(cell.second) + " at " + std::to_string(p));
        context.push_back(cell.first);
      }
      sampled.push_back(nextToken(context, vocab_));
    }
    return sampled;
  }

  std::vector<std::string> errors;

private:
  int32_t blockSize_, vocab_;
  std::vector<std::pair<int32_t, int32_t>> cells_; ///< (token, position) per slot
};

} // namespace infer::scheduler::kvtest

#endif // INFER_TEST_KV_FAKEPAGEDMODEL_H
