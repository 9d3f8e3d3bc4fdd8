//===- NodeImporter.cpp - per-node import helpers -------------------------===//

#include "compiler/import/onnx/NodeImporter.h"

#include "dialects/graph/IR/GraphOps.h"

#include "llvm/ADT/APSInt.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace infer::import;
using infer::graph::ConstantOp;

Type infer::import::convertElementType(MLIRContext *context, int32_t onnxType) {
  Builder b(context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT: return b.getF32Type();
  case onnx::TensorProto::DOUBLE: return b.getF64Type();
  case onnx::TensorProto::FLOAT16: return b.getF16Type();
  case onnx::TensorProto::BFLOAT16: return b.getBF16Type();
  case onnx::TensorProto::INT64: return b.getI64Type();
  case onnx::TensorProto::INT32: return b.getI32Type();
  case onnx::TensorProto::INT16: return b.getI16Type();
  case onnx::TensorProto::INT8: return b.getI8Type();
  case onnx::TensorProto::UINT8: return IntegerType::get(context, 8, IntegerType::Unsigned);
  case onnx::TensorProto::UINT16: return IntegerType::get(context, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32: return IntegerType::get(context, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64: return IntegerType::get(context, 64, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL: return b.getI1Type();
  // Quantized weights (DequantizeLinear's input); 4-bit values are held a
  // byte each, as MLIR's dense storage holds them. Debian's onnx.proto
  // predates these types: ONNX's numbers.
  case kOnnxInt4: return IntegerType::get(context, 4, IntegerType::Signless);
  case kOnnxUint4: return IntegerType::get(context, 4, IntegerType::Unsigned);
  case kOnnxFloat8E4M3FN: return b.getType<Float8E4M3FNType>();
  default: return Type();
  }
}

Type infer::import::convertTensorType(MLIRContext *context, const onnx::TypeProto &type) {
  if (!type.has_tensor_type())
    return Type();
  Type element = convertElementType(context, type.tensor_type().elem_type());
  if (!element)
    return Type();
  if (!type.tensor_type().has_shape())
    return UnrankedTensorType::get(element);
  SmallVector<int64_t> shape;
  for (const auto &dim : type.tensor_type().shape().dim())
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value()
                                                                : ShapedType::kDynamic);
  return RankedTensorType::get(shape, element);
}

std::string infer::import::displayName(const onnx::NodeProto &node) {
  if (!node.name().empty())
    return node.name();
  return node.op_type() + "(" + (node.output_size() ? node.output(0) : std::string()) + ")";
}

NodeImporter::NodeImporter(OpBuilder &builder, const onnx::NodeProto &node, int64_t opset,
                           ArrayRef<Value> inputs, ArrayRef<Type> declaredOutputTypes)
    : builder(builder), node(node), opset(opset), name(displayName(node)),
      loc(NameLoc::get(builder.getStringAttr(name))), inputs(inputs.begin(), inputs.end()),
      declaredOutputTypes(declaredOutputTypes.begin(), declaredOutputTypes.end()) {}

InFlightDiagnostic NodeImporter::error() {
  return emitError(loc) << "node '" << name << "' (" << node.op_type() << ", opset " << opset
                        << "): ";
}

FailureOr<Value> NodeImporter::requiredInput(size_t i) {
  if (Value value = input(i))
    return value;
  return error() << "input " << i << " is required but missing";
}

std::optional<std::vector<int64_t>> NodeImporter::constantInputInts(size_t i) const {
  auto values = infer::graph::getConstantInts(input(i));
  if (!values)
    return std::nullopt;
  return std::vector<int64_t>(values->begin(), values->end());
}

const onnx::AttributeProto *NodeImporter::attribute(StringRef name) const {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

namespace {

/// The attribute `name` of `node` when it has `type` (checkAttributes has
/// reported it otherwise).
const onnx::AttributeProto *typedAttribute(const onnx::NodeProto &node, StringRef name,
                                           AttributeType type) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return attr.type() == type ? &attr : nullptr;
  return nullptr;
}

/// "an INT", "a FLOAT", "a STRING", ...
std::string typeName(int type) {
  if (!onnx::AttributeProto::AttributeType_IsValid(type) || type == onnx::AttributeProto::UNDEFINED)
    return "no type (" + std::to_string(type) + ")";
  std::string name = onnx::AttributeProto::AttributeType_Name(
      static_cast<onnx::AttributeProto::AttributeType>(type));
  return (StringRef("AEIOU").contains(name[0]) ? "an " : "a ") + name;
}

std::string arityText(Arity arity) {
  if (arity.max == kVariadic)
    return std::to_string(arity.min) + " or more";
  if (arity.min == arity.max)
    return std::to_string(arity.min);
  return std::to_string(arity.min) + " to " + std::to_string(arity.max);
}

} // namespace

int64_t NodeImporter::intAttr(StringRef name, int64_t defaultValue) const {
  const auto *attr = typedAttribute(node, name, kInt);
  return attr ? attr->i() : defaultValue;
}

float NodeImporter::floatAttr(StringRef name, float defaultValue) const {
  const auto *attr = typedAttribute(node, name, kFloat);
  return attr ? attr->f() : defaultValue;
}

std::string NodeImporter::stringAttr(StringRef name, StringRef defaultValue) const {
  const auto *attr = typedAttribute(node, name, kString);
  return attr ? attr->s() : defaultValue.str();
}

std::optional<std::vector<int64_t>> NodeImporter::intsAttr(StringRef name) const {
  const auto *attr = typedAttribute(node, name, kInts);
  if (!attr)
    return std::nullopt;
  return std::vector<int64_t>(attr->ints().begin(), attr->ints().end());
}

std::optional<std::vector<float>> NodeImporter::floatsAttr(StringRef name) const {
  const auto *attr = typedAttribute(node, name, kFloats);
  if (!attr)
    return std::nullopt;
  return std::vector<float>(attr->floats().begin(), attr->floats().end());
}

LogicalResult NodeImporter::checkAttributes(std::initializer_list<AttributeSpec> known) {
  bool ok = true;
  llvm::StringSet<> seen;
  for (const auto &attr : node.attribute()) {
    if (!seen.insert(attr.name()).second) {
      error() << "attribute '" << attr.name() << "' is given twice";
      ok = false;
      continue;
    }
    const AttributeSpec *spec = llvm::find_if(
        known, [&](const AttributeSpec &candidate) { return candidate.name == attr.name(); });
    if (spec == known.end()) {
      error() << "unsupported attribute '" << attr.name() << "'";
      ok = false;
    } else if (attr.type() != spec->type) {
      error() << "attribute '" << attr.name() << "' is " << typeName(attr.type()) << "; "
              << node.op_type() << " takes " << typeName(spec->type);
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult NodeImporter::checkArity(Arity inputArity, Arity outputArity) {
  bool ok = true;
  auto check = [&](int count, Arity arity, StringRef what) {
    if (count >= arity.min && (arity.max == kVariadic || count <= arity.max))
      return;
    error() << "has " << count << " " << what << (count == 1 ? "" : "s") << "; " << node.op_type()
            << " takes " << arityText(arity);
    ok = false;
  };
  check(node.input_size(), inputArity, "input");
  check(node.output_size(), outputArity, "output");
  return success(ok);
}

size_t NodeImporter::numOutputs() const {
  size_t count = node.output_size();
  while (count > 0 && node.output(count - 1).empty())
    --count;
  return count;
}

bool NodeImporter::outputUsed(size_t i) const {
  return i < static_cast<size_t>(node.output_size()) && !node.output(i).empty();
}

Type NodeImporter::resultType(size_t i, Type elementType,
                              std::optional<ArrayRef<int64_t>> fallbackShape) {
  Type computed = fallbackShape ? Type(RankedTensorType::get(*fallbackShape, elementType))
                                : Type(UnrankedTensorType::get(elementType));
  if (i >= declaredOutputTypes.size() || !declaredOutputTypes[i])
    return computed;
  auto declared = cast<TensorType>(declaredOutputTypes[i]);
  bool contradicts = declared.getElementType() != elementType;
  if (declared.hasRank() && fallbackShape) {
    ArrayRef<int64_t> dims = declared.getShape();
    contradicts |= dims.size() != fallbackShape->size();
    for (auto [a, b] : llvm::zip(dims, *fallbackShape))
      contradicts |= !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
  }
  if (contradicts) {
    error() << "output " << i << " ('" << node.output(i) << "') is declared as " << declared
            << " but the op computes " << computed;
    hadError = true;
    return computed;
  }
  return declared.hasRank() ? Type(declared) : computed;
}

std::optional<int64_t> NodeImporter::rankOf(Value value) {
  if (auto ranked = dyn_cast<RankedTensorType>(value.getType()))
    return ranked.getRank();
  return std::nullopt;
}

Type NodeImporter::elementTypeOf(Value value) {
  return cast<TensorType>(value.getType()).getElementType();
}

FailureOr<int64_t> NodeImporter::normalizeAxis(int64_t axis, Value reference, int64_t extra) {
  std::optional<int64_t> rank = rankOf(reference);
  if (!rank) {
    if (axis < 0)
      return error() << "negative axis " << axis << " needs an input of known rank";
    return axis;
  }
  int64_t limit = *rank + extra;
  if (limit == 0)
    return error() << "needs an input of rank 1 or more for axis " << axis;
  if (axis < -limit || axis >= limit)
    return error() << "axis " << axis << " is out of range for rank " << limit;
  return axis < 0 ? axis + limit : axis;
}

FailureOr<std::vector<int64_t>>
NodeImporter::normalizeAxes(ArrayRef<int64_t> axes, std::optional<int64_t> rank, StringRef what) {
  std::vector<int64_t> result;
  for (int64_t axis : axes) {
    if (rank && (axis < -*rank || axis >= *rank))
      return error() << what << " entry " << axis << " is out of range for rank " << *rank;
    int64_t normalized = rank && axis < 0 ? axis + *rank : axis;
    if (llvm::is_contained(result, normalized))
      return error() << what << " [" << llvm::make_range(axes.begin(), axes.end()) << "] name axis "
                     << normalized << " more than once";
    result.push_back(normalized);
  }
  return result;
}

Value NodeImporter::constantInts(ArrayRef<int64_t> values, bool scalar) {
  SmallVector<int64_t> shape;
  if (!scalar)
    shape.push_back(values.size());
  auto type = RankedTensorType::get(shape, builder.getI64Type());
  return ConstantOp::create(builder, loc, DenseIntElementsAttr::get(type, values));
}

/// A double converted to an integer type saturates at the type's range (NaN becomes 0):
/// the cast of an out-of-range double is undefined behaviour.
static APInt saturate(Type elementType, double value) {
  unsigned width = elementType.getIntOrFloatBitWidth();
  bool isUnsigned = elementType.isUnsignedInteger() || width == 1;
  APSInt result(width, isUnsigned);
  bool exact = false;
  APFloat(value).convertToInteger(result, APFloat::rmTowardZero, &exact);
  return std::isnan(value) ? APInt(width, 0) : APInt(result);
}

Value NodeImporter::constantScalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (isa<FloatType>(elementType))
    attr = DenseElementsAttr::get(type, builder.getFloatAttr(elementType, value));
  else
    attr = DenseElementsAttr::get(
        type, builder.getIntegerAttr(elementType, saturate(elementType, value)));
  return ConstantOp::create(builder, loc, cast<ElementsAttr>(attr));
}
