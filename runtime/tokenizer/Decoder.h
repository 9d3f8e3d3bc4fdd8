//===- Decoder.h - tokenizer.json decoders ----------------------*- C++ -*-===//
//
// ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, BPEDecoder and
// Sequence, each a step on the list of token strings as in HF's decode_chain;
// decode joins what is left. Invalid bytes become U+FFFD as in HF: ByteLevel
// decodes like Rust's from_utf8_lossy (one per maximal invalid subpart),
// ByteFallback gives one per byte of an invalid run.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_TOKENIZER_DECODER_H
#define INFER_RUNTIME_TOKENIZER_DECODER_H

#include "runtime/tokenizer/JsonFields.h"

#include <memory>
#include <string>
#include <vector>

namespace infer::tokenizer {

class Decoder {
public:
  virtual ~Decoder() = default;
  /// Rewrites the token strings in place (a step may fuse them into one).
  virtual Status decodeChain(std::vector<std::string> &tokens) const = 0;
  /// Whether a run of <0xXX> tokens decodes as a whole (ByteFallback: one
  /// invalid byte turns the whole run into U+FFFDs), so the text of a run's
  /// start can change when more byte tokens follow.
  virtual bool decodesByteRuns() const { return false; }
};

/// The byte of a "<0xXX>" token as ByteFallback reads it, or -1.
int fallbackByte(const std::string &token);

/// The `decoder` field: nullptr for null (decode then joins with spaces).
StatusOr<std::unique_ptr<Decoder>> parseDecoder(const Json &json);

} // namespace infer::tokenizer

#endif // INFER_RUNTIME_TOKENIZER_DECODER_H
