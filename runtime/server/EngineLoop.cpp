//===- EngineLoop.cpp - one thread steps the engine, others wait on it ----===//

#include "runtime/server/EngineLoop.h"

#include <algorithm>

namespace infer::server {
namespace {

double secondsBetween(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

} // namespace

std::optional<ApiError> RequestStream::refusal() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return refusal_;
}

RequestStream::Wait RequestStream::next(std::vector<serving::RequestUpdate> &updates,
                                        std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!ready_.wait_for(lock, timeout, [&] { return !updates_.empty() || ended_; }))
    return Wait::kTimeout;
  if (updates_.empty())
    return Wait::kEnded;
  updates.assign(std::make_move_iterator(updates_.begin()), std::make_move_iterator(updates_.end()));
  updates_.clear();
  return Wait::kUpdate;
}

void RequestStream::push(serving::RequestUpdate update) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_ |= update.finished;
    updates_.push_back(std::move(update));
  }
  // Outside the lock: the woken thread does not wake only to wait for it.
  ready_.notify_all();
}

void RequestStream::refuse(ApiError error) {
  std::lock_guard<std::mutex> lock(mutex_);
  refusal_ = std::move(error);
  ended_ = true;
  ready_.notify_all();
}

EngineLoop::EngineLoop(serving::Engine &engine, int64_t maxQueue)
    : engine_(engine), maxQueue_(maxQueue),
      maxSequences_(engine.session().scheduler().config().maxSequences) {
  refreshGauges();
  postman_ = std::thread([this] { deliverOutbox(); });
  thread_ = std::thread([this] { run(); });
}

EngineLoop::~EngineLoop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    draining_ = stopping_ = cancelAll_ = true;
  }
  wake_.notify_all();
  thread_.join();
  {
    std::lock_guard<std::mutex> lock(outboxMutex_);
    outboxClosed_ = true;
  }
  outboxReady_.notify_all();
  postman_.join();
}

void EngineLoop::post(Batch batch) {
  if (batch.empty())
    return;
  {
    std::lock_guard<std::mutex> lock(outboxMutex_);
    outbox_.push_back(std::move(batch));
  }
  outboxReady_.notify_one();
}

void EngineLoop::deliverOutbox() {
  while (true) {
    std::deque<Batch> batches;
    {
      std::unique_lock<std::mutex> lock(outboxMutex_);
      outboxReady_.wait(lock, [&] { return !outbox_.empty() || outboxClosed_; });
      if (outbox_.empty())
        return;
      batches.swap(outbox_);
    }
    for (auto &batch : batches)
      for (auto &[stream, update] : batch)
        stream->push(std::move(update));
  }
}

std::variant<std::shared_ptr<RequestStream>, ApiError>
EngineLoop::submit(std::vector<int32_t> promptIds, const serving::GenerationParams &params) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (draining_) {
    ++metrics_.rejected["shutting_down"];
    return unavailable("the server is shutting down", "shutting_down");
  }
  // Queued requests that the next step can start (free running slots) do
  // not count as waiting.
  int64_t freeSlots = std::max<int64_t>(0, maxSequences_ - metrics_.running);
  if (static_cast<int64_t>(pending_.size()) + waitingInEngine_ - freeSlots >= maxQueue_) {
    ++metrics_.rejected["queue_full"];
    return unavailable("the server is overloaded: " + std::to_string(maxQueue_) +
                           " requests are waiting already (--max-queue); retry later",
                       "queue_full");
  }
  auto stream = std::make_shared<RequestStream>();
  stream->promptIds_ = std::move(promptIds);
  stream->params_ = params;
  pending_.push_back(stream);
  ++liveCount_;
  wake_.notify_all();
  return stream;
}

void EngineLoop::cancel(const std::shared_ptr<RequestStream> &stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stream->cancelled_)
    return;
  stream->cancelled_ = true;
  cancels_.push_back(stream);
  wake_.notify_all();
}

void EngineLoop::beginDrain() {
  std::lock_guard<std::mutex> lock(mutex_);
  draining_ = true;
}

bool EngineLoop::waitDrained(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (idle_.wait_for(lock, timeout, [&] { return liveCount_ == 0; }))
    return true;
  cancelAll_ = true;
  wake_.notify_all();
  idle_.wait(lock, [&] { return liveCount_ == 0; });
  return false;
}

Metrics EngineLoop::metrics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return metrics_;
}

void EngineLoop::run() {
  while (true) {
    std::vector<std::shared_ptr<RequestStream>> pending, cancels;
    bool cancelAll = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stopping_ || !pending_.empty() || !cancels_.empty() || engine_.hasUnfinished() ||
               (cancelAll_ && !live_.empty());
      });
      pending.swap(pending_);
      cancels.swap(cancels_);
      cancelAll = cancelAll_;
    }
    admit(pending, cancels, cancelAll);
    if (engine_.hasUnfinished()) {
      Clock::time_point start = Clock::now();
      StatusOr<std::vector<serving::RequestUpdate>> updates = engine_.step();
      {
        std::lock_guard<std::mutex> lock(mutex_);
        metrics_.stepTime.observe(secondsBetween(start, Clock::now()));
        ++metrics_.steps;
      }
      // The gauges first: a client that saw its request end then sees its
      // KV blocks free in /metrics.
      refreshGauges();
      if (updates.ok())
        deliver(std::move(updates).value());
      else
        failAll("the model step failed: " + updates.status().message());
    }
    if (refreshGauges())
      return;
  }
}

void EngineLoop::admit(const std::vector<std::shared_ptr<RequestStream>> &pending,
                       const std::vector<std::shared_ptr<RequestStream>> &cancels, bool cancelAll) {
  int64_t ended = 0;
  for (const std::shared_ptr<RequestStream> &stream : pending) {
    if (cancelAll) {
      stream->refuse(unavailable("the server is shutting down", "shutting_down"));
      ++ended;
      continue;
    }
    StatusOr<serving::RequestId> id =
        engine_.submit(std::move(stream->promptIds_), stream->params_);
    if (!id.ok()) {
      stream->refuse(badRequest(id.status().message()));
      ++ended;
      continue;
    }
    stream->id_ = *id;
    live_.emplace(*id, stream);
  }
  auto cancelOne = [&](RequestStream &stream) {
    if (stream.id_ && live_.count(*stream.id_))
      engine_.cancel(*stream.id_).ignoreError(); // it may have finished this step
  };
  for (const std::shared_ptr<RequestStream> &stream : cancels)
    cancelOne(*stream);
  std::lock_guard<std::mutex> lock(mutex_);
  if (cancelAll)
    for (auto &[id, stream] : live_)
      if (!stream->cancelled_) {
        stream->cancelled_ = true;
        cancelOne(*stream);
      }
  liveCount_ -= ended;
}

void EngineLoop::deliver(std::vector<serving::RequestUpdate> updates) {
  Clock::time_point now = Clock::now();
  // The metrics of the whole step under one lock, then the streams.
  std::vector<std::shared_ptr<RequestStream>> streams(updates.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t u = 0; u < updates.size(); ++u) {
      serving::RequestUpdate &update = updates[u];
      auto it = live_.find(update.id);
      if (it == live_.end())
        continue; // ended by failAll
      std::shared_ptr<RequestStream> &stream = streams[u] = it->second;
      if (!update.tokens.empty()) {
        if (stream->tokens_ == 0)
          metrics_.timeToFirstToken.observe(secondsBetween(stream->arrival_, now));
        else
          metrics_.timePerOutputToken.observe(secondsBetween(stream->lastToken_, now));
        stream->lastToken_ = now;
        stream->tokens_ += static_cast<int64_t>(update.tokens.size());
        metrics_.generationTokens += static_cast<int64_t>(update.tokens.size());
      }
      if (update.finished) {
        ++metrics_.finished[update.finishReason];
        metrics_.promptTokens += update.promptTokens;
        metrics_.cachedPromptTokens += update.cachedTokens;
        metrics_.endToEnd.observe(secondsBetween(stream->arrival_, now));
        --liveCount_;
        live_.erase(it);
      }
    }
  }
  // The postman thread wakes the streams' readers, so the next step does not
  // wait for hundreds of wake-ups.
  Batch batch;
  batch.reserve(updates.size());
  for (size_t u = 0; u < updates.size(); ++u)
    if (streams[u])
      batch.emplace_back(std::move(streams[u]), std::move(updates[u]));
  post(std::move(batch));
}

void EngineLoop::failAll(const std::string &error) {
  // Through the outbox: after the updates already posted to these streams.
  Batch batch;
  for (auto &[id, stream] : live_) {
    engine_.cancel(id).ignoreError();
    serving::RequestUpdate update;
    update.id = id;
    update.finished = true;
    update.finishReason = "error";
    update.finishDetail = "error";
    update.error = error;
    batch.emplace_back(stream, std::move(update));
  }
  post(std::move(batch));
  std::lock_guard<std::mutex> lock(mutex_);
  metrics_.finished["error"] += static_cast<int64_t>(live_.size());
  liveCount_ -= static_cast<int64_t>(live_.size());
  live_.clear();
}

bool EngineLoop::refreshGauges() {
  scheduler::Scheduler &sched = engine_.session().scheduler();
  std::lock_guard<std::mutex> lock(mutex_);
  waitingInEngine_ = static_cast<int64_t>(sched.numWaiting());
  metrics_.running = static_cast<int64_t>(sched.numRunning());
  metrics_.waiting = waitingInEngine_ + static_cast<int64_t>(pending_.size());
  metrics_.kvBlocksUsed = sched.kvCache().pool().numUsedBlocks();
  metrics_.kvBlocksTotal = sched.kvCache().pool().numBlocks() - 1;
  metrics_.preemptions = sched.numPreemptions();
  if (liveCount_ == 0)
    idle_.notify_all();
  return stopping_ && liveCount_ == 0 && pending_.empty();
}

} // namespace infer::server
