//===- openai_request_fuzzer.cpp - libFuzzer target for request bodies ----===//
//
// The server's request path before the engine: the first byte picks the
// endpoint (completions or chat), the rest is the HTTP body. parseRequest
// checks every field; a body it accepts goes through prepareRequest with the
// bundled tiny-llama's tokenizer and chat template (models/tiny-llama), so
// text prompts are tokenized and chat messages rendered.
//
//===----------------------------------------------------------------------===//

#include "runtime/server/OpenAiRequest.h"
#include "runtime/serving/TextModel.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::abort();
  }
  return text.str();
}

std::unique_ptr<infer::serving::TextModel> loadTinyLlama() {
  std::string dir = std::string(INFER_SOURCE_DIR) + "/models/tiny-llama/";
  infer::artifact::TextInfo info;
  info.set_tokenizer_json(readFile(dir + "tokenizer.json"));
  nlohmann::json config = nlohmann::json::parse(readFile(dir + "tokenizer_config.json"));
  info.set_chat_template(config.value("chat_template", ""));
  info.set_bos_token(config.value("bos_token", ""));
  info.set_eos_token(config.value("eos_token", ""));
  auto model = infer::serving::TextModel::fromArtifact(info);
  if (!model.ok()) {
    std::fprintf(stderr, "%s\n", model.status().message().c_str());
    std::abort();
  }
  return std::move(*model);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::unique_ptr<infer::serving::TextModel> text = loadTinyLlama();
  if (size == 0)
    return 0;
  auto endpoint =
      data[0] % 2 ? infer::server::Endpoint::kChat : infer::server::Endpoint::kCompletions;
  std::string_view body(reinterpret_cast<const char *>(data + 1), size - 1);
  auto parsed = infer::server::parseRequest(endpoint, body);
  if (const auto *request = std::get_if<infer::server::ParsedRequest>(&parsed)) {
    infer::server::ModelLimits limits{text.get(), 512, 256};
    (void)infer::server::prepareRequest(*request, limits);
  }
  return 0;
}
