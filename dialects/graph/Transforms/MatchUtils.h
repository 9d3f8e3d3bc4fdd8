//===- MatchUtils.h - small matchers shared by the raising passes -*- C++ -*-===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_MATCHUTILS_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_MATCHUTILS_H

#include "dialects/graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace infer::graph {

/// The value of a constant whose elements are all equal (a splat, a scalar or
/// a one-element tensor), as a double.
std::optional<double> splatValue(mlir::Value value);

/// True when `value` is `constant` within a relative 1e-6 (exporters round
/// constants such as 0.5 or sqrt(2/pi) to float).
bool isSplat(mlir::Value value, double constant);

/// A model weight: graph.weight or a non-splat graph.constant.
bool isWeight(mlir::Value value);

/// The rank, when known.
std::optional<int64_t> rankOf(mlir::Value value);

/// The static size of dim `dim` (negative counts from the back), if known.
std::optional<int64_t> staticDim(mlir::Value value, int64_t dim);

/// True if `axes` (a graph.constant) names exactly the last axis of `input`.
bool isLastAxis(mlir::Value axes, mlir::Value input);

/// A graph.constant i64 vector of `values` (a shape, slice bounds or axes).
mlir::Value i64Vector(mlir::OpBuilder &builder, mlir::Location loc, llvm::ArrayRef<int64_t> values);

/// Places weight packing beside the weights (the top of the function): after
/// the last of `values` defined by an op, or at the start of the block when
/// all are block arguments. `values` must be defined in one block.
void setInsertionAfterOperands(mlir::OpBuilder &builder, mlir::ValueRange values);

/// If `op` is a commutative binary op with one operand matching `pred`,
/// returns {that operand, the other}.
template <typename Pred>
std::optional<std::pair<mlir::Value, mlir::Value>> commutedOperands(mlir::Operation *op, Pred pred) {
  if (!op || op->getNumOperands() != 2)
    return std::nullopt;
  if (pred(op->getOperand(0)))
    return std::make_pair(op->getOperand(0), op->getOperand(1));
  if (pred(op->getOperand(1)))
    return std::make_pair(op->getOperand(1), op->getOperand(0));
  return std::nullopt;
}

} // namespace infer::graph

#endif
