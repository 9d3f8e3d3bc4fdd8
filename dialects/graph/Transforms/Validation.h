//===- Validation.h - check a rewrite by running both sides -----*- C++ -*-===//
//
// Raising passes match loosely (the shapes of exporters' graphs vary) and then
// prove each rewrite on the reference interpreter: the original subgraph and
// its replacement run on the same random inputs, at several batch and sequence
// sizes, and must agree. A rewrite that cannot be checked is not made: the
// graph stays unfused but correct.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_VALIDATION_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_VALIDATION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <functional>
#include <vector>

namespace infer::graph {

/// Builds the candidate replacement from the (mapped) free inputs.
using ReplacementBuilder =
    std::function<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange inputs)>;

struct ValidationOptions {
  /// (batch, seq) sizes to try; token-major inputs are [batch, seq, ...].
  std::vector<std::pair<int64_t, int64_t>> sizes = {{1, 1}, {2, 3}, {1, 8}, {2, 17}};
  double tolerance = 1e-5; // max abs difference, relative to max(1, |original|)
  size_t maxSliceOps = 600;
};

/// Checks that `original` equals the value `build` makes from `inputs`.
/// `inputs` are treated as free random tensors whose dynamic dims are batch
/// then seq; the function's arguments feed the original only through their
/// shapes and values as given (ids are zero). Returns false when the two
/// differ, or when either side cannot be run.
bool validateReplacement(mlir::func::FuncOp func, llvm::ArrayRef<mlir::Value> inputs,
                         mlir::Value original, const ReplacementBuilder &build,
                         const ValidationOptions &options = {});

/// Evaluates `value`, whose backward slice must reach the function arguments
/// only through graph.shape, for the given (batch, seq); nullopt if it cannot.
struct ShapeOnlyValue {
  std::vector<int64_t> shape;
  std::vector<double> values;
};
std::optional<ShapeOnlyValue> evaluateShapeOnly(mlir::func::FuncOp func, mlir::Value value,
                                                int64_t batch, int64_t seq);

/// Evaluates `root` at batch = seq = 1 with the free `inputs` set to
/// `values` (f32 data of their shapes at that size) and the function's
/// arguments zero; nullopt if it cannot. RaiseFeatureGather reads which
/// input feature each output feature is from this way.
std::optional<std::vector<double>> evaluateWithInputs(mlir::func::FuncOp func,
                                                      llvm::ArrayRef<mlir::Value> inputs,
                                                      llvm::ArrayRef<std::vector<float>> values,
                                                      mlir::Value root);

} // namespace infer::graph

#endif
