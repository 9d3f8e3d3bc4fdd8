//===- Output.h - infer-run's stdout and its integer flags ------*- C++ -*-===//
//
// What every infer-run command shares about its interface: output that
// could not be written is an error (`> /dev/full` must not exit 0), and
// integer flags are parsed strictly (digits only, within a stated range,
// never clamped), each failure one line naming the flag.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TOOLS_INFER_RUN_OUTPUT_H
#define INFER_TOOLS_INFER_RUN_OUTPUT_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <string>

namespace infer::tools {

/// Flushes stdout; an error naming the system's reason when anything written
/// to it so far was lost (a full disk, a closed descriptor).
Status flushStdout();

/// `text` as a decimal integer in [lo, hi]: an optional '-' and digits only
/// (no spaces, '+', fractions, exponents or hex). InvalidArgument
/// "<flag> <text> is not an integer in [lo, hi]" otherwise.
StatusOr<int64_t> parseInteger(const std::string &flag, const std::string &text, int64_t lo,
                               int64_t hi);
/// The same for an unsigned 64-bit value in [0, 2^64 - 1].
StatusOr<uint64_t> parseUnsigned(const std::string &flag, const std::string &text);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_OUTPUT_H
