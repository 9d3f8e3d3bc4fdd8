//===- OnnxImporter.h - ONNX model → graph dialect --------------*- C++ -*-===//
#ifndef INFER_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define INFER_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace infer::import {

struct ImportStats {
  int64_t nodes = 0;
  int64_t opsetVersion = 0;
  int64_t initializers = 0;
  int64_t weightBytes = 0;
};

/// Imports the ONNX model at `path` (binary protobuf, or ONNX's textual syntax
/// when the name ends in `.onnxtext`) into a module holding one `func.func`
/// named after the graph, in the graph dialect. Every problem is reported
/// through the context's diagnostic handler with the node's location; the
/// importer keeps going after an unsupported node so that one run lists them
/// all. Returns null when anything was reported as an error.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxFile(mlir::MLIRContext &context, llvm::StringRef path,
                                                 ImportStats *stats = nullptr);

/// Imports a binary ONNX model held in memory (for fuzzing and tests);
/// `bufferName` stands for the file in diagnostics. External data is resolved
/// relative to the current directory.
mlir::OwningOpRef<mlir::ModuleOp> importOnnxBuffer(mlir::MLIRContext &context, llvm::StringRef bytes,
                                                   llvm::StringRef bufferName,
                                                   ImportStats *stats = nullptr);

/// Registers the dialects the importer produces.
void registerImportDialects(mlir::MLIRContext &context);

} // namespace infer::import

#endif // INFER_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
