//===- TextModel.cpp - an artifact's tokenizer, chat template and stops ---===//

#include "runtime/serving/TextModel.h"

#include "runtime/artifact/artifact.pb.h"

#include <nlohmann/json.hpp>

namespace infer::serving {

StatusOr<std::unique_ptr<TextModel>> TextModel::fromArtifact(const artifact::TextInfo &info) {
  std::unique_ptr<TextModel> model(new TextModel());
  auto parsed = tokenizer::Tokenizer::fromJson(info.tokenizer_json());
  if (!parsed.ok())
    return parsed.status().withPrefix("the artifact's tokenizer");
  model->tokenizer_ = std::move(parsed).value();
  if (!info.chat_template().empty()) {
    auto chatTemplate = chat::ChatTemplate::parse(info.chat_template());
    if (!chatTemplate.ok())
      return chatTemplate.status().withPrefix("the artifact's chat template");
    model->chatTemplate_ = std::move(chatTemplate).value();
  }
  model->bosToken_ = info.bos_token();
  model->eosToken_ = info.eos_token();
  int64_t vocab = model->tokenizer_->vocabSize();
  for (int32_t id : info.stop_token_ids()) {
    if (id < 0 || id >= vocab)
      return dataLossError("the artifact's stop token id " + std::to_string(id) +
                           " is outside its tokenizer's vocabulary of " + std::to_string(vocab));
    model->stopTokenIds_.push_back(id);
  }
  return model;
}

StatusOr<std::vector<int32_t>> TextModel::encodePrompt(std::string_view text) const {
  return tokenizer_->encode(text, /*addSpecialTokens=*/true);
}

StatusOr<std::string> TextModel::renderChat(const nlohmann::ordered_json &messages) const {
  if (!chatTemplate_)
    return failedPreconditionError(
        "the model has no chat template (its tokenizer_config.json has no chat_template and no "
        "chat_template.jinja was beside it; give one with infer-compile --chat-template FILE)");
  return chat::applyChatTemplate(*chatTemplate_, messages, /*addGenerationPrompt=*/true, bosToken_,
                                 eosToken_);
}

StatusOr<std::vector<int32_t>> TextModel::encodeChat(const nlohmann::ordered_json &messages) const {
  ASSIGN_OR_RETURN(std::string prompt, renderChat(messages));
  return tokenizer_->encode(prompt, /*addSpecialTokens=*/false);
}

} // namespace infer::serving
