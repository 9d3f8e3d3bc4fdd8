//===- TextStream.cpp - one request's generated text, stop strings --------===//

#include "runtime/serving/TextStream.h"

#include <algorithm>

namespace infer::serving {

TextStream::TextStream(const tokenizer::Tokenizer &tokenizer, std::vector<std::string> stopStrings)
    : decoder_(tokenizer, /*skipSpecialTokens=*/true) {
  for (std::string &stop : stopStrings)
    if (!stop.empty())
      stopStrings_.push_back(std::move(stop));
}

StatusOr<std::string> TextStream::push(int32_t token) {
  if (stopped_)
    return std::string();
  ASSIGN_OR_RETURN(std::string piece, decoder_.step(token));
  held_ += piece;
  return release(/*final=*/false);
}

std::string TextStream::finish() {
  if (stopped_)
    return std::string();
  held_ += decoder_.finish();
  return release(/*final=*/true);
}

std::string TextStream::release(bool final) {
  // The earliest stop string in the held text ends the generation there.
  size_t at = std::string::npos;
  for (const std::string &stop : stopStrings_) {
    size_t found = held_.find(stop);
    if (found < at) {
      at = found;
      stopped_ = stop;
    }
  }
  size_t keep = 0;
  if (at != std::string::npos) {
    held_.resize(at);
  } else if (!final) {
    // Hold back the longest suffix that some stop string begins with: any
    // match still to come starts inside it.
    for (const std::string &stop : stopStrings_)
      for (size_t n = std::min(stop.size() - 1, held_.size()); n > keep; --n)
        if (held_.compare(held_.size() - n, n, stop, 0, n) == 0) {
          keep = n;
          break;
        }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  text_ += out;
  return out;
}

} // namespace infer::serving
