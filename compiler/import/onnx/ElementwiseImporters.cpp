//===- ElementwiseImporters.cpp - elementwise and casting ONNX ops --------===//

#include "compiler/import/onnx/OpImporters.h"

#include "compiler/import/onnx/ShapeInference.h"
#include "compiler/import/onnx/TensorData.h"
#include "dialects/graph/IR/GraphOps.h"

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

template <typename OpT>
LogicalResult importUnary(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({1, 1})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(OpT::create(n.builder, n.loc, type, *x));
  return success();
}

LogicalResult importNot(NodeImporter &n, SmallVectorImpl<Value> &results) {
  auto x = n.requiredInput(0);
  if (succeeded(x) && !NodeImporter::elementTypeOf(*x).isInteger(1))
    return n.error() << "expects a bool input";
  return importUnary<graph::NotOp>(n, results);
}

LogicalResult importIsNaN(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({1, 1})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Type type = n.resultType(0, n.builder.getI1Type(), shapeOf(*x));
  results.push_back(graph::IsNaNOp::create(n.builder, n.loc, type, *x));
  return success();
}

LogicalResult importGelu(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"approximate", kString}})) || failed(n.checkArity({1, 1})))
    return failure();
  std::string approximate = n.stringAttr("approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    return n.error() << "approximate must be 'none' or 'tanh', got '" << approximate << "'";
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(graph::GeluOp::create(n.builder, n.loc, type, *x,
                                                    n.builder.getStringAttr(approximate)));
  return success();
}

LogicalResult importCast(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"to", kInt}, {"saturate", kInt}})) || failed(n.checkArity({1, 1})))
    return failure();
  if (!n.attribute("to"))
    return n.error() << "missing required attribute 'to'";
  Type element = convertElementType(n.context(), n.intAttr("to", 0));
  if (!element)
    return n.error() << "unsupported target type " << n.intAttr("to", 0);
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Type type = n.resultType(0, element, shapeOf(*x));
  results.push_back(graph::CastOp::create(n.builder, n.loc, type, *x));
  return success();
}

LogicalResult importClip(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkArity(n.opset < 11 ? Arity{1, 1} : Arity{1, 3})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  Type element = NodeImporter::elementTypeOf(*x);
  Value lo, hi;
  if (n.opset < 11) {
    if (failed(n.checkAttributes({{"min", kFloat}, {"max", kFloat}})))
      return failure();
    if (!isa<FloatType>(element))
      return n.error() << "before opset 11 takes a floating-point input, got " << element;
    if (n.attribute("min"))
      lo = n.constantScalar(element, n.floatAttr("min", 0));
    if (n.attribute("max"))
      hi = n.constantScalar(element, n.floatAttr("max", 0));
  } else {
    if (failed(n.checkAttributes({})))
      return failure();
    lo = n.input(1);
    hi = n.input(2);
  }
  Type type = n.resultType(0, element, shapeOf(*x));
  results.push_back(graph::ClipOp::create(n.builder, n.loc, type, *x, lo, hi));
  return success();
}

LogicalResult importDropout(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"seed", kInt}, {"ratio", kFloat}, {"is_test", kInt}})) ||
      failed(n.checkArity(n.opset < 12 ? Arity{1, 1} : Arity{1, 3}, {1, 2})))
    return failure();
  auto x = n.requiredInput(0);
  if (failed(x))
    return failure();
  if (Value training = n.input(2)) {
    auto constant = training.getDefiningOp<graph::ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    if (!dense || !dense.isSplat() || dense.getSplatValue<bool>())
      return n.error() << "only inference (training_mode absent or constant false) is supported";
  }
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x), shapeOf(*x));
  results.push_back(graph::IdentityOp::create(n.builder, n.loc, type, *x));
  if (n.outputUsed(1)) {
    // In inference the mask is all true.
    std::optional<Shape> shape = shapeOf(*x);
    Shape shapeVectorShape{shape ? (int64_t)shape->size() : ShapedType::kDynamic};
    Value dims = graph::ShapeOp::create(n.builder, 
        n.loc, RankedTensorType::get(shapeVectorShape, n.builder.getI64Type()), *x,
        n.builder.getI64IntegerAttr(0), IntegerAttr());
    auto trueValue = DenseElementsAttr::get(RankedTensorType::get({1}, n.builder.getI1Type()), true);
    Type maskType = n.resultType(1, n.builder.getI1Type(), shape);
    results.push_back(graph::ConstantOfShapeOp::create(n.builder, n.loc, maskType, dims,
                                                                 cast<ElementsAttr>(trueValue)));
  }
  return success();
}

template <typename OpT>
LogicalResult importBinary(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({2, 2})))
    return failure();
  auto lhs = n.requiredInput(0);
  auto rhs = n.requiredInput(1);
  if (failed(lhs) || failed(rhs))
    return failure();
  constexpr bool producesBool =
      std::is_same_v<OpT, graph::EqualOp> || std::is_same_v<OpT, graph::LessOp> ||
      std::is_same_v<OpT, graph::LessOrEqualOp> || std::is_same_v<OpT, graph::GreaterOp> ||
      std::is_same_v<OpT, graph::GreaterOrEqualOp> || std::is_same_v<OpT, graph::AndOp> ||
      std::is_same_v<OpT, graph::OrOp>;
  Type element = producesBool ? n.builder.getI1Type() : NodeImporter::elementTypeOf(*lhs);
  if (broadcastConflicts({shapeOf(*lhs), shapeOf(*rhs)}))
    return n.error() << "inputs of types " << lhs->getType() << " and " << rhs->getType()
                     << " do not broadcast";
  Type type = n.resultType(0, element, broadcastShapes({shapeOf(*lhs), shapeOf(*rhs)}));
  results.push_back(OpT::create(n.builder, n.loc, type, *lhs, *rhs));
  return success();
}

/// Variadic Max/Min/Sum become a chain of binary ops.
template <typename OpT>
LogicalResult importVariadic(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({1, kVariadic})))
    return failure();
  if (n.numInputs() == 0)
    return n.error() << "needs at least one input";
  auto first = n.requiredInput(0);
  if (failed(first))
    return failure();
  Value accumulator = *first;
  Type element = NodeImporter::elementTypeOf(accumulator);
  if (n.numInputs() == 1) {
    Type type = n.resultType(0, element, shapeOf(accumulator));
    results.push_back(graph::IdentityOp::create(n.builder, n.loc, type, accumulator));
    return success();
  }
  for (size_t i = 1; i < n.numInputs(); ++i) {
    auto next = n.requiredInput(i);
    if (failed(next))
      return failure();
    if (broadcastConflicts({shapeOf(accumulator), shapeOf(*next)}))
      return n.error() << "inputs of types " << accumulator.getType() << " and " << next->getType()
                       << " do not broadcast";
    std::optional<Shape> shape = broadcastShapes({shapeOf(accumulator), shapeOf(*next)});
    Type type = i + 1 == n.numInputs()
                    ? n.resultType(0, element, shape)
                    : (shape ? Type(RankedTensorType::get(*shape, element))
                             : Type(UnrankedTensorType::get(element)));
    accumulator = OpT::create(n.builder, n.loc, type, accumulator, *next);
  }
  results.push_back(accumulator);
  return success();
}

LogicalResult importWhere(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({})) || failed(n.checkArity({3, 3})))
    return failure();
  auto condition = n.requiredInput(0);
  auto x = n.requiredInput(1);
  auto y = n.requiredInput(2);
  if (failed(condition) || failed(x) || failed(y))
    return failure();
  if (broadcastConflicts({shapeOf(*condition), shapeOf(*x), shapeOf(*y)}))
    return n.error() << "inputs of types " << condition->getType() << ", " << x->getType()
                     << " and " << y->getType() << " do not broadcast";
  Type type = n.resultType(0, NodeImporter::elementTypeOf(*x),
                           broadcastShapes({shapeOf(*condition), shapeOf(*x), shapeOf(*y)}));
  results.push_back(graph::WhereOp::create(n.builder, n.loc, type, *condition, *x, *y));
  return success();
}

} // namespace

void infer::import::addElementwiseImporters(llvm::StringMap<NodeImportFn> &table) {
  table["Neg"] = importUnary<graph::NegOp>;
  table["Abs"] = importUnary<graph::AbsOp>;
  table["Sqrt"] = importUnary<graph::SqrtOp>;
  table["Reciprocal"] = importUnary<graph::ReciprocalOp>;
  table["Exp"] = importUnary<graph::ExpOp>;
  table["Log"] = importUnary<graph::LogOp>;
  table["Sin"] = importUnary<graph::SinOp>;
  table["Cos"] = importUnary<graph::CosOp>;
  table["Tanh"] = importUnary<graph::TanhOp>;
  table["Erf"] = importUnary<graph::ErfOp>;
  table["Sigmoid"] = importUnary<graph::SigmoidOp>;
  table["Relu"] = importUnary<graph::ReluOp>;
  table["Identity"] = importUnary<graph::IdentityOp>;
  table["Not"] = importNot;
  table["IsNaN"] = importIsNaN;
  table["Gelu"] = importGelu;
  table["Cast"] = importCast;
  table["Clip"] = importClip;
  table["Dropout"] = importDropout;
  table["Add"] = importBinary<graph::AddOp>;
  table["Sub"] = importBinary<graph::SubOp>;
  table["Mul"] = importBinary<graph::MulOp>;
  table["Div"] = importBinary<graph::DivOp>;
  table["Pow"] = importBinary<graph::PowOp>;
  table["And"] = importBinary<graph::AndOp>;
  table["Or"] = importBinary<graph::OrOp>;
  table["Equal"] = importBinary<graph::EqualOp>;
  table["Less"] = importBinary<graph::LessOp>;
  table["LessOrEqual"] = importBinary<graph::LessOrEqualOp>;
  table["Greater"] = importBinary<graph::GreaterOp>;
  table["GreaterOrEqual"] = importBinary<graph::GreaterOrEqualOp>;
  table["Max"] = importVariadic<graph::MaxOp>;
  table["Min"] = importVariadic<graph::MinOp>;
  table["Sum"] = importVariadic<graph::AddOp>;
  table["Where"] = importWhere;
}
