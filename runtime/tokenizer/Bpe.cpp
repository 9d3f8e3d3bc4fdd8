//===- Bpe.cpp - the BPE model of tokenizer.json --------------------------===//
#include "runtime/tokenizer/Bpe.h"

#include "runtime/tokenizer/Utf8.h"

#include <algorithm>
#include <cstdio>

namespace infer::tokenizer {
namespace {

constexpr std::string_view kMetaUtf8 = "\xE2\x96\x81"; // ▁ (U+2581), SentencePiece's space

struct Symbol {
  int32_t id;
  int32_t prev, next; // -1 at the ends
  uint32_t length;    // bytes; 0 once merged into the symbol on its left
};

struct QueuedMerge {
  uint32_t rank;
  uint32_t pos;
  int32_t merged;
};

/// Orders the heap as HF's: lowest rank first, then leftmost.
bool later(const QueuedMerge &a, const QueuedMerge &b) {
  return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
}

} // namespace

StatusOr<std::unique_ptr<BpeModel>> BpeModel::fromJson(const Json &json) {
  std::string type = typeOf(json);
  if (type.empty() && json.is_object() && json.contains("merges"))
    type = "BPE"; // legacy files without a type
  if (type != "BPE")
    return unsupported("model type", (type.empty() ? std::string("(none)") : type) +
                                         " (only BPE is implemented)");
  const std::string where = "model BPE";
  if (json.contains("dropout") && !json["dropout"].is_null() &&
      !(json["dropout"].is_number() && json["dropout"].get<double>() == 0.0))
    return unsupported("BPE option", "dropout " + json["dropout"].dump() + " (only null)");

  std::unique_ptr<BpeModel> model(new BpeModel());
  ASSIGN_OR_RETURN(model->unkToken_, optionalStringField(json, "unk_token", where));
  ASSIGN_OR_RETURN(auto prefix, optionalStringField(json, "continuing_subword_prefix", where));
  ASSIGN_OR_RETURN(auto suffix, optionalStringField(json, "end_of_word_suffix", where));
  model->prefix_ = prefix.value_or("");
  model->suffix_ = suffix.value_or("");
  ASSIGN_OR_RETURN(model->fuseUnk_, boolField(json, "fuse_unk", where, false));
  ASSIGN_OR_RETURN(model->byteFallback_, boolField(json, "byte_fallback", where, false));
  ASSIGN_OR_RETURN(model->ignoreMerges_, boolField(json, "ignore_merges", where, false));

  auto vocab = json.find("vocab");
  if (vocab == json.end() || !vocab->is_object())
    return invalidArgumentError(where + ": field 'vocab' must be an object");
  model->bmpIds_.assign(0x10000, -1);
  // Ids index a table: refuse ones so far past the vocabulary's size that it
  // would be mostly holes (a corrupt file, not a tokenizer).
  const int64_t idLimit = static_cast<int64_t>(vocab->size()) * 4 + (1 << 20);
  for (const auto &[token, idJson] : vocab->items()) {
    if (!idJson.is_number_integer() || idJson.get<int64_t>() < 0 ||
        idJson.get<int64_t>() >= idLimit)
      return invalidArgumentError(where + ": vocab entry '" + token + "' has no valid id (" +
                                  idJson.dump() + ")");
    auto id = static_cast<int32_t>(idJson.get<int64_t>());
    model->vocab_.set(token, static_cast<uint32_t>(id));
    if (static_cast<size_t>(id) >= model->tokens_.size()) {
      model->tokens_.resize(static_cast<size_t>(id) + 1);
      model->hasToken_.resize(static_cast<size_t>(id) + 1);
    }
    model->tokens_[id] = token;
    model->hasToken_[id] = true;
    if (!token.empty() && utf8Length(static_cast<unsigned char>(token[0])) == token.size()) {
      char32_t cp = firstCodePoint(token);
      if (cp < 0x10000)
        model->bmpIds_[cp] = id;
    }
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    const uint32_t *id = model->vocab_.find(name);
    model->byteIds_[b] = id ? static_cast<int32_t>(*id) : -1;
  }
  auto merges = json.find("merges");
  if (merges == json.end() || !merges->is_array())
    return invalidArgumentError(where + ": field 'merges' must be an array");
  RETURN_IF_ERROR(model->loadMerges(*merges));
  model->prepareChunking();
  return model;
}

Status BpeModel::loadMerges(const Json &merges) {
  merges_.reserve(merges.size());
  std::string merged;
  uint32_t rank = 0;
  for (const Json &entry : merges) {
    std::string left, right;
    if (entry.is_string()) { // "a b"
      const std::string &line = entry.get_ref<const std::string &>();
      size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        return invalidArgumentError("model BPE: merge " + std::to_string(rank + 1) + " ('" +
                                    line + "') is not two tokens split by one space");
      left = line.substr(0, space);
      right = line.substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() &&
               entry[1].is_string()) { // ["a", "b"]
      left = entry[0].get<std::string>();
      right = entry[1].get<std::string>();
    } else {
      return invalidArgumentError("model BPE: merge " + std::to_string(rank + 1) +
                                  " is neither \"a b\" nor [\"a\", \"b\"]");
    }
    const uint32_t *leftId = vocab_.find(left);
    const uint32_t *rightId = vocab_.find(right);
    // The merged token drops the right side's continuing_subword_prefix.
    merged = left;
    merged.append(right, std::min(prefix_.size(), right.size()), std::string::npos);
    const uint32_t *mergedId = vocab_.find(merged);
    const std::string *missing = !leftId     ? &left
                                 : !rightId  ? &right
                                 : !mergedId ? &merged
                                             : nullptr;
    if (missing)
      return invalidArgumentError("model BPE: merge " + std::to_string(rank + 1) +
                                  " uses token '" + *missing + "', which is not in the vocab");
    merges_.set(static_cast<int32_t>(*leftId), static_cast<int32_t>(*rightId),
                MergeRule{rank, static_cast<int32_t>(*mergedId)});
    ++rank;
  }
  return okStatus();
}

// Cutting a word before a `▁` whose left neighbour is character c changes
// nothing if no merge can join a symbol ending in c with one starting with
// `▁`: such a merge would produce a token containing "c▁". So we collect the
// characters c that precede a `▁` inside some vocabulary token (a superset of
// the merge results, which must be in the vocabulary); a cut is safe
// before a `▁` preceded by any other character c that is itself a vocabulary
// token (then the left symbol really ends in c, not in a byte-fallback or unk
// token). Merges within a chunk happen in the same (rank, position) order as
// in the whole word, so the ids are identical. With a subword prefix/suffix
// or ignore_merges the word's edges matter, so we never cut.
void BpeModel::prepareChunking() {
  chunkable_ = false;
  if (!prefix_.empty() || !suffix_.empty() || ignoreMerges_ || !vocab_.find(kMetaUtf8))
    return;
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string &token = tokens_[id];
    for (size_t at = token.find(kMetaUtf8, 1); at != std::string::npos;
         at = token.find(kMetaUtf8, at + 1))
      unsafeBeforeMeta_.push_back(lastCodePoint(std::string_view(token).substr(0, at)));
  }
  std::sort(unsafeBeforeMeta_.begin(), unsafeBeforeMeta_.end());
  unsafeBeforeMeta_.erase(std::unique(unsafeBeforeMeta_.begin(), unsafeBeforeMeta_.end()),
                          unsafeBeforeMeta_.end());
  bmpSafeBeforeMeta_.assign(0x10000, false);
  for (char32_t cp = 0; cp < 0x10000; ++cp)
    bmpSafeBeforeMeta_[cp] =
        bmpIds_[cp] >= 0 &&
        !std::binary_search(unsafeBeforeMeta_.begin(), unsafeBeforeMeta_.end(), cp);
  chunkable_ = true;
}

bool BpeModel::safeBeforeMeta(char32_t cp) const {
  if (cp < 0x10000)
    return bmpSafeBeforeMeta_[cp];
  std::string spelled;
  appendUtf8(spelled, cp);
  return vocab_.find(spelled) &&
         !std::binary_search(unsafeBeforeMeta_.begin(), unsafeBeforeMeta_.end(), cp);
}

std::optional<int32_t> BpeModel::tokenToId(std::string_view token) const {
  const uint32_t *id = vocab_.find(token);
  if (!id)
    return std::nullopt;
  return static_cast<int32_t>(*id);
}

const std::string *BpeModel::idToToken(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= tokens_.size() || !hasToken_[id])
    return nullptr;
  return &tokens_[id];
}

Status BpeModel::tokenize(std::string_view word, std::vector<int32_t> &ids) const {
  if (word.empty())
    return okStatus();
  if (!chunkable_)
    return tokenizeChunk(word, ids);
  size_t chunkStart = 0;
  for (size_t at = word.find(kMetaUtf8, 1); at != std::string_view::npos;
       at = word.find(kMetaUtf8, at + kMetaUtf8.size())) {
    if (!safeBeforeMeta(lastCodePoint(word.substr(0, at))))
      continue;
    RETURN_IF_ERROR(tokenizeChunk(word.substr(chunkStart, at - chunkStart), ids));
    chunkStart = at;
  }
  return tokenizeChunk(word.substr(chunkStart), ids);
}

Status BpeModel::tokenizeChunk(std::string_view chunk, std::vector<int32_t> &ids) const {
  // The cache holds final ids (ignore_merges included; chunks only exist
  // without it), so a hit skips the vocabulary lookup too.
  bool cacheable = chunk.size() < WordCache::kMaxWordBytes;
  uint64_t hash = hashBytes(chunk);
  if (cacheable && cache_.lookup(chunk, hash, ids))
    return okStatus();
  size_t before = ids.size();
  const uint32_t *whole = ignoreMerges_ ? vocab_.findHashed(chunk, hash) : nullptr;
  if (whole)
    ids.push_back(static_cast<int32_t>(*whole));
  else
    RETURN_IF_ERROR(mergeWord(chunk, ids));
  if (cacheable)
    cache_.insert(chunk, hash, ids.data() + before, ids.size() - before);
  return okStatus();
}

int32_t BpeModel::charId(std::string_view word, size_t start, size_t end, char32_t cp,
                         bool first, bool last) const {
  if (prefix_.empty() && suffix_.empty()) {
    if (cp < 0x10000)
      return bmpIds_[cp];
    const uint32_t *id = vocab_.find(word.substr(start, end - start));
    return id ? static_cast<int32_t>(*id) : -1;
  }
  std::string spelled = first ? std::string() : prefix_;
  spelled.append(word.substr(start, end - start));
  if (last)
    spelled += suffix_;
  const uint32_t *id = vocab_.find(spelled);
  return id ? static_cast<int32_t>(*id) : -1;
}

Status BpeModel::mergeWord(std::string_view word, std::vector<int32_t> &ids) const {
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add = [&](int32_t id, uint32_t length) {
    auto index = static_cast<int32_t>(symbols.size());
    if (index > 0)
      symbols.back().next = index;
    symbols.push_back(Symbol{id, index - 1, -1, length});
  };
  // The pending unk symbol (id, bytes), flushed before the next known token.
  int32_t unkId = -1;
  uint32_t unkLength = 0;
  for (size_t pos = 0; pos < word.size();) {
    size_t start = pos;
    char32_t cp = nextCodePoint(word, pos);
    auto length = static_cast<uint32_t>(pos - start);
    int32_t id = charId(word, start, pos, cp, start == 0, pos == word.size());
    if (id >= 0) {
      if (unkLength) {
        add(unkId, unkLength);
        unkLength = 0;
      }
      add(id, length);
      continue;
    }
    if (byteFallback_) {
      // HF spells the prefix/suffix-decorated character in bytes.
      std::string spelled = (start == 0 || prefix_.empty()) ? std::string() : prefix_;
      spelled.append(word.substr(start, pos - start));
      if (pos == word.size())
        spelled += suffix_;
      bool all = std::all_of(spelled.begin(), spelled.end(), [&](char c) {
        return byteIds_[static_cast<unsigned char>(c)] >= 0;
      });
      if (all) { // HF does not flush a pending unk here
        for (char c : spelled)
          add(byteIds_[static_cast<unsigned char>(c)], 1);
        continue;
      }
    }
    if (!unkToken_)
      continue; // HF drops the character
    const uint32_t *unk = vocab_.find(*unkToken_);
    if (!unk)
      return failedPreconditionError("unk token '" + *unkToken_ + "' is not in the vocabulary");
    if (unkLength && fuseUnk_) {
      unkLength += length;
    } else {
      if (unkLength)
        add(unkId, unkLength);
      unkId = static_cast<int32_t>(*unk);
      unkLength = length;
    }
  }
  if (unkLength)
    add(unkId, unkLength);

  std::vector<QueuedMerge> queue;
  queue.reserve(symbols.size());
  for (size_t i = 0; i + 1 < symbols.size(); ++i)
    if (const MergeRule *rule = merges_.find(symbols[i].id, symbols[i + 1].id))
      queue.push_back({rule->rank, static_cast<uint32_t>(i), rule->merged});
  std::make_heap(queue.begin(), queue.end(), later);
  auto push = [&](uint32_t pos, const MergeRule &rule) {
    queue.push_back({rule.rank, pos, rule.merged});
    std::push_heap(queue.begin(), queue.end(), later);
  };
  while (!queue.empty()) {
    std::pop_heap(queue.begin(), queue.end(), later);
    QueuedMerge top = queue.back();
    queue.pop_back();
    Symbol &left = symbols[top.pos];
    if (left.length == 0 || left.next == -1)
      continue;
    Symbol right = symbols[left.next];
    // A stale entry: the pair at this position changed since it was queued.
    const MergeRule *rule = merges_.find(left.id, right.id);
    if (!rule || rule->merged != top.merged)
      continue;
    symbols[left.next].length = 0;
    left.id = top.merged;
    left.length += right.length;
    left.next = right.next;
    if (right.next != -1)
      symbols[right.next].prev = static_cast<int32_t>(top.pos);
    if (left.prev != -1)
      if (const MergeRule *r = merges_.find(symbols[left.prev].id, left.id))
        push(static_cast<uint32_t>(left.prev), *r);
    if (left.next != -1)
      if (const MergeRule *r = merges_.find(left.id, symbols[left.next].id))
        push(top.pos, *r);
  }
  for (const Symbol &symbol : symbols)
    if (symbol.length != 0)
      ids.push_back(symbol.id);
  return okStatus();
}

} // namespace infer::tokenizer
