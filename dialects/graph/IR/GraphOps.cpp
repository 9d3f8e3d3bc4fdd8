//===- GraphOps.cpp - graph dialect verifiers and folders -----------------===//

#include "dialects/graph/IR/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace infer::graph;

namespace {

/// Returns the rank of `value`'s type, or std::nullopt when it is unranked.
std::optional<int64_t> rankOf(Value value) {
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType()))
    return ranked.getRank();
  return std::nullopt;
}

/// Checks `axis` against the rank of `value` when that rank is known.
LogicalResult verifyAxis(Operation *op, Value value, int64_t axis, StringRef what) {
  std::optional<int64_t> rank = rankOf(value);
  if (!rank)
    return success();
  if (axis < 0 || axis >= *rank)
    return op->emitOpError() << what << " " << axis << " is out of range for rank " << *rank
                             << " (the importer makes axes non-negative)";
  return success();
}

/// Comparison and logical ops produce i1; arithmetic ops keep their type.
LogicalResult verifyBinary(Operation *op, bool producesBool, bool needsBoolOperands) {
  Type lhs = getElementTypeOrSelf(op->getOperand(0).getType());
  Type rhs = getElementTypeOrSelf(op->getOperand(1).getType());
  Type result = getElementTypeOrSelf(op->getResult(0).getType());
  if (lhs != rhs)
    return op->emitOpError() << "operands must have the same element type, got " << lhs
                             << " and " << rhs;
  if (needsBoolOperands && !lhs.isInteger(1))
    return op->emitOpError() << "operands must be i1 tensors, got " << lhs;
  Type expected = producesBool ? Builder(op->getContext()).getI1Type() : lhs;
  if (result != expected)
    return op->emitOpError() << "result element type must be " << expected << ", got "
                             << result;
  return success();
}

} // namespace

#define GET_OP_CLASSES
#include "dialects/graph/IR/GraphOps.cpp.inc"

std::optional<SmallVector<int64_t>> infer::graph::getConstantInts(Value value) {
  auto constant = value ? value.getDefiningOp<ConstantOp>() : ConstantOp();
  auto dense = constant ? dyn_cast<DenseIntElementsAttr>(constant.getValue()) : nullptr;
  if (!dense)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const APInt &v : dense.getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  return {};
}

void WeightOp::print(OpAsmPrinter &printer) {
  printer << " <";
  printer.printResourceHandle(getValue().getHandle());
  printer << ">";
  printer.printOptionalAttrDict((*this)->getAttrs(), /*elidedAttrs=*/{"value"});
  printer << " : " << getType();
}

ParseResult WeightOp::parse(OpAsmParser &parser, OperationState &result) {
  if (parser.parseLess())
    return failure();
  FailureOr<WeightHandle> handle = parser.parseResourceHandle<WeightHandle>();
  ShapedType type;
  if (failed(handle) || parser.parseGreater() || parser.parseOptionalAttrDict(result.attributes) ||
      parser.parseColonType(type))
    return failure();
  result.addAttribute("value", WeightAttr::get(parser.getContext(), type, *handle));
  result.addTypes(type);
  return success();
}

LogicalResult WeightOp::verify() {
  ShapedType type = getValue().getType();
  ArrayRef<char> data = getValue().getData();
  if (!type.getElementType().isIntOrFloat())
    return emitOpError() << "weights must have an integer or float element type, got "
                         << type.getElementType();
  if (data.empty() || !type.hasStaticShape())
    return success(); // resource not yet attached (parsing) or dynamic
  unsigned bits = type.getElementType().getIntOrFloatBitWidth();
  int64_t expected = type.getNumElements() * ((bits + 7) / 8);
  if (bits == 1)
    expected = type.getNumElements(); // booleans are stored one per byte
  if (static_cast<int64_t>(data.size()) != expected)
    return emitOpError() << "weight holds " << data.size() << " bytes but " << type
                         << " needs " << expected;
  return success();
}

LogicalResult GeluOp::verify() {
  if (getApproximate() != "none" && getApproximate() != "tanh")
    return emitOpError() << "approximate must be \"none\" or \"tanh\", got \""
                         << getApproximate() << "\"";
  return success();
}

LogicalResult AddOp::verify() { return verifyBinary(*this, false, false); }
LogicalResult SubOp::verify() { return verifyBinary(*this, false, false); }
LogicalResult MulOp::verify() { return verifyBinary(*this, false, false); }
LogicalResult DivOp::verify() { return verifyBinary(*this, false, false); }
LogicalResult MaxOp::verify() { return verifyBinary(*this, false, false); }
LogicalResult MinOp::verify() { return verifyBinary(*this, false, false); }
LogicalResult AndOp::verify() { return verifyBinary(*this, true, true); }
LogicalResult OrOp::verify() { return verifyBinary(*this, true, true); }
LogicalResult EqualOp::verify() { return verifyBinary(*this, true, false); }
LogicalResult LessOp::verify() { return verifyBinary(*this, true, false); }
LogicalResult LessOrEqualOp::verify() { return verifyBinary(*this, true, false); }
LogicalResult GreaterOp::verify() { return verifyBinary(*this, true, false); }
LogicalResult GreaterOrEqualOp::verify() { return verifyBinary(*this, true, false); }

LogicalResult PowOp::verify() {
  // ONNX Pow allows a different exponent type; the result follows the base.
  if (getElementTypeOrSelf(getResult().getType()) != getElementTypeOrSelf(getLhs().getType()))
    return emitOpError() << "result element type must match the base's";
  return success();
}

LogicalResult WhereOp::verify() {
  Type x = getElementTypeOrSelf(getX().getType());
  Type y = getElementTypeOrSelf(getY().getType());
  if (x != y || getElementTypeOrSelf(getResult().getType()) != x)
    return emitOpError() << "x, y and result must have one element type, got " << x << ", "
                         << y << " and " << getElementTypeOrSelf(getResult().getType());
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> perm = getPerm();
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p])
      return emitOpError() << "perm must be a permutation of [0, " << perm.size() << ")";
    seen[p] = true;
  }
  if (std::optional<int64_t> rank = rankOf(getInput()); rank && *rank != (int64_t)perm.size())
    return emitOpError() << "perm has " << perm.size() << " entries but the input has rank "
                         << *rank;
  return success();
}

LogicalResult UnsqueezeOp::verify() {
  // Constant axes (as the importer makes them) must each name a distinct
  // output dim: passes index the output shape by them.
  std::optional<SmallVector<int64_t>> axes = getConstantInts(getAxes());
  if (!axes)
    return success();
  std::optional<int64_t> inputRank = rankOf(getInput()), resultRank = rankOf(getResult());
  if (inputRank && resultRank && *resultRank != *inputRank + (int64_t)axes->size())
    return emitOpError() << "result rank " << *resultRank << " is not the input rank " << *inputRank
                         << " plus " << axes->size() << " axes";
  if (!resultRank)
    return success();
  SmallVector<bool> seen(*resultRank, false);
  for (int64_t axis : *axes) {
    int64_t normalized = axis < 0 ? axis + *resultRank : axis;
    if (normalized < 0 || normalized >= *resultRank)
      return emitOpError() << "axis " << axis << " is out of range for the result's rank "
                           << *resultRank;
    if (seen[normalized])
      return emitOpError() << "axis " << axis << " is given twice";
    seen[normalized] = true;
  }
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  Type element = getElementTypeOrSelf(getInputs().front().getType());
  for (Value input : getInputs()) {
    if (getElementTypeOrSelf(input.getType()) != element)
      return emitOpError() << "inputs must share one element type";
    if (failed(verifyAxis(*this, input, getAxis(), "axis")))
      return failure();
  }
  return success();
}

LogicalResult GatherOp::verify() { return verifyAxis(*this, getData(), getAxis(), "axis"); }

LogicalResult TopKOp::verify() {
  if (failed(verifyAxis(*this, getInput(), getAxis(), "axis")))
    return failure();
  auto k = dyn_cast<RankedTensorType>(getK().getType());
  if (k && (k.getRank() != 1 || k.getDimSize(0) != 1))
    return emitOpError() << "k must be a one-element 1-D tensor, got " << k;
  return success();
}

LogicalResult GatherElementsOp::verify() {
  if (failed(verifyAxis(*this, getData(), getAxis(), "axis")))
    return failure();
  std::optional<int64_t> data = rankOf(getData()), indices = rankOf(getIndices());
  if (data && indices && *data != *indices)
    return emitOpError() << "indices have rank " << *indices << " but data rank " << *data;
  return success();
}

/// A scatter's reduction: none, add, mul, min or max.
LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul", "min", "max"}, reduction))
    return op->emitOpError() << "reduction must be none, add, mul, min or max, got \"" << reduction
                             << "\"";
  return success();
}

LogicalResult ScatterNDOp::verify() {
  if (failed(verifyReduction(*this, getReduction())))
    return failure();
  auto data = dyn_cast<RankedTensorType>(getData().getType());
  auto indices = dyn_cast<RankedTensorType>(getIndices().getType());
  auto updates = dyn_cast<RankedTensorType>(getUpdates().getType());
  if (!data || !indices || !updates || indices.getRank() < 1 ||
      indices.isDynamicDim(indices.getRank() - 1))
    return success();
  int64_t k = indices.getShape().back();
  if (k < 1 || k > data.getRank())
    return emitOpError() << "index tuples of " << k << " for data of rank " << data.getRank();
  if (updates.getRank() != indices.getRank() - 1 + data.getRank() - k)
    return emitOpError() << "updates have rank " << updates.getRank() << ", expected "
                         << indices.getRank() - 1 + data.getRank() - k;
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  if (failed(verifyReduction(*this, getReduction())) ||
      failed(verifyAxis(*this, getData(), getAxis(), "axis")))
    return failure();
  std::optional<int64_t> data = rankOf(getData()), indices = rankOf(getIndices()),
                         updates = rankOf(getUpdates());
  if ((data && indices && *data != *indices) || (indices && updates && *indices != *updates))
    return emitOpError() << "data, indices and updates must have one rank";
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifyAxis(*this, getInput(), getAxis(), "axis"); }

LogicalResult EinsumOp::verify() {
  StringRef equation = getEquation();
  auto [inputsText, outputText] = equation.split("->");
  if (outputText.size() == equation.size() || !equation.contains("->"))
    return emitOpError() << "equation must be explicit (contain '->'), got \"" << equation << "\"";
  if (equation.contains("..."))
    return emitOpError() << "ellipsis in einsum equations is not supported";
  SmallVector<StringRef> terms;
  inputsText.split(terms, ',');
  if (terms.size() != getInputs().size())
    return emitOpError() << "equation names " << terms.size() << " inputs but the op has "
                         << getInputs().size();
  for (auto [term, input] : llvm::zip(terms, getInputs()))
    if (std::optional<int64_t> rank = rankOf(input); rank && *rank != (int64_t)term.trim().size())
      return emitOpError() << "term '" << term << "' does not match an input of rank " << *rank;
  return success();
}
