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
#include <string>

namespace infer::graph {

/// A read-only mapping of a whole file, shared by every weight blob in it.
class MappedFile {
public:
  /// Maps `path`; returns an error naming the file if it cannot be opened.
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

/// Parses "file:<path>:<offset>:<size>" into a mapped range.
llvm::Expected<FileRange> parseFileReference(llvm::StringRef reference);

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHRESOURCES_H
