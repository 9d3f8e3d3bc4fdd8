//===- GraphResources.h - mmap-backed weight resources ----------*- C++ -*-===//
//
// Weights are blobs in the graph dialect's resource manager. A blob created
// from a file range keeps that range mmap'd and prints as a reference to the
// file ("file:<path>:<offset>:<size>") so IR text never holds weight bytes.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHRESOURCES_H
#define INFER_DIALECTS_GRAPH_IR_GRAPHRESOURCES_H

#include "dialects/graph/IR/GraphDialect.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infer::graph {

/// A read-only mapping of a whole file, shared by every weight blob in it.
class MappedFile {
public:
  /// Maps `path`; returns an error naming the file if it cannot be opened or
  /// is not a regular file (a FIFO or a device would block or never end).
  static llvm::Expected<std::shared_ptr<MappedFile>> open(llvm::StringRef path);
  ~MappedFile();
  llvm::StringRef path() const { return filePath; }
  const char *data() const { return base; }
  uint64_t size() const { return length; }

private:
  MappedFile() = default;
  std::string filePath;
  const char *base = nullptr;
  uint64_t length = 0;
};

/// Where a weight's bytes come from when they are a range of a file.
struct FileRange {
  std::shared_ptr<MappedFile> file;
  uint64_t offset = 0;
  uint64_t size = 0;
};

/// Inserts a weight backed by `range` under a name derived from `name`
/// (uniqued if taken). `range` must lie inside the file.
WeightHandle insertFileWeight(mlir::MLIRContext *context, llvm::StringRef name,
                              FileRange range);

/// Inserts a weight that owns its bytes (data with no file behind it).
WeightHandle insertOwnedWeight(mlir::MLIRContext *context, llvm::StringRef name,
                               std::unique_ptr<char[]> bytes, size_t size);

/// Inserts a weight whose blob manages its own bytes (its deleter frees them).
WeightHandle insertWeightBlob(mlir::MLIRContext *context, llvm::StringRef name,
                              mlir::AsmResourceBlob blob);

/// `path` (taken relative to `directory` unless absolute) with its links
/// resolved, when that lies inside `directory` (resolved too); an error that
/// names both otherwise, or when `path` does not exist. The rule for every
/// file a model names (docs/trust-model.md).
llvm::Expected<std::string> resolveInsideDirectory(llvm::StringRef directory, llvm::StringRef path);

/// Parses "file:<path>:<offset>:<size>" into a mapped range. With a
/// `directory`, the path must lie inside it (resolveInsideDirectory).
llvm::Expected<FileRange> parseFileReference(llvm::StringRef reference,
                                             std::optional<llvm::StringRef> directory);

/// Makes the weight references that `context` parses from now on
/// ("file:<path>:...", as --emit prints external data) resolve inside
/// `directory`, the directory of the .mlir file being read; std::nullopt
/// lifts the rule (the default).
void setWeightFileDirectory(mlir::MLIRContext *context, std::optional<std::string> directory);

/// The files behind the file-backed weights `context` has seen (external
/// data, parsed references), resolved: what a compile reads besides its model.
std::vector<std::string> weightFiles(mlir::MLIRContext *context);

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHRESOURCES_H
