//===- Serve.cpp - infer-run serve: the OpenAI-compatible server ----------===//
//
// The CLI's part: the engine, the HTTP server over it, and the signals.
// SIGTERM and SIGINT are blocked in every thread (they are blocked before any
// thread starts) and taken by one watcher thread with sigtimedwait, so the
// drain runs as ordinary code rather than in a signal handler.
//
//===----------------------------------------------------------------------===//

#include "tools/infer-run/Serve.h"

#include "runtime/serving/Engine.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <thread>

namespace infer::tools {
namespace {

std::string defaultModelName(const std::string &artifactPath) {
  std::string name = artifactPath.substr(artifactPath.find_last_of('/') + 1);
  const std::string suffix = ".infer";
  if (name.size() > suffix.size() &&
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    name.resize(name.size() - suffix.size());
  return name;
}

} // namespace

Status runServe(const std::string &artifactPath, ServeOptions options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // A client that goes away must not kill the server with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);

  ASSIGN_OR_RETURN(auto engine, serving::Engine::open(artifactPath, options.session));
  if (options.server.modelName.empty())
    options.server.modelName = defaultModelName(artifactPath);
  // A worker per connection that may be streaming or waiting, and some for
  // /metrics, /health and the requests refused with 503.
  int64_t sequences = engine->session().scheduler().config().maxSequences;
  options.server.threads = std::min<int64_t>(1024, sequences + options.server.maxQueue + 16);
  std::string host = options.server.host;
  server::HttpServer http(*engine, options.server);
  ASSIGN_OR_RETURN(int port, http.bind());
  std::printf("infer-run serve: model '%s' on %s, listening on http://%s:%d\n",
              options.server.modelName.c_str(), engine->session().deviceName().c_str(),
              host.c_str(), port);
  std::fflush(stdout);

  std::atomic<bool> serving{true};
  std::thread watcher([&] {
    timespec poll{0, 200 * 1000 * 1000};
    while (serving) {
      int signal = sigtimedwait(&signals, nullptr, &poll);
      if (signal != SIGTERM && signal != SIGINT)
        continue;
      std::fprintf(stderr, "infer-run serve: %s, draining\n", strsignal(signal));
      bool finished = http.shutdown();
      std::fprintf(stderr, "infer-run serve: %s\n",
                   finished ? "every request finished" : "drain timeout: cancelled the rest");
      return;
    }
  });
  Status status = http.serve();
  serving = false;
  watcher.join();
  return status;
}

} // namespace infer::tools
