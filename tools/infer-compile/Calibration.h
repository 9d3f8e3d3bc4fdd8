//===- Calibration.h - infer-compile --calibration FILE ---------*- C++ -*-===//
#ifndef INFER_TOOLS_INFER_COMPILE_CALIBRATION_H
#define INFER_TOOLS_INFER_COMPILE_CALIBRATION_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace infer::tools {

/// At most this many prompts of at most this many tokens are read: the
/// reference interpreter runs each twice.
inline constexpr size_t kMaxCalibrationPrompts = 64;
inline constexpr size_t kMaxCalibrationTokens = 256;

/// The token ids of each non-blank line of the UTF-8 text file `path`
/// (special tokens added as the tokenizer's post-processor says), with the
/// tokenizer.json in `tokenizerDir`.
llvm::Expected<std::vector<std::vector<int64_t>>>
readCalibrationPrompts(const std::string &path, const std::string &tokenizerDir);

} // namespace infer::tools

#endif
