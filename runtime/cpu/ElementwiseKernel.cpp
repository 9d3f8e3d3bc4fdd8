//===- ElementwiseKernel.cpp - interprets an exec.elementwise region ------===//
//
// The region is a flat list of graph ops over the launch's inputs (docs/
// artifact-format.md, "Region"). Each value is materialised whole, in double,
// rounded to its result type after every op (f32 ops round as f32 arithmetic
// does, bf16/f16 ops to nearest even). Binary ops broadcast numpy-style.
// Dynamic argument dims (-1) are the step's batch and seq ([?, ?, F…]) or T
// ([?, F…]). Ops: gelu (none/tanh),
// relu, neg, add, sub, mul, div, cast, identity, constant; any other op is
// Unimplemented, naming it.
//
//===----------------------------------------------------------------------===//

#include "runtime/cpu/CpuKernels.h"
#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace infer::cpu {
namespace art = artifact;
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Value {
  art::ElementType type = art::ELEMENT_TYPE_F32;
  std::vector<int64_t> shape;
  std::vector<double> data;
};

int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t dim : shape)
    n *= dim;
  return n;
}

/// Rounds `x` to what `type` can hold.
StatusOr<double> roundTo(art::ElementType type, double x) {
  switch (type) {
  case art::ELEMENT_TYPE_F32:
    return double(float(x));
  case art::ELEMENT_TYPE_F64:
    return x;
  case art::ELEMENT_TYPE_BF16:
    return double(lowp::roundToBF16(float(x)));
  case art::ELEMENT_TYPE_F16:
    return double(lowp::roundToF16(float(x)));
  case art::ELEMENT_TYPE_I64:
  case art::ELEMENT_TYPE_I32:
  case art::ELEMENT_TYPE_I16:
  case art::ELEMENT_TYPE_I8:
  case art::ELEMENT_TYPE_U8:
    return std::trunc(x);
  case art::ELEMENT_TYPE_BOOL:
    return x != 0 ? 1.0 : 0.0;
  default:
    return unimplementedError(std::string("elementwise: element type ") +
                              art::elementTypeName(type) + " is not supported by the cpu backend");
  }
}

Status roundAll(Value &value) {
  for (double &x : value.data) {
    ASSIGN_OR_RETURN(x, roundTo(value.type, x));
  }
  return okStatus();
}

/// Reads `elements` values of `type` at `data`.
StatusOr<std::vector<double>> load(const void *data, art::ElementType type, int64_t elements) {
  std::vector<double> out(static_cast<size_t>(elements));
  for (int64_t i = 0; i < elements; ++i) {
    switch (type) {
    case art::ELEMENT_TYPE_F32:
      out[i] = static_cast<const float *>(data)[i];
      break;
    case art::ELEMENT_TYPE_F64:
      out[i] = static_cast<const double *>(data)[i];
      break;
    case art::ELEMENT_TYPE_BF16:
    case art::ELEMENT_TYPE_F16: {
      uint16_t bits;
      std::memcpy(&bits, static_cast<const char *>(data) + 2 * i, 2);
      out[i] = type == art::ELEMENT_TYPE_BF16 ? lowp::floatFromBF16(bits) : lowp::floatFromF16(bits);
      break;
    }
    case art::ELEMENT_TYPE_I64:
      out[i] = double(static_cast<const int64_t *>(data)[i]);
      break;
    case art::ELEMENT_TYPE_I32:
      out[i] = static_cast<const int32_t *>(data)[i];
      break;
    case art::ELEMENT_TYPE_BOOL:
    case art::ELEMENT_TYPE_U8:
      out[i] = static_cast<const uint8_t *>(data)[i];
      break;
    default:
      return unimplementedError(std::string("elementwise: cannot read element type ") +
                                art::elementTypeName(type));
    }
  }
  return out;
}

Status store(const Value &value, const View &out) {
  int64_t n = static_cast<int64_t>(value.data.size());
  for (int64_t i = 0; i < n; ++i) {
    double x = value.data[i];
    switch (out.type) {
    case art::ELEMENT_TYPE_F32:
      static_cast<float *>(out.data)[i] = float(x);
      break;
    case art::ELEMENT_TYPE_F64:
      static_cast<double *>(out.data)[i] = x;
      break;
    case art::ELEMENT_TYPE_I64:
      static_cast<int64_t *>(out.data)[i] = static_cast<int64_t>(x);
      break;
    case art::ELEMENT_TYPE_I32:
      static_cast<int32_t *>(out.data)[i] = static_cast<int32_t>(x);
      break;
    case art::ELEMENT_TYPE_BOOL:
    case art::ELEMENT_TYPE_U8:
      static_cast<uint8_t *>(out.data)[i] = static_cast<uint8_t>(x);
      break;
    default:
      return unimplementedError(std::string("elementwise: cannot write element type ") +
                                art::elementTypeName(out.type));
    }
  }
  return okStatus();
}

/// The numpy broadcast of `a` and `b`.
StatusOr<std::vector<int64_t>> broadcastShape(const std::vector<int64_t> &a,
                                              const std::vector<int64_t> &b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return invalidArgumentError("elementwise: shapes do not broadcast");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

/// For each element of `shape`, its index into `from` broadcast to `shape`.
std::vector<int64_t> broadcastIndex(const std::vector<int64_t> &from,
                                    const std::vector<int64_t> &shape) {
  size_t rank = shape.size(), lead = rank - from.size();
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (size_t i = rank; i-- > lead;) {
    int64_t dim = from[i - lead];
    strides[i] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  int64_t n = count(shape);
  std::vector<int64_t> index(static_cast<size_t>(n));
  std::vector<int64_t> position(rank, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t offset = 0;
    for (size_t i = 0; i < rank; ++i)
      offset += position[i] * strides[i];
    index[e] = offset;
    for (size_t i = rank; i-- > 0;) {
      if (++position[i] < shape[i])
        break;
      position[i] = 0;
    }
  }
  return index;
}

const art::Attribute *findAttr(const art::RegionOp &op, const std::string &name) {
  for (const art::Attribute &attribute : op.attributes())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

StatusOr<Value> evaluate(const art::RegionOp &op, const std::vector<const Value *> &operands) {
  const std::string &name = op.name();
  for (const art::Attribute &attribute : op.attributes())
    if (attribute.value_case() == art::Attribute::kMlir)
      return unimplementedError("elementwise: '" + name + "' has attribute '" + attribute.name() +
                                "' in MLIR form, which the cpu backend cannot interpret");
  if (op.results_size() != 1)
    return unimplementedError("elementwise: '" + name + "' with " +
                              std::to_string(op.results_size()) + " results");
  Value result;
  result.type = op.results(0).element_type();
  if (name == "graph.constant") {
    const art::Attribute *value = findAttr(op, "value");
    if (!value || value->value_case() != art::Attribute::kTensor)
      return unimplementedError("elementwise: graph.constant without a dense 'value'");
    const art::Constant &constant = value->tensor();
    result.shape.assign(constant.shape().begin(), constant.shape().end());
    ASSIGN_OR_RETURN(result.data, load(constant.data().data(), constant.element_type(),
                                       count(result.shape)));
    RETURN_IF_ERROR(roundAll(result));
    return result;
  }
  auto unary = [&](double (*fn)(double)) -> StatusOr<Value> {
    if (operands.size() != 1)
      return invalidArgumentError("elementwise: '" + name + "' takes one operand");
    result.shape = operands[0]->shape;
    result.data.resize(operands[0]->data.size());
    for (size_t i = 0; i < result.data.size(); ++i)
      result.data[i] = fn(operands[0]->data[i]);
    RETURN_IF_ERROR(roundAll(result));
    return result;
  };
  if (name == "graph.relu")
    return unary([](double x) { return x > 0 ? x : (x == x ? 0.0 : x); });
  if (name == "graph.neg")
    return unary([](double x) { return -x; });
  if (name == "graph.identity" || name == "graph.cast")
    return unary([](double x) { return x; });
  if (name == "graph.gelu") {
    const art::Attribute *approximate = findAttr(op, "approximate");
    std::string mode = approximate ? approximate->string_value() : "none";
    if (mode == "tanh")
      return unary([](double x) {
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
      });
    if (mode == "none")
      return unary([](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); });
    return unimplementedError("elementwise: graph.gelu approximate = '" + mode + "'");
  }
  double (*binary)(double, double) = nullptr;
  if (name == "graph.add")
    binary = [](double a, double b) { return a + b; };
  else if (name == "graph.sub")
    binary = [](double a, double b) { return a - b; };
  else if (name == "graph.mul")
    binary = [](double a, double b) { return a * b; };
  else if (name == "graph.div")
    binary = [](double a, double b) { return a / b; };
  if (!binary)
    return unimplementedError("elementwise: the cpu backend does not implement '" + name + "'");
  if (operands.size() != 2)
    return invalidArgumentError("elementwise: '" + name + "' takes two operands");
  ASSIGN_OR_RETURN(result.shape, broadcastShape(operands[0]->shape, operands[1]->shape));
  std::vector<int64_t> left = broadcastIndex(operands[0]->shape, result.shape);
  std::vector<int64_t> right = broadcastIndex(operands[1]->shape, result.shape);
  result.data.resize(left.size());
  bool integral = result.type != art::ELEMENT_TYPE_F32 && result.type != art::ELEMENT_TYPE_F64 &&
                  result.type != art::ELEMENT_TYPE_BF16 && result.type != art::ELEMENT_TYPE_F16;
  for (size_t i = 0; i < left.size(); ++i) {
    double a = operands[0]->data[left[i]], b = operands[1]->data[right[i]];
    if (integral && name == "graph.div" && b == 0)
      return invalidArgumentError("elementwise: integer division by zero");
    result.data[i] = binary(a, b);
  }
  RETURN_IF_ERROR(roundAll(result));
  return result;
}

} // namespace

Status runElementwise(const LaunchArgs &args) {
  const art::Region &region = args.launch->region();
  std::vector<Value> values;
  values.reserve(static_cast<size_t>(region.arguments_size() + region.ops_size()));
  for (int i = 0; i < region.arguments_size(); ++i) {
    const art::TensorType &type = region.arguments(i);
    const View &view = args.operands[static_cast<size_t>(i)];
    Value value;
    value.type = type.element_type();
    int dynamic = 0;
    for (int64_t dim : type.shape())
      dynamic += dim < 0;
    for (int d = 0; d < type.shape_size(); ++d) {
      int64_t dim = type.shape(d);
      if (dim >= 0)
        value.shape.push_back(dim);
      else if (dynamic == 2 && d < 2)
        value.shape.push_back(d == 0 ? args.batch : args.seq);
      else if (dynamic == 1 && d == 0)
        value.shape.push_back(args.tokens);
      else
        return unimplementedError("elementwise: argument " + std::to_string(i) +
                                  " has dynamic dims the cpu backend cannot resolve");
    }
    // bf16/f16 buffers and constants reach kernels as f32 (already rounded).
    art::ElementType held = value.type == art::ELEMENT_TYPE_BF16 || value.type == art::ELEMENT_TYPE_F16
                                ? art::ELEMENT_TYPE_F32
                                : value.type;
    if (view.type != held || view.elements != count(value.shape))
      return args.error("input " + std::to_string(i) + " does not match the region's argument");
    ASSIGN_OR_RETURN(value.data, load(view.data, view.type, view.elements));
    values.push_back(std::move(value));
  }
  for (const art::RegionOp &op : region.ops()) {
    std::vector<const Value *> operands;
    for (uint32_t id : op.operands())
      operands.push_back(&values[id]);
    StatusOr<Value> result = evaluate(op, operands);
    if (!result.ok())
      return result.status().withPrefix("launch " + std::to_string(args.index));
    values.push_back(std::move(result).value());
  }
  for (int i = 0; i < region.yields_size(); ++i) {
    const Value &value = values[region.yields(i)];
    const View &out = args.outputs[static_cast<size_t>(i)];
    if (static_cast<int64_t>(value.data.size()) != out.elements)
      return args.error("yield " + std::to_string(i) + " has " +
                        std::to_string(value.data.size()) + " elements, its buffer " +
                        std::to_string(out.elements));
    RETURN_IF_ERROR(store(value, out));
  }
  return okStatus();
}

} // namespace infer::cpu
