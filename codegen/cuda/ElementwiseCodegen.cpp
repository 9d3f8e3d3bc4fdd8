//===- ElementwiseCodegen.cpp - a CUDA kernel per exec.elementwise region --===//
//
// One thread per element of the region's (single) output shape. The region
// is evaluated as scalars at that element: every value's shape broadcasts to
// the output's (numpy, right-aligned), so value v at output coordinate c is
// v at c projected onto v's shape. Arithmetic is fp32; a value whose region
// type is bf16/f16 is rounded to it after its op, as the cpu backend does.
// Coordinates of dynamic dims are the step's (batch, seq) for [?, ?, F...]
// shapes and the token for [?, F...].
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaCodegen.h"
#include "codegen/cuda/CudaTypes.h"
#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/base/LowPrecision.h"

#include <cstdio>
#include <cstring>
#include <sstream>

namespace infer::codegen {
namespace art = artifact;
namespace {

/// The CUDA math function of a one-operand graph op that is one call, or
/// nullptr.
const char *unaryCall(const std::string &name) {
  static const struct {
    const char *op, *call;
  } table[] = {{"graph.tanh", "tanhf"}, {"graph.exp", "expf"}, {"graph.log", "logf"},
               {"graph.sin", "sinf"},   {"graph.cos", "cosf"}, {"graph.erf", "erff"},
               {"graph.sqrt", "sqrtf"}, {"graph.abs", "fabsf"}};
  for (const auto &entry : table)
    if (name == entry.op)
      return entry.call;
  return nullptr;
}

/// A C++ float literal that reads back as exactly `value` (hex float).
std::string floatLiteral(float value) {
  if (value != value)
    return "__int_as_float(0x7fc00000)";
  if (value == __builtin_inff())
    return "__int_as_float(0x7f800000)";
  if (value == -__builtin_inff())
    return "__int_as_float(0xff800000)";
  char text[64];
  std::snprintf(text, sizeof(text), "%af", static_cast<double>(value));
  return text;
}

/// The values of a dense constant, as floats.
StatusOr<std::vector<float>> constantValues(const art::Constant &constant) {
  int64_t count = 1;
  for (int64_t dim : constant.shape())
    count *= dim;
  uint64_t size = art::elementSize(constant.element_type());
  if (size == 0 || constant.data().size() != uint64_t(count) * size)
    return invalidArgumentError("a region constant's data does not match its shape");
  std::vector<float> values(static_cast<size_t>(count));
  const char *data = constant.data().data();
  for (int64_t i = 0; i < count; ++i) {
    const char *at = data + i * size;
    switch (constant.element_type()) {
    case art::ELEMENT_TYPE_F32: {
      float v;
      std::memcpy(&v, at, 4);
      values[i] = v;
      break;
    }
    case art::ELEMENT_TYPE_F64: {
      double v;
      std::memcpy(&v, at, 8);
      values[i] = float(v);
      break;
    }
    case art::ELEMENT_TYPE_BF16:
    case art::ELEMENT_TYPE_F16: {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      values[i] = constant.element_type() == art::ELEMENT_TYPE_BF16 ? lowp::floatFromBF16(bits)
                                                                    : lowp::floatFromF16(bits);
      break;
    }
    case art::ELEMENT_TYPE_I64: {
      int64_t v;
      std::memcpy(&v, at, 8);
      values[i] = float(v);
      break;
    }
    case art::ELEMENT_TYPE_I32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      values[i] = float(v);
      break;
    }
    default:
      return unimplementedError(std::string("a region constant of type ") +
                                art::elementTypeName(constant.element_type()));
    }
  }
  return values;
}

bool isFloatType(art::ElementType type) {
  return type == art::ELEMENT_TYPE_F32 || type == art::ELEMENT_TYPE_BF16 ||
         type == art::ELEMENT_TYPE_F16;
}

/// Generates the index expressions of values of any shape at the output
/// element whose coordinates are c0..c(rank-1).
class Indexer {
public:
  explicit Indexer(std::vector<int64_t> outShape) : out_(std::move(outShape)) {}

  /// The flat index into a row-major value of `shape` (-1: dynamic) at the
  /// current output coordinate, as C++ text.
  StatusOr<std::string> index(const std::vector<int64_t> &shape) const {
    size_t rank = shape.size(), outRank = out_.size();
    if (rank > outRank)
      return invalidArgumentError("a value has a higher rank than the region's output");
    int dynamic = 0;
    for (int64_t dim : shape)
      dynamic += dim < 0;
    std::string stride = "1LL", sum;
    for (size_t j = rank; j-- > 0;) {
      size_t axis = j + (outRank - rank);
      int64_t dim = shape[j];
      if (dim < 0) {
        // Dynamic dims must be the output's own dynamic dims, at the same axes.
        if (out_[axis] >= 0 || j != axis)
          return unimplementedError("a value's dynamic dims do not line up with the output's");
        if (dynamic != outDynamic())
          return unimplementedError("values mix [?, ?, F...] and [?, F...] shapes");
      } else if (out_[axis] >= 0 && dim != out_[axis] && dim != 1) {
        return invalidArgumentError("a value does not broadcast to the region's output");
      }
      if (dim != 1) {
        sum += (sum.empty() ? "" : " + ") + std::string("c") + std::to_string(axis) + " * " +
               stride;
      }
      std::string size = dim >= 0 ? std::to_string(dim) + "LL"
                                  : (dynamic == 2 && j == 0 ? "p.batch"
                                     : dynamic == 2        ? "p.seq"
                                                           : "p.tokens");
      stride = "(" + stride + " * " + size + ")";
    }
    return sum.empty() ? std::string("0LL") : sum;
  }

  int outDynamic() const {
    int dynamic = 0;
    for (int64_t dim : out_)
      dynamic += dim < 0;
    return dynamic;
  }

  /// Statements computing c0..c(rank-1) from the element index `e`.
  StatusOr<std::string> coordinates(int64_t &perToken) const {
    int dynamic = outDynamic();
    if (!((dynamic == 2 && out_.size() >= 2 && out_[0] < 0 && out_[1] < 0) ||
          (dynamic == 1 && out_[0] < 0)))
      return unimplementedError("the region's output is neither [?, ?, F...] nor [?, F...]");
    perToken = 1;
    for (int64_t dim : out_)
      if (dim >= 0)
        perToken *= dim;
    std::ostringstream code;
    code << "  long long t = e / " << perToken << "LL, f = e % " << perToken << "LL;\n";
    for (size_t axis = out_.size(); axis-- > size_t(dynamic);) {
      code << "  long long c" << axis << " = f % " << out_[axis] << "LL; f /= " << out_[axis]
           << "LL;\n";
    }
    code << "  (void)f;\n";
    if (dynamic == 2)
      code << "  long long c0 = t / p.seq, c1 = t % p.seq;\n";
    else
      code << "  long long c0 = t;\n";
    return code.str();
  }

private:
  std::vector<int64_t> out_;
};

const art::Attribute *findOpAttribute(const art::RegionOp &op, const std::string &name) {
  for (const art::Attribute &attribute : op.attributes())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

std::vector<int64_t> shapeOf(const art::TensorType &type) {
  return {type.shape().begin(), type.shape().end()};
}

} // namespace

StatusOr<std::string> generateElementwiseKernel(const art::ExecProgram &program,
                                                const art::Manifest &manifest,
                                                const art::Launch &launch,
                                                const std::string &kernelName) {
  const art::Region &region = launch.region();
  if (region.yields_size() == 0 || region.yields_size() != launch.outputs_size())
    return invalidArgumentError("its region yields " + std::to_string(region.yields_size()) +
                                " values for " + std::to_string(launch.outputs_size()) +
                                " outputs");
  if (region.arguments_size() != launch.operands_size())
    return invalidArgumentError("its region has " + std::to_string(region.arguments_size()) +
                                " arguments for " + std::to_string(launch.operands_size()) +
                                " operands");
  if (launch.operands_size() > 16 || launch.outputs_size() > 16)
    return unimplementedError("more than 16 inputs or outputs");
  std::vector<art::TensorType> types(region.arguments().begin(), region.arguments().end());
  for (const art::RegionOp &op : region.ops()) {
    if (op.results_size() != 1)
      return unimplementedError("'" + op.name() + "' with " + std::to_string(op.results_size()) +
                                " results");
    types.push_back(op.results(0));
  }
  for (uint32_t id : region.yields())
    if (id >= types.size())
      return invalidArgumentError("its region yields an unknown value");
  std::vector<int64_t> outShape = shapeOf(types[region.yields(0)]);
  for (uint32_t id : region.yields())
    if (shapeOf(types[id]) != outShape)
      return unimplementedError("its yields have different shapes");
  Indexer indexer(outShape);
  int64_t perToken = 0;
  ASSIGN_OR_RETURN(std::string coordinates, indexer.coordinates(perToken));

  std::ostringstream globals, body;
  body << "extern \"C\" __global__ void " << kernelName
       << "(infer::kernels::ElementwiseParams p) {\n"
       << "  infer::kernels::waitForPreviousKernel(); // first: Common.cuh says why\n"
       << "  using namespace infer::kernels;\n"
       << "  long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
       << "  if (e >= p.tokens * " << perToken << "LL) return;\n"
       << coordinates;
  auto round = [&](size_t value, art::ElementType type) {
    if (type == art::ELEMENT_TYPE_BF16)
      body << "  v" << value << " = __bfloat162float(__float2bfloat16_rn(v" << value << "));\n";
    else if (type == art::ELEMENT_TYPE_F16)
      body << "  v" << value << " = __half2float(__float2half_rn(v" << value << "));\n";
  };
  for (int i = 0; i < region.arguments_size(); ++i) {
    art::ElementType held = art::refElementType(manifest, program, launch.operands(i).ref());
    ASSIGN_OR_RETURN(std::string type, cudaTypeName(held));
    ASSIGN_OR_RETURN(std::string index, indexer.index(shapeOf(types[size_t(i)])));
    body << "  float v" << i << " = loadFloat<" << type << ">(p.inputs[" << i << "], " << index
         << ");\n";
  }
  size_t value = static_cast<size_t>(region.arguments_size());
  for (const art::RegionOp &op : region.ops()) {
    const std::string &name = op.name();
    art::ElementType resultType = op.results(0).element_type();
    if (!isFloatType(resultType))
      return unimplementedError("'" + name + "' computes " + art::elementTypeName(resultType) +
                                "; generated kernels compute float values only");
    std::vector<std::string> in;
    for (uint32_t id : op.operands()) {
      if (id >= value)
        return invalidArgumentError("'" + name + "' uses a value defined after it");
      in.push_back("v" + std::to_string(id));
    }
    auto needs = [&](size_t count) -> Status {
      if (in.size() != count)
        return invalidArgumentError("'" + name + "' takes " + std::to_string(count) +
                                    " operands");
      return okStatus();
    };
    std::string expr;
    if (name == "graph.constant") {
      const art::Attribute *attr = findOpAttribute(op, "value");
      if (!attr || attr->value_case() != art::Attribute::kTensor)
        return unimplementedError("graph.constant without a dense 'value'");
      ASSIGN_OR_RETURN(std::vector<float> values, constantValues(attr->tensor()));
      bool splat = !values.empty();
      for (float v : values)
        splat = splat && std::memcmp(&v, &values[0], sizeof(float)) == 0;
      if (splat) {
        expr = floatLiteral(values[0]);
      } else {
        std::string array = kernelName + "_c" + std::to_string(value);
        globals << "__device__ const float " << array << "[" << values.size() << "] = {";
        for (size_t i = 0; i < values.size(); ++i)
          globals << (i ? ", " : "") << floatLiteral(values[i]);
        globals << "};\n";
        std::vector<int64_t> shape(attr->tensor().shape().begin(), attr->tensor().shape().end());
        ASSIGN_OR_RETURN(std::string index, indexer.index(shape));
        expr = array + "[" + index + "]";
      }
    } else if (name == "graph.add" || name == "graph.sub" || name == "graph.mul" ||
               name == "graph.div") {
      RETURN_IF_ERROR(needs(2));
      char symbol = name == "graph.add" ? '+' : name == "graph.sub" ? '-' : name == "graph.mul" ? '*' : '/';
      expr = in[0] + " " + symbol + " " + in[1];
    } else if (name == "graph.neg") {
      RETURN_IF_ERROR(needs(1));
      expr = "-" + in[0];
    } else if (name == "graph.relu") {
      RETURN_IF_ERROR(needs(1));
      expr = "(" + in[0] + " > 0.f ? " + in[0] + " : (" + in[0] + " == " + in[0] + " ? 0.f : " +
             in[0] + "))";
    } else if (name == "graph.identity" || name == "graph.cast") {
      RETURN_IF_ERROR(needs(1));
      expr = in[0];
    } else if (name == "graph.gelu") {
      RETURN_IF_ERROR(needs(1));
      const art::Attribute *approximate = findOpAttribute(op, "approximate");
      std::string mode = approximate ? approximate->string_value() : "none";
      const std::string &x = in[0];
      if (mode == "tanh")
        expr = "0.5f * " + x + " * (1.f + tanhf(0.7978845608028654f * (" + x + " + 0.044715f * " +
               x + " * " + x + " * " + x + ")))";
      else if (mode == "none")
        expr = "0.5f * " + x + " * (1.f + erff(" + x + " * 0.7071067811865476f))";
      else
        return unimplementedError("graph.gelu approximate = '" + mode + "'");
    } else if (const char *call = unaryCall(name)) {
      RETURN_IF_ERROR(needs(1));
      expr = std::string(call) + "(" + in[0] + ")";
    } else if (name == "graph.sigmoid") {
      // Both branches avoid expf overflow (runtime/cpu's form).
      RETURN_IF_ERROR(needs(1));
      const std::string &x = in[0];
      expr = "(" + x + " >= 0.f ? 1.f / (1.f + expf(-" + x + ")) : expf(" + x + ") / (1.f + expf(" +
             x + ")))";
    } else if (name == "graph.reciprocal") {
      RETURN_IF_ERROR(needs(1));
      expr = "1.f / " + in[0];
    } else if (name == "graph.max" || name == "graph.min") {
      // As runtime/cpu: the first operand unless the other compares larger
      // (smaller), so a NaN first operand wins, a NaN second does not.
      RETURN_IF_ERROR(needs(2));
      expr = name == "graph.max"
                 ? "(" + in[0] + " < " + in[1] + " ? " + in[1] + " : " + in[0] + ")"
                 : "(" + in[1] + " < " + in[0] + " ? " + in[1] + " : " + in[0] + ")";
    } else if (name == "graph.pow") {
      RETURN_IF_ERROR(needs(2));
      expr = "powf(" + in[0] + ", " + in[1] + ")";
    } else if (name == "graph.clip") {
      // [input, min?, max?], as runtime/cpu's clip (NaN passes through).
      std::string lo, hi;
      if (in.size() == 3) {
        lo = in[1], hi = in[2];
      } else if (in.size() == 2) {
        const art::Attribute *segments = findOpAttribute(op, "operandSegmentSizes");
        if (!segments || segments->value_case() != art::Attribute::kInts ||
            segments->ints().values_size() != 3)
          return unimplementedError("graph.clip with one bound that the artifact does not name");
        (segments->ints().values(1) == 1 ? lo : hi) = in[1];
      } else if (in.size() != 1) {
        return invalidArgumentError("'graph.clip' takes an input and up to two bounds");
      }
      expr = in[0];
      if (!lo.empty())
        expr = "(" + expr + " < " + lo + " ? " + lo + " : " + expr + ")";
      if (!hi.empty())
        expr = "(" + expr + " > " + hi + " ? " + hi + " : " + expr + ")";
    } else {
      return unimplementedError(
          "'" + name +
          "' (generated kernels implement add, sub, mul, div, "
          "neg, relu, gelu, tanh, exp, log, sin, cos, erf, sqrt, abs, sigmoid, "
          "reciprocal, max, min, pow, clip, cast, identity, constant)");
    }
    body << "  float v" << value << " = " << expr << ";\n";
    round(value, resultType);
    ++value;
  }
  for (int i = 0; i < region.yields_size(); ++i) {
    uint32_t buffer = launch.outputs(i);
    if (buffer >= uint32_t(program.buffers_size()))
      return invalidArgumentError("it writes an unknown buffer");
    ASSIGN_OR_RETURN(std::string type, cudaTypeName(program.buffers(int(buffer)).element_type()));
    body << "  storeFloat<" << type << ">(p.outputs[" << i << "], e, v" << region.yields(i)
         << ");\n";
  }
  body << "}\n";
  return globals.str() + body.str();
}

} // namespace infer::codegen
