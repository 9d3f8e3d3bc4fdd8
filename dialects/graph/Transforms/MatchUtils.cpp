//===- MatchUtils.cpp - small matchers shared by the raising passes -------===//

#include "dialects/graph/Transforms/MatchUtils.h"

#include <cmath>

using namespace mlir;
using namespace infer::graph;

std::optional<double> infer::graph::splatValue(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || dense.getNumElements() == 0)
    return std::nullopt;
  if (!dense.isSplat() && dense.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(dense.getElementType()))
    return (*dense.getValues<APFloat>().begin()).convertToDouble();
  if (dense.getElementType().isInteger(1))
    return *dense.getValues<bool>().begin() ? 1.0 : 0.0;
  return double((*dense.getValues<APInt>().begin()).getSExtValue());
}

bool infer::graph::isSplat(Value value, double constant) {
  std::optional<double> actual = splatValue(value);
  if (!actual)
    return false;
  return std::fabs(*actual - constant) <= 1e-6 * std::max(1.0, std::fabs(constant));
}

bool infer::graph::isWeight(Value value) {
  if (value.getDefiningOp<WeightOp>())
    return true;
  return value.getDefiningOp<ConstantOp>() && !splatValue(value);
}

std::optional<int64_t> infer::graph::rankOf(Value value) {
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType()))
    return ranked.getRank();
  return std::nullopt;
}

std::optional<int64_t> infer::graph::staticDim(Value value, int64_t dim) {
  auto ranked = dyn_cast<RankedTensorType>(value.getType());
  if (!ranked)
    return std::nullopt;
  if (dim < 0)
    dim += ranked.getRank();
  if (dim < 0 || dim >= ranked.getRank() || ranked.isDynamicDim(dim))
    return std::nullopt;
  return ranked.getDimSize(dim);
}

bool infer::graph::isLastAxis(Value axes, Value input) {
  std::optional<int64_t> rank = rankOf(input);
  auto values = getConstantInts(axes);
  if (!rank || !values || values->size() != 1)
    return false;
  int64_t axis = (*values)[0];
  return axis == *rank - 1 || axis == -1;
}

void infer::graph::setInsertionAfterOperands(OpBuilder &builder, ValueRange values) {
  Operation *last = nullptr;
  for (Value value : values) {
    Operation *def = value.getDefiningOp();
    if (def && (!last || last->isBeforeInBlock(def)))
      last = def;
  }
  if (last)
    builder.setInsertionPointAfter(last);
  else
    builder.setInsertionPointToStart(cast<BlockArgument>(values.front()).getOwner());
}

Value infer::graph::i64Vector(OpBuilder &builder, Location loc, ArrayRef<int64_t> values) {
  return ConstantOp::create(
      builder, loc,
      DenseIntElementsAttr::get(
          RankedTensorType::get({int64_t(values.size())}, builder.getI64Type()), values));
}
