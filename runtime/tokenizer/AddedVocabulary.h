//===- AddedVocabulary.h - added and special tokens -------------*- C++ -*-===//
//
// HF matches added tokens before the model sees the text: first the tokens
// with normalized=false on the raw text, then (in each remaining piece, once
// normalized) the normalized=true ones by their normalized spelling. Matching
// is leftmost-longest (HF's Aho-Corasick), then single_word, lstrip and
// rstrip adjust or discard each match exactly as HF's find_matches does.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_ADDEDVOCABULARY_H
#define INFER_RUNTIME_TOKENIZER_ADDEDVOCABULARY_H

#include "runtime/tokenizer/JsonFields.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace infer::tokenizer {

class BpeModel;
class Normalizer;

struct AddedToken {
  std::string content;
  bool singleWord = false, lstrip = false, rstrip = false, normalized = true, special = false;
  bool operator==(const AddedToken &o) const {
    return content == o.content && singleWord == o.singleWord && lstrip == o.lstrip &&
           rstrip == o.rstrip && normalized == o.normalized && special == o.special;
  }
};

class AddedVocabulary {
public:
  /// The `added_tokens` array. As HF, the listed ids are not trusted: a token
  /// takes the id its content has (added earlier or in the model), else the
  /// next free one after the model's vocabulary.
  static StatusOr<AddedVocabulary> fromJson(const Json &list, const BpeModel &model,
                                            const Normalizer *normalizer);

  /// A piece of the text: an added token (id >= 0) or text for the model.
  /// Pieces can be empty; an rstrip token can overlap the next match (as HF).
  struct Segment {
    size_t start, end;
    int32_t id;
  };
  /// Cuts `text` around the tokens of one set: normalized=false ones when
  /// `normalizedSet` is false, else the normalized=true ones.
  void split(std::string_view text, bool normalizedSet, std::vector<Segment> &segments) const;
  bool hasTokens(bool normalizedSet) const {
    return !(normalizedSet ? normalizedTrie_ : rawTrie_).terminal.empty();
  }

  std::optional<int32_t> tokenToId(std::string_view content) const;
  /// What decode spells `id` as (a normalized token's normalized form), or
  /// nullptr if `id` is not an added token.
  const std::string *spelling(int32_t id) const;
  /// Whether `token` is the content of a special token (decode's skip test).
  bool isSpecialContent(const std::string &token) const { return special_.count(token) != 0; }
  bool isSpecialId(int32_t id) const;
  /// Contents added, and how many of them the model also has.
  size_t size() const { return byContent_.size(); }
  size_t countInModel(const BpeModel &model) const;

private:
  /// A byte trie; `terminal[node]` is the token id ending there, or -1.
  struct Trie {
    std::unordered_map<uint64_t, int32_t> edges; // (node << 8 | byte) -> child
    std::vector<int32_t> terminal;
    bool firstByte[256] = {};
    void insert(std::string_view pattern, int32_t id);
    /// The longest pattern at `text[start..]`: its id and end, or id -1.
    std::pair<int32_t, size_t> longestAt(std::string_view text, size_t start) const;
  };
  void buildTries();

  std::unordered_map<std::string, int32_t> byContent_;
  std::unordered_map<int32_t, AddedToken> byId_;
  std::unordered_map<int32_t, std::string> normalizedSpelling_;
  std::unordered_set<std::string> special_;
  Trie rawTrie_, normalizedTrie_;
};

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_ADDEDVOCABULARY_H
