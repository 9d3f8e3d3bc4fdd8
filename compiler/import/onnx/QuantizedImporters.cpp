//===- QuantizedImporters.cpp - weights a model stores quantized ----------===//
//
// DequantizeLinear of an int4 / uint4 / int8 / uint8 / float8e4m3fn
// initializer, and com.microsoft.MatMulNBits, become graph.dequantize ops
// whose q, scales and zeros are repacked here into graph.quantize_weight's
// layout: a row per output channel n, groups along k, unsigned integers
// moved into the signed range with their zero points (docs/quantization.md).
// The integers stay as the model stores them: RaisePrequantized turns the
// linears that read them into quantized GEMMs.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OpImporters.h"
#include "compiler/import/onnx/ShapeInference.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstring>
#include <functional>

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

/// The elements of a constant input: a graph.weight's bytes (4-bit values
/// held a byte each) or a small graph.constant's values.
struct ConstantData {
  RankedTensorType type;
  std::string key; // the weight's name, for the repacked weights' names
  ArrayRef<char> bytes;
  DenseElementsAttr dense;

  static std::optional<ConstantData> of(Value value) {
    if (!value)
      return std::nullopt;
    if (auto weight = value.getDefiningOp<graph::WeightOp>()) {
      auto type = dyn_cast<RankedTensorType>(weight.getType());
      if (!type || !type.hasStaticShape())
        return std::nullopt;
      return ConstantData{
          type, weight.getValue().getHandle().getKey().str(), weight.getValue().getData(), {}};
    }
    if (auto constant = value.getDefiningOp<graph::ConstantOp>()) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      auto type = dense ? dyn_cast<RankedTensorType>(dense.getType()) : nullptr;
      if (!type)
        return std::nullopt;
      return ConstantData{type, "constant", {}, dense};
    }
    return std::nullopt;
  }

  Type element() const { return type.getElementType(); }
  int64_t size() const { return type.getNumElements(); }
  bool isFloat8() const { return isa<Float8E4M3FNType>(element()); }
  bool isReal() const { return element().isF32() || element().isF16() || element().isBF16(); }
  /// Whether the data holds size() elements of its type.
  bool complete() const {
    if (dense)
      return true;
    int64_t width = element().isF32() ? 4 : element().isF16() || element().isBF16() ? 2 : 1;
    return static_cast<int64_t>(bytes.size()) == size() * width;
  }

  /// Element i of a 4- or 8-bit integer (its value) or float8 (its code).
  int64_t integer(int64_t i) const {
    if (dense) {
      if (isFloat8())
        return dense.getValues<APFloat>()[i].bitcastToAPInt().getZExtValue();
      APInt value = dense.getValues<APInt>()[i];
      return element().isUnsignedInteger() ? int64_t(value.getZExtValue()) : value.getSExtValue();
    }
    if (isFloat8() || element().isUnsignedInteger())
      return static_cast<uint8_t>(bytes[i]);
    return static_cast<int8_t>(bytes[i]);
  }

  /// Element i of an f32, f16 or bf16 tensor (or an integer one) as a float.
  float real(int64_t i) const {
    if (!isReal())
      return static_cast<float>(integer(i));
    if (dense) {
      APFloat value = dense.getValues<APFloat>()[i];
      bool lost = false;
      value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      return value.convertToFloat();
    }
    if (element().isF32()) {
      float value;
      std::memcpy(&value, bytes.data() + 4 * i, 4);
      return value;
    }
    uint16_t bits;
    std::memcpy(&bits, bytes.data() + 2 * i, 2);
    APFloat value(element().isF16() ? APFloat::IEEEhalf() : APFloat::BFloat(), APInt(16, bits));
    bool lost = false;
    value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
    return value.convertToFloat();
  }
};

Value makeWeight(NodeImporter &n, StringRef name, RankedTensorType type,
                 std::unique_ptr<char[]> bytes, size_t size) {
  graph::WeightHandle handle = graph::insertOwnedWeight(n.context(), name, std::move(bytes), size);
  return graph::WeightOp::create(n.builder, n.loc,
                                 graph::WeightAttr::get(n.context(), type, handle))
      .getResult();
}

/// A [rows, k] weight's integers (code: in the signed range, or a float8
/// byte), scales and zero points (per row and group of `group` k; one a row
/// when group is 0) as graph.dequantize of weights in graph.quantize_weight's
/// layout; the result is [rows, k], or [k, rows] with `transpose`.
Value repack(NodeImporter &n, StringRef key, StringRef scheme, int64_t rows, int64_t k,
             int64_t group, Type resultElement, bool transpose,
             function_ref<int64_t(int64_t, int64_t)> code,
             function_ref<float(int64_t, int64_t)> scale,
             function_ref<float(int64_t, int64_t)> zero) {
  const bool int4 = scheme == "int4";
  const int64_t groups = group ? k / group : 1;
  const int64_t rowBytes = int4 ? k / 2 : k;
  auto q = std::make_unique<char[]>(static_cast<size_t>(rows * rowBytes));
  std::memset(q.get(), 0, static_cast<size_t>(rows * rowBytes));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      auto value = static_cast<uint8_t>(code(r, j));
      if (int4)
        q[r * rowBytes + j / 2] |= static_cast<char>(j % 2 ? (value & 0xf) << 4 : value & 0xf);
      else
        q[r * rowBytes + j] = static_cast<char>(value);
    }
  size_t scaleBytes = static_cast<size_t>(rows * groups) * sizeof(float);
  auto scales = std::make_unique<char[]>(scaleBytes);
  auto zeros = std::make_unique<char[]>(scaleBytes);
  bool anyZero = false;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      float s = scale(r, g), z = zero(r, g);
      anyZero |= z != 0.0f;
      std::memcpy(scales.get() + (r * groups + g) * sizeof(float), &s, sizeof(float));
      std::memcpy(zeros.get() + (r * groups + g) * sizeof(float), &z, sizeof(float));
    }
  Builder b(n.context());
  auto scaleType = group ? RankedTensorType::get({rows, groups}, b.getF32Type())
                         : RankedTensorType::get({rows}, b.getF32Type());
  Value qValue = makeWeight(n, (key + ".q").str(),
                            RankedTensorType::get({rows, rowBytes}, b.getIntegerType(8, false)),
                            std::move(q), static_cast<size_t>(rows * rowBytes));
  Value scaleValue =
      makeWeight(n, (key + ".scales").str(), scaleType, std::move(scales), scaleBytes);
  Value zeroValue =
      anyZero ? makeWeight(n, (key + ".zeros").str(), scaleType, std::move(zeros), scaleBytes)
              : Value();
  SmallVector<int64_t> shape =
      transpose ? SmallVector<int64_t>{k, rows} : SmallVector<int64_t>{rows, k};
  return graph::DequantizeOp::create(n.builder, n.loc, RankedTensorType::get(shape, resultElement),
                                     qValue, scaleValue, zeroValue, b.getStringAttr(scheme),
                                     b.getI64IntegerAttr(group),
                                     transpose ? b.getUnitAttr() : UnitAttr())
      .getResult();
}

/// int4 / int8 / fp8-weight for a DequantizeLinear input's element type, and
/// the offset that moves its unsigned values into the signed range.
std::optional<std::pair<StringRef, int64_t>> schemeOf(Type element) {
  if (element.isInteger(4))
    return std::make_pair(StringRef("int4"), int64_t(element.isUnsignedInteger() ? 8 : 0));
  if (element.isInteger(8))
    return std::make_pair(StringRef("int8"), int64_t(element.isUnsignedInteger() ? 128 : 0));
  if (isa<Float8E4M3FNType>(element))
    return std::make_pair(StringRef("fp8-weight"), int64_t(0));
  return std::nullopt;
}

LogicalResult importDequantizeLinear(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"axis", kInt}, {"block_size", kInt}, {"output_dtype", kInt}})) ||
      failed(n.checkArity({2, 3})))
    return failure();
  auto x = n.requiredInput(0), s = n.requiredInput(1);
  if (failed(x) || failed(s))
    return failure();
  std::optional<ConstantData> q = ConstantData::of(*x);
  if (!q)
    return n.error() << "dequantizes a computed tensor: infer imports weights stored quantized "
                        "(initializers), not quantized activations; compile the float model with "
                        "--quantize instead";
  auto scheme = schemeOf(q->element());
  if (!scheme)
    return n.error() << "dequantizes " << q->element()
                     << " weights; int4, uint4, int8, uint8 and float8e4m3fn are supported";
  if (q->type.getRank() != 2 || !q->complete())
    return n.error() << "dequantizes a " << q->type
                     << "; a quantized weight must be 2-D, [k, n] as a MatMul's B";
  std::optional<ConstantData> scale = ConstantData::of(*s);
  if (!scale || !scale->isReal() || !scale->complete())
    return n.error() << "x_scale must be an f32, f16 or bf16 initializer";
  std::optional<ConstantData> zeroPoint = ConstantData::of(n.input(2));
  if (n.input(2) && (!zeroPoint || zeroPoint->element() != q->element() || !zeroPoint->complete() ||
                     zeroPoint->type.getShape() != scale->type.getShape()))
    return n.error() << "x_zero_point must be an initializer of x's type shaped as x_scale";
  if (int64_t dtype = n.intAttr("output_dtype", 0); dtype && dtype != onnx::TensorProto::FLOAT &&
                                                    dtype != onnx::TensorProto::FLOAT16 &&
                                                    dtype != onnx::TensorProto::BFLOAT16)
    return n.error() << "output_dtype " << dtype << " is not a float type";
  const int64_t k = q->type.getDimSize(0), cols = q->type.getDimSize(1);
  int64_t axis = n.intAttr("axis", 1), block = n.intAttr("block_size", 0);
  if (axis < -2 || axis > 1 || block < 0)
    return n.error() << "axis " << axis << " or block_size " << block << " is out of range";
  axis = axis < 0 ? axis + 2 : axis;
  // The scale of output column c (B's axis 1) in group g along k (axis 0).
  std::function<int64_t(int64_t, int64_t)> at;
  int64_t group = k;
  if (block == 0 && scale->size() == 1) {
    at = [](int64_t, int64_t) { return int64_t(0); };
  } else if (block == 0 && scale->type.getRank() == 1 && axis == 1 && scale->size() == cols) {
    at = [](int64_t c, int64_t) { return c; };
  } else if (block > 0 && axis == 0 && scale->type.getRank() == 2 &&
             scale->type.getDimSize(0) == (k + block - 1) / block &&
             scale->type.getDimSize(1) == cols) {
    if (k % block)
      return n.error() << "block_size " << block << " does not divide k = " << k
                       << " (a partial last block is not supported)";
    group = block;
    at = [cols](int64_t c, int64_t g) { return g * cols + c; };
  } else {
    return n.error() << "x_scale " << scale->type << " with axis " << axis << " and block_size "
                     << block
                     << " is not a scale per tensor, per output column (axis 1) or "
                        "per block along k (axis 0) of a [k, n] = "
                     << q->type << " weight";
  }
  if (scheme->first == "fp8-weight") {
    if (group != k)
      return n.error() << "float8 weights with blocks along k are not supported (one scale per "
                          "output column or per tensor is)";
    group = 0;
    for (int64_t i = 0; zeroPoint && i < zeroPoint->size(); ++i)
      if (zeroPoint->integer(i) != 0)
        return n.error() << "a float8 zero point must be 0";
  }
  if (scheme->first == "int4" && group % 2)
    return n.error() << "int4 weights need an even group along k, got " << group;
  const int64_t offset = scheme->second;
  Type element = scale->element();
  if (int64_t dtype = n.intAttr("output_dtype", 0))
    element = convertElementType(n.context(), static_cast<int32_t>(dtype));
  auto code = [&](int64_t c, int64_t j) { return q->integer(j * cols + c) - offset; };
  auto scaleAt = [&](int64_t c, int64_t g) { return scale->real(at(c, g)); };
  auto zeroAt = [&](int64_t c, int64_t g) {
    return zeroPoint ? static_cast<float>(zeroPoint->integer(at(c, g)) - offset) : 0.0f;
  };
  results.push_back(repack(n, q->key, scheme->first, cols, k, group, element, /*transpose=*/true,
                           code, scaleAt, zeroAt));
  return success();
}

/// com.microsoft.MatMulNBits: Y = A · dequantize(B)ᵀ (+ bias), B [N, K] in
/// blocks of block_size along K, `bits` 4 or 8 unsigned with zero points
/// (default 2^(bits-1)), computed here in A's precision.
LogicalResult importMatMulNBits(NodeImporter &n, SmallVectorImpl<Value> &results) {
  if (failed(n.checkAttributes({{"K", kInt},
                                {"N", kInt},
                                {"bits", kInt},
                                {"block_size", kInt},
                                {"accuracy_level", kInt}})) ||
      failed(n.checkArity({3, 6})))
    return failure();
  auto a = n.requiredInput(0), b = n.requiredInput(1), s = n.requiredInput(2);
  if (failed(a) || failed(b) || failed(s))
    return failure();
  const int64_t k = n.intAttr("K", 0), cols = n.intAttr("N", 0), bits = n.intAttr("bits", 4),
                block = n.intAttr("block_size", 0);
  if (k <= 0 || cols <= 0 || block <= 0)
    return n.error() << "needs positive K, N and block_size, got " << k << ", " << cols << ", "
                     << block;
  if (bits != 4 && bits != 8)
    return n.error() << bits << "-bit weights are not supported (4 and 8 are)";
  if (k % block || (bits == 4 && block % 2))
    return n.error() << "block_size " << block << " does not divide K = " << k
                     << " (a partial last block is not supported)";
  if (n.input(4))
    return n.error() << "g_idx (act-order group indices) is not supported";
  const int64_t blocks = k / block, blob = block * bits / 8;
  std::optional<ConstantData> q = ConstantData::of(*b);
  if (!q || !q->element().isUnsignedInteger(8) || !q->complete() ||
      q->size() != cols * blocks * blob)
    return n.error() << "B must be a uint8 initializer of " << cols * blocks * blob
                     << " bytes ([N, K / block_size, block_size * bits / 8])";
  std::optional<ConstantData> scale = ConstantData::of(*s);
  if (!scale || !scale->isReal() || !scale->complete() || scale->size() != cols * blocks)
    return n.error() << "scales must be a float initializer of N * K / block_size = "
                     << cols * blocks << " values";
  std::optional<ConstantData> zeroPoint = ConstantData::of(n.input(3));
  const int64_t zeroRowBytes = (blocks * bits + 7) / 8;
  if (n.input(3) && (!zeroPoint || !zeroPoint->complete() ||
                     !(zeroPoint->isReal() ? zeroPoint->size() == cols * blocks
                                           : zeroPoint->element().isUnsignedInteger(8) &&
                                                 zeroPoint->size() == cols * zeroRowBytes)))
    return n.error() << "zero_points must be a uint8 initializer of " << cols * zeroRowBytes
                     << " bytes (packed) or a float one of " << cols * blocks << " values";
  const int64_t offset = int64_t(1) << (bits - 1);
  auto code = [&](int64_t c, int64_t j) {
    int64_t at = c * blocks * blob + (j / block) * blob + (j % block) * bits / 8;
    int64_t byte = q->integer(at);
    int64_t value = bits == 8 ? byte : ((j % block) % 2 ? byte >> 4 : byte & 0xf);
    return value - offset;
  };
  auto scaleAt = [&](int64_t c, int64_t g) { return scale->real(c * blocks + g); };
  auto zeroAt = [&](int64_t c, int64_t g) -> float {
    if (!zeroPoint)
      return 0.0f;
    if (zeroPoint->isReal())
      return zeroPoint->real(c * blocks + g) - static_cast<float>(offset);
    int64_t byte = zeroPoint->integer(c * zeroRowBytes + g * bits / 8);
    int64_t value = bits == 8 ? byte : (g % 2 ? byte >> 4 : byte & 0xf);
    return static_cast<float>(value - offset);
  };
  Type element = NodeImporter::elementTypeOf(*a);
  Value weight = repack(n, q->key, bits == 4 ? "int4" : "int8", cols, k, block, element,
                        /*transpose=*/false, code, scaleAt, zeroAt);
  std::optional<Shape> shape = shapeOf(*a);
  if (shape && !shape->empty())
    shape->back() = cols;
  Type type = n.resultType(0, element, shape);
  results.push_back(graph::LinearOp::create(n.builder, n.loc, type, *a, weight, n.input(5), Value(),
                                            n.builder.getBoolAttr(true)));
  return success();
}

} // namespace

void infer::import::addQuantizedImporters(llvm::StringMap<NodeImportFn> &table) {
  table["DequantizeLinear"] = importDequantizeLinear;
  table["com.microsoft.MatMulNBits"] = importMatMulNBits;
}
