//===- ShapeInference.cpp - static result shapes for imported ops ---------===//

#include "compiler/import/onnx/ShapeInference.h"

using namespace mlir;
using namespace infer::import;

std::optional<Shape> infer::import::shapeOf(Value value) {
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType()))
    return Shape(ranked.getShape());
  return std::nullopt;
}

Shape infer::import::dynamicShape(int64_t rank) { return Shape(rank, ShapedType::kDynamic); }

std::optional<Shape> infer::import::broadcastShapes(ArrayRef<std::optional<Shape>> shapes) {
  size_t rank = 0;
  for (const auto &shape : shapes) {
    if (!shape)
      return std::nullopt;
    rank = std::max(rank, shape->size());
  }
  Shape result(rank, 1);
  for (const auto &shape : shapes) {
    size_t offset = rank - shape->size();
    for (size_t i = 0; i < shape->size(); ++i) {
      int64_t dim = (*shape)[i];
      int64_t &out = result[offset + i];
      if (dim == 1)
        continue;
      if (out == 1 || out == dim)
        out = dim;
      else
        out = ShapedType::kDynamic; // dynamic, or a mismatch the interpreter reports
    }
  }
  return result;
}

bool infer::import::broadcastConflicts(ArrayRef<std::optional<Shape>> shapes) {
  size_t rank = 0;
  for (const auto &shape : shapes)
    if (shape)
      rank = std::max(rank, shape->size());
  for (size_t i = 0; i < rank; ++i) {
    int64_t seen = 1;
    for (const auto &shape : shapes) {
      if (!shape || i + shape->size() < rank)
        continue;
      int64_t dim = (*shape)[i + shape->size() - rank];
      if (dim == ShapedType::kDynamic || dim == 1)
        continue;
      if (seen != 1 && seen != dim)
        return true;
      seen = dim;
    }
  }
  return false;
}

bool infer::import::matmulConflicts(std::optional<Shape> lhs, std::optional<Shape> rhs) {
  if (!lhs || !rhs || lhs->empty() || rhs->empty())
    return false;
  int64_t k1 = lhs->back(), k2 = rhs->size() == 1 ? (*rhs)[0] : (*rhs)[rhs->size() - 2];
  if (k1 != ShapedType::kDynamic && k2 != ShapedType::kDynamic && k1 != k2)
    return true;
  if (lhs->size() < 2 || rhs->size() < 2)
    return false;
  return broadcastConflicts(
      {Shape(lhs->begin(), lhs->end() - 2), Shape(rhs->begin(), rhs->end() - 2)});
}

std::optional<Shape> infer::import::matmulShape(std::optional<Shape> lhs, std::optional<Shape> rhs) {
  if (!lhs || !rhs || lhs->empty() || rhs->empty())
    return std::nullopt;
  bool lhsVector = lhs->size() == 1, rhsVector = rhs->size() == 1;
  Shape a = lhsVector ? Shape{1, (*lhs)[0]} : *lhs;
  Shape b = rhsVector ? Shape{(*rhs)[0], 1} : *rhs;
  std::optional<Shape> batch = broadcastShapes(
      {Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)});
  Shape result = *batch;
  if (!lhsVector)
    result.push_back(a[a.size() - 2]);
  if (!rhsVector)
    result.push_back(b.back());
  return result;
}
