//===- ApiError.h - an OpenAI-style error and its HTTP status ---*- C++ -*-===//
//
// Every refusal the server gives has the body the OpenAI API gives:
//   {"error": {"message": "...", "type": "invalid_request_error",
//              "param": "max_tokens", "code": null}}
// with the status it goes with (400 bad request, 401 bad API key, 404, 413
// body too large, 503 overloaded or shutting down, 500 the model failed).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_APIERROR_H
#define INFER_RUNTIME_SERVER_APIERROR_H

#include <nlohmann/json.hpp>

#include <string>

namespace infer::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param; ///< the request field at fault ("": null)
  std::string code;  ///< a machine-readable code ("": null)

  nlohmann::ordered_json body() const;
};

/// 400 invalid_request_error naming `param`.
ApiError badRequest(std::string message, std::string param = "", std::string code = "");
/// 503: the server cannot take the request now (queue full, shutting down).
ApiError unavailable(std::string message, std::string code);
/// The JSON text of `value`; invalid UTF-8 becomes U+FFFD instead of throwing.
std::string dumpJson(const nlohmann::ordered_json &value);

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_APIERROR_H
