//===- OpImporters.h - registration of per-op import functions --*- C++ -*-===//
#ifndef INFER_COMPILER_IMPORT_ONNX_OPIMPORTERS_H
#define INFER_COMPILER_IMPORT_ONNX_OPIMPORTERS_H

#include "compiler/import/onnx/NodeImporter.h"

namespace infer::import {
void addElementwiseImporters(llvm::StringMap<NodeImportFn> &table);
void addShapeImporters(llvm::StringMap<NodeImportFn> &table);
void addComputeImporters(llvm::StringMap<NodeImportFn> &table);
/// RMSNormalization, RotaryEmbedding, Attention (opset 23) → the fused graph ops.
void addFusedImporters(llvm::StringMap<NodeImportFn> &table);
/// DequantizeLinear of quantized initializers and com.microsoft.MatMulNBits
/// → graph.dequantize (a domain other than ONNX's is a prefix of the key).
void addQuantizedImporters(llvm::StringMap<NodeImportFn> &table);
} // namespace infer::import

#endif
