//===- PreTokenizer.cpp - tokenizer.json pre-tokenizers -------------------===//
#include "runtime/tokenizer/PreTokenizer.h"

#include "runtime/tokenizer/ByteLevel.h"
#include "runtime/tokenizer/Utf8.h"

#include <algorithm>

namespace infer::tokenizer {

void splitSegments(const std::vector<Span> &matches, size_t length, SplitBehavior behavior,
                   bool invert, std::vector<FlaggedSpan> &parts, std::vector<Span> &segments) {
  // HF's find_matches: the whole string as gaps and matches, in order.
  parts.clear();
  segments.clear();
  if (length == 0) {
    parts.push_back({0, 0, false});
  } else {
    size_t prev = 0;
    for (const Span &m : matches) {
      if (prev != m.start)
        parts.push_back({prev, m.start, false});
      parts.push_back({m.start, m.end, true});
      prev = m.end;
    }
    if (prev != length)
      parts.push_back({prev, length, false});
  }
  if (invert)
    for (FlaggedSpan &part : parts)
      part.match = !part.match;

  // The folds of HF's NormalizedString::split, case by case.
  bool previousMatch = false;
  switch (behavior) {
  case SplitBehavior::kIsolated:
    for (const FlaggedSpan &part : parts)
      segments.push_back({part.start, part.end});
    break;
  case SplitBehavior::kRemoved:
    for (const FlaggedSpan &part : parts)
      if (!part.match)
        segments.push_back({part.start, part.end});
    break;
  case SplitBehavior::kContiguous:
    for (const FlaggedSpan &part : parts) {
      if (part.match == previousMatch && !segments.empty())
        segments.back().end = part.end;
      else
        segments.push_back({part.start, part.end});
      previousMatch = part.match;
    }
    break;
  case SplitBehavior::kMergedWithPrevious:
    for (const FlaggedSpan &part : parts) {
      if (part.match && !previousMatch && !segments.empty())
        segments.back().end = part.end;
      else
        segments.push_back({part.start, part.end});
      previousMatch = part.match;
    }
    break;
  case SplitBehavior::kMergedWithNext:
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if (it->match && !previousMatch && !segments.empty())
        segments.back().start = it->start;
      else
        segments.push_back({it->start, it->end});
      previousMatch = it->match;
    }
    std::reverse(segments.begin(), segments.end());
    break;
  }
  segments.erase(std::remove_if(segments.begin(), segments.end(),
                                [](const Span &s) { return s.start == s.end; }),
                 segments.end());
}

namespace {

/// One span per character of `text` that `predicate` accepts.
template <typename Predicate>
void characterMatches(std::string_view text, Predicate predicate, std::vector<Span> &matches) {
  matches.clear();
  for (size_t pos = 0; pos < text.size();) {
    size_t start = pos;
    if (predicate(nextCodePoint(text, pos)))
      matches.push_back({start, pos});
  }
}

/// Emits `segments` of `text` (the first one keeps `atOrigin` if at 0).
Status emitSegments(std::string_view text, const std::vector<Span> &segments, bool atOrigin,
                    PieceSink sink) {
  for (const Span &s : segments)
    RETURN_IF_ERROR(sink(Piece{text.substr(s.start, s.end - s.start), atOrigin && s.start == 0}));
  return okStatus();
}

class SequencePreTokenizer : public PreTokenizer {
public:
  SequencePreTokenizer(int slot, std::vector<std::unique_ptr<PreTokenizer>> parts)
      : PreTokenizer(slot), parts_(std::move(parts)) {}
  Status split(const Piece &piece, PreTokenizeScratch &scratch, PieceSink sink) const override {
    return runFrom(0, piece, scratch, sink);
  }

private:
  Status runFrom(size_t stage, const Piece &piece, PreTokenizeScratch &scratch,
                 PieceSink sink) const {
    if (stage == parts_.size())
      return sink(piece);
    auto next = [&](const Piece &sub) { return runFrom(stage + 1, sub, scratch, sink); };
    return parts_[stage]->split(piece, scratch, next);
  }
  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

class ByteLevelPreTokenizer : public PreTokenizer {
public:
  ByteLevelPreTokenizer(int slot, bool addPrefixSpace, std::unique_ptr<Regex> regex)
      : PreTokenizer(slot), addPrefixSpace_(addPrefixSpace), regex_(std::move(regex)) {}
  Status split(const Piece &piece, PreTokenizeScratch &scratch, PieceSink sink) const override {
    PreTokenizeScratch::Slot &s = slot(scratch);
    std::string_view text = piece.text;
    if (addPrefixSpace_ && text[0] != ' ') {
      s.text.assign(1, ' ');
      s.text.append(text);
      text = s.text;
    }
    auto emit = [&](std::string_view sub, bool atOrigin) {
      s.mapped.clear();
      appendByteLevel(s.mapped, sub);
      return sink(Piece{s.mapped, atOrigin});
    };
    if (!regex_)
      return emit(text, piece.atOrigin);
    RETURN_IF_ERROR(regex_->findAll(text, s.matches));
    splitSegments(s.matches, text.size(), SplitBehavior::kIsolated, false, s.parts, s.segments);
    for (const Span &seg : s.segments)
      RETURN_IF_ERROR(
          emit(text.substr(seg.start, seg.end - seg.start), piece.atOrigin && seg.start == 0));
    return okStatus();
  }

private:
  bool addPrefixSpace_;
  std::unique_ptr<Regex> regex_; // null: use_regex false
};

class SplitPreTokenizer : public PreTokenizer {
public:
  SplitPreTokenizer(int slot, std::unique_ptr<Regex> regex, SplitBehavior behavior, bool invert)
      : PreTokenizer(slot), regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  Status split(const Piece &piece, PreTokenizeScratch &scratch, PieceSink sink) const override {
    PreTokenizeScratch::Slot &s = slot(scratch);
    RETURN_IF_ERROR(regex_->findAll(piece.text, s.matches));
    splitSegments(s.matches, piece.text.size(), behavior_, invert_, s.parts, s.segments);
    return emitSegments(piece.text, s.segments, piece.atOrigin, sink);
  }

private:
  std::unique_ptr<Regex> regex_;
  SplitBehavior behavior_;
  bool invert_;
};

class MetaspacePreTokenizer : public PreTokenizer {
public:
  MetaspacePreTokenizer(int slot, char32_t replacement, PrependScheme scheme, bool split)
      : PreTokenizer(slot), replacement_(replacement), scheme_(scheme), split_(split) {
    appendUtf8(replacementUtf8_, replacement);
  }
  Status split(const Piece &piece, PreTokenizeScratch &scratch, PieceSink sink) const override {
    PreTokenizeScratch::Slot &s = slot(scratch);
    s.text.clear();
    for (char c : piece.text) {
      if (c == ' ')
        s.text += replacementUtf8_;
      else
        s.text.push_back(c);
    }
    bool prepend = scheme_ == PrependScheme::kAlways ||
                   (scheme_ == PrependScheme::kFirst && piece.atOrigin);
    if (prepend && s.text.compare(0, replacementUtf8_.size(), replacementUtf8_) != 0)
      s.text.insert(0, replacementUtf8_);
    if (!split_)
      return sink(Piece{s.text, piece.atOrigin});
    characterMatches(
        s.text, [&](char32_t cp) { return cp == replacement_; }, s.matches);
    splitSegments(s.matches, s.text.size(), SplitBehavior::kMergedWithNext, false, s.parts,
                  s.segments);
    return emitSegments(s.text, s.segments, piece.atOrigin, sink);
  }

private:
  char32_t replacement_;
  std::string replacementUtf8_;
  PrependScheme scheme_;
  bool split_;
};

/// Digits, Punctuation, WhitespaceSplit, CharDelimiterSplit: a split on a
/// character class.
template <typename Predicate>
class CharacterSplitPreTokenizer : public PreTokenizer {
public:
  CharacterSplitPreTokenizer(int slot, Predicate predicate, SplitBehavior behavior)
      : PreTokenizer(slot), predicate_(predicate), behavior_(behavior) {}
  Status split(const Piece &piece, PreTokenizeScratch &scratch, PieceSink sink) const override {
    PreTokenizeScratch::Slot &s = slot(scratch);
    characterMatches(piece.text, predicate_, s.matches);
    splitSegments(s.matches, piece.text.size(), behavior_, false, s.parts, s.segments);
    return emitSegments(piece.text, s.segments, piece.atOrigin, sink);
  }

private:
  Predicate predicate_;
  SplitBehavior behavior_;
};

template <typename Predicate>
std::unique_ptr<PreTokenizer> characterSplit(int slot, Predicate predicate,
                                             SplitBehavior behavior) {
  return std::make_unique<CharacterSplitPreTokenizer<Predicate>>(slot, predicate, behavior);
}

/// Rust regex `\w+|[^\w\s]+`, keeping the matches (HF's Whitespace).
class WhitespacePreTokenizer : public PreTokenizer {
public:
  using PreTokenizer::PreTokenizer;
  Status split(const Piece &piece, PreTokenizeScratch &, PieceSink sink) const override {
    std::string_view text = piece.text;
    size_t runStart = 0;
    int runKind = 0; // 0: whitespace, 1: word, 2: other
    auto flush = [&](size_t end) -> Status {
      if (runKind != 0 && end > runStart)
        return sink(Piece{text.substr(runStart, end - runStart), piece.atOrigin && runStart == 0});
      return okStatus();
    };
    for (size_t pos = 0; pos < text.size();) {
      size_t start = pos;
      char32_t cp = nextCodePoint(text, pos);
      int kind = isRustWordChar(cp) ? 1 : isWhiteSpace(cp) ? 0 : 2;
      if (kind != runKind) {
        RETURN_IF_ERROR(flush(start));
        runStart = start;
        runKind = kind;
      }
    }
    return flush(text.size());
  }
};

StatusOr<SplitBehavior> parseBehavior(const Json &json, std::string_view where,
                                      std::optional<std::string> fallback = std::nullopt) {
  ASSIGN_OR_RETURN(std::string name, stringField(json, "behavior", where, fallback));
  if (name == "Removed")
    return SplitBehavior::kRemoved;
  if (name == "Isolated")
    return SplitBehavior::kIsolated;
  if (name == "MergedWithPrevious")
    return SplitBehavior::kMergedWithPrevious;
  if (name == "MergedWithNext")
    return SplitBehavior::kMergedWithNext;
  if (name == "Contiguous")
    return SplitBehavior::kContiguous;
  return invalidArgumentError(std::string(where) + ": unknown behavior '" + name + "'");
}

} // namespace

StatusOr<std::unique_ptr<PreTokenizer>> parsePreTokenizer(const Json &json, int &slots) {
  if (json.is_null())
    return std::unique_ptr<PreTokenizer>();
  std::string type = typeOf(json);
  std::string where = "pre_tokenizer " + type;
  int slot = slots++;
  if (type == "Sequence") {
    auto parsePart = [&](const Json &item) { return parsePreTokenizer(item, slots); };
    ASSIGN_OR_RETURN(auto parts,
                     sequenceParts<PreTokenizer>(json, "pretokenizers", where, parsePart));
    return std::unique_ptr<PreTokenizer>(new SequencePreTokenizer(slot, std::move(parts)));
  }
  if (type == "ByteLevel") {
    ASSIGN_OR_RETURN(bool addPrefixSpace, boolField(json, "add_prefix_space", where, true));
    ASSIGN_OR_RETURN(bool useRegex, boolField(json, "use_regex", where, true));
    std::unique_ptr<Regex> regex;
    if (useRegex) {
      ASSIGN_OR_RETURN(regex, compileRegex(where, kGpt2Pattern, false));
    }
    return std::unique_ptr<PreTokenizer>(
        new ByteLevelPreTokenizer(slot, addPrefixSpace, std::move(regex)));
  }
  if (type == "Split") {
    ASSIGN_OR_RETURN(PatternSpec pattern, patternField(json, "pattern", where));
    ASSIGN_OR_RETURN(SplitBehavior behavior, parseBehavior(json, where));
    ASSIGN_OR_RETURN(bool invert, boolField(json, "invert", where, false));
    ASSIGN_OR_RETURN(auto regex, compileRegex(where, pattern.text, pattern.literal));
    return std::unique_ptr<PreTokenizer>(
        new SplitPreTokenizer(slot, std::move(regex), behavior, invert));
  }
  if (type == "Metaspace") {
    ASSIGN_OR_RETURN(char32_t replacement, charField(json, "replacement", where));
    ASSIGN_OR_RETURN(PrependScheme scheme, prependSchemeField(json, where));
    ASSIGN_OR_RETURN(bool split, boolField(json, "split", where, true));
    return std::unique_ptr<PreTokenizer>(
        new MetaspacePreTokenizer(slot, replacement, scheme, split));
  }
  if (type == "Digits") {
    ASSIGN_OR_RETURN(bool individual, boolField(json, "individual_digits", where, false));
    return characterSplit(slot, isNumeric,
                          individual ? SplitBehavior::kIsolated : SplitBehavior::kContiguous);
  }
  if (type == "Punctuation") {
    ASSIGN_OR_RETURN(SplitBehavior behavior, parseBehavior(json, where, "Isolated"));
    return characterSplit(slot, isPunctuation, behavior);
  }
  if (type == "WhitespaceSplit")
    return characterSplit(slot, isWhiteSpace, SplitBehavior::kRemoved);
  if (type == "Whitespace")
    return std::unique_ptr<PreTokenizer>(new WhitespacePreTokenizer(slot));
  if (type == "CharDelimiterSplit") {
    ASSIGN_OR_RETURN(char32_t delimiter, charField(json, "delimiter", where));
    return characterSplit(
        slot, [delimiter](char32_t cp) { return cp == delimiter; }, SplitBehavior::kRemoved);
  }
  return unsupported("pre_tokenizer", type.empty() ? json.dump().substr(0, 80) : type);
}

} // namespace infer::tokenizer
