//===- EngineLoop.h - one thread steps the engine, others wait on it -*- C++ -*-===//
//
// serving::Engine is not thread-safe, so one engine thread owns it: it takes
// the requests HTTP threads queued, submits them, steps the model while any
// is live, and hands each step's updates to the request's RequestStream,
// where its HTTP thread waits for them. HTTP threads only submit, read their
// stream and cancel.
//
//   HTTP thread ─submit()──► pending_ ──┐
//               ◄─next()── RequestStream◄── postman ◄── engine thread: submit, step()
//   HTTP thread ─cancel()─► cancels_ ───┘   (outbox)       (updates, metrics)
//
// The postman thread hands each step's updates to their streams in order, so
// the engine thread posts one batch a step instead of waking every reader
// itself (hundreds of futex wake-ups a step at a full batch).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_ENGINELOOP_H
#define INFER_RUNTIME_SERVER_ENGINELOOP_H

#include "runtime/server/ApiError.h"
#include "runtime/server/Metrics.h"
#include "runtime/serving/Engine.h"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>
#include <vector>

namespace infer::server {

using Clock = std::chrono::steady_clock;

/// One request's updates, from the engine thread to its HTTP thread.
class RequestStream {
public:
  enum class Wait { kUpdate, kTimeout, kEnded };
  /// Waits at most `timeout` for updates and takes every one queued (several
  /// when the reader lags); kEnded once the request ended and all were taken.
  Wait next(std::vector<serving::RequestUpdate> &updates, std::chrono::milliseconds timeout);
  /// Why the engine refused the request at submission (then next() gives
  /// nothing).
  std::optional<ApiError> refusal() const;

private:
  friend class EngineLoop;
  void push(serving::RequestUpdate update);
  void refuse(ApiError error);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<serving::RequestUpdate> updates_;
  std::optional<ApiError> refusal_;
  bool ended_ = false;
  // The engine thread's own fields.
  std::optional<serving::RequestId> id_;
  Clock::time_point arrival_ = Clock::now(), lastToken_;
  int64_t tokens_ = 0;
  bool cancelled_ = false; ///< guarded by EngineLoop::mutex_
  std::vector<int32_t> promptIds_;
  serving::GenerationParams params_;
};

class EngineLoop {
public:
  /// Starts the engine thread. At most `maxQueue` requests wait (accepted,
  /// not yet running, beyond the batch's free sequence slots); more are
  /// refused with 503.
  EngineLoop(serving::Engine &engine, int64_t maxQueue);
  /// Cancels what is live and joins the engine thread.
  ~EngineLoop();

  /// Queues a request, or 503 when `maxQueue` wait already or the loop is
  /// draining.
  std::variant<std::shared_ptr<RequestStream>, ApiError>
  submit(std::vector<int32_t> promptIds, const serving::GenerationParams &params);
  /// Ends the request (a client that went away); its stream ends with a
  /// "cancelled" update at the next step.
  void cancel(const std::shared_ptr<RequestStream> &stream);

  /// Refuses new requests from now on (503 "shutting_down").
  void beginDrain();
  /// Waits until no request is live, at most `timeout`; then cancels the
  /// rest and waits for them to end. True when all finished by themselves.
  bool waitDrained(std::chrono::milliseconds timeout);

  Metrics metrics() const;

private:
  void run();
  /// Submits the queued requests and applies the queued cancellations.
  void admit(const std::vector<std::shared_ptr<RequestStream>> &pending,
             const std::vector<std::shared_ptr<RequestStream>> &cancels, bool cancelAll);
  void deliver(std::vector<serving::RequestUpdate> updates);
  /// Ends every live request with `error` (the engine's step failed).
  void failAll(const std::string &error);
  using Batch = std::vector<std::pair<std::shared_ptr<RequestStream>, serving::RequestUpdate>>;
  /// Queues a step's updates for the postman (engine thread).
  void post(Batch batch);
  /// The postman thread: pushes posted updates to their streams in order.
  void deliverOutbox();
  /// Refreshes the gauges; true when the loop may exit (stopping, nothing live).
  bool refreshGauges();

  serving::Engine &engine_;
  const int64_t maxQueue_, maxSequences_;
  std::map<serving::RequestId, std::shared_ptr<RequestStream>> live_; ///< engine thread only

  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::vector<std::shared_ptr<RequestStream>> pending_, cancels_;
  int64_t liveCount_ = 0; ///< submitted and not ended (pending included)
  int64_t waitingInEngine_ = 0;
  bool draining_ = false, cancelAll_ = false, stopping_ = false;
  Metrics metrics_;
  std::mutex outboxMutex_;
  std::condition_variable outboxReady_;
  std::deque<Batch> outbox_;
  bool outboxClosed_ = false;
  std::thread postman_, thread_;
};

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_ENGINELOOP_H
