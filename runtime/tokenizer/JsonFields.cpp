//===- JsonFields.cpp - typed reads of tokenizer.json fields --------------===//
#include "runtime/tokenizer/JsonFields.h"

#include "runtime/tokenizer/Utf8.h"

namespace infer::tokenizer {
namespace {

/// The field, or nullptr when it is missing or null.
const Json *present(const Json &object, const char *key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  if (it == object.end() || it->is_null())
    return nullptr;
  return &*it;
}

Status missingField(std::string_view where, const char *key) {
  return invalidArgumentError(std::string(where) + ": missing field '" + key + "'");
}

Status wrongType(std::string_view where, const char *key, const char *expected) {
  return invalidArgumentError(std::string(where) + ": field '" + key + "' must be " + expected);
}

/// The field as a T when `hasType` accepts it; missing or null yields
/// `fallback` if there is one.
template <typename T, typename HasType>
StatusOr<T> scalarField(const Json &object, const char *key, std::string_view where,
                        std::optional<T> fallback, HasType hasType, const char *expected) {
  const Json *value = present(object, key);
  if (!value) {
    if (fallback)
      return std::move(*fallback);
    return missingField(where, key);
  }
  if (!hasType(*value))
    return wrongType(where, key, expected);
  return value->get<T>();
}

} // namespace

std::string typeOf(const Json &json) {
  const Json *type = present(json, "type");
  return type && type->is_string() ? type->get<std::string>() : std::string();
}

StatusOr<std::string> stringField(const Json &object, const char *key, std::string_view where,
                                  std::optional<std::string> fallback) {
  return scalarField(
      object, key, where, std::move(fallback), [](const Json &v) { return v.is_string(); },
      "a string");
}

StatusOr<bool> boolField(const Json &object, const char *key, std::string_view where,
                         std::optional<bool> fallback) {
  return scalarField(
      object, key, where, fallback, [](const Json &v) { return v.is_boolean(); }, "true or false");
}

StatusOr<int64_t> intField(const Json &object, const char *key, std::string_view where,
                           std::optional<int64_t> fallback) {
  return scalarField(
      object, key, where, fallback, [](const Json &v) { return v.is_number_integer(); },
      "an integer");
}

StatusOr<const Json *> arrayField(const Json &object, const char *key, std::string_view where) {
  const Json *value = present(object, key);
  if (!value)
    return missingField(where, key);
  if (!value->is_array())
    return wrongType(where, key, "an array");
  return value;
}

StatusOr<std::optional<std::string>> optionalStringField(const Json &object, const char *key,
                                                         std::string_view where) {
  const Json *value = present(object, key);
  if (!value)
    return std::optional<std::string>();
  if (!value->is_string())
    return wrongType(where, key, "a string or null");
  return std::optional<std::string>(value->get<std::string>());
}

StatusOr<char32_t> charField(const Json &object, const char *key, std::string_view where,
                             std::optional<char32_t> fallback) {
  const Json *value = present(object, key);
  if (!value && fallback)
    return *fallback;
  ASSIGN_OR_RETURN(std::string text, stringField(object, key, where));
  if (text.empty() || utf8Length(static_cast<unsigned char>(text[0])) != text.size())
    return wrongType(where, key, "a one-character string");
  return firstCodePoint(text);
}

StatusOr<PatternSpec> patternField(const Json &object, const char *key, std::string_view where) {
  const Json *value = present(object, key);
  if (!value || !value->is_object() || value->size() != 1)
    return wrongType(where, key, "{\"String\": ...} or {\"Regex\": ...}");
  PatternSpec spec;
  if (value->contains("String")) {
    ASSIGN_OR_RETURN(spec.text, stringField(*value, "String", where));
    spec.literal = true;
  } else if (value->contains("Regex")) {
    ASSIGN_OR_RETURN(spec.text, stringField(*value, "Regex", where));
    spec.literal = false;
  } else {
    return wrongType(where, key, "{\"String\": ...} or {\"Regex\": ...}");
  }
  return spec;
}

StatusOr<PrependScheme> prependSchemeField(const Json &object, std::string_view where) {
  ASSIGN_OR_RETURN(std::string name, stringField(object, "prepend_scheme", where, "always"));
  PrependScheme scheme;
  if (name == "always")
    scheme = PrependScheme::kAlways;
  else if (name == "first")
    scheme = PrependScheme::kFirst;
  else if (name == "never")
    scheme = PrependScheme::kNever;
  else
    return invalidArgumentError(std::string(where) + ": unknown prepend_scheme '" + name + "'");
  const Json *addPrefixSpace = present(object, "add_prefix_space");
  if (addPrefixSpace && addPrefixSpace->is_boolean() && !addPrefixSpace->get<bool>() &&
      scheme != PrependScheme::kNever)
    return invalidArgumentError(std::string(where) +
                                ": add_prefix_space does not match prepend_scheme");
  return scheme;
}

Status unsupported(std::string_view what, std::string_view detail) {
  return unimplementedError("unsupported " + std::string(what) + ": " + std::string(detail));
}

} // namespace infer::tokenizer
