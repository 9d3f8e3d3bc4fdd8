//===- ElementwiseKernel.cpp - interprets an exec.elementwise region ------===//
//
// The region is a flat list of graph ops over the launch's inputs (docs/
// artifact-format.md, "Region"). Each value is materialised whole, in double,
// rounded to its result type after every op (f32 ops round as f32 arithmetic
// does, bf16/f16 ops to nearest even), which gives the reference
// interpreter's results: transcendental functions in double rounded once,
// + - * / correctly rounded, reductions accumulated in double. Binary ops and
// Where broadcast numpy-style. Dynamic argument dims (-1) are the step's
// batch and seq ([?, ?, F…]) or T ([?, F…]). The ops are ElementwiseOps.h's;
// any other is Unimplemented, naming it.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/HostMemory.h"
#include "runtime/base/LowPrecision.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ElementwiseOps.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace infer::cpu {
namespace art = artifact;
namespace {

constexpr double kPi = 3.14159265358979323846;
/// The most elements one region value may have (8 bytes each while held).
constexpr int64_t kMaxValueElements = int64_t(1) << 31;

struct Value {
  art::ElementType type = art::ELEMENT_TYPE_F32;
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// Elements of `shape`, or -1 when a dim is negative or the count exceeds
/// kMaxValueElements.
int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t dim : shape) {
    if (dim < 0 || (dim != 0 && n > kMaxValueElements / dim))
      return -1;
    n *= dim;
  }
  return n;
}

bool isFloat(art::ElementType type) {
  return type == art::ELEMENT_TYPE_F32 || type == art::ELEMENT_TYPE_F64 ||
         type == art::ELEMENT_TYPE_BF16 || type == art::ELEMENT_TYPE_F16;
}

/// f64 -> integer truncating toward zero, saturating (NaN to the lowest
/// value), as the reference interpreter casts.
double toInteger(double x, double lo, double hi) {
  if (std::isnan(x))
    return lo;
  return std::min(std::max(std::trunc(x), lo), hi);
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
    // Doubles hold i64 values exactly only up to 2^53; the region computes
    // floats, so integers here are only constants and cast inputs.
    return toInteger(x, -9223372036854775808.0, 9223372036854774784.0);
  case art::ELEMENT_TYPE_I32:
    return toInteger(x, -2147483648.0, 2147483647.0);
  case art::ELEMENT_TYPE_I16:
    return toInteger(x, -32768.0, 32767.0);
  case art::ELEMENT_TYPE_I8:
    return toInteger(x, -128.0, 127.0);
  case art::ELEMENT_TYPE_U8:
    return toInteger(x, 0.0, 255.0);
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
    const char *at = static_cast<const char *>(data) + i * int64_t(art::elementSize(type));
    switch (type) {
    case art::ELEMENT_TYPE_F32: {
      float x;
      std::memcpy(&x, at, 4);
      out[i] = x;
      break;
    }
    case art::ELEMENT_TYPE_F64:
      std::memcpy(&out[i], at, 8);
      break;
    case art::ELEMENT_TYPE_BF16:
    case art::ELEMENT_TYPE_F16: {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      out[i] = type == art::ELEMENT_TYPE_BF16 ? lowp::floatFromBF16(bits) : lowp::floatFromF16(bits);
      break;
    }
    case art::ELEMENT_TYPE_I64: {
      int64_t x;
      std::memcpy(&x, at, 8);
      out[i] = double(x);
      break;
    }
    case art::ELEMENT_TYPE_I32: {
      int32_t x;
      std::memcpy(&x, at, 4);
      out[i] = x;
      break;
    }
    case art::ELEMENT_TYPE_BOOL:
    case art::ELEMENT_TYPE_U8:
      out[i] = static_cast<const uint8_t *>(static_cast<const void *>(at))[0];
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
      static_cast<int64_t *>(out.data)[i] =
          static_cast<int64_t>(toInteger(x, -9223372036854775808.0, 9223372036854774784.0));
      break;
    case art::ELEMENT_TYPE_I32:
      static_cast<int32_t *>(out.data)[i] =
          static_cast<int32_t>(toInteger(x, -2147483648.0, 2147483647.0));
      break;
    case art::ELEMENT_TYPE_BOOL:
      static_cast<uint8_t *>(out.data)[i] = x != 0;
      break;
    case art::ELEMENT_TYPE_U8:
      static_cast<uint8_t *>(out.data)[i] = static_cast<uint8_t>(toInteger(x, 0.0, 255.0));
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
  if (count(out) < 0)
    return invalidArgumentError("elementwise: a broadcast value is too large");
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

bool boolAttr(const art::RegionOp &op, const std::string &name, bool fallback) {
  const art::Attribute *attribute = findAttr(op, name);
  if (!attribute)
    return fallback;
  if (attribute->value_case() == art::Attribute::kBoolValue)
    return attribute->bool_value();
  if (attribute->value_case() == art::Attribute::kIntValue)
    return attribute->int_value() != 0;
  return fallback;
}

double sigmoid(double x) {
  // Both branches avoid exp overflow for large |x| (the interpreter's form).
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

/// The unary function of op `name`, or nullptr.
double (*unaryFunction(const std::string &name))(double) {
  static const struct {
    const char *name;
    double (*fn)(double);
  } table[] = {
      {"graph.neg", [](double x) { return -x; }},
      {"graph.abs", [](double x) { return std::fabs(x); }},
      {"graph.sqrt", [](double x) { return std::sqrt(x); }},
      {"graph.reciprocal", [](double x) { return 1.0 / x; }},
      {"graph.exp", [](double x) { return std::exp(x); }},
      {"graph.log", [](double x) { return std::log(x); }},
      {"graph.sin", [](double x) { return std::sin(x); }},
      {"graph.cos", [](double x) { return std::cos(x); }},
      {"graph.tanh", [](double x) { return std::tanh(x); }},
      {"graph.erf", [](double x) { return std::erf(x); }},
      {"graph.sigmoid", sigmoid},
      {"graph.relu", [](double x) { return x > 0 ? x : (x == x ? 0.0 : x); }},
      {"graph.identity", [](double x) { return x; }},
      // The conversion is the rounding to the result type after the op.
      {"graph.cast", [](double x) { return x; }},
  };
  for (const auto &entry : table)
    if (name == entry.name)
      return entry.fn;
  return nullptr;
}

/// The binary function of op `name`, or nullptr.
double (*binaryFunction(const std::string &name))(double, double) {
  static const struct {
    const char *name;
    double (*fn)(double, double);
  } table[] = {
      {"graph.add", [](double a, double b) { return a + b; }},
      {"graph.sub", [](double a, double b) { return a - b; }},
      {"graph.mul", [](double a, double b) { return a * b; }},
      {"graph.div", [](double a, double b) { return a / b; }},
      {"graph.pow", [](double a, double b) { return std::pow(a, b); }},
      // As the interpreter: the first operand unless the other compares
      // larger (smaller), so a NaN first operand wins, a NaN second does not.
      {"graph.max", [](double a, double b) { return a < b ? b : a; }},
      {"graph.min", [](double a, double b) { return b < a ? b : a; }},
  };
  for (const auto &entry : table)
    if (name == entry.name)
      return entry.fn;
  return nullptr;
}

/// Whether element i of a value of type `type` is exactly an integer type
/// (integer division by zero is an error there).
bool integral(art::ElementType type) { return !isFloat(type); }

/// graph.reduce_{mean,sum,max}: over the axes its second operand lists (all
/// when none), keepdims and noop_with_empty_axes as attributes.
StatusOr<Value> reduce(const art::RegionOp &op, const std::vector<const Value *> &operands,
                       Value result) {
  const std::string &name = op.name();
  if (operands.empty() || operands.size() > 2)
    return invalidArgumentError("elementwise: '" + name + "' takes an input and optional axes");
  const Value &input = *operands[0];
  int64_t rank = static_cast<int64_t>(input.shape.size());
  std::vector<bool> reduced(static_cast<size_t>(rank), true);
  bool keepDims = boolAttr(op, "keepdims", true);
  if (operands.size() == 2 && !operands[1]->data.empty()) {
    std::fill(reduced.begin(), reduced.end(), false);
    for (double value : operands[1]->data) {
      int64_t axis = static_cast<int64_t>(value);
      if (axis < -rank || axis >= rank || double(axis) != value)
        return invalidArgumentError("elementwise: '" + name + "' axis " + std::to_string(axis) +
                                    " is outside a rank-" + std::to_string(rank) + " value");
      if (axis < 0)
        axis += rank;
      if (reduced[static_cast<size_t>(axis)])
        return invalidArgumentError("elementwise: '" + name + "' reduces axis " +
                                    std::to_string(axis) + " twice");
      reduced[static_cast<size_t>(axis)] = true;
    }
  } else if (boolAttr(op, "noop_with_empty_axes", false)) {
    result.shape = input.shape;
    result.data = input.data;
    return result;
  }
  std::vector<int64_t> kept, outShape;
  int64_t reducedCount = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t dim = input.shape[static_cast<size_t>(d)];
    kept.push_back(reduced[static_cast<size_t>(d)] ? 1 : dim);
    if (reduced[static_cast<size_t>(d)])
      reducedCount *= dim;
    if (!reduced[static_cast<size_t>(d)] || keepDims)
      outShape.push_back(reduced[static_cast<size_t>(d)] ? 1 : dim);
  }
  bool isMax = name == "graph.reduce_max";
  std::vector<double> acc(static_cast<size_t>(count(kept)),
                          isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  // Element e of the input adds into the slot of its kept coordinates.
  std::vector<int64_t> slot = broadcastIndex(kept, input.shape);
  for (size_t e = 0; e < input.data.size(); ++e) {
    double &target = acc[static_cast<size_t>(slot[e])];
    target = isMax ? std::max(target, input.data[e]) : target + input.data[e];
  }
  if (name == "graph.reduce_mean")
    for (double &value : acc)
      value = reducedCount == 0 ? std::numeric_limits<double>::quiet_NaN()
                                : value / double(reducedCount);
  result.shape = outShape;
  result.data = std::move(acc);
  RETURN_IF_ERROR(roundAll(result));
  return result;
}

/// graph.clip: operands [input, min?, max?]. With one bound the artifact
/// must say which (the op's operandSegmentSizes), or the op is refused.
StatusOr<Value> clip(const art::RegionOp &op, const std::vector<const Value *> &operands,
                     Value result) {
  const Value *lo = nullptr, *hi = nullptr;
  if (operands.size() == 3) {
    lo = operands[1];
    hi = operands[2];
  } else if (operands.size() == 2) {
    const art::Attribute *segments = findAttr(op, "operandSegmentSizes");
    if (!segments || segments->value_case() != art::Attribute::kInts ||
        segments->ints().values_size() != 3)
      return unimplementedError("elementwise: graph.clip with one bound, and the artifact does "
                                "not record whether it is the min or the max");
    (segments->ints().values(1) == 1 ? lo : hi) = operands[1];
  } else if (operands.size() != 1) {
    return invalidArgumentError("elementwise: graph.clip takes an input and up to two bounds");
  }
  for (const Value *bound : {lo, hi})
    if (bound && bound->data.size() != 1)
      return invalidArgumentError("elementwise: graph.clip's bounds must be scalars");
  double low = lo ? lo->data[0] : -std::numeric_limits<double>::infinity();
  double high = hi ? hi->data[0] : std::numeric_limits<double>::infinity();
  const Value &input = *operands[0];
  result.shape = input.shape;
  result.data.resize(input.data.size());
  for (size_t i = 0; i < input.data.size(); ++i) {
    double clamped = input.data[i] < low ? low : input.data[i];
    result.data[i] = clamped > high ? high : clamped;
  }
  RETURN_IF_ERROR(roundAll(result));
  return result;
}

/// graph.where(condition, x, y), the three broadcast together.
StatusOr<Value> where(const std::vector<const Value *> &operands, Value result) {
  if (operands.size() != 3)
    return invalidArgumentError("elementwise: graph.where takes a condition, x and y");
  ASSIGN_OR_RETURN(std::vector<int64_t> partial,
                   broadcastShape(operands[0]->shape, operands[1]->shape));
  ASSIGN_OR_RETURN(result.shape, broadcastShape(partial, operands[2]->shape));
  std::vector<int64_t> c = broadcastIndex(operands[0]->shape, result.shape);
  std::vector<int64_t> x = broadcastIndex(operands[1]->shape, result.shape);
  std::vector<int64_t> y = broadcastIndex(operands[2]->shape, result.shape);
  result.data.resize(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    result.data[i] =
        operands[0]->data[c[i]] != 0 ? operands[1]->data[x[i]] : operands[2]->data[y[i]];
  RETURN_IF_ERROR(roundAll(result));
  return result;
}

StatusOr<Value> evaluate(const art::RegionOp &op, const std::vector<const Value *> &operands) {
  const std::string &name = op.name();
  if (!runsElementwiseOp(name))
    return unimplementedError("elementwise: the cpu backend does not implement '" + name + "'");
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
    int64_t elements = count(result.shape);
    uint64_t width = art::elementSize(constant.element_type());
    if (elements < 0 || width == 0 || constant.data().size() != uint64_t(elements) * width)
      return invalidArgumentError("elementwise: a graph.constant's data does not match its shape");
    ASSIGN_OR_RETURN(result.data, load(constant.data().data(), constant.element_type(), elements));
    RETURN_IF_ERROR(roundAll(result));
    return result;
  }
  if (name == "graph.reduce_mean" || name == "graph.reduce_sum" || name == "graph.reduce_max")
    return reduce(op, operands, std::move(result));
  if (name == "graph.clip")
    return clip(op, operands, std::move(result));
  if (name == "graph.where")
    return where(operands, std::move(result));
  double (*unaryFn)(double) = unaryFunction(name);
  if (name == "graph.gelu") {
    const art::Attribute *approximate = findAttr(op, "approximate");
    std::string mode = approximate ? approximate->string_value() : "none";
    if (mode == "tanh")
      unaryFn = [](double x) {
        return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
      };
    else if (mode == "none")
      unaryFn = [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
    else
      return unimplementedError("elementwise: graph.gelu approximate = '" + mode + "'");
  }
  if (unaryFn) {
    if (operands.size() != 1)
      return invalidArgumentError("elementwise: '" + name + "' takes one operand");
    result.shape = operands[0]->shape;
    result.data.resize(operands[0]->data.size());
    for (size_t i = 0; i < result.data.size(); ++i)
      result.data[i] = unaryFn(operands[0]->data[i]);
    RETURN_IF_ERROR(roundAll(result));
    return result;
  }
  double (*binaryFn)(double, double) = binaryFunction(name);
  if (!binaryFn)
    return unimplementedError("elementwise: the cpu backend does not implement '" + name + "'");
  if (operands.size() != 2)
    return invalidArgumentError("elementwise: '" + name + "' takes two operands");
  ASSIGN_OR_RETURN(result.shape, broadcastShape(operands[0]->shape, operands[1]->shape));
  std::vector<int64_t> left = broadcastIndex(operands[0]->shape, result.shape);
  std::vector<int64_t> right = broadcastIndex(operands[1]->shape, result.shape);
  result.data.resize(left.size());
  for (size_t i = 0; i < left.size(); ++i) {
    double a = operands[0]->data[left[i]], b = operands[1]->data[right[i]];
    if (integral(result.type) && name == "graph.div" && b == 0)
      return invalidArgumentError("elementwise: integer division by zero");
    result.data[i] = binaryFn(a, b);
  }
  RETURN_IF_ERROR(roundAll(result));
  return result;
}

} // namespace

Status runElementwise(const LaunchArgs &args) {
  const art::Region &region = args.launch->region();
  if (static_cast<size_t>(region.arguments_size()) != args.operands.size() ||
      static_cast<size_t>(region.yields_size()) != args.outputs.size())
    return args.error("region does not match the launch's inputs and outputs");
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
    if (view.type != held || count(value.shape) < 0 || view.elements != count(value.shape))
      return args.error("input " + std::to_string(i) + " does not match the region's argument");
    ASSIGN_OR_RETURN(value.data, load(view.data, view.type, view.elements));
    values.push_back(std::move(value));
  }
  // Every value is held whole, 8 bytes an element: ask before a large region.
  uint64_t held = 0;
  for (const View &out : args.outputs)
    held += 8 * uint64_t(std::max<int64_t>(out.elements, 0)) * uint64_t(region.ops_size());
  if (held > (uint64_t(256) << 20))
    RETURN_IF_ERROR(checkHostMemory("launch " + std::to_string(args.index) + " (elementwise)", held,
                                    availableHostMemoryBytes()));
  for (const art::RegionOp &op : region.ops()) {
    std::vector<const Value *> operands;
    for (uint32_t id : op.operands()) {
      if (id >= values.size())
        return args.error("'" + op.name() + "' uses value " + std::to_string(id) +
                          " before it is defined");
      operands.push_back(&values[id]);
    }
    StatusOr<Value> result = evaluate(op, operands);
    if (!result.ok())
      return result.status().withPrefix("launch " + std::to_string(args.index));
    values.push_back(std::move(result).value());
  }
  for (int i = 0; i < region.yields_size(); ++i) {
    if (region.yields(i) >= values.size())
      return args.error("yields undefined value " + std::to_string(region.yields(i)));
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
