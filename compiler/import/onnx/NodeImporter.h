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

/// TensorProto.DataType values newer than the onnx.proto we build against.
constexpr int32_t kOnnxFloat8E4M3FN = 17;
constexpr int32_t kOnnxUint4 = 21;
constexpr int32_t kOnnxInt4 = 22;

/// Converts an ONNX element type to MLIR's; null for types we do not import.
mlir::Type convertElementType(mlir::MLIRContext *context, int32_t onnxType);

/// Converts an ONNX tensor type: dim_value → static, dim_param or unknown → ?,
/// no shape → unranked. Null when the element type is unsupported.
mlir::Type convertTensorType(mlir::MLIRContext *context, const onnx::TypeProto &type);

/// The attribute types an import function declares it reads.
using AttributeType = onnx::AttributeProto::AttributeType;
constexpr AttributeType kInt = onnx::AttributeProto::INT;
constexpr AttributeType kInts = onnx::AttributeProto::INTS;
constexpr AttributeType kFloat = onnx::AttributeProto::FLOAT;
constexpr AttributeType kFloats = onnx::AttributeProto::FLOATS;
constexpr AttributeType kString = onnx::AttributeProto::STRING;
constexpr AttributeType kTensor = onnx::AttributeProto::TENSOR;

/// One attribute an op takes: its name and the type ONNX stores it as.
struct AttributeSpec {
  llvm::StringRef name;
  AttributeType type;
};

/// Inputs or outputs an op takes at the model's opset (ONNX's schema).
/// `max` of kVariadic: any number.
struct Arity {
  int min;
  int max;
};
constexpr int kVariadic = -1;

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
  /// Whether a check that does not return failure itself (resultType's
  /// declared-type check) reported an error; the import then fails.
  bool reportedError() const { return hadError; }

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
  /// Reports every attribute not in `known` and every one stored with
  /// another type than `known` says (one error each): `Gemm transB = 1.0` is
  /// an error, not transB = 0.
  mlir::LogicalResult checkAttributes(std::initializer_list<AttributeSpec> known);
  /// Reports an input or output count outside ONNX's range for the op (both
  /// counts include empty names of omitted optional inputs).
  mlir::LogicalResult checkArity(Arity inputs, Arity outputs = {1, 1});

  // Outputs ----------------------------------------------------------------
  /// Number of outputs that are named (trailing optional ones may be empty).
  size_t numOutputs() const;
  bool outputUsed(size_t i) const;
  /// The type of output i: what the model declares (value_info or a graph
  /// output) when it is ranked, else the ranked `fallbackShape` (what the
  /// importer inferred) when it is given, else an unranked tensor. A declared
  /// type that contradicts the computed one (another element type, rank, or
  /// static dim) is an error (reportedError()): the declared shapes are what
  /// the compiled program would be planned for.
  mlir::Type resultType(size_t i, mlir::Type elementType,
                        std::optional<llvm::ArrayRef<int64_t>> fallbackShape = std::nullopt);

  // Helpers ----------------------------------------------------------------
  static std::optional<int64_t> rankOf(mlir::Value value);
  static mlir::Type elementTypeOf(mlir::Value value);
  /// Makes `axis` non-negative against the rank of `reference` (rank + extra,
  /// for ops whose axis indexes the output); errors if out of range. With an
  /// unknown rank a negative axis is an error.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, mlir::Value reference, int64_t extra = 0);
  /// Makes constant `axes` (named `what` in errors) non-negative against
  /// `rank`; an axis out of [-rank, rank) or given twice is an error. With an
  /// unknown rank only repeated axes are checked (negative ones stay).
  mlir::FailureOr<std::vector<int64_t>> normalizeAxes(llvm::ArrayRef<int64_t> axes,
                                                      std::optional<int64_t> rank,
                                                      llvm::StringRef what = "axes");
  /// A 1-D (or 0-D when `scalar`) i64 graph.constant.
  mlir::Value constantInts(llvm::ArrayRef<int64_t> values, bool scalar = false);
  /// A 0-D graph.constant of `elementType` holding `value`.
  mlir::Value constantScalar(mlir::Type elementType, double value);

private:
  llvm::SmallVector<mlir::Value> inputs;
  llvm::SmallVector<mlir::Type> declaredOutputTypes;
  bool hadError = false;
};

/// Imports one node, appending one value per ONNX output (null for outputs
/// that are not produced). Returns failure after reporting an error.
using NodeImportFn = mlir::LogicalResult (*)(NodeImporter &, llvm::SmallVectorImpl<mlir::Value> &);

/// The table of supported ONNX ops (default domain) → import function.
const llvm::StringMap<NodeImportFn> &nodeImporters();

} // namespace infer::import

#endif // INFER_COMPILER_IMPORT_ONNX_NODEIMPORTER_H
