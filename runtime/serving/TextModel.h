//===- TextModel.h - an artifact's tokenizer, chat template and stops -*- C++ -*-===//
//
// What turns text into a prompt and ids back into text, loaded from the
// artifact's TextInfo (compiler/text/TextFiles.h writes it): the Hugging Face
// tokenizer, the chat template, the texts the template sees as bos/eos, and
// the ids that end a generation.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVING_TEXTMODEL_H
#define INFER_RUNTIME_SERVING_TEXTMODEL_H

#include "runtime/base/Status.h"
#include "runtime/chat/ChatTemplate.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer {
namespace artifact {
class TextInfo;
}

namespace serving {

class TextModel {
public:
  /// Parses the tokenizer and the chat template; an artifact written by
  /// infer-compile passed both checks already, so an error here means a
  /// damaged or foreign artifact.
  static StatusOr<std::unique_ptr<TextModel>> fromArtifact(const artifact::TextInfo &info);

  const tokenizer::Tokenizer &tokenizer() const { return *tokenizer_; }
  bool hasChatTemplate() const { return chatTemplate_.has_value(); }
  /// Generation stops when one of these is sampled.
  const std::vector<int32_t> &stopTokenIds() const { return stopTokenIds_; }

  /// A plain-text prompt as the model's tokenizer encodes it for generation:
  /// with its special tokens (Llama's BOS), as HF's `tokenizer(text)` does.
  StatusOr<std::vector<int32_t>> encodePrompt(std::string_view text) const;

  /// `messages` ([{"role": ..., "content": ...}, ...], keys in the caller's
  /// order as a Python dict keeps them) through the chat
  /// template with the generation prompt, as HF's apply_chat_template renders
  /// it. FailedPrecondition when the model has no template.
  StatusOr<std::string> renderChat(const nlohmann::ordered_json &messages) const;
  /// renderChat encoded without adding special tokens (the template writes
  /// them), as apply_chat_template(tokenize=True) does.
  StatusOr<std::vector<int32_t>> encodeChat(const nlohmann::ordered_json &messages) const;

private:
  TextModel() = default;

  std::unique_ptr<tokenizer::Tokenizer> tokenizer_;
  std::optional<chat::ChatTemplate> chatTemplate_;
  std::string bosToken_, eosToken_;
  std::vector<int32_t> stopTokenIds_;
};

} // namespace serving
} // namespace infer

#endif // INFER_RUNTIME_SERVING_TEXTMODEL_H
