//===- ApiError.cpp - an OpenAI-style error and its HTTP status -----------===//

#include "runtime/server/ApiError.h"

namespace infer::server {

nlohmann::ordered_json ApiError::body() const {
  auto orNull = [](const std::string &text) {
    return text.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(text);
  };
  return {
      {"error",
       {{"message", message}, {"type", type}, {"param", orNull(param)}, {"code", orNull(code)}}}};
}

ApiError badRequest(std::string message, std::string param, std::string code) {
  return ApiError{400, std::move(message), "invalid_request_error", std::move(param),
                  std::move(code)};
}

ApiError unavailable(std::string message, std::string code) {
  return ApiError{503, std::move(message), "server_error", "", std::move(code)};
}

std::string dumpJson(const nlohmann::ordered_json &value) {
  return value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

} // namespace infer::server
