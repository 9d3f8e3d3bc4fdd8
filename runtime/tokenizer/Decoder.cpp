//===- Decoder.cpp - tokenizer.json decoders ------------------------------===//
#include "runtime/tokenizer/Decoder.h"

#include "runtime/tokenizer/ByteLevel.h"
#include "runtime/tokenizer/Regex.h"
#include "runtime/tokenizer/Utf8.h"

namespace infer::tokenizer {
namespace {

class SequenceDecoder : public Decoder {
public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> parts)
      : parts_(std::move(parts)) {}
  Status decodeChain(std::vector<std::string> &tokens) const override {
    for (const auto &part : parts_)
      RETURN_IF_ERROR(part->decodeChain(tokens));
    return okStatus();
  }
  bool decodesByteRuns() const override {
    for (const auto &part : parts_)
      if (part->decodesByteRuns())
        return true;
    return false;
  }

private:
  std::vector<std::unique_ptr<Decoder>> parts_;
};

/// Maps every token's characters back to bytes (a token with a character
/// outside the byte alphabet keeps its own UTF-8), then decodes lossily.
class ByteLevelDecoder : public Decoder {
public:
  Status decodeChain(std::vector<std::string> &tokens) const override {
    std::string bytes;
    for (const std::string &token : tokens) {
      size_t mark = bytes.size();
      bool mapped = true;
      for (size_t pos = 0; pos < token.size() && mapped;) {
        int b = byteLevelByte(nextCodePoint(token, pos));
        if (b < 0)
          mapped = false;
        else
          bytes.push_back(static_cast<char>(b));
      }
      if (!mapped) {
        bytes.resize(mark);
        bytes += token;
      }
    }
    std::string text;
    appendLossyUtf8(text, bytes);
    tokens.assign(1, std::move(text));
    return okStatus();
  }
};

class ReplaceDecoder : public Decoder {
public:
  ReplaceDecoder(std::unique_ptr<Regex> regex, std::string content)
      : regex_(std::move(regex)), content_(std::move(content)) {}
  Status decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<Span> matches;
    for (std::string &token : tokens) {
      RETURN_IF_ERROR(regex_->findAll(token, matches));
      if (!matches.empty())
        replaceMatches(token, matches, content_);
    }
    return okStatus();
  }

private:
  std::unique_ptr<Regex> regex_;
  std::string content_;
};

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

class ByteFallbackDecoder : public Decoder {
public:
  Status decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string pending; // bytes of consecutive <0xXX> tokens
    auto flush = [&] {
      if (pending.empty())
        return;
      if (isValidUtf8(pending))
        out.push_back(pending);
      else
        for (size_t i = 0; i < pending.size(); ++i)
          out.emplace_back(kReplacementChar);
      pending.clear();
    };
    for (std::string &token : tokens) {
      int b = fallbackByte(token);
      if (b >= 0) {
        pending.push_back(static_cast<char>(b));
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens.swap(out);
    return okStatus();
  }
  bool decodesByteRuns() const override { return true; }
};

class FuseDecoder : public Decoder {
public:
  Status decodeChain(std::vector<std::string> &tokens) const override {
    std::string joined;
    for (const std::string &token : tokens)
      joined += token;
    tokens.assign(1, std::move(joined));
    return okStatus();
  }
};

/// Removes up to `start` leading and `stop` trailing `content` characters
/// from every token.
class StripDecoder : public Decoder {
public:
  StripDecoder(char32_t content, int64_t start, int64_t stop)
      : content_(content), start_(start), stop_(stop) {}
  Status decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<size_t> offsets; // character starts, then the end
    for (std::string &token : tokens) {
      offsets.clear();
      std::vector<char32_t> chars;
      for (size_t pos = 0; pos < token.size();) {
        offsets.push_back(pos);
        chars.push_back(nextCodePoint(token, pos));
      }
      offsets.push_back(token.size());
      size_t n = chars.size(), startCut = 0, stopCut = n;
      for (size_t i = 0; i < n && static_cast<int64_t>(i) < start_ && chars[i] == content_; ++i)
        startCut = i + 1;
      for (size_t i = 0; i < n && static_cast<int64_t>(i) < stop_ && chars[n - 1 - i] == content_;
           ++i)
        stopCut = n - 1 - i;
      if (stopCut < startCut)
        stopCut = startCut;
      token = token.substr(offsets[startCut], offsets[stopCut] - offsets[startCut]);
    }
    return okStatus();
  }

private:
  char32_t content_;
  int64_t start_, stop_;
};

/// The replacement character becomes a space, except in the first token
/// when a prefix was prepended (there every one is dropped, as HF).
class MetaspaceDecoder : public Decoder {
public:
  MetaspaceDecoder(char32_t replacement, bool prepends)
      : replacement_(replacement), prepends_(prepends) {}
  Status decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string out;
      for (size_t pos = 0; pos < tokens[i].size();) {
        char32_t cp = nextCodePoint(tokens[i], pos);
        if (cp != replacement_)
          appendUtf8(out, cp);
        else if (i != 0 || !prepends_)
          out.push_back(' ');
      }
      tokens[i].swap(out);
    }
    return okStatus();
  }

private:
  char32_t replacement_;
  bool prepends_;
};

/// BPEDecoder: the end-of-word suffix becomes a space (nothing at the end).
class BpeSuffixDecoder : public Decoder {
public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  Status decodeChain(std::vector<std::string> &tokens) const override {
    if (suffix_.empty())
      return okStatus();
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string_view space = i + 1 == tokens.size() ? "" : " ";
      std::string out;
      std::string &token = tokens[i];
      size_t last = 0;
      for (size_t at = token.find(suffix_); at != std::string::npos;
           at = token.find(suffix_, at + suffix_.size())) {
        out.append(token, last, at - last);
        out += space;
        last = at + suffix_.size();
      }
      out.append(token, last, std::string::npos);
      token.swap(out);
    }
    return okStatus();
  }

private:
  std::string suffix_;
};

} // namespace

// Rust's u8::from_str_radix on "XX", which also takes "+X".
int fallbackByte(const std::string &token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>')
    return -1;
  if (token[3] == '+')
    return hexValue(token[4]);
  int hi = hexValue(token[3]), lo = hexValue(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

StatusOr<std::unique_ptr<Decoder>> parseDecoder(const Json &json) {
  if (json.is_null())
    return std::unique_ptr<Decoder>();
  std::string type = typeOf(json);
  std::string where = "decoder " + type;
  if (type == "Sequence") {
    ASSIGN_OR_RETURN(auto parts, sequenceParts<Decoder>(json, "decoders", where, parseDecoder));
    return std::unique_ptr<Decoder>(new SequenceDecoder(std::move(parts)));
  }
  if (type == "ByteLevel")
    return std::unique_ptr<Decoder>(new ByteLevelDecoder());
  if (type == "Replace") {
    ASSIGN_OR_RETURN(PatternSpec pattern, patternField(json, "pattern", where));
    ASSIGN_OR_RETURN(std::string content, stringField(json, "content", where));
    ASSIGN_OR_RETURN(auto regex, compileRegex(where, pattern.text, pattern.literal));
    return std::unique_ptr<Decoder>(new ReplaceDecoder(std::move(regex), std::move(content)));
  }
  if (type == "ByteFallback")
    return std::unique_ptr<Decoder>(new ByteFallbackDecoder());
  if (type == "Fuse")
    return std::unique_ptr<Decoder>(new FuseDecoder());
  if (type == "Strip") {
    ASSIGN_OR_RETURN(char32_t content, charField(json, "content", where));
    ASSIGN_OR_RETURN(int64_t start, intField(json, "start", where));
    ASSIGN_OR_RETURN(int64_t stop, intField(json, "stop", where));
    return std::unique_ptr<Decoder>(new StripDecoder(content, start, stop));
  }
  if (type == "Metaspace") {
    ASSIGN_OR_RETURN(char32_t replacement, charField(json, "replacement", where));
    ASSIGN_OR_RETURN(PrependScheme scheme, prependSchemeField(json, where));
    return std::unique_ptr<Decoder>(
        new MetaspaceDecoder(replacement, scheme != PrependScheme::kNever));
  }
  if (type == "BPEDecoder") {
    ASSIGN_OR_RETURN(std::string suffix, stringField(json, "suffix", where, "</w>"));
    return std::unique_ptr<Decoder>(new BpeSuffixDecoder(std::move(suffix)));
  }
  return unsupported("decoder", type.empty() ? json.dump().substr(0, 80) : type);
}

} // namespace infer::tokenizer
