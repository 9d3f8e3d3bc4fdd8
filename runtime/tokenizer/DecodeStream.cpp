//===- DecodeStream.cpp - incremental detokenization ----------------------===//
#include "runtime/tokenizer/DecodeStream.h"

#include "runtime/tokenizer/Tokenizer.h"
#include "runtime/tokenizer/Utf8.h"

namespace infer::tokenizer {
namespace {

bool endsIncomplete(const std::string &text) {
  return text.size() >= kReplacementChar.size() &&
         text.compare(text.size() - kReplacementChar.size(), kReplacementChar.size(),
                      kReplacementChar) == 0;
}

} // namespace

DecodeStream::DecodeStream(const Tokenizer &tokenizer, bool skipSpecialTokens)
    : tokenizer_(tokenizer), skipSpecialTokens_(skipSpecialTokens) {}

StatusOr<std::string> DecodeStream::step(int32_t id) {
  RETURN_IF_ERROR(tokenizer_.checkId(id));
  // Nothing returned yet in this window: adopt its text as the prefix once it
  // is final (e.g. after leading skipped special tokens).
  if (prefix_.empty() && !ids_.empty() &&
      !tokenizer_.endsInOpenByteRun(ids_, skipSpecialTokens_)) {
    ASSIGN_OR_RETURN(std::string text, tokenizer_.decode(ids_, skipSpecialTokens_));
    if (!endsIncomplete(text)) {
      prefix_ = std::move(text);
      prefixIndex_ = ids_.size();
    }
  }
  ids_.push_back(id);
  // A byte run whose text can still turn into U+FFFDs: hold it back without
  // decoding (so a long run costs one decode, when it ends).
  if (tokenizer_.endsInOpenByteRun(ids_, skipSpecialTokens_))
    return std::string();
  ASSIGN_OR_RETURN(std::string text, tokenizer_.decode(ids_, skipSpecialTokens_));
  // Held back: an incomplete character.
  if (text.size() <= prefix_.size() || endsIncomplete(text))
    return std::string();
  if (text.compare(0, prefix_.size(), prefix_) != 0)
    return failedPreconditionError("decode stream: the text of the window no longer starts "
                                   "with the text already returned (id " +
                                   std::to_string(id) + ")");
  std::string added = text.substr(prefix_.size());
  // The ids just returned become the next window's prefix.
  size_t newPrefixIndex = ids_.size() - prefixIndex_;
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefixIndex_));
  ASSIGN_OR_RETURN(prefix_, tokenizer_.decode(ids_, skipSpecialTokens_));
  prefixIndex_ = newPrefixIndex;
  return added;
}

std::string DecodeStream::finish() {
  std::string rest;
  auto decoded = tokenizer_.decode(ids_, skipSpecialTokens_); // ids_ were validated by step
  if (decoded.ok() && decoded->size() > prefix_.size() &&
      decoded->compare(0, prefix_.size(), prefix_) == 0)
    rest = decoded->substr(prefix_.size());
  ids_.clear();
  prefix_.clear();
  prefixIndex_ = 0;
  return rest;
}

} // namespace infer::tokenizer
