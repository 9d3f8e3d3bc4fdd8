//===- OnnxTensors.cpp - ONNX test data ↔ interpreter tensors -------------===//

#include "test/conformance/OnnxTensors.h"

#include "compiler/import/onnx/NodeImporter.h"
#include "dialects/graph/Interpreter/Interpreter.h"
#include "dialects/graph/Interpreter/LowPrecision.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <fstream>

using namespace infer;
using namespace infer::conformance;
using infer::interp::DType;
using infer::interp::Tensor;

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The elements of `proto` as T, from raw_data (little-endian `Raw`, which is
/// what every ONNX writer emits) or else from the typed repeated `field`.
template <typename T, typename Raw, typename Field>
llvm::Expected<std::vector<T>> elements(const onnx::TensorProto &proto, const Field &field,
                                        int64_t count) {
  std::vector<T> values;
  values.reserve(static_cast<size_t>(count));
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (static_cast<int64_t>(raw.size()) != count * static_cast<int64_t>(sizeof(Raw)))
      return makeError(llvm::formatv("tensor '{0}': raw_data has {1} bytes, expected {2}",
                                     proto.name(), raw.size(), count * sizeof(Raw)));
    for (int64_t i = 0; i < count; ++i) {
      Raw element;
      std::memcpy(&element, raw.data() + i * sizeof(Raw), sizeof(Raw));
      values.push_back(static_cast<T>(element));
    }
    return values;
  }
  if (field.size() != count)
    return makeError(llvm::formatv("tensor '{0}': {1} typed values, expected {2}", proto.name(),
                                   field.size(), count));
  for (auto element : field)
    values.push_back(static_cast<T>(element));
  return values;
}

/// One element as text: floats with %g, ints and bools as integers.
template <typename T> std::string formatValue(T value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if constexpr (std::is_floating_point_v<T>)
    os << llvm::formatv("{0:g}", static_cast<double>(value));
  else
    os << static_cast<int64_t>(value);
  return text;
}

/// Empty when `equal` holds element-wise; else a count and the first few
/// mismatches as "at flat index i: got X, want Y".
template <typename T, typename Equal>
std::string compareElements(const Tensor &got, const Tensor &want, Equal equal,
                            llvm::StringRef tolerance) {
  const T *g = got.data<T>();
  const T *w = want.data<T>();
  int64_t mismatches = 0;
  std::string details;
  llvm::raw_string_ostream os(details);
  constexpr int64_t kShown = 5;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    if (equal(g[i], w[i]))
      continue;
    if (mismatches++ < kShown)
      os << "\n  at flat index " << i << ": got " << formatValue(g[i]) << ", want "
         << formatValue(w[i]);
  }
  if (mismatches == 0)
    return {};
  std::string summary = llvm::formatv("{0} of {1} elements differ ({2}):", mismatches,
                                      want.numElements(), tolerance);
  if (mismatches > kShown)
    details += "\n  ...";
  return summary + details;
}

} // namespace

llvm::Expected<onnx::TensorProto> infer::conformance::readTensorProto(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    return makeError("cannot open " + path);
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&stream))
    return makeError(path + " is not a serialized onnx.TensorProto");
  return proto;
}

bool infer::conformance::inInterpreterDomain(mlir::MLIRContext &context, int32_t onnxType) {
  mlir::Type type = import::convertElementType(&context, onnxType);
  if (!type)
    return false;
  llvm::Expected<DType> dtype = interp::dtypeForType(type);
  if (!dtype) {
    llvm::consumeError(dtype.takeError());
    return false;
  }
  return true;
}

llvm::Expected<Tensor> infer::conformance::tensorFromProto(const onnx::TensorProto &proto) {
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return makeError("tensor '" + proto.name() + "' uses external data");
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0)
      return makeError("tensor '" + proto.name() + "' has a negative dim");
    count *= dim;
  }
  switch (proto.data_type()) {
  case onnx::TensorProto::FLOAT: {
    auto values = elements<float, float>(proto, proto.float_data(), count);
    if (!values)
      return values.takeError();
    return Tensor::fromF32(std::move(shape), std::move(*values));
  }
  case onnx::TensorProto::DOUBLE: {
    auto values = elements<float, double>(proto, proto.double_data(), count);
    if (!values)
      return values.takeError();
    return Tensor::fromF32(std::move(shape), std::move(*values));
  }
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16: {
    // Typed 16-bit floats live in int32_data, one bit pattern per entry.
    auto bits = elements<uint16_t, uint16_t>(proto, proto.int32_data(), count);
    if (!bits)
      return bits.takeError();
    interp::HalfFormat format = proto.data_type() == onnx::TensorProto::FLOAT16
                                    ? interp::HalfFormat::F16
                                    : interp::HalfFormat::BF16;
    std::vector<float> values;
    values.reserve(bits->size());
    for (uint16_t element : *bits)
      values.push_back(interp::decodeHalf(format, element));
    return Tensor::fromF32(std::move(shape), std::move(values));
  }
  case onnx::TensorProto::INT64: {
    auto values = elements<int64_t, int64_t>(proto, proto.int64_data(), count);
    if (!values)
      return values.takeError();
    return Tensor::fromI64(std::move(shape), std::move(*values));
  }
  case onnx::TensorProto::INT32: {
    auto values = elements<int64_t, int32_t>(proto, proto.int32_data(), count);
    if (!values)
      return values.takeError();
    return Tensor::fromI64(std::move(shape), std::move(*values));
  }
  case onnx::TensorProto::BOOL: {
    // Typed bools live in int32_data; raw bools are one byte each.
    auto values = elements<uint8_t, uint8_t>(proto, proto.int32_data(), count);
    if (!values)
      return values.takeError();
    return Tensor::fromBool(std::move(shape), std::move(*values));
  }
  default:
    return makeError(llvm::formatv("tensor '{0}' has ONNX element type {1}, which the "
                                   "interpreter does not hold",
                                   proto.name(), proto.data_type()));
  }
}

std::string infer::conformance::compareTensors(const Tensor &got, const Tensor &want,
                                               double rtol, double atol) {
  if (got.dtype() != want.dtype())
    return llvm::formatv("element type: got {0}, want {1}", interp::dtypeName(got.dtype()),
                         interp::dtypeName(want.dtype()));
  if (got.shape() != want.shape())
    return "shape: got " + got.shapeString() + ", want " + want.shapeString();
  switch (want.dtype()) {
  case DType::F32: {
    auto close = [&](float g, float w) {
      if (g == w || (std::isnan(g) && std::isnan(w)))
        return true;
      if (std::isinf(g) || std::isinf(w))
        return false;
      return std::fabs(static_cast<double>(g) - w) <= atol + rtol * std::fabs(static_cast<double>(w));
    };
    return compareElements<float>(got, want, close,
                                  llvm::formatv("rtol {0:e1}, atol {1:e1}", rtol, atol).str());
  }
  case DType::I64:
    return compareElements<int64_t>(got, want, std::equal_to<int64_t>(), "exact");
  case DType::Bool:
    return compareElements<uint8_t>(got, want, std::equal_to<uint8_t>(), "exact");
  }
  return "unknown element type";
}
