//===- chat_template_fuzzer.cpp - libFuzzer target for chat templates -----===//
//
// Each input is a chat template (it comes from an artifact or a model's
// tokenizer_config.json): parsed, then rendered with a conversation that has
// a system, user, assistant and tool message, tools, and a generation prompt.
// A template may fail or raise; it must not crash, hang or grow without end.
//
//===----------------------------------------------------------------------===//

#include "runtime/chat/ChatTemplate.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const nlohmann::ordered_json context = nlohmann::ordered_json::parse(R"json({
    "messages": [
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "What is 2+2? Use the tool."},
      {"role": "assistant", "content": "",
       "tool_calls": [{"type": "function", "id": "call_1",
                       "function": {"name": "add", "arguments": {"a": 2, "b": 2}}}]},
      {"role": "tool", "content": "4", "tool_call_id": "call_1"},
      {"role": "assistant", "content": "4"},
      {"role": "user", "content": [{"type": "text", "text": "Thanks"}]}
    ],
    "tools": [{"type": "function", "function": {"name": "add", "description": "a + b",
               "parameters": {"type": "object", "properties": {"a": {"type": "number"}}}}}],
    "add_generation_prompt": true,
    "bos_token": "<s>",
    "eos_token": "</s>"
  })json");
  auto parsed = infer::chat::ChatTemplate::parse(
      std::string_view(reinterpret_cast<const char *>(data), size));
  if (parsed.ok())
    (void)parsed->render(context);
  return 0;
}
