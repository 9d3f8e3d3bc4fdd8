//===- NodeImporter.h - per-node import helpers -----------------*- C++ -*-===//
//
// The state one ONNX node's import function sees: its inputs as MLIR values,
// typed attribute access, result types and errors that name the node.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_IMPORT_ONNX_NODEIMPORTER_H
#define INFER_COMPILER_IMPORT_ONNX_NODEIMPORTER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <onnx/onnx_pb.h>

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace infer::import {

/// The name diagnostics use for a node: its ONNX name, or "Op(first output)"
/// when the exporter left it unnamed.
std::string displayName(const onnx::NodeProto &node);

/// Converts an ONNX element type to MLIR's; null for types we do not import.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t onnxType);

/// Converts an ONNX tensor type: dim_value → static, dim_param or unknown → ?,
/// no shape → unranked. Null when the element type is unsupported.
mlir::Type convertTensorType(mlir::MLIRContext *context, const onnx::TypeProto &type);

class NodeImporter {
public:
  NodeImporter(mlir::OpBuilder &builder, const onnx::NodeProto &node, int64_t opset,
               llvm::ArrayRef<mlir::Value> inputs,
               llvm::ArrayRef<mlir::Type> declaredOutputTypes);

  mlir::OpBuilder &builder;
  const onnx::NodeProto &node;
  const int64_t opset;
  const std::string name; // displayName(node)
  mlir::Location loc;
  mlir::MLIRContext *context() const { return builder.getContext(); }

  /// An error that names the node, its op and opset.
  mlir::InFlightDiagnostic error();

  // Inputs -----------------------------------------------------------------
  size_t numInputs() const { return inputs.size(); }
  /// The i-th input, or null when it is absent or the empty name.
  mlir::Value input(size_t i) const { return i < inputs.size() ? inputs[i] : mlir::Value(); }
  /// The i-th input; reports an error when it is absent.
  mlir::FailureOr<mlir::Value> requiredInput(size_t i);
  /// The constant int64 values of input i, when it is a graph.constant.
  std::optional<std::vector<int64_t>> constantInputInts(size_t i) const;

  // Attributes -------------------------------------------------------------
  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue) const;
  float floatAttr(llvm::StringRef name, float defaultValue) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef defaultValue) const;
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const;
  std::optional<std::vector<float>> floatsAttr(llvm::StringRef name) const;
  /// Reports every attribute not in `known` (one error each).
  mlir::LogicalResult checkAttributes(std::initializer_list<llvm::StringRef> known);

  // Outputs ----------------------------------------------------------------
  /// Number of outputs that are named (trailing optional ones may be empty).
  size_t numOutputs() const;
  bool outputUsed(size_t i) const;
  /// The type of output i: what the model declares (value_info) when its
  /// element type agrees with `elementType`, else an unranked tensor, or the
  /// ranked `fallback` when it is given.
  mlir::Type resultType(size_t i, mlir::Type elementType,
                        std::optional<llvm::ArrayRef<int64_t>> fallbackShape = std::nullopt) const;

  // Helpers ----------------------------------------------------------------
  static std::optional<int64_t> rankOf(mlir::Value value);
  static mlir::Type elementTypeOf(mlir::Value value);
  /// Makes `axis` non-negative against the rank of `reference` (rank + extra,
  /// for ops whose axis indexes the output); errors if out of range. With an
  /// unknown rank a negative axis is an error.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, mlir::Value reference, int64_t extra = 0);
  /// A 1-D (or 0-D when `scalar`) i64 graph.constant.
  mlir::Value constantInts(llvm::ArrayRef<int64_t> values, bool scalar = false);
  /// A 0-D graph.constant of `elementType` holding `value`.
  mlir::Value constantScalar(mlir::Type elementType, double value);

private:
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::Type> declaredOutputTypes;
};

/// Imports one node, appending one value per ONNX output (null for outputs
/// that are not produced). Returns failure after reporting an error.
using NodeImportFn = mlir::LogicalResult (*)(NodeImporter &, llvm::SmallVectorImpl<mlir::Value> &);

/// The table of supported ONNX ops (default domain) → import function.
const llvm::StringMap<NodeImportFn> &nodeImporters();

} // namespace infer::import

#endif // INFER_COMPILER_IMPORT_ONNX_NODEIMPORTER_H
