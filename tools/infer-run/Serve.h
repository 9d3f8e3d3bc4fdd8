//===- Serve.h - infer-run serve: the OpenAI-compatible server --*- C++ -*-===//
#ifndef INFER_TOOLS_INFER_RUN_SERVE_H
#define INFER_TOOLS_INFER_RUN_SERVE_H

#include "runtime/base/Status.h"
#include "runtime/server/HttpServer.h"
#include "runtime/serving/ServingSession.h"

#include <string>

namespace infer::tools {

struct ServeOptions {
  server::ServerOptions server; ///< modelName "": the artifact's file name without .infer
  serving::SessionOptions session;
};

/// Opens the artifact, prints "listening on http://HOST:PORT" on stdout and
/// serves until SIGTERM or SIGINT, which drain it (docs/server.md).
Status runServe(const std::string &artifactPath, ServeOptions options);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_SERVE_H
