//===- TextStream.h - one request's generated text, stop strings -*- C++ -*-===//
//
// Turns a request's sampled ids into text as they come: whole UTF-8
// characters only (tokenizer::DecodeStream, special tokens skipped), and never
// a byte of a stop string. Text that could be the start of a stop string is
// held back until the next tokens show whether it is one:
//
//   stop "\n\nUser:"   pushed "Hi.\n"  → emits "Hi."      holds "\n"
//                      pushed "\nUs"   → emits ""         holds "\n\nUs"
//                      pushed "er:"    → stopped; the text ends at "Hi."
//
// The text a request returns never contains its stop string (as the OpenAI
// API and vLLM do), so a stop string that spans tokens is found too.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVING_TEXTSTREAM_H
#define INFER_RUNTIME_SERVING_TEXTSTREAM_H

#include "runtime/base/Status.h"
#include "runtime/tokenizer/Tokenizer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infer::serving {

class TextStream {
public:
  /// Empty stop strings are ignored. `tokenizer` must outlive the stream.
  TextStream(const tokenizer::Tokenizer &tokenizer, std::vector<std::string> stopStrings);

  /// Adds one sampled id; returns the text that is now certain. After a stop
  /// string was found (stopped()) every further push returns "".
  StatusOr<std::string> push(int32_t token);
  /// The generation ended (a stop token, the token limit): the held-back rest.
  std::string finish();

  /// The stop string found, if any.
  const std::optional<std::string> &stopped() const { return stopped_; }
  /// Everything emitted so far.
  const std::string &text() const { return text_; }

private:
  /// Moves what is certain from held_ to the output (all of it when `final`).
  std::string release(bool final);

  tokenizer::DecodeStream decoder_;
  std::vector<std::string> stopStrings_;
  std::string held_, text_;
  std::optional<std::string> stopped_;
};

} // namespace infer::serving

#endif // INFER_RUNTIME_SERVING_TEXTSTREAM_H
