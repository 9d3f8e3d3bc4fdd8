//===- infer-chat-render.cpp - renders chat templates for the checker -----===//
//
// Test driver for check_chat_templates.py: reads JSON lines
//   {"template": <path or template text>, "context": {...}}
// from stdin and writes one line per input:
//   {"text": <rendered>} or {"error": <message>, "raised": <bool>}
// where "raised" says the error came from raise_exception(). Parsed
// templates are cached by their "template" string.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/ChatTemplate.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

namespace {

using infer::StatusCode;
using infer::StatusOr;
using infer::chat::ChatTemplate;

/// The template text: the file `spec` names if there is one, else `spec`.
std::string templateSource(const std::string &spec) {
  if (spec.find('\n') == std::string::npos && spec.find("{") == std::string::npos) {
    std::ifstream file(spec, std::ios::binary);
    if (file) {
      std::ostringstream text;
      text << file.rdbuf();
      return text.str();
    }
  }
  return spec;
}

nlohmann::ordered_json renderLine(const std::string &line,
                                  std::map<std::string, StatusOr<ChatTemplate>> &cache) {
  nlohmann::ordered_json result;
  auto request = nlohmann::ordered_json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object() || !request.contains("template") ||
      !request["template"].is_string()) {
    result["error"] = "bad request line: want {\"template\": ..., \"context\": {...}}";
    result["raised"] = false;
    return result;
  }
  const std::string spec = request["template"].get<std::string>();
  auto it = cache.find(spec);
  if (it == cache.end())
    it = cache.emplace(spec, ChatTemplate::parse(templateSource(spec))).first;
  if (!it->second.ok()) {
    result["error"] = it->second.status().message();
    result["raised"] = false;
    return result;
  }
  nlohmann::ordered_json context =
      request.contains("context") ? request["context"] : nlohmann::ordered_json::object();
  StatusOr<std::string> text = it->second->render(context);
  if (text.ok()) {
    result["text"] = *text;
  } else {
    result["error"] = text.status().message();
    result["raised"] = text.status().code() == StatusCode::kFailedPrecondition;
  }
  return result;
}

} // namespace

int main() {
  std::map<std::string, StatusOr<ChatTemplate>> cache;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty())
      continue;
    std::cout
        << renderLine(line, cache).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
        << "\n";
  }
  return 0;
}
