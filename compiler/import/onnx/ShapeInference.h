//===- ShapeInference.h - static result shapes for imported ops -*- C++ -*-===//
//
// Best-effort static shapes for models that carry no value_info. A dim that
// cannot be known statically is ShapedType::kDynamic; a rank that cannot be
// known is std::nullopt (the result is then an unranked tensor).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_IMPORT_ONNX_SHAPEINFERENCE_H
#define INFER_COMPILER_IMPORT_ONNX_SHAPEINFERENCE_H

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace infer::import {

using Shape = llvm::SmallVector<int64_t>;

std::optional<Shape> shapeOf(mlir::Value value);
/// Numpy multidirectional broadcasting of known-rank shapes.
std::optional<Shape> broadcastShapes(llvm::ArrayRef<std::optional<Shape>> shapes);
/// Whether two static dims that broadcast against each other differ with
/// neither being 1 ([2, 3] and [4, 5]): no valid ONNX graph has that.
bool broadcastConflicts(llvm::ArrayRef<std::optional<Shape>> shapes);
/// Whether the static contraction dims of numpy.matmul's operands differ.
bool matmulConflicts(std::optional<Shape> lhs, std::optional<Shape> rhs);
/// numpy.matmul's result shape.
std::optional<Shape> matmulShape(std::optional<Shape> lhs, std::optional<Shape> rhs);
/// A shape of `rank` unknown dims.
Shape dynamicShape(int64_t rank);

} // namespace infer::import

#endif
