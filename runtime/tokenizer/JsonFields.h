//===- JsonFields.h - typed reads of tokenizer.json fields ------*- C++ -*-===//
//
// nlohmann::json throws on a type mismatch; tokenizer.json is user input, so
// every read goes through these, which return the error as a value naming the
// component and the field.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_JSONFIELDS_H
#define INFER_RUNTIME_TOKENIZER_JSONFIELDS_H

#include "runtime/base/Status.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace infer::tokenizer {

using Json = nlohmann::json;

/// `json["type"]` when it is a string, else "".
std::string typeOf(const Json &json);

/// A missing or null field, or one of the wrong type, is an error unless a
/// default is given (then missing or null yields it).
StatusOr<std::string> stringField(const Json &object, const char *key, std::string_view where,
                                  std::optional<std::string> fallback = std::nullopt);
StatusOr<bool> boolField(const Json &object, const char *key, std::string_view where,
                         std::optional<bool> fallback = std::nullopt);
StatusOr<int64_t> intField(const Json &object, const char *key, std::string_view where,
                           std::optional<int64_t> fallback = std::nullopt);
/// An array field (required).
StatusOr<const Json *> arrayField(const Json &object, const char *key, std::string_view where);
/// A string field that may be missing or null.
StatusOr<std::optional<std::string>> optionalStringField(const Json &object, const char *key,
                                                         std::string_view where);

/// A string that must hold exactly one character (Rust `char` fields).
StatusOr<char32_t> charField(const Json &object, const char *key, std::string_view where,
                             std::optional<char32_t> fallback = std::nullopt);

/// An HF pattern object, `{"String": s}` or `{"Regex": r}`.
struct PatternSpec {
  std::string text;
  bool literal = true;
};
StatusOr<PatternSpec> patternField(const Json &object, const char *key, std::string_view where);

enum class PrependScheme { kAlways, kFirst, kNever };
/// Metaspace's `prepend_scheme` ("always" when missing or null), as both its
/// pre-tokenizer and its decoder read it; refuses legacy files whose
/// `add_prefix_space` false does not come with prepend_scheme "never".
StatusOr<PrependScheme> prependSchemeField(const Json &object, std::string_view where);

/// A Sequence's parts: the components listed in array field `key`, each read
/// by `parsePart` (the ones it reads as absent, from a `null` entry, are left
/// out).
template <typename Component, typename ParsePart>
StatusOr<std::vector<std::unique_ptr<Component>>>
sequenceParts(const Json &object, const char *key, std::string_view where, ParsePart parsePart) {
  ASSIGN_OR_RETURN(const Json *list, arrayField(object, key, where));
  std::vector<std::unique_ptr<Component>> parts;
  for (const Json &item : *list) {
    ASSIGN_OR_RETURN(std::unique_ptr<Component> part, parsePart(item));
    if (part)
      parts.push_back(std::move(part));
  }
  return std::move(parts);
}

/// The error for a component this library does not implement.
Status unsupported(std::string_view what, std::string_view detail);

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_JSONFIELDS_H
