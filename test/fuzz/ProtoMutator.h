//===- ProtoMutator.h - structure-aware protobuf mutation -------*- C++ -*-===//
//
// libFuzzer mutates bytes; a byte flip in a serialized ONNX model or an
// artifact manifest mostly breaks the protobuf encoding and stops at the
// parser. This mutator edits the parsed message instead (through protobuf
// reflection, so one implementation serves onnx.ModelProto and
// infer.artifact.Manifest): it changes one scalar to a value at an edge
// (0, -1, 2^31, 2^63 - 1, NaN, ...), replaces a string by another string of
// the same message tree (names stay connected, so graphs stay graphs), adds,
// removes, duplicates or swaps a repeated element, or clears a field. Debian
// has no libprotobuf-mutator; this is the part of it we need.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TEST_FUZZ_PROTOMUTATOR_H
#define INFER_TEST_FUZZ_PROTOMUTATOR_H

#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <random>

namespace infer::fuzz {

/// Applies `count` random structural mutations to `message`. Byte-level edits
/// of string fields go through libFuzzer's LLVMFuzzerMutate, at most
/// `maxStringBytes` long.
void mutateMessage(google::protobuf::Message &message, std::mt19937_64 &random,
                   size_t maxStringBytes, int count = 1);

/// Drops libprotobuf's log lines (a string that is not UTF-8, ...): every
/// malformed input would print one.
void silenceProtobufLogs();

} // namespace infer::fuzz

#endif // INFER_TEST_FUZZ_PROTOMUTATOR_H
