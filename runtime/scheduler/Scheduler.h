//===- Scheduler.h - continuous batching over the paged KV cache -*- C++ -*-===//
//
// The top KV layer (CONVENTIONS.md rule 10, docs/kv-cache.md), in the style
// of vLLM v1: there are no prefill and decode phases, a request only has
// tokens (prompt, then generated) and how many of them are computed. Each
// step gets a token budget; running requests go first (a decode is one
// token), then waiting requests are admitted in arrival order with what is
// left, a long prompt being split across steps (chunked prefill). When a
// running request cannot get a KV block, the most recently admitted running
// request is preempted by recompute: its blocks are freed, its computed count
// reset, and it goes back to the front of the waiting queue.
//
// The caller alternates schedule() and update(); requests that end (finished,
// refused at admission, cancelled) are collected by takeFinished().
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SCHEDULER_SCHEDULER_H
#define INFER_RUNTIME_SCHEDULER_SCHEDULER_H

#include "runtime/base/Status.h"
#include "runtime/kv/KVCacheManager.h"

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace infer::scheduler {

using RequestId = kv::SeqId;

struct SchedulerConfig {
  int32_t numBlocks = 0;      ///< KV pool size, counting the null block
  int32_t blockSize = 16;     ///< tokens per KV block
  int32_t maxBatchTokens = 0; ///< T: tokens computed per step
  int32_t maxSequences = 0;   ///< S: sequences per step (and running at once)
  int32_t maxSeqLen = 0;      ///< context limit: positions are < maxSeqLen
  bool enablePrefixCaching = true;
};

enum class RequestState { kWaiting, kRunning, kFinished };

enum class FinishReason {
  kNone,         ///< not finished
  kStopToken,    ///< sampled one of its stop tokens (kept in the output)
  kMaxNewTokens, ///< generated maxNewTokens tokens
  kContextLimit, ///< prompt + generated reached maxSeqLen
  kCancelled,    ///< cancel() was called
  kRefused,      ///< never admitted; `error` says why
  kError,        ///< ended by fail() (e.g. non-finite logits); `error` says why
};

std::string_view finishReasonName(FinishReason reason);

struct Request {
  RequestId id = 0;
  std::vector<int32_t> tokens; ///< prompt, then generated tokens
  int32_t numPromptTokens = 0;
  int32_t maxNewTokens = 0;
  std::vector<int32_t> stopTokenIds;
  /// Leading tokens whose KV is in this request's blocks (after the last
  /// update()). Reset to 0 when preempted.
  int32_t numComputedTokens = 0;
  /// Prefix-cache hit length at the latest admission.
  int32_t numCachedTokens = 0;
  int32_t numPreemptions = 0;
  RequestState state = RequestState::kWaiting;
  FinishReason finishReason = FinishReason::kNone;
  std::string error; ///< for kRefused and kError

  int32_t numTokens() const { return static_cast<int32_t>(tokens.size()); }
  int32_t numGeneratedTokens() const { return numTokens() - numPromptTokens; }
  std::vector<int32_t> generatedTokens() const {
    return {tokens.begin() + numPromptTokens, tokens.end()};
  }
};

/// One sequence's share of a step.
struct ScheduledSequence {
  RequestId requestId = 0;
  std::vector<int32_t> tokenIds;  ///< tokens whose KV is computed this step
  std::vector<int32_t> positions; ///< their absolute positions
  std::vector<int32_t> slotIds;   ///< where their K/V go: block * blockSize + offset
  std::vector<kv::BlockId> blockTable; ///< the sequence's blocks, unpadded
  int32_t contextLen = 0;         ///< computed + new tokens after this step
  /// True when the step reaches the end of the known tokens, so the last row
  /// yields the logits of the next token.
  bool needsLogits = false;
};

struct ScheduledStep {
  uint64_t stepId = 0;
  std::vector<ScheduledSequence> sequences;
  /// Requests preempted (by recompute) while building this step.
  std::vector<RequestId> preempted;

  int32_t numTokens() const;
  bool empty() const { return sequences.empty(); }
};

class Scheduler {
public:
  static StatusOr<Scheduler> create(const SchedulerConfig &config);

  /// Queues a request. A request that can never run (empty prompt, prompt
  /// beyond maxSeqLen, more KV blocks than the whole pool, maxNewTokens < 1)
  /// is finished at once as kRefused with the reason in `error`. Reusing a
  /// live request id is a caller bug (InvalidArgument).
  Status addRequest(RequestId id, std::vector<int32_t> prompt, int32_t maxNewTokens,
                    std::vector<int32_t> stopTokenIds = {});

  /// Builds the next step. Empty when nothing can run. Fails if the previous
  /// step has not been passed to update().
  StatusOr<ScheduledStep> schedule();

  /// Records that `step` ran: advances computed tokens, caches the newly
  /// filled blocks, appends `sampledTokens[i]` to sequence i if it needed
  /// logits (other entries are ignored), and finishes requests that hit a stop
  /// token, maxNewTokens or the context limit. Sequences cancelled since
  /// schedule() are skipped.
  Status update(const ScheduledStep &step, const std::vector<int32_t> &sampledTokens);

  /// Ends a waiting or running request and frees its blocks.
  Status cancel(RequestId id);
  /// Ends a waiting or running request as kError with `error` (what went
  /// wrong computing it: the caller found its logits not finite) and frees
  /// its blocks; other requests go on. A step scheduled before the call
  /// skips it in update(), as for cancel().
  Status fail(RequestId id, std::string error);

  /// Requests that ended since the last call, in the order they ended.
  std::vector<Request> takeFinished();

  /// A live (waiting or running) request, or nullptr.
  const Request *request(RequestId id) const;
  bool hasUnfinished() const { return !requests_.empty(); }
  size_t numWaiting() const { return waiting_.size(); }
  size_t numRunning() const { return running_.size(); }
  /// Preemptions since creation.
  int64_t numPreemptions() const { return numPreemptions_; }
  /// B of the step entry's block_tables: blocks a maxSeqLen sequence needs.
  int32_t maxBlocksPerSequence() const;
  const SchedulerConfig &config() const { return config_; }
  const kv::KVCacheManager &kvCache() const { return kv_; }
  /// Has running request `id` hold the KV blocks of its first `numTokens`
  /// positions now (KVCacheManager::reserveBlocks): for a decode step
  /// enqueued before the step that makes it the scheduler's next.
  bool reserveBlocks(RequestId id, int32_t numTokens);

private:
  Scheduler(const SchedulerConfig &config, kv::KVCacheManager kv)
      : config_(config), kv_(std::move(kv)) {}
  /// Why `request` can never run, or empty.
  std::string refusalReason(const Request &request) const;
  void preempt(RequestId id);
  void finish(RequestId id, FinishReason reason);
  Status addToStep(Request &request, int32_t numNewTokens, ScheduledStep &step);

  SchedulerConfig config_;
  kv::KVCacheManager kv_;
  std::unordered_map<RequestId, Request> requests_; ///< live requests
  std::deque<RequestId> waiting_;
  std::vector<RequestId> running_; ///< in admission order
  std::vector<Request> finished_;
  uint64_t nextStepId_ = 1;
  bool stepPending_ = false;
  uint64_t pendingStepId_ = 0;
  int64_t numPreemptions_ = 0;
};

} // namespace infer::scheduler

#endif // INFER_RUNTIME_SCHEDULER_SCHEDULER_H
