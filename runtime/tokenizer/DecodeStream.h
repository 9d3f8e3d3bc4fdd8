//===- DecodeStream.h - incremental detokenization --------------*- C++ -*-===//
//
// For streaming generated text. Decoding one id at a time does not work:
// decoders look at neighbours (a stripped leading space, a character split
// over byte tokens). As HF's DecodeStream and vLLM, we keep a window of ids
// whose first part (the prefix) was already returned: each step decodes the
// window and returns what lies past the prefix, unless the text ends in
// U+FFFD (a character still incomplete), which is held back until it
// completes; finish() flushes what is held. Then the steps and finish()
// concatenate to decode(all ids), and no step ends inside a character.
// One addition to HF's rule: under a ByteFallback decoder a run of <0xXX>
// tokens decodes as a whole (one bad byte makes every byte of the run
// U+FFFD, even an 'h' already shown), so a trailing run is held back until
// a token that is not a byte ends it.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_DECODESTREAM_H
#define INFER_RUNTIME_TOKENIZER_DECODESTREAM_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::tokenizer {

class Tokenizer;

class DecodeStream {
public:
  /// `tokenizer` must outlive the stream.
  DecodeStream(const Tokenizer &tokenizer, bool skipSpecialTokens);

  /// Adds one id; returns the text it completes (often "", never half a
  /// UTF-8 character). An id outside the vocabulary is an error and leaves
  /// the stream as it was.
  StatusOr<std::string> step(int32_t id);
  /// Returns what is held back (e.g. U+FFFD for bytes that never completed a
  /// character) and resets the stream for a new sequence.
  std::string finish();

private:
  const Tokenizer &tokenizer_;
  bool skipSpecialTokens_;
  std::vector<int32_t> ids_; // the window
  std::string prefix_;       // decode of ids_[0, prefixIndex_), already returned
  size_t prefixIndex_ = 0;
};

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_DECODESTREAM_H
