//===- Normalizer.cpp - tokenizer.json normalizers ------------------------===//
#include "runtime/tokenizer/Normalizer.h"

#include "runtime/tokenizer/Regex.h"
#include "runtime/tokenizer/Utf8.h"

#include <utf8proc.h>

#include <cstdlib>
#include <vector>

namespace infer::tokenizer {
namespace {

bool isAscii(std::string_view text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80)
      return false;
  return true;
}

class SequenceNormalizer : public Normalizer {
public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts)
      : parts_(std::move(parts)) {}
  Status normalize(std::string &text, bool &originKept) const override {
    for (const auto &part : parts_)
      RETURN_IF_ERROR(part->normalize(text, originKept));
    return okStatus();
  }

private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

/// NFC / NFD / NFKC / NFKD through utf8proc, except that the characters HF's
/// older normalization tables lack pass through as they are (they have no
/// decomposition and combining class 0 there, so nothing composes or
/// reorders across them: normalizing the text between them is the same).
class UnicodeNormalizer : public Normalizer {
public:
  explicit UnicodeNormalizer(int options) : options_(options) {}
  Status normalize(std::string &text, bool &) const override {
    if (isAscii(text)) // every form leaves ASCII alone
      return okStatus();
    std::string out;
    out.reserve(text.size());
    size_t segment = 0;
    for (size_t pos = 0; pos < text.size();) {
      size_t start = pos;
      if (!isNormalizationFrozen(nextCodePoint(text, pos)))
        continue;
      RETURN_IF_ERROR(append(out, std::string_view(text).substr(segment, start - segment)));
      out.append(text, start, pos - start);
      segment = pos;
    }
    RETURN_IF_ERROR(append(out, std::string_view(text).substr(segment)));
    text.swap(out);
    return okStatus();
  }

private:
  Status append(std::string &out, std::string_view segment) const {
    if (segment.empty())
      return okStatus();
    utf8proc_uint8_t *result = nullptr;
    utf8proc_ssize_t length =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t *>(segment.data()),
                     static_cast<utf8proc_ssize_t>(segment.size()), &result,
                     static_cast<utf8proc_option_t>(options_));
    if (length < 0)
      return internalError(std::string("utf8proc_map: ") + utf8proc_errmsg(length));
    out.append(reinterpret_cast<const char *>(result), static_cast<size_t>(length));
    std::free(result);
    return okStatus();
  }
  int options_;
};

class PrependNormalizer : public Normalizer {
public:
  explicit PrependNormalizer(std::string prefix) : prefix_(std::move(prefix)) {}
  Status normalize(std::string &text, bool &) const override {
    if (!text.empty())
      text.insert(0, prefix_);
    return okStatus();
  }

private:
  std::string prefix_;
};

class ReplaceNormalizer : public Normalizer {
public:
  ReplaceNormalizer(std::unique_ptr<Regex> regex, std::string content)
      : regex_(std::move(regex)), content_(std::move(content)) {}
  Status normalize(std::string &text, bool &originKept) const override {
    std::vector<Span> matches;
    RETURN_IF_ERROR(regex_->findAll(text, matches));
    if (matches.empty())
      return okStatus();
    const Span &first = matches.front();
    // A replacement at the start inherits the alignment of the last character
    // it replaces (none when the content is empty).
    if (first.start == 0 && first.end > 0 &&
        (content_.empty() || utf8Length(static_cast<unsigned char>(text[0])) != first.end))
      originKept = false;
    replaceMatches(text, matches, content_);
    return okStatus();
  }

private:
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

class LowercaseNormalizer : public Normalizer {
public:
  Status normalize(std::string &text, bool &) const override {
    if (isAscii(text)) {
      for (char &c : text)
        if (c >= 'A' && c <= 'Z')
          c = static_cast<char>(c + 32);
      return okStatus();
    }
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();)
      appendLowercase(out, nextCodePoint(text, pos));
    text.swap(out);
    return okStatus();
  }
};

/// Keeps the characters `keep` accepts (HF's NormalizedString::filter), then
/// maps them through `map`.
template <typename Keep, typename Map>
void filterMap(std::string &text, bool &originKept, Keep keep, Map map) {
  std::string out;
  out.reserve(text.size());
  bool leadingRemoved = false;
  for (size_t pos = 0; pos < text.size();) {
    char32_t cp = nextCodePoint(text, pos);
    if (keep(cp))
      appendUtf8(out, map(cp));
    else if (out.empty())
      leadingRemoved = true;
  }
  if (leadingRemoved && !out.empty())
    originKept = false;
  text.swap(out);
}

class StripNormalizer : public Normalizer {
public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  Status normalize(std::string &text, bool &originKept) const override {
    size_t begin = 0, end = text.size();
    if (right_) {
      while (end > 0) {
        size_t start;
        if (!isWhiteSpace(lastCodePoint(std::string_view(text).substr(0, end), &start)))
          break;
        end = start;
      }
    }
    if (left_) {
      while (begin < end) {
        size_t next = begin;
        if (!isWhiteSpace(nextCodePoint(text, next)))
          break;
        begin = next;
      }
    }
    if (begin > 0 && begin < end)
      originKept = false;
    text = text.substr(begin, end - begin);
    return okStatus();
  }

private:
  bool left_, right_;
};

class StripAccentsNormalizer : public Normalizer {
public:
  Status normalize(std::string &text, bool &originKept) const override {
    if (!isAscii(text))
      filterMap(
          text, originKept, [](char32_t cp) { return !isCombiningMark(cp); },
          [](char32_t cp) { return cp; });
    return okStatus();
  }
};

/// SentencePiece's NMT normalization: drops control characters, maps other
/// spaces to ' '.
class NmtNormalizer : public Normalizer {
public:
  Status normalize(std::string &text, bool &originKept) const override {
    auto keep = [](char32_t c) {
      return !((c >= 0x1 && c <= 0x8) || c == 0xB || (c >= 0xE && c <= 0x1F) || c == 0x7F ||
               c == 0x8F || c == 0x9F);
    };
    auto map = [](char32_t c) -> char32_t {
      switch (c) {
      case 0x9:
      case 0xA:
      case 0xC:
      case 0xD:
      case 0x1680:
      case 0x2028:
      case 0x2029:
      case 0x2581:
      case 0xFEFF:
      case 0xFFFD:
        return ' ';
      default:
        return c >= 0x200B && c <= 0x200F ? ' ' : c;
      }
    };
    filterMap(text, originKept, keep, map);
    return okStatus();
  }
};

} // namespace

StatusOr<std::unique_ptr<Normalizer>> parseNormalizer(const Json &json) {
  if (json.is_null())
    return std::unique_ptr<Normalizer>();
  std::string type = typeOf(json);
  std::string where = "normalizer " + type;
  if (type == "Sequence") {
    ASSIGN_OR_RETURN(auto parts,
                     sequenceParts<Normalizer>(json, "normalizers", where, parseNormalizer));
    return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(parts)));
  }
  if (type == "NFC")
    return std::unique_ptr<Normalizer>(new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (type == "NFD")
    return std::unique_ptr<Normalizer>(
        new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE));
  if (type == "NFKC")
    return std::unique_ptr<Normalizer>(
        new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT));
  if (type == "NFKD")
    return std::unique_ptr<Normalizer>(
        new UnicodeNormalizer(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT));
  if (type == "Prepend") {
    ASSIGN_OR_RETURN(std::string prefix, stringField(json, "prepend", where));
    return std::unique_ptr<Normalizer>(new PrependNormalizer(std::move(prefix)));
  }
  if (type == "Replace") {
    ASSIGN_OR_RETURN(PatternSpec pattern, patternField(json, "pattern", where));
    ASSIGN_OR_RETURN(std::string content, stringField(json, "content", where));
    ASSIGN_OR_RETURN(auto regex, compileRegex(where, pattern.text, pattern.literal));
    return std::unique_ptr<Normalizer>(new ReplaceNormalizer(std::move(regex), std::move(content)));
  }
  if (type == "Lowercase")
    return std::unique_ptr<Normalizer>(new LowercaseNormalizer());
  if (type == "Strip") {
    ASSIGN_OR_RETURN(bool left, boolField(json, "strip_left", where, false));
    ASSIGN_OR_RETURN(bool right, boolField(json, "strip_right", where, false));
    return std::unique_ptr<Normalizer>(new StripNormalizer(left, right));
  }
  if (type == "StripAccents")
    return std::unique_ptr<Normalizer>(new StripAccentsNormalizer());
  if (type == "Nmt")
    return std::unique_ptr<Normalizer>(new NmtNormalizer());
  return unsupported("normalizer", type.empty() ? json.dump().substr(0, 80) : type);
}

} // namespace infer::tokenizer
