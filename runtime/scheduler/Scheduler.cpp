//===- Scheduler.cpp - continuous batching over the paged KV cache --------===//

#include "runtime/scheduler/Scheduler.h"

#include <algorithm>

namespace infer::scheduler {

std::string_view finishReasonName(FinishReason reason) {
  switch (reason) {
  case FinishReason::kNone:
    return "none";
  case FinishReason::kStopToken:
    return "stop-token";
  case FinishReason::kMaxNewTokens:
    return "max-new-tokens";
  case FinishReason::kContextLimit:
    return "context-limit";
  case FinishReason::kCancelled:
    return "cancelled";
  case FinishReason::kRefused:
    return "refused";
  case FinishReason::kError:
    return "error";
  }
  return "unknown";
}

int32_t ScheduledStep::numTokens() const {
  int32_t total = 0;
  for (const ScheduledSequence &seq : sequences)
    total += static_cast<int32_t>(seq.tokenIds.size());
  return total;
}

StatusOr<Scheduler> Scheduler::create(const SchedulerConfig &config) {
  auto positive = [](int32_t value, const char *name) -> Status {
    if (value >= 1)
      return okStatus();
    return invalidArgumentError(std::string("scheduler ") + name + " must be positive, got " +
                                std::to_string(value));
  };
  RETURN_IF_ERROR(positive(config.blockSize, "blockSize"));
  RETURN_IF_ERROR(positive(config.maxBatchTokens, "maxBatchTokens"));
  RETURN_IF_ERROR(positive(config.maxSequences, "maxSequences"));
  RETURN_IF_ERROR(positive(config.maxSeqLen, "maxSeqLen"));
  ASSIGN_OR_RETURN(kv::KVCacheManager kv,
                   kv::KVCacheManager::create(config.numBlocks, config.blockSize,
                                              config.enablePrefixCaching));
  return Scheduler(config, std::move(kv));
}

int32_t Scheduler::maxBlocksPerSequence() const {
  return (config_.maxSeqLen + config_.blockSize - 1) / config_.blockSize;
}

std::string Scheduler::refusalReason(const Request &request) const {
  int64_t prompt = request.numPromptTokens;
  if (prompt == 0)
    return "empty prompt";
  if (request.maxNewTokens < 1)
    return "maxNewTokens must be at least 1, got " + std::to_string(request.maxNewTokens);
  if (prompt > config_.maxSeqLen)
    return "prompt of " + std::to_string(prompt) + " tokens is longer than the context limit of " +
           std::to_string(config_.maxSeqLen) + " tokens";
  // The last generated token is never computed, so KV is needed for at most
  // min(prompt + maxNew, maxSeqLen) - 1 tokens, and always for the prompt.
  // Refusing here, rather than when the pool runs dry, means a request that
  // is running alone can always grow, so preemption never livelocks.
  int64_t finalLen = std::min<int64_t>(prompt + request.maxNewTokens, config_.maxSeqLen);
  int64_t worstComputed = std::max<int64_t>(prompt, finalLen - 1);
  int64_t blocks = (worstComputed + config_.blockSize - 1) / config_.blockSize;
  int64_t usable = kv_.pool().numBlocks() - 1;
  if (blocks > usable)
    return "needs up to " + std::to_string(blocks) + " KV blocks (" + std::to_string(prompt) +
           " prompt tokens + up to " + std::to_string(request.maxNewTokens) +
           " new) but the whole pool has " + std::to_string(usable);
  return {};
}

Status Scheduler::addRequest(RequestId id, std::vector<int32_t> prompt, int32_t maxNewTokens,
                             std::vector<int32_t> stopTokenIds) {
  if (requests_.count(id))
    return invalidArgumentError("request " + std::to_string(id) + " is already queued");
  Request request;
  request.id = id;
  request.numPromptTokens = static_cast<int32_t>(prompt.size());
  request.tokens = std::move(prompt);
  request.maxNewTokens = maxNewTokens;
  request.stopTokenIds = std::move(stopTokenIds);
  std::string reason = refusalReason(request);
  if (!reason.empty()) {
    request.state = RequestState::kFinished;
    request.finishReason = FinishReason::kRefused;
    request.error = "request " + std::to_string(id) + " refused: " + reason;
    finished_.push_back(std::move(request));
    return okStatus();
  }
  requests_.emplace(id, std::move(request));
  waiting_.push_back(id);
  return okStatus();
}

void Scheduler::preempt(RequestId id) {
  Request &request = requests_.at(id);
  kv_.free(id);
  request.numComputedTokens = 0;
  request.state = RequestState::kWaiting;
  ++request.numPreemptions;
  ++numPreemptions_;
  running_.erase(std::find(running_.begin(), running_.end(), id));
  // Front of the queue: it was admitted before everything still waiting.
  waiting_.push_front(id);
}

void Scheduler::finish(RequestId id, FinishReason reason) {
  auto it = requests_.find(id);
  kv_.free(id);
  if (it->second.state == RequestState::kRunning)
    running_.erase(std::find(running_.begin(), running_.end(), id));
  else
    waiting_.erase(std::find(waiting_.begin(), waiting_.end(), id));
  it->second.state = RequestState::kFinished;
  it->second.finishReason = reason;
  finished_.push_back(std::move(it->second));
  requests_.erase(it);
}

bool Scheduler::reserveBlocks(RequestId id, int32_t numTokens) {
  auto it = requests_.find(id);
  return it != requests_.end() && it->second.state == RequestState::kRunning &&
         kv_.reserveBlocks(id, numTokens);
}

Status Scheduler::addToStep(Request &request, int32_t numNewTokens, ScheduledStep &step) {
  const std::vector<kv::BlockId> *table = kv_.blockTable(request.id);
  if (!table)
    return internalError("request " + std::to_string(request.id) + " scheduled without blocks");
  ScheduledSequence seq;
  seq.requestId = request.id;
  int32_t start = request.numComputedTokens, end = start + numNewTokens;
  int32_t blockSize = config_.blockSize;
  for (int32_t position = start; position < end; ++position) {
    seq.tokenIds.push_back(request.tokens[position]);
    seq.positions.push_back(position);
    seq.slotIds.push_back((*table)[position / blockSize] * blockSize + position % blockSize);
  }
  seq.blockTable = *table;
  seq.contextLen = end;
  seq.needsLogits = end == request.numTokens();
  step.sequences.push_back(std::move(seq));
  return okStatus();
}

StatusOr<ScheduledStep> Scheduler::schedule() {
  if (stepPending_)
    return failedPreconditionError("schedule() called before update() of step " +
                                   std::to_string(pendingStepId_));
  ScheduledStep step;
  step.stepId = nextStepId_++;
  int32_t budget = config_.maxBatchTokens;

  // Running requests first, in admission order: decodes and the next chunk
  // of prompts already admitted.
  for (size_t i = 0; i < running_.size() && budget > 0;) {
    Request &request = requests_.at(running_[i]);
    int32_t numNew = std::min(request.numTokens() - request.numComputedTokens, budget);
    bool allocated = false;
    while (!allocated) {
      ASSIGN_OR_RETURN(kv::SlotAllocation slots,
                       kv_.allocateSlots(request.id, request.tokens, numNew));
      if (slots.allocated) {
        allocated = true;
        break;
      }
      // The victim is the newest admission, so it sits after `request` in
      // running_ and is not in this step yet, or it is `request` itself.
      RequestId victim = running_.back();
      preempt(victim);
      step.preempted.push_back(victim);
      if (victim == request.id)
        break;
    }
    if (!allocated)
      break; // `request` was last in running_: nothing follows it
    RETURN_IF_ERROR(addToStep(request, numNew, step));
    budget -= numNew;
    ++i;
  }

  // Then admit waiting requests in arrival order. Not after a preemption:
  // the pool is short, and admitting would only preempt again next step.
  while (step.preempted.empty() && !waiting_.empty() && budget > 0 &&
         running_.size() < static_cast<size_t>(config_.maxSequences)) {
    Request &request = requests_.at(waiting_.front());
    int32_t numCached = kv_.numCachedPrefixTokens(request.tokens);
    int32_t numNew = std::min(request.numTokens() - numCached, budget);
    ASSIGN_OR_RETURN(kv::SlotAllocation slots,
                     kv_.allocateSlots(request.id, request.tokens, numNew));
    if (!slots.allocated)
      break; // first come, first served: later requests do not jump ahead
    waiting_.pop_front();
    running_.push_back(request.id);
    request.state = RequestState::kRunning;
    request.numComputedTokens = slots.numCachedTokens;
    request.numCachedTokens = slots.numCachedTokens;
    RETURN_IF_ERROR(addToStep(request, numNew, step));
    budget -= numNew;
  }

  if (!step.empty()) {
    stepPending_ = true;
    pendingStepId_ = step.stepId;
  }
  return step;
}

Status Scheduler::update(const ScheduledStep &step, const std::vector<int32_t> &sampledTokens) {
  if (step.empty())
    return okStatus();
  if (!stepPending_ || step.stepId != pendingStepId_)
    return failedPreconditionError("update() for step " + std::to_string(step.stepId) +
                                   (stepPending_ ? " but step " + std::to_string(pendingStepId_) +
                                                       " is the one pending"
                                                 : " but no step is pending"));
  if (sampledTokens.size() != step.sequences.size())
    return invalidArgumentError("step " + std::to_string(step.stepId) + " has " +
                                std::to_string(step.sequences.size()) + " sequences but " +
                                std::to_string(sampledTokens.size()) + " sampled tokens");
  stepPending_ = false;
  for (size_t i = 0; i < step.sequences.size(); ++i) {
    const ScheduledSequence &seq = step.sequences[i];
    auto it = requests_.find(seq.requestId);
    if (it == requests_.end() || it->second.state != RequestState::kRunning)
      continue; // cancelled after schedule()
    Request &request = it->second;
    if (seq.positions.empty() || seq.positions.front() != request.numComputedTokens)
      return internalError("request " + std::to_string(request.id) +
                           " was scheduled from a different computed-token count");
    request.numComputedTokens = seq.contextLen;
    RETURN_IF_ERROR(kv_.commitFullBlocks(request.id, request.tokens, request.numComputedTokens));
    if (!seq.needsLogits)
      continue;
    int32_t token = sampledTokens[i];
    request.tokens.push_back(token);
    FinishReason reason = FinishReason::kNone;
    if (std::find(request.stopTokenIds.begin(), request.stopTokenIds.end(), token) !=
        request.stopTokenIds.end())
      reason = FinishReason::kStopToken;
    else if (request.numGeneratedTokens() >= request.maxNewTokens)
      reason = FinishReason::kMaxNewTokens;
    else if (request.numTokens() >= config_.maxSeqLen)
      reason = FinishReason::kContextLimit;
    if (reason != FinishReason::kNone)
      finish(request.id, reason);
  }
  return okStatus();
}

Status Scheduler::cancel(RequestId id) {
  if (!requests_.count(id))
    return notFoundError("request " + std::to_string(id) + " is not waiting or running");
  finish(id, FinishReason::kCancelled);
  return okStatus();
}

Status Scheduler::fail(RequestId id, std::string error) {
  auto it = requests_.find(id);
  if (it == requests_.end())
    return notFoundError("request " + std::to_string(id) + " is not waiting or running");
  it->second.error = std::move(error);
  finish(id, FinishReason::kError);
  return okStatus();
}

std::vector<Request> Scheduler::takeFinished() {
  std::vector<Request> done = std::move(finished_);
  finished_.clear();
  return done;
}

const Request *Scheduler::request(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

} // namespace infer::scheduler
