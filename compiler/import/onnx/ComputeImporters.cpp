//===- ComputeImporters.cpp - reductions, normalisation, contractions -----===//

#include "compiler/import/onnx/OpImporters.h"

#include "compiler/import/onnx/ShapeInference.h"
#include "dialects/graph/IR/GraphOps.h"

#include <map>

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

template <typename OpT>
LogicalResult importReduce(NodeImporter &n, SmallVectorImpl<Value> &results) {
  // ReduceSum moved axes to an input in opset 13, the others in opset 18.
  int64_t axesInputOpset = std::is_same_v<OpT, graph::ReduceSumOp> ? 13 : 18;
  bool fromAttribute = n.opset < axesInputOpset;
  if (failed(fromAttribute
                 ? n.checkAttributes({{"axes", kInts}, {"keepdims", kInt}})
                 : n.checkAttributes({{"keepdims", kInt}, {"noop_with_empty_axes", kInt}})) ||
      failed(n.checkArity(fromAttribute ? Arity{1, 1} : Arity{1, 2})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Value axes;
  std::optional<std::vector<int64_t>> axisValues;
  if (fromAttribute) {
    if ((axisValues = n.intsAttr("axes")))
      axes = n.constantInts(*axisValues);
  } else {
    axes = n.input(1);
    axisValues = n.constantInputInts(1);
  }
  bool keepDims = n.intAttr("keepdims", 1) != 0;
  bool noopWithEmptyAxes = n.intAttr("noop_with_empty_axes", 0) != 0;
  std::optional<Shape> shape;
  std::optional<Shape> input = shapeOf(*x);
  if (axisValues) {
    auto normalized = n.normalizeAxes(*axisValues, NodeImporter::rankOf(*x));
    if (failed(normalized))
      return failure();
    if (input && *normalized != *axisValues && !normalized->empty())
      axes = n.constantInts(*normalized);
    axisValues = *normalized;
  }
  if (input && (!axes || axisValues)) {
    int64_t rank = input->size();
    std::vector<bool> reduced(rank, !axes || axisValues->empty());
    if (axisValues && axisValues->empty() && noopWithEmptyAxes)
      reduced.assign(rank, false);
    for (int64_t a : axisValues.value_or(std::vector<int64_t>()))
      reduced[a] = true;
    shape = Shape();
    for (int64_t i = 0; i < rank; ++i)
      if (!reduced[i])
        shape->push_back((*input)[i]);
      else if (keepDims)
        shape->push_back(1);
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  results.push_back(OpT::create(n.builder, n.loc, type, *x, axes, n.builder.getBoolAttr(keepDims),
                                          n.builder.getBoolAttr(noopWithEmptyAxes)));
  return success();
}

LogicalResult importSoftmax(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"axis", kInt}})) || failed(n.checkArity({1, 1})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  auto axis = n.normalizeAxis(n.intAttr("axis", n.opset < 13 ? 1 : -1), *x);
  if (failed(axis))
    return failure();
  // Before opset 13 Softmax flattened the input to 2-D at `axis`; that is the
  // same as a one-axis softmax only when `axis` is the last dim.
  if (n.opset < 13 && NodeImporter::rankOf(*x) != *axis + 1)
    return n.error() << "Softmax before opset 13 is supported only on the last axis";
  results.push_back(graph::SoftmaxOp::create(n.builder, n.loc, (*x).getType(), *x,
                                                       n.builder.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importLayerNorm(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"axis", kInt}, {"epsilon", kFloat}, {"stash_type", kInt}})) ||
      failed(n.checkArity({2, 3}, {1, 3})))
    return failure();
  if (n.intAttr("stash_type", 1) != 1)
    return n.error() << "only stash_type 1 (float32 statistics) is supported";
  if (n.outputUsed(1) || n.outputUsed(2))
    return n.error() << "the Mean and InvStdDev outputs are not supported";
  auto x = n.requiredInput(0);
  auto scale = n.requiredInput(1);
  if (failed(x) || failed(scale))
    return failure();
  auto axis = n.normalizeAxis(n.intAttr("axis", -1), *x);
  if (failed(axis))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(graph::LayerNormOp::create(n.builder, 
      n.loc, type, *x, *scale, n.input(2), n.builder.getI64IntegerAttr(*axis),
      n.builder.getF32FloatAttr(n.floatAttr("epsilon", 1e-5f))));
  return success();
}

LogicalResult importCumSum(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"exclusive", kInt}, {"reverse", kInt}})) ||
      failed(n.checkArity({2, 2})))
    return failure();
  auto x = n.requiredInput(0);
  auto axis = n.requiredInput(1);
  if (failed(x) || failed(axis))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(graph::CumSumOp::create(n.builder, 
      n.loc, type, *x, *axis, n.builder.getBoolAttr(n.intAttr("exclusive", 0) != 0),
      n.builder.getBoolAttr(n.intAttr("reverse", 0) != 0)));
  return success();
}

LogicalResult importMatMul(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({2, 2})))
    return failure();
  auto lhs = n.requiredInput(0), rhs = n.requiredInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  if (matmulConflicts(shapeOf(*lhs), shapeOf(*rhs)))
    return n.error() << "inputs of types " << lhs->getType() << " and " << rhs->getType()
                     << " cannot be multiplied";
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*lhs), matmulShape(shapeOf(*lhs), shapeOf(*rhs)));
  results.push_back(graph::MatMulOp::create(n.builder, n.loc, type, *lhs, *rhs));
  return success();
}

LogicalResult importGemm(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes(
          {{"alpha", kFloat}, {"beta", kFloat}, {"transA", kInt}, {"transB", kInt}})) ||
      failed(n.checkArity({n.opset < 11 ? 3 : 2, 3})))
    return failure();
  auto a = n.requiredInput(0), b = n.requiredInput(1);
  if (failed(a) || failed(b))
    return failure();
  bool transA = n.intAttr("transA", 0) != 0, transB = n.intAttr("transB", 0) != 0;
  std::optional<Shape> shape = Shape{kDynamic, kDynamic};
  auto sa = shapeOf(*a), sb = shapeOf(*b);
  if (sa && sa->size() == 2)
    (*shape)[0] = (*sa)[transA ? 1 : 0];
  if (sb && sb->size() == 2)
    (*shape)[1] = (*sb)[transB ? 0 : 1];
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*a), shape);
  results.push_back(graph::GemmOp::create(n.builder, 
      n.loc, type, *a, *b, n.input(2), n.builder.getF32FloatAttr(n.floatAttr("alpha", 1.0f)),
      n.builder.getF32FloatAttr(n.floatAttr("beta", 1.0f)), n.builder.getBoolAttr(transA),
      n.builder.getBoolAttr(transB)));
  return success();
}

LogicalResult importEinsum(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"equation", kString}})) || failed(n.checkArity({1, kVariadic})))
    return failure();
  std::string equation;
  for (char c : n.stringAttr("equation", ""))
    if (!isspace(static_cast<unsigned char>(c)))
      equation += c;
  if (equation.empty())
    return n.error() << "missing required attribute 'equation'";
  if (equation.find("...") != std::string::npos)
    return n.error() << "einsum equations with an ellipsis are not supported";
  size_t arrow = equation.find("->");
  if (arrow == std::string::npos) {
    // Implicit form: the output lists, in alphabetical order, the letters
    // that appear exactly once.
    std::map<char, int> counts;
    for (char c : equation)
      if (isalpha(static_cast<unsigned char>(c)))
        ++counts[c];
    equation += "->";
    for (auto [letter, count] : counts)
      if (count == 1)
        equation += letter;
    arrow = equation.find("->");
  }
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    auto input = n.requiredInput(i);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  if (inputs.empty())
    return n.error() << "needs at least one input";
  // Output dims from the inputs' static dims, letter by letter.
  std::map<char, int64_t> dims;
  SmallVector<StringRef> terms;
  StringRef(equation).substr(0, arrow).split(terms, ',');
  bool ranksKnown = terms.size() == inputs.size();
  for (auto [term, input] : llvm::zip(terms, inputs)) {
    auto shape = shapeOf(input);
    if (!shape || shape->size() != term.size()) {
      ranksKnown = false;
      continue;
    }
    for (auto [letter, dim] : llvm::zip(term, *shape))
      if (dim != kDynamic && dim != 1)
        dims[letter] = dim;
      else if (!dims.count(letter))
        dims[letter] = dim;
  }
  std::optional<Shape> shape;
  if (ranksKnown) {
    shape = Shape();
    for (char c : StringRef(equation).substr(arrow + 2))
      shape->push_back(dims.count(c) ? dims[c] : kDynamic);
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(inputs.front()), shape);
  results.push_back(graph::EinsumOp::create(n.builder, n.loc, type, inputs, n.builder.getStringAttr(equation)));
  return success();
}

} // namespace

void infer::import::addComputeImporters(llvm::StringMap<NodeImportFn> &table) {
  table["ReduceMean"] = importReduce<graph::ReduceMeanOp>;
  table["ReduceSum"] = importReduce<graph::ReduceSumOp>;
  table["ReduceMax"] = importReduce<graph::ReduceMaxOp>;
  table["Softmax"] = importSoftmax;
  table["LayerNormalization"] = importLayerNorm;
  table["CumSum"] = importCumSum;
  table["MatMul"] = importMatMul;
  table["Gemm"] = importGemm;
  table["Einsum"] = importEinsum;
}
