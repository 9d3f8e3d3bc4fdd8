//===- MlirSource.h - reading .mlir input that may be hostile ---*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, attribute and type: a file
// of a few thousand nested regions overflows the stack. infer-compile and
// infer-opt therefore read .mlir text through here first: only a regular file
// (or stdin), only text (bytecode is refused), and brackets nested at most
// kMaxMlirNesting deep, counted by a linear scan before the parser runs.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_PIPELINE_MLIRSOURCE_H
#define INFER_COMPILER_PIPELINE_MLIRSOURCE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <optional>
#include <string>

namespace infer::pipeline {

/// The deepest nesting of (), [], {} and <> an .mlir source may have. infer's
/// own IR nests a few levels (a function, a fusion group, a rank-8 dense
/// literal); the parser's stack use at this depth is far below 8 MB.
constexpr int kMaxMlirNesting = 256;

/// What is wrong with an .mlir source, and where (1-based; 0: the whole file).
struct MlirSourceProblem {
  unsigned line = 0;
  unsigned column = 0;
  std::string message;
};

/// Checks .mlir text before it is parsed: not bytecode, brackets nested at
/// most kMaxMlirNesting deep (outside strings and comments; the `>` of `->`
/// and `>=` closes nothing).
std::optional<MlirSourceProblem> checkMlirSource(llvm::StringRef text);

/// Reads `path` ("-": stdin), which must be a regular file: a FIFO or a
/// device would block or never end. The error names the file.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> readMlirSource(llvm::StringRef path);

} // namespace infer::pipeline

#endif // INFER_COMPILER_PIPELINE_MLIRSOURCE_H
