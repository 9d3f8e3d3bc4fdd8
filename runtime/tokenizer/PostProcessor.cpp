//===- PostProcessor.cpp - what add_special_tokens adds -------------------===//
#include "runtime/tokenizer/PostProcessor.h"

namespace infer::tokenizer {
namespace {

constexpr int32_t kSequence = PostProcessor::kSequence;

/// `[cls] sequence [sep]` from Roberta/BertProcessing's ["token", id] pairs.
StatusOr<std::vector<int32_t>> wrapTemplate(const Json &json, std::string_view where) {
  std::vector<int32_t> ids;
  for (const char *key : {"cls", "sep"}) {
    auto it = json.find(key);
    if (it == json.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_integer())
      return invalidArgumentError(std::string(where) + ": field '" + key +
                                  "' must be [\"token\", id]");
    ids.push_back((*it)[1].get<int32_t>());
  }
  return std::vector<int32_t>{ids[0], kSequence, ids[1]};
}

/// TemplateProcessing's single template, flattened.
StatusOr<std::vector<int32_t>> singleTemplate(const Json &json) {
  const std::string where = "post_processor TemplateProcessing";
  ASSIGN_OR_RETURN(const Json *single, arrayField(json, "single", where));
  auto specials = json.find("special_tokens");
  std::vector<int32_t> flat;
  for (const Json &piece : *single) {
    if (piece.contains("Sequence")) {
      ASSIGN_OR_RETURN(std::string id, stringField(piece["Sequence"], "id", where));
      if (id != "A")
        return unsupported("post_processor option",
                           "TemplateProcessing single template uses sequence " + id);
      flat.push_back(kSequence);
      continue;
    }
    if (!piece.contains("SpecialToken"))
      return invalidArgumentError(where + ": a template piece is neither Sequence nor "
                                          "SpecialToken");
    ASSIGN_OR_RETURN(std::string name, stringField(piece["SpecialToken"], "id", where));
    if (specials == json.end() || !specials->is_object() || !specials->contains(name))
      return invalidArgumentError(where + ": special token '" + name +
                                  "' is missing from special_tokens");
    ASSIGN_OR_RETURN(const Json *ids, arrayField((*specials)[name], "ids", where));
    for (const Json &id : *ids) {
      if (!id.is_number_integer())
        return invalidArgumentError(where + ": ids of '" + name + "' must be integers");
      flat.push_back(id.get<int32_t>());
    }
  }
  return flat;
}

} // namespace

StatusOr<PostProcessor> PostProcessor::fromJson(const Json &json) {
  PostProcessor processor;
  if (json.is_null())
    return processor;
  std::string type = typeOf(json);
  if (type == "ByteLevel")
    return processor;
  if (type == "TemplateProcessing") {
    ASSIGN_OR_RETURN(processor.template_, singleTemplate(json));
    return processor;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    ASSIGN_OR_RETURN(processor.template_, wrapTemplate(json, "post_processor " + type));
    return processor;
  }
  if (type == "Sequence") {
    ASSIGN_OR_RETURN(const Json *list, arrayField(json, "processors", "post_processor Sequence"));
    bool wrapped = false;
    for (const Json &item : *list) {
      ASSIGN_OR_RETURN(PostProcessor part, fromJson(item));
      if (part.template_ == std::vector<int32_t>{kSequence})
        continue; // ByteLevel or null
      // After a template HF holds several encodings, which a second template
      // would treat as a pair: not something a single sequence can mean.
      if (wrapped)
        return unsupported("post_processor option", "Sequence with two templates");
      processor.template_ = part.template_;
      wrapped = true;
    }
    return processor;
  }
  return unsupported("post_processor", type.empty() ? json.dump().substr(0, 80) : type);
}

std::vector<int32_t> PostProcessor::apply(const std::vector<int32_t> &ids) const {
  std::vector<int32_t> out;
  out.reserve(ids.size() + template_.size());
  for (int32_t piece : template_) {
    if (piece == kSequence)
      out.insert(out.end(), ids.begin(), ids.end());
    else
      out.push_back(piece);
  }
  return out;
}

} // namespace infer::tokenizer
