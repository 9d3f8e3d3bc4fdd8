//===- HttpServer.h - the OpenAI-compatible HTTP server ---------*- C++ -*-===//
//
// cpp-httplib routes over an EngineLoop (docs/server.md):
//   POST /v1/completions, POST /v1/chat/completions (JSON, or SSE when
//   "stream": true), GET /v1/models, GET /health, GET /metrics (Prometheus).
// HTTP threads parse, tokenize, queue and stream; the loop's one thread
// steps the model. A streamed request whose client went away is cancelled.
// shutdown() drains: new requests get 503, live ones finish (or are cancelled
// after the drain timeout), then serve() returns.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_HTTPSERVER_H
#define INFER_RUNTIME_SERVER_HTTPSERVER_H

#include "runtime/base/Status.h"
#include "runtime/server/OpenAiRequest.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace httplib {
class Server;
struct Request;
struct Response;
} // namespace httplib

namespace infer::serving {
class Engine;
}

namespace infer::server {

class EngineLoop;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000; ///< 0: any free port (bind() says which)
  /// When set, /v1/ requests need "Authorization: Bearer <apiKey>".
  std::string apiKey;
  /// The id /v1/models lists and responses name; requests naming another
  /// model get 404.
  std::string modelName;
  /// Requests accepted and not yet running, at most; more get 503.
  int64_t maxQueue = 256;
  /// HTTP worker threads: each open connection holds one.
  int64_t threads = 64;
  std::chrono::milliseconds drainTimeout{30000};
  /// Larger bodies get 413.
  size_t maxBodyBytes = size_t(16) << 20;
};

class HttpServer {
public:
  /// Starts the engine thread over `engine`, which must outlive the server.
  HttpServer(serving::Engine &engine, ServerOptions options);
  ~HttpServer();

  /// Binds the listening socket; returns the port.
  StatusOr<int> bind();
  /// Accepts and serves on the calling thread until shutdown().
  Status serve();
  /// From any thread: drains (new requests get 503; live ones run to their
  /// end, at most the drain timeout, then are cancelled) and stops serve().
  /// Returns true when every live request finished by itself.
  bool shutdown();

private:
  void addRoutes();
  void generate(Endpoint endpoint, const httplib::Request &request, httplib::Response &response);
  /// Whether the request may pass (the API key, when one is set).
  bool authorized(const httplib::Request &request) const;
  /// Counts a generation response from its request to its last byte: the
  /// listening socket closes (which stops cpp-httplib pumping streams) only
  /// once none is open.
  std::shared_ptr<void> openResponse();

  ServerOptions options_;
  ModelLimits limits_;
  int64_t startedAt_ = 0;
  int listenSocket_ = -1;
  std::atomic<bool> draining_{false};
  std::mutex responsesMutex_;
  std::condition_variable responsesClosed_;
  int64_t openResponses_ = 0;
  std::unique_ptr<EngineLoop> loop_;
  std::unique_ptr<httplib::Server> http_;
};

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_HTTPSERVER_H
