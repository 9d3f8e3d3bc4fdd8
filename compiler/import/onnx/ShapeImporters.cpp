//===- ShapeImporters.cpp - shape, indexing and constant ONNX ops ---------===//

#include "compiler/import/onnx/ModelChecks.h"
#include "compiler/import/onnx/OpImporters.h"

#include "compiler/import/onnx/ShapeInference.h"
#include "compiler/import/onnx/TensorData.h"
#include "dialects/graph/IR/GraphOps.h"

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// The static length of a 1-D operand (a shape or axes vector), if known.
std::optional<int64_t> staticLength(Value value) {
  auto shape = shapeOf(value);
  if (!shape || shape->size() != 1 || (*shape)[0] == kDynamic)
    return std::nullopt;
  return (*shape)[0];
}

/// A shape input's length is its result's rank: refuse one past kMaxRank
/// before a shape of that many dims is built (a shape input declared
/// int64[2^31 - 1] was a bad_alloc).
LogicalResult checkShapeLength(NodeImporter &n, std::optional<int64_t> length) {
  if (!length || *length <= kMaxRank)
    return success();
  return n.error() << "the shape input has " << *length << " elements; a tensor has at most "
                   << kMaxRank << " dimensions";
}

LogicalResult importShape(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"start", kInt}, {"end", kInt}})) || failed(n.checkArity({1, 1})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t start = n.intAttr("start", 0);
  const auto *endAttr = n.attribute("end");
  std::optional<Shape> resultShape = Shape{kDynamic};
  if (auto rank = NodeImporter::rankOf(*x)) {
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + *rank : v, 0, *rank); };
    int64_t end = endAttr ? clamp(n.intAttr("end", 0)) : *rank;
    start = clamp(start);
    resultShape = Shape{std::max<int64_t>(end - start, 0)};
  }
  Type type = n.resultType(0, n.builder.getI64Type(), resultShape);
  IntegerAttr end = endAttr ? n.builder.getI64IntegerAttr(n.intAttr("end", 0)) : IntegerAttr();
  results.push_back(graph::ShapeOp::create(n.builder, n.loc, type, *x,
                                                     n.builder.getI64IntegerAttr(start), end));
  return success();
}

LogicalResult importReshape(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"allowzero", kInt}})) || failed(n.checkArity({2, 2})))
    return failure();
  auto data = n.requiredInput(0);
  auto shape = n.requiredInput(1);
  if (failed(data) || failed(shape))
    return failure();
  bool allowZero = n.intAttr("allowzero", 0) != 0;
  std::optional<Shape> resultShape;
  auto values = n.constantInputInts(1);
  if (failed(checkShapeLength(n, values ? int64_t(values->size()) : staticLength(*shape))))
    return failure();
  if (values) {
    std::optional<Shape> input = shapeOf(*data);
    resultShape = Shape();
    for (auto [i, v] : llvm::enumerate(*values)) {
      if (v > 0 || (v == 0 && allowZero))
        resultShape->push_back(v);
      else if (v == 0 && input && i < input->size())
        resultShape->push_back((*input)[i]);
      else
        resultShape->push_back(kDynamic);
    }
  } else if (auto length = staticLength(*shape)) {
    resultShape = dynamicShape(*length);
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*data), resultShape);
  results.push_back(graph::ReshapeOp::create(n.builder, n.loc, type, *data, *shape,
                                                       n.builder.getBoolAttr(allowZero)));
  return success();
}

LogicalResult importExpand(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({2, 2})))
    return failure();
  auto x = n.requiredInput(0);
  auto shape = n.requiredInput(1);
  if (failed(x) || failed(shape))
    return failure();
  std::optional<Shape> target;
  auto values = n.constantInputInts(1);
  if (failed(checkShapeLength(n, values ? int64_t(values->size()) : staticLength(*shape))))
    return failure();
  if (values)
    target = Shape(values->begin(), values->end());
  else if (auto length = staticLength(*shape))
    target = dynamicShape(*length);
  if (broadcastConflicts({shapeOf(*x), target}))
    return n.error() << "cannot expand " << x->getType() << " to shape ["
                     << llvm::make_range(target->begin(), target->end()) << "]";
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), broadcastShapes({shapeOf(*x), target}));
  results.push_back(graph::ExpandOp::create(n.builder, n.loc, type, *x, *shape));
  return success();
}

LogicalResult importTile(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({2, 2})))
    return failure();
  auto x = n.requiredInput(0);
  auto repeats = n.requiredInput(1);
  if (failed(x) || failed(repeats))
    return failure();
  std::optional<Shape> shape;
  if (auto rank = NodeImporter::rankOf(*x))
    shape = dynamicShape(*rank);
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  results.push_back(graph::TileOp::create(n.builder, n.loc, type, *x, *repeats));
  return success();
}

LogicalResult importFlatten(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"axis", kInt}})) || failed(n.checkArity({1, 1})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  int64_t axis = n.intAttr("axis", 1);
  if (auto rank = NodeImporter::rankOf(*x)) {
    if (axis < -*rank || axis > *rank)
      return n.error() << "axis " << axis << " is out of range for rank " << *rank;
    if (axis < 0)
      axis += *rank;
  } else if (axis < 0) {
    return n.error() << "negative axis needs an input of known rank";
  }
  std::optional<Shape> shape = Shape{kDynamic, kDynamic};
  if (auto input = shapeOf(*x)) {
    auto product = [&](size_t begin, size_t end) {
      int64_t p = 1;
      for (size_t i = begin; i < end; ++i)
        p = ((*input)[i] == kDynamic || p == kDynamic) ? kDynamic : p * (*input)[i];
      return p;
    };
    shape = Shape{product(0, axis), product(axis, input->size())};
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  results.push_back(graph::FlattenOp::create(n.builder, n.loc, type, *x, n.builder.getI64IntegerAttr(axis)));
  return success();
}

/// Axes given as an attribute (old opsets) or as input `index` (new ones).
std::pair<Value, std::optional<std::vector<int64_t>>> axesOperand(NodeImporter &n, bool fromAttribute,
                                                                  size_t index) {
  if (fromAttribute) {
    auto axes = n.intsAttr("axes");
    if (!axes)
      return {Value(), std::nullopt};
    return {n.constantInts(*axes), axes};
  }
  return {n.input(index), n.constantInputInts(index)};
}

LogicalResult importSqueeze(NodeImporter &n, SmallVectorImpl<Value> &results) {
  bool fromAttribute = n.opset < 13;
  if (failed(fromAttribute ? n.checkAttributes({{"axes", kInts}}) : n.checkAttributes({})) ||
      failed(n.checkArity(fromAttribute ? Arity{1, 1} : Arity{1, 2})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  auto [axesValue, axes] = axesOperand(n, fromAttribute, 1);
  std::optional<Shape> input = shapeOf(*x);
  std::optional<std::vector<int64_t>> norm;
  if (axes) {
    auto checked = n.normalizeAxes(*axes, NodeImporter::rankOf(*x));
    if (failed(checked))
      return failure();
    if (input) {
      for (int64_t axis : *checked)
        if ((*input)[axis] != kDynamic && (*input)[axis] != 1)
          return n.error() << "cannot squeeze axis " << axis << " of size " << (*input)[axis];
      norm = *checked;
      if (*norm != *axes)
        axesValue = n.constantInts(*norm);
    }
  }
  std::optional<Shape> shape;
  if (input && !axesValue && llvm::none_of(*input, [](int64_t d) { return d == kDynamic; })) {
    shape = Shape();
    for (int64_t d : *input)
      if (d != 1)
        shape->push_back(d);
  } else if (norm) {
    shape = Shape();
    for (auto [i, d] : llvm::enumerate(*input))
      if (!llvm::is_contained(*norm, (int64_t)i))
        shape->push_back(d);
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  results.push_back(graph::SqueezeOp::create(n.builder, n.loc, type, *x, axesValue));
  return success();
}

LogicalResult importUnsqueeze(NodeImporter &n, SmallVectorImpl<Value> &results) {
  bool fromAttribute = n.opset < 13;
  if (failed(fromAttribute ? n.checkAttributes({{"axes", kInts}}) : n.checkAttributes({})) ||
      failed(n.checkArity(fromAttribute ? Arity{1, 1} : Arity{2, 2})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  auto [axesValue, axes] = axesOperand(n, fromAttribute, 1);
  if (!axesValue)
    return n.error() << "axes are required";
  std::optional<Shape> input = shapeOf(*x);
  std::optional<Shape> shape;
  if (axes) {
    // The axes index the output, of rank input + axes.
    std::optional<int64_t> outRank;
    if (input)
      outRank = input->size() + axes->size();
    auto norm = n.normalizeAxes(*axes, outRank);
    if (failed(norm))
      return failure();
    if (input) {
      if (*norm != *axes)
        axesValue = n.constantInts(*norm);
      shape = Shape();
      size_t next = 0;
      for (int64_t i = 0; i < *outRank; ++i)
        shape->push_back(llvm::is_contained(*norm, i) ? 1 : (*input)[next++]);
    }
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  results.push_back(graph::UnsqueezeOp::create(n.builder, n.loc, type, *x, axesValue));
  return success();
}

LogicalResult importTranspose(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"perm", kInts}})) || failed(n.checkArity({1, 1})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  std::optional<int64_t> rank = NodeImporter::rankOf(*x);
  std::vector<int64_t> perm;
  if (auto given = n.intsAttr("perm")) {
    perm = *given;
  } else if (rank) {
    for (int64_t i = *rank - 1; i >= 0; --i)
      perm.push_back(i);
  } else {
    return n.error() << "without 'perm' the input rank must be known";
  }
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)perm.size() || seen[p])
      return n.error() << "perm is not a permutation";
    seen[p] = true;
  }
  std::optional<Shape> shape;
  if (auto input = shapeOf(*x)) {
    if (input->size() != perm.size())
      return n.error() << "perm has " << perm.size() << " entries but the input has rank " << input->size();
    shape = Shape();
    for (int64_t p : perm)
      shape->push_back((*input)[p]);
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shape);
  results.push_back(graph::TransposeOp::create(n.builder, n.loc, type, *x, n.builder.getDenseI64ArrayAttr(perm)));
  return success();
}

LogicalResult importConcat(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"axis", kInt}})) || failed(n.checkArity({1, kVariadic})))
    return failure();
  if (!n.attribute("axis"))
    return n.error() << "missing required attribute 'axis'";
  SmallVector<Value> inputs;
  for (size_t i = 0; i < n.numInputs(); ++i) {
    auto input = n.requiredInput(i);
    if (failed(input))
      return failure();
    inputs.push_back(*input);
  }
  if (inputs.empty())
    return n.error() << "needs at least one input";
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), inputs.front());
  if (failed(axis))
    return failure();
  std::optional<Shape> shape = shapeOf(inputs.front());
  for (Value input : inputs) {
    auto s = shapeOf(input);
    if (!shape || !s)
      continue;
    bool matches = s->size() == shape->size();
    for (size_t i = 0; matches && i < s->size(); ++i)
      matches = (int64_t)i == *axis || (*s)[i] == kDynamic || (*shape)[i] == kDynamic ||
                (*s)[i] == (*shape)[i];
    if (!matches)
      return n.error() << "inputs of types " << inputs.front().getType() << " and "
                       << input.getType() << " cannot be concatenated on axis " << *axis;
  }
  if (shape) {
    int64_t total = 0;
    for (Value input : inputs) {
      auto s = shapeOf(input);
      if (!s || s->size() != shape->size() || (*s)[*axis] == kDynamic || total == kDynamic)
        total = kDynamic;
      else
        total += (*s)[*axis];
    }
    (*shape)[*axis] = total;
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(inputs.front()), shape);
  results.push_back(graph::ConcatOp::create(n.builder, n.loc, type, inputs, n.builder.getI64IntegerAttr(*axis)));
  return success();
}

LogicalResult importSplit(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.opset < 13 ? n.checkAttributes({{"axis", kInt}, {"split", kInts}})
                          : n.checkAttributes({{"axis", kInt}, {"num_outputs", kInt}})) ||
      failed(n.checkArity(n.opset < 13 ? Arity{1, 1} : Arity{1, 2}, {1, kVariadic})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), *x);
  if (failed(axis))
    return failure();
  int64_t count = n.node.output_size();
  Value sizes;
  std::optional<std::vector<int64_t>> sizeValues;
  if (n.opset < 13) {
    if ((sizeValues = n.intsAttr("split")))
      sizes = n.constantInts(*sizeValues);
  } else {
    sizes = n.input(1);
    sizeValues = n.constantInputInts(1);
    if (n.attribute("num_outputs") && n.intAttr("num_outputs", 0) != count)
      return n.error() << "num_outputs is " << n.intAttr("num_outputs", 0) << " but the node has "
                       << count << " outputs";
  }
  if (sizeValues && (int64_t)sizeValues->size() != count)
    return n.error() << "split has " << sizeValues->size() << " sizes but the node has " << count
                     << " outputs";
  SmallVector<Type> types;
  std::optional<Shape> input = shapeOf(*x);
  for (int64_t i = 0; i < count; ++i) {
    std::optional<Shape> shape = input;
    if (shape) {
      int64_t dim = (*shape)[*axis];
      if (sizeValues)
        (*shape)[*axis] = (*sizeValues)[i];
      else if (!sizes && dim != kDynamic && count > 0) {
        int64_t part = (dim + count - 1) / count;
        (*shape)[*axis] = std::max<int64_t>(0, std::min(part, dim - part * i));
      } else
        (*shape)[*axis] = kDynamic;
    }
    types.push_back(n.resultType(i, NodeImporter::elementTypeOf(*x), shape));
  }
  auto op = graph::SplitOp::create(n.builder, n.loc, types, *x, sizes, n.builder.getI64IntegerAttr(*axis));
  for (Value r : op.getResults())
    results.push_back(r);
  return success();
}

LogicalResult importSlice(NodeImporter &n, SmallVectorImpl<Value> &results) {
  bool fromAttributes = n.opset < 10;
  if (failed(fromAttributes
                 ? n.checkAttributes({{"starts", kInts}, {"ends", kInts}, {"axes", kInts}})
                 : n.checkAttributes({})) ||
      failed(n.checkArity(fromAttributes ? Arity{1, 1} : Arity{3, 5})))
    return failure();
  auto data = n.requiredInput(0);
  if (failed(data))
    return failure();
  Value starts, ends, axes, steps;
  if (fromAttributes) {
    auto s = n.intsAttr("starts"), e = n.intsAttr("ends");
    if (!s || !e)
      return n.error() << "missing required attribute 'starts' or 'ends'";
    starts = n.constantInts(*s);
    ends = n.constantInts(*e);
    if (auto a = n.intsAttr("axes"))
      axes = n.constantInts(*a);
  } else {
    auto s = n.requiredInput(1), e = n.requiredInput(2);
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    axes = n.input(3);
    steps = n.input(4);
  }
  std::optional<int64_t> count = staticLength(starts);
  if ((!axes || !steps) && !count)
    return n.error() << "default axes or steps need starts of static length";
  if (!axes) {
    std::vector<int64_t> all(*count);
    for (int64_t i = 0; i < *count; ++i)
      all[i] = i;
    axes = n.constantInts(all);
  }
  if (!steps)
    steps = n.constantInts(std::vector<int64_t>(*count, 1));
  std::optional<std::vector<int64_t>> given =
      fromAttributes ? n.intsAttr("axes") : (n.input(3) ? n.constantInputInts(3) : std::nullopt);
  if (given) {
    auto norm = n.normalizeAxes(*given, NodeImporter::rankOf(*data));
    if (failed(norm))
      return failure();
    if (*norm != *given)
      axes = n.constantInts(*norm);
  }
  std::optional<Shape> shape;
  if (auto rank = NodeImporter::rankOf(*data))
    shape = dynamicShape(*rank);
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*data), shape);
  results.push_back(graph::SliceOp::create(n.builder, n.loc, type, *data, starts, ends, axes, steps));
  return success();
}

/// Gather's and GatherElements' operands: data, indices, a non-negative axis.
struct GatherOperands {
  Value data, indices;
  int64_t axis = 0;
};

FailureOr<GatherOperands> gatherOperands(NodeImporter &n) {
  if (failed(n.checkAttributes({{"axis", kInt}})) || failed(n.checkArity({2, 2})))
    return failure();
  auto data = n.requiredInput(0);
  auto indices = n.requiredInput(1);
  if (failed(data) || failed(indices))
    return failure();
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), *data);
  if (failed(axis))
    return failure();
  return GatherOperands{*data, *indices, *axis};
}

LogicalResult importGather(NodeImporter &n, SmallVectorImpl<Value> &results) {
  FailureOr<GatherOperands> operands = gatherOperands(n);
  if (failed(operands))
    return failure();
  auto [data, indices, axis] = *operands;
  std::optional<Shape> shape;
  auto d = shapeOf(data), i = shapeOf(indices);
  if (d && i) {
    shape = Shape(d->begin(), d->begin() + axis);
    shape->append(i->begin(), i->end());
    shape->append(d->begin() + axis + 1, d->end());
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(data), shape);
  results.push_back(graph::GatherOp::create(n.builder, n.loc, type, data, indices, n.builder.getI64IntegerAttr(axis)));
  return success();
}

LogicalResult importGatherElements(NodeImporter &n, SmallVectorImpl<Value> &results) {
  FailureOr<GatherOperands> operands = gatherOperands(n);
  if (failed(operands))
    return failure();
  auto [data, indices, axis] = *operands;
  auto d = NodeImporter::rankOf(data), i = NodeImporter::rankOf(indices);
  if (d && i && *d != *i)
    return n.error() << "indices of rank " << *i << " for data of rank " << *d
                     << " (GatherElements needs equal ranks)";
  Type type = n.resultType(0, NodeImporter::elementTypeOf(data), shapeOf(indices));
  results.push_back(graph::GatherElementsOp::create(n.builder, n.loc, type, data, indices,
                                                    n.builder.getI64IntegerAttr(axis)));
  return success();
}

/// ScatterND's and ScatterElements' data, indices, updates and reduction.
struct ScatterOperands {
  Value data, indices, updates;
  StringAttr reduction;
};

FailureOr<ScatterOperands> scatterOperands(NodeImporter &n, bool axis) {
  LogicalResult known = axis ? n.checkAttributes({{"reduction", kString}, {"axis", kInt}})
                             : n.checkAttributes({{"reduction", kString}});
  if (failed(known) || failed(n.checkArity({3, 3})))
    return failure();
  auto data = n.requiredInput(0), indices = n.requiredInput(1), updates = n.requiredInput(2);
  if (failed(data) || failed(indices) || failed(updates))
    return failure();
  std::string reduction = n.stringAttr("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul", "min", "max"}, reduction))
    return n.error() << "reduction '" << reduction << "' (none, add, mul, min or max)";
  if (NodeImporter::elementTypeOf(*data) != NodeImporter::elementTypeOf(*updates))
    return n.error() << "updates of another element type than data";
  return ScatterOperands{*data, *indices, *updates, n.builder.getStringAttr(reduction)};
}

LogicalResult importScatterND(NodeImporter &n, SmallVectorImpl<Value> &results) {
  FailureOr<ScatterOperands> operands = scatterOperands(n, /*axis=*/false);
  if (failed(operands))
    return failure();
  auto [data, indices, updates, reduction] = *operands;
  auto d = shapeOf(data), i = shapeOf(indices);
  auto u = NodeImporter::rankOf(updates);
  if (d && i && !i->empty() && i->back() != kDynamic) {
    int64_t k = i->back(), rank = int64_t(d->size());
    if (k < 1 || k > rank)
      return n.error() << "index tuples of " << k << " for data of rank " << rank;
    if (u && *u != int64_t(i->size()) - 1 + rank - k)
      return n.error() << "updates of rank " << *u << ", expected "
                       << int64_t(i->size()) - 1 + rank - k;
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(data), d);
  results.push_back(
      graph::ScatterNDOp::create(n.builder, n.loc, type, data, indices, updates, reduction));
  return success();
}

LogicalResult importScatterElements(NodeImporter &n, SmallVectorImpl<Value> &results) {
  FailureOr<ScatterOperands> operands = scatterOperands(n, /*axis=*/true);
  if (failed(operands))
    return failure();
  auto [data, indices, updates, reduction] = *operands;
  auto d = NodeImporter::rankOf(data), i = NodeImporter::rankOf(indices),
       u = NodeImporter::rankOf(updates);
  if ((d && i && *d != *i) || (i && u && *i != *u))
    return n.error() << "data, indices and updates of different ranks (ScatterElements needs one)";
  auto axis = n.normalizeAxis(n.intAttr("axis", 0), data);
  if (failed(axis))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(data), shapeOf(data));
  results.push_back(graph::ScatterElementsOp::create(n.builder, n.loc, type, data, indices, updates,
                                                     n.builder.getI64IntegerAttr(*axis),
                                                     reduction));
  return success();
}

LogicalResult importTopK(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"axis", kInt}, {"largest", kInt}, {"sorted", kInt}})) ||
      failed(n.checkArity({2, 2}, {2, 2})))
    return failure();
  auto input = n.requiredInput(0);
  if (failed(input))
    return failure();
  // sorted = 0 leaves the order to the implementation: graph.top_k's sorted
  // order is one.
  if (n.intAttr("largest", 1) != 1)
    return n.error() << "only the k largest are supported (largest = " << n.intAttr("largest", 1)
                     << ")";
  auto kInput = n.requiredInput(1);
  if (failed(kInput))
    return failure();
  auto kType = dyn_cast<RankedTensorType>(kInput->getType());
  if (!kType || kType.getRank() != 1 || kType.getDimSize(0) != 1 ||
      !kType.getElementType().isInteger(64))
    return n.error() << "K must be a one-element int64 tensor";
  auto axis = n.normalizeAxis(n.intAttr("axis", -1), *input);
  if (failed(axis))
    return failure();
  std::optional<std::vector<int64_t>> k = n.constantInputInts(1);
  if (k && (*k)[0] < 1)
    return n.error() << "K " << (*k)[0] << " is not a positive count";
  std::optional<Shape> shape = shapeOf(*input);
  if (shape) {
    if (k && (*shape)[*axis] != kDynamic && (*shape)[*axis] < (*k)[0])
      return n.error() << "K " << (*k)[0] << " exceeds axis " << *axis << " of size "
                       << (*shape)[*axis];
    (*shape)[*axis] = k ? (*k)[0] : kDynamic;
  }
  Type values = n.resultType(0, NodeImporter::elementTypeOf(*input), shape);
  Type indices = n.resultType(1, n.builder.getI64Type(), shape);
  auto topK = graph::TopKOp::create(n.builder, n.loc, values, indices, *input, *kInput,
                                    n.builder.getI64IntegerAttr(*axis));
  results.push_back(topK.getValues());
  results.push_back(topK.getIndices());
  return success();
}

LogicalResult importGatherND(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"batch_dims", kInt}})) || failed(n.checkArity({2, 2})))
    return failure();
  auto data = n.requiredInput(0);
  auto indices = n.requiredInput(1);
  if (failed(data) || failed(indices))
    return failure();
  int64_t batchDims = n.intAttr("batch_dims", 0);
  std::optional<Shape> shape;
  auto d = shapeOf(*data), i = shapeOf(*indices);
  // ONNX: 0 <= batch_dims < min(rank(data), rank(indices)), and each index
  // tuple (indices' last dim) addresses 1 to rank(data) - batch_dims dims.
  if (batchDims < 0 || (d && batchDims >= (int64_t)d->size()) ||
      (i && batchDims >= (int64_t)i->size()))
    return n.error() << "batch_dims " << batchDims
                     << " must be at least 0 and below the ranks of data and indices";
  if (d && i && !i->empty() && i->back() != kDynamic) {
    if (i->back() < 1 || i->back() > (int64_t)d->size() - batchDims)
      return n.error() << "the last dim of indices, " << i->back() << ", must be in [1, "
                       << (int64_t)d->size() - batchDims << "] (data's rank less batch_dims)";
    shape = Shape(i->begin(), i->end() - 1);
    for (int64_t k = batchDims + i->back(); k < (int64_t)d->size(); ++k)
      shape->push_back((*d)[k]);
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*data), shape);
  results.push_back(graph::GatherNDOp::create(n.builder, n.loc, type, *data, *indices,
                                                        n.builder.getI64IntegerAttr(batchDims)));
  return success();
}

LogicalResult importRange(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({3, 3})))
    return failure();
  auto start = n.requiredInput(0), limit = n.requiredInput(1), delta = n.requiredInput(2);
  if (failed(start) || failed(limit) || failed(delta))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*start), Shape{kDynamic});
  results.push_back(graph::RangeOp::create(n.builder, n.loc, type, *start, *limit, *delta));
  return success();
}

LogicalResult importTrilu(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"upper", kInt}})) || failed(n.checkArity({1, 2})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(graph::TriluOp::create(n.builder, n.loc, type, *x, n.input(1),
                                                     n.builder.getBoolAttr(n.intAttr("upper", 1) != 0)));
  return success();
}

LogicalResult importConstantOfShape(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"value", kTensor}})) || failed(n.checkArity({1, 1})))
    return failure();
  auto shape = n.requiredInput(0);
  if (failed(shape))
    return failure();
  DenseElementsAttr value;
  if (const auto *attr = n.attribute("value")) {
    onnx::TensorProto tensor = attr->t();
    auto dense = denseAttrFromTensor(n.context(), tensor);
    if (!dense)
      return n.error() << llvm::toString(dense.takeError());
    if (dense->getNumElements() != 1)
      return n.error() << "value must hold exactly one element";
    value = dense->reshape(RankedTensorType::get({1}, dense->getElementType()));
  } else {
    value = DenseElementsAttr::get(RankedTensorType::get({1}, n.builder.getF32Type()), 0.0f);
  }
  std::optional<Shape> resultShape;
  auto values = n.constantInputInts(0);
  if (failed(checkShapeLength(n, values ? int64_t(values->size()) : staticLength(*shape))))
    return failure();
  if (values)
    resultShape = Shape(values->begin(), values->end());
  else if (auto length = staticLength(*shape))
    resultShape = dynamicShape(*length);
  Type type = n.resultType(0, value.getElementType(), resultShape);
  results.push_back(graph::ConstantOfShapeOp::create(n.builder, n.loc, type, *shape, cast<ElementsAttr>(value)));
  return success();
}

LogicalResult importConstant(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"value", kTensor},
                                {"value_float", kFloat},
                                {"value_floats", kFloats},
                                {"value_int", kInt},
                                {"value_ints", kInts}})) ||
      failed(n.checkArity({0, 0})))
    return failure();
  if (n.node.attribute_size() != 1)
    return n.error() << "needs exactly one value attribute";
  Builder &b = n.builder;
  DenseElementsAttr value;
  if (const auto *attr = n.attribute("value")) {
    onnx::TensorProto tensor = attr->t();
    auto dense = denseAttrFromTensor(n.context(), tensor);
    if (!dense)
      return n.error() << llvm::toString(dense.takeError());
    value = *dense;
  } else if (n.attribute("value_float")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getF32Type()), n.floatAttr("value_float", 0));
  } else if (auto floats = n.floatsAttr("value_floats")) {
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)floats->size()}, b.getF32Type()),
                                   ArrayRef<float>(*floats));
  } else if (n.attribute("value_int")) {
    value = DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()), n.intAttr("value_int", 0));
  } else if (auto ints = n.intsAttr("value_ints")) {
    value = DenseElementsAttr::get(RankedTensorType::get({(int64_t)ints->size()}, b.getI64Type()),
                                   ArrayRef<int64_t>(*ints));
  }
  results.push_back(graph::ConstantOp::create(n.builder, n.loc, cast<ElementsAttr>(value)));
  return success();
}

} // namespace

void infer::import::addShapeImporters(llvm::StringMap<NodeImportFn> &table) {
  table["Shape"] = importShape;
  table["Reshape"] = importReshape;
  table["Expand"] = importExpand;
  table["Tile"] = importTile;
  table["Flatten"] = importFlatten;
  table["Squeeze"] = importSqueeze;
  table["Unsqueeze"] = importUnsqueeze;
  table["Transpose"] = importTranspose;
  table["Concat"] = importConcat;
  table["Split"] = importSplit;
  table["Slice"] = importSlice;
  table["Gather"] = importGather;
  table["GatherND"] = importGatherND;
  table["GatherElements"] = importGatherElements;
  table["ScatterND"] = importScatterND;
  table["ScatterElements"] = importScatterElements;
  table["TopK"] = importTopK;
  table["Range"] = importRange;
  table["Trilu"] = importTrilu;
  table["ConstantOfShape"] = importConstantOfShape;
  table["Constant"] = importConstant;
}
