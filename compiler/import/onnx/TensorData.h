//===- TensorData.h - ONNX TensorProto → constants and weights --*- C++ -*-===//
#ifndef INFER_COMPILER_IMPORT_ONNX_TENSORDATA_H
#define INFER_COMPILER_IMPORT_ONNX_TENSORDATA_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/Error.h"

#include <onnx/onnx_pb.h>

namespace infer::import {

/// Initializers with at most this many elements become inline `graph.constant`
/// ops (shape vectors, scalars) so passes can fold them; larger ones are weights.
constexpr int64_t kMaxInlineElements = 16;

/// Materialises `tensor` as a graph.constant or graph.weight at the builder's
/// insertion point. `modelDirectory` resolves external data locations. The
/// tensor's raw_data may be moved out of `tensor` (never copied) into the
/// weight's resource. Errors name the tensor and say what was expected.
llvm::Expected<mlir::Value> materializeTensor(mlir::OpBuilder &builder, mlir::Location loc,
                                              onnx::TensorProto &tensor,
                                              llvm::StringRef modelDirectory,
                                              int64_t *weightBytes = nullptr);

/// Converts a small TensorProto (Constant's value, ConstantOfShape's value) to
/// a dense attribute.
llvm::Expected<mlir::DenseElementsAttr> denseAttrFromTensor(mlir::MLIRContext *context,
                                                            onnx::TensorProto &tensor);

} // namespace infer::import

#endif // INFER_COMPILER_IMPORT_ONNX_TENSORDATA_H
