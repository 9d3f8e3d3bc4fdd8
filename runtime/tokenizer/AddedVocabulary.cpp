//===- AddedVocabulary.cpp - added and special tokens ---------------------===//
#include "runtime/tokenizer/AddedVocabulary.h"

#include "runtime/tokenizer/Bpe.h"
#include "runtime/tokenizer/Normalizer.h"
#include "runtime/tokenizer/Utf8.h"

#include <algorithm>

namespace infer::tokenizer {
namespace {

/// Rust regex `\w$` on text[..end]: the last character is a word character.
bool endsWithWord(std::string_view text) {
  return !text.empty() && isRustWordChar(lastCodePoint(text));
}

/// Rust regex `^\w`.
bool startsWithWord(std::string_view text) {
  return !text.empty() && isRustWordChar(firstCodePoint(text));
}

/// Where `\s*$` matches: the start of the trailing whitespace.
size_t trailingSpaceStart(std::string_view text) {
  size_t end = text.size();
  while (end > 0) {
    size_t start;
    if (!isWhiteSpace(lastCodePoint(text.substr(0, end), &start)))
      break;
    end = start;
  }
  return end;
}

/// How many bytes `^\s*` matches.
size_t leadingSpaceLength(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t next = pos;
    if (!isWhiteSpace(nextCodePoint(text, next)))
      break;
    pos = next;
  }
  return pos;
}

} // namespace

void AddedVocabulary::Trie::insert(std::string_view pattern, int32_t id) {
  if (terminal.empty())
    terminal.push_back(-1); // the root
  int32_t node = 0;
  for (char c : pattern) {
    uint64_t key = (uint64_t(node) << 8) | static_cast<unsigned char>(c);
    auto it = edges.find(key);
    if (it == edges.end()) {
      it = edges.emplace(key, static_cast<int32_t>(terminal.size())).first;
      terminal.push_back(-1);
    }
    node = it->second;
  }
  terminal[node] = id;
  firstByte[static_cast<unsigned char>(pattern[0])] = true;
}

std::pair<int32_t, size_t> AddedVocabulary::Trie::longestAt(std::string_view text,
                                                            size_t start) const {
  int32_t node = 0, best = -1;
  size_t bestEnd = start;
  for (size_t i = start; i < text.size(); ++i) {
    auto it = edges.find((uint64_t(node) << 8) | static_cast<unsigned char>(text[i]));
    if (it == edges.end())
      break;
    node = it->second;
    if (terminal[node] >= 0) {
      best = terminal[node];
      bestEnd = i + 1;
    }
  }
  return {best, bestEnd};
}

StatusOr<AddedVocabulary> AddedVocabulary::fromJson(const Json &list, const BpeModel &model,
                                                    const Normalizer *normalizer) {
  AddedVocabulary vocab;
  if (list.is_null())
    return vocab;
  if (!list.is_array())
    return invalidArgumentError("added_tokens must be an array");
  auto nextId = static_cast<int32_t>(model.size());
  for (const Json &item : list) {
    const std::string where = "added_tokens entry";
    AddedToken token;
    ASSIGN_OR_RETURN(token.content, stringField(item, "content", where));
    ASSIGN_OR_RETURN(token.special, boolField(item, "special", where, false));
    ASSIGN_OR_RETURN(token.singleWord, boolField(item, "single_word", where, false));
    ASSIGN_OR_RETURN(token.lstrip, boolField(item, "lstrip", where, false));
    ASSIGN_OR_RETURN(token.rstrip, boolField(item, "rstrip", where, false));
    ASSIGN_OR_RETURN(token.normalized, boolField(item, "normalized", where, !token.special));
    if (token.content.empty())
      continue;
    auto known = vocab.byContent_.find(token.content);
    if (known != vocab.byContent_.end() && vocab.byId_.count(known->second) &&
        vocab.byId_[known->second] == token)
      continue;
    int32_t id;
    if (known != vocab.byContent_.end())
      id = known->second;
    else if (auto inModel = model.tokenToId(token.content))
      id = *inModel;
    else
      id = nextId++;
    if (token.normalized && normalizer) {
      std::string spelled = token.content;
      bool originKept = true;
      RETURN_IF_ERROR(normalizer->normalize(spelled, originKept));
      if (spelled != token.content)
        vocab.normalizedSpelling_[id] = spelled;
    }
    vocab.byContent_[token.content] = id;
    if (token.special)
      vocab.special_.insert(token.content);
    vocab.byId_[id] = token;
  }
  vocab.buildTries();
  return vocab;
}

void AddedVocabulary::buildTries() {
  // Insert by id so that equal spellings resolve the same way every load.
  std::vector<int32_t> ids;
  for (const auto &entry : byId_)
    ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  for (int32_t id : ids) {
    const AddedToken &token = byId_[id];
    const std::string *pattern = &token.content;
    if (token.normalized) {
      auto spelled = normalizedSpelling_.find(id);
      if (spelled != normalizedSpelling_.end())
        pattern = &spelled->second;
    }
    if (!pattern->empty())
      (token.normalized ? normalizedTrie_ : rawTrie_).insert(*pattern, id);
  }
}

void AddedVocabulary::split(std::string_view text, bool normalizedSet,
                            std::vector<Segment> &segments) const {
  segments.clear();
  const Trie &trie = normalizedSet ? normalizedTrie_ : rawTrie_;
  if (trie.terminal.empty()) {
    segments.push_back({0, text.size(), -1});
    return;
  }
  size_t startOffset = 0;
  for (size_t i = 0; i < text.size();) {
    if (!trie.firstByte[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    auto [id, end] = trie.longestAt(text, i);
    if (id < 0) {
      ++i;
      continue;
    }
    // The automaton resumes after the match whatever we do with it.
    size_t start = i, stop = end;
    i = end;
    const AddedToken &token = byId_.at(id);
    if (token.singleWord) {
      bool spaceBefore = start == 0 || !endsWithWord(text.substr(0, start));
      bool spaceAfter = stop == text.size() || !startsWithWord(text.substr(stop));
      if (!spaceBefore || !spaceAfter)
        continue;
    }
    if (token.lstrip)
      start = std::max(trailingSpaceStart(text.substr(0, start)), startOffset);
    if (token.rstrip)
      stop += leadingSpaceLength(text.substr(stop));
    if (startOffset < start)
      segments.push_back({startOffset, start, -1});
    segments.push_back({start, stop, id});
    startOffset = stop;
  }
  if (startOffset != text.size())
    segments.push_back({startOffset, text.size(), -1});
}

std::optional<int32_t> AddedVocabulary::tokenToId(std::string_view content) const {
  auto it = byContent_.find(std::string(content));
  if (it == byContent_.end())
    return std::nullopt;
  return it->second;
}

const std::string *AddedVocabulary::spelling(int32_t id) const {
  auto token = byId_.find(id);
  if (token == byId_.end())
    return nullptr;
  auto spelled = normalizedSpelling_.find(id);
  return spelled != normalizedSpelling_.end() ? &spelled->second : &token->second.content;
}

bool AddedVocabulary::isSpecialId(int32_t id) const {
  auto token = byId_.find(id);
  return token != byId_.end() && token->second.special;
}

size_t AddedVocabulary::countInModel(const BpeModel &model) const {
  size_t count = 0;
  for (const auto &entry : byContent_)
    count += model.tokenToId(entry.first).has_value();
  return count;
}

} // namespace infer::tokenizer
