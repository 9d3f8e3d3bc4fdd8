//===- TextFiles.h - a model's tokenizer files into the artifact -*- C++ -*-===//
//
// infer-compile stores what text in and text out need in the artifact
// (artifact.proto's TextInfo): the Hugging Face files beside the model, or in
// --tokenizer DIR, checked at compile time so that a bad tokenizer or a
// template outside the supported Jinja subset fails the compile, not a
// request:
//
//   tokenizer.json          the tokenizer (required for text)
//   tokenizer_config.json   chat_template, bos_token, eos_token (optional)
//   chat_template.jinja     the chat template, preferred when present (optional)
//   generation_config.json  eos_token_id: the ids that end a generation (optional)
//
// Only these names are read, only regular files, only inside the directory
// (a link leading out of it is refused), each up to a size bound.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_TEXT_TEXTFILES_H
#define INFER_COMPILER_TEXT_TEXTFILES_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <cstdint>
#include <optional>
#include <string>

namespace infer::compiler {

struct TextFileOptions {
  /// The model file; its directory is searched when `tokenizerDir` is empty.
  std::string modelPath;
  /// --tokenizer DIR: must hold a tokenizer.json.
  std::string tokenizerDir;
  /// --chat-template FILE: replaces the tokenizer's template.
  std::string chatTemplatePath;
  /// The model's vocabulary (its logits' last dimension; 0: unknown): a
  /// tokenizer with ids beyond it is not this model's.
  int64_t modelVocab = 0;
};

/// The artifact's TextInfo, or nullopt when no tokenizer.json was found
/// beside the model (`note` then says so). Errors name the file and what is
/// wrong: unreadable or oversized files, JSON that does not parse, a
/// tokenizer of an unsupported kind, a chat template construct outside the
/// subset, an eos id outside the vocabulary.
StatusOr<std::optional<artifact::TextInfo>> readTextFiles(const TextFileOptions &options,
                                                          std::string &note);

} // namespace infer::compiler

#endif // INFER_COMPILER_TEXT_TEXTFILES_H
