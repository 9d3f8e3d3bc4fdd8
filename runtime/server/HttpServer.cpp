//===- HttpServer.cpp - the OpenAI-compatible HTTP server -----------------===//

#include "runtime/server/HttpServer.h"

#include "runtime/server/ClientConnection.h"
#include "runtime/server/EngineLoop.h"
#include "runtime/server/OpenAiResponse.h"
#include "runtime/serving/Engine.h"

#include <httplib.h>

#include <sys/socket.h>

#include <cerrno>
#include <chrono>

namespace infer::server {
namespace {

using json = nlohmann::ordered_json;

void sendError(httplib::Response &response, const ApiError &error) {
  response.status = error.status;
  response.set_content(dumpJson(error.body()), "application/json");
}

void sendJson(httplib::Response &response, const json &body) {
  response.status = 200;
  response.set_content(dumpJson(body), "application/json");
}

/// Equal texts, in time that does not depend on where they differ.
bool sameSecret(const std::string &given, const std::string &expected) {
  unsigned char diff = given.size() != expected.size();
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  return diff == 0;
}

/// The error a request that ended without text gets, or none.
std::optional<ApiError> endError(const serving::RequestUpdate &last) {
  if (last.finishReason == "error" && last.finishDetail == "refused")
    return badRequest("the request cannot run: " + last.error);
  if (last.finishReason == "error")
    return ApiError{500, "the request failed: " + last.error, "server_error", "", ""};
  if (last.finishReason == "cancelled")
    return unavailable("the server shut down before the request finished", "shutting_down");
  return std::nullopt;
}

Usage usageOf(const serving::RequestUpdate &last) {
  return {last.promptTokens, static_cast<int64_t>(last.allTokens.size())};
}

/// What a streamed response's content provider keeps between calls.
struct StreamState {
  std::shared_ptr<void> open; ///< HttpServer::openResponse until the last byte
  std::shared_ptr<RequestStream> stream;
  ResponseHeader header;
  ParsedRequest request;
  bool first = true, ended = false, cancelled = false;
  /// Polled while no token comes (the request waits in the queue): no write
  /// tells that the client left before it. Found in the handler, before the
  /// headers go out: once they meet a closed peer its reset leaves the
  /// socket without a peer address to find it by.
  ClientConnection client;
};

/// The SSE text of one update (empty: nothing to send yet).
std::string sseFor(StreamState &state, const serving::RequestUpdate &update) {
  const std::vector<int32_t> *ids = state.request.returnTokenIds ? &update.tokens : nullptr;
  if (!update.finished) {
    if (update.text.empty() && !ids && !(state.first && state.header.endpoint == Endpoint::kChat))
      return "";
    std::string out = sseEvent(chunk(state.header, update.text, state.first, "", json(), ids));
    state.first = false;
    return out;
  }
  if (std::optional<ApiError> error = endError(update))
    return sseEvent(error->body()) + sseDone();
  Usage usage = usageOf(update);
  std::string out = sseEvent(
      chunk(state.header, update.text, state.first, update.finishReason, usage.toJson(), ids));
  if (state.request.includeUsage)
    out += sseEvent(usageChunk(state.header, usage));
  return out + sseDone();
}

} // namespace

HttpServer::HttpServer(serving::Engine &engine, ServerOptions options)
    : options_(std::move(options)), http_(std::make_unique<httplib::Server>()) {
  limits_.text = engine.text();
  limits_.vocab = engine.session().vocab();
  limits_.maxSeqLen = engine.session().maxSeqLen();
  startedAt_ = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  loop_ = std::make_unique<EngineLoop>(engine, options_.maxQueue);
  size_t threads = static_cast<size_t>(options_.threads);
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options_.maxBodyBytes);
  // An idle keep-alive connection holds a worker thread this long.
  http_->set_keep_alive_timeout(2);
  // cpp-httplib's default also sets SO_REUSEPORT, which would let a second
  // server bind a port this one holds; remember the socket to widen its
  // backlog after bind().
  http_->set_socket_options([this](int socket) {
    int yes = 1;
    setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listenSocket_ = socket;
  });
  addRoutes();
}

HttpServer::~HttpServer() = default;

StatusOr<int> HttpServer::bind() {
  int port = options_.port == 0
                 ? http_->bind_to_any_port(options_.host)
                 : (http_->bind_to_port(options_.host, options_.port) ? options_.port : -1);
  // Debian's cpp-httplib 0.11 listens with a backlog of 5: a burst of
  // connections overflows it and the dropped ones retry their SYN after 1, 2,
  // 4, ... seconds. The kernel takes a second listen() as a new backlog.
  if (port >= 0 && ::listen(listenSocket_, SOMAXCONN) != 0)
    return errnoError(errno, "listen on " + options_.host + ":" + std::to_string(port));
  if (port < 0)
    return failedPreconditionError("cannot listen on " + options_.host + ":" +
                                   std::to_string(options_.port) +
                                   " (the port is taken, or the host is not this machine's)");
  return port;
}

Status HttpServer::serve() {
  if (!http_->listen_after_bind() && !draining_)
    return internalError("the HTTP server stopped accepting connections");
  return okStatus();
}

bool HttpServer::shutdown() {
  draining_ = true;
  loop_->beginDrain();
  // Streams are pumped only while the listening socket is open, so it is
  // closed after the live requests ended.
  bool finished = loop_->waitDrained(options_.drainTimeout);
  // The streams' last events are written after their requests ended; a
  // client that stops reading is cut off after cpp-httplib's write timeout.
  std::unique_lock<std::mutex> lock(responsesMutex_);
  responsesClosed_.wait_for(lock, std::chrono::seconds(10), [&] { return openResponses_ == 0; });
  http_->stop();
  return finished;
}

std::shared_ptr<void> HttpServer::openResponse() {
  std::lock_guard<std::mutex> lock(responsesMutex_);
  ++openResponses_;
  return std::shared_ptr<void>(nullptr, [this](void *) {
    std::lock_guard<std::mutex> lock(responsesMutex_);
    if (--openResponses_ == 0)
      responsesClosed_.notify_all();
  });
}

bool HttpServer::authorized(const httplib::Request &request) const {
  if (options_.apiKey.empty())
    return true;
  return sameSecret(request.get_header_value("Authorization"), "Bearer " + options_.apiKey);
}

void HttpServer::addRoutes() {
  http_->set_pre_routing_handler(
      [this](const httplib::Request &request, httplib::Response &response) {
        if (request.path.rfind("/v1/", 0) != 0 || authorized(request))
          return httplib::Server::HandlerResponse::Unhandled;
        sendError(response, ApiError{401,
                                     "a wrong or missing API key: send 'Authorization: Bearer "
                                     "<key>' with the server's --api-key",
                                     "invalid_request_error", "", "invalid_api_key"});
        return httplib::Server::HandlerResponse::Handled;
      });
  // httplib's own refusals (no route, body too large) get an OpenAI body too.
  http_->set_error_handler([](const httplib::Request &request, httplib::Response &response) {
    if (!response.body.empty())
      return;
    std::string message = response.status == 413 ? "the request body is too large"
                          : response.status == 404
                              ? "no route " + request.method + " " + request.path
                              : "the request cannot be served";
    sendError(response, ApiError{response.status, message, "invalid_request_error", "", ""});
  });
  http_->set_exception_handler(
      [](const httplib::Request &, httplib::Response &response, std::exception_ptr) {
        sendError(response, ApiError{500, "internal error", "server_error", "", ""});
      });
  http_->Post("/v1/completions",
              [this](const httplib::Request &request, httplib::Response &response) {
                generate(Endpoint::kCompletions, request, response);
              });
  http_->Post("/v1/chat/completions",
              [this](const httplib::Request &request, httplib::Response &response) {
                generate(Endpoint::kChat, request, response);
              });
  http_->Get("/v1/models", [this](const httplib::Request &, httplib::Response &response) {
    json model = {{"id", options_.modelName},
                  {"object", "model"},
                  {"created", startedAt_},
                  {"owned_by", "infer"},
                  {"max_model_len", limits_.maxSeqLen}};
    sendJson(response, {{"object", "list"}, {"data", json::array({model})}});
  });
  http_->Get("/health", [this](const httplib::Request &, httplib::Response &response) {
    if (draining_)
      return sendError(response, unavailable("the server is shutting down", "shutting_down"));
    sendJson(response, {{"status", "ok"}});
  });
  http_->Get("/metrics", [this](const httplib::Request &, httplib::Response &response) {
    response.set_content(loop_->metrics().render(), "text/plain; version=0.0.4");
  });
}

void HttpServer::generate(Endpoint endpoint, const httplib::Request &request,
                          httplib::Response &response) {
  std::shared_ptr<void> open = openResponse();
  std::variant<ParsedRequest, ApiError> parsed = parseRequest(endpoint, request.body);
  if (auto *error = std::get_if<ApiError>(&parsed))
    return sendError(response, *error);
  ParsedRequest &body = std::get<ParsedRequest>(parsed);
  if (!body.model.empty() && body.model != options_.modelName)
    return sendError(response, ApiError{404,
                                        "the model '" + body.model + "' does not exist (this " +
                                            "server has '" + options_.modelName + "')",
                                        "invalid_request_error", "model", "model_not_found"});
  auto prepared = prepareRequest(body, limits_);
  if (auto *error = std::get_if<ApiError>(&prepared))
    return sendError(response, *error);
  auto &[promptIds, params] = std::get<0>(prepared);
  std::vector<int32_t> promptCopy = promptIds;
  auto submitted = loop_->submit(std::move(promptIds), params);
  if (auto *error = std::get_if<ApiError>(&submitted))
    return sendError(response, *error);
  std::shared_ptr<RequestStream> stream = std::get<0>(submitted);
  ResponseHeader header = makeHeader(endpoint, options_.modelName);

  if (!body.stream) {
    // Nothing is written until the end, so the connection is polled: a
    // client that left cancels its request.
    std::optional<ClientConnection> client;
    bool cancelled = false;
    const auto every = std::chrono::milliseconds(100);
    auto nextProbe = std::chrono::steady_clock::now() + every;
    std::vector<serving::RequestUpdate> updates;
    serving::RequestUpdate last;
    while (true) {
      RequestStream::Wait got = stream->next(updates, every);
      if (got == RequestStream::Wait::kEnded)
        break;
      if (got == RequestStream::Wait::kUpdate && updates.back().finished)
        last = std::move(updates.back());
      if (cancelled || std::chrono::steady_clock::now() < nextProbe)
        continue;
      nextProbe = std::chrono::steady_clock::now() + every;
      if (!client)
        client = ClientConnection::find(request.remote_addr, request.remote_port,
                                        request.local_addr, request.local_port);
      if (client->closed()) {
        loop_->cancel(stream);
        cancelled = true;
      }
    }
    if (std::optional<ApiError> refusal = stream->refusal())
      return sendError(response, *refusal);
    if (std::optional<ApiError> error = endError(last))
      return sendError(response, *error);
    bool ids = body.returnTokenIds;
    return sendJson(response, completionResponse(header, last.allText, last.finishReason,
                                                 usageOf(last), ids ? &promptCopy : nullptr,
                                                 ids ? &last.allTokens : nullptr));
  }

  auto state = std::make_shared<StreamState>();
  state->open = std::move(open);
  state->stream = stream;
  state->header = header;
  state->request = std::move(body);
  state->client = ClientConnection::find(request.remote_addr, request.remote_port,
                                         request.local_addr, request.local_port);
  EngineLoop *loop = loop_.get();
  response.set_header("Cache-Control", "no-cache");
  response.set_chunked_content_provider(
      "text/event-stream",
      [state, loop](size_t, httplib::DataSink &sink) {
        std::vector<serving::RequestUpdate> updates;
        std::string out;
        while (out.empty()) {
          RequestStream::Wait got = state->stream->next(updates, std::chrono::milliseconds(100));
          if (got == RequestStream::Wait::kTimeout) {
            if (!state->cancelled && state->client.closed()) {
              loop->cancel(state->stream);
              state->cancelled = true;
            }
            continue;
          }
          if (got == RequestStream::Wait::kEnded) {
            std::optional<ApiError> refusal = state->stream->refusal();
            out = (refusal ? sseEvent(refusal->body()) : "") + sseDone();
            state->ended = true;
            break;
          }
          // Every update queued goes out in one write.
          for (const serving::RequestUpdate &update : updates) {
            out += sseFor(*state, update);
            state->ended |= update.finished;
          }
        }
        // False: the client went away; the releaser cancels the request.
        if (!sink.write(out.data(), out.size()))
          return false;
        if (state->ended)
          sink.done();
        return true;
      },
      [loop, state](bool) {
        if (!state->ended)
          loop->cancel(state->stream);
      });
}

} // namespace infer::server
