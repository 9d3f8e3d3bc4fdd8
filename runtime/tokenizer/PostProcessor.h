//===- PostProcessor.h - what add_special_tokens adds -----------*- C++ -*-===//
//
// TemplateProcessing (the single-sequence template), RobertaProcessing and
// BertProcessing wrap the ids in special tokens; ByteLevel only trims offsets
// (no ids change); Sequence applies them in order. Only single sequences are
// encoded, so pair templates are ignored.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_POSTPROCESSOR_H
#define INFER_RUNTIME_TOKENIZER_POSTPROCESSOR_H

#include "runtime/tokenizer/JsonFields.h"

#include <vector>

namespace infer::tokenizer {

class PostProcessor {
public:
  /// The `post_processor` field (null: nothing is added).
  static StatusOr<PostProcessor> fromJson(const Json &json);

  /// The ids HF's encode returns with add_special_tokens=true.
  std::vector<int32_t> apply(const std::vector<int32_t> &ids) const;

  /// Where the encoded text goes in a flattened template.
  static constexpr int32_t kSequence = -1;

private:
  /// The single template flattened: ids to emit, and kSequence.
  std::vector<int32_t> template_ = {kSequence};
};

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_POSTPROCESSOR_H
