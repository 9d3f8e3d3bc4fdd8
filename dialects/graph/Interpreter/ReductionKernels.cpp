//===- ReductionKernels.cpp - reductions, Softmax, LayerNorm, CumSum ------===//
//
// f32 sums and statistics accumulate in double and are rounded once; i64
// accumulates in (wrapping) int64.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/Kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace infer::interp;
using namespace infer::interp::kernels;

namespace {

/// Accumulator type: double for f32, int64 for i64.
template <typename T>
using Accumulator = std::conditional_t<std::is_same_v<T, float>, double, int64_t>;

template <typename T>
llvm::Expected<Tensor> reduceTyped(ReduceKind kind, const Tensor &input,
                                   const std::vector<bool> &reduced, bool keepDims) {
  using Acc = Accumulator<T>;
  Shape keptShape; // the output shape with reduced dims kept as 1
  Shape outShape;
  int64_t count = 1;
  for (int64_t d = 0; d < input.rank(); ++d) {
    int64_t dim = input.shape()[d];
    keptShape.push_back(reduced[d] ? 1 : dim);
    if (reduced[d])
      count *= dim;
    if (!reduced[d] || keepDims)
      outShape.push_back(reduced[d] ? 1 : dim);
  }
  if (kind == ReduceKind::Mean && count == 0 && std::is_same_v<T, int64_t>)
    return kernelError("ReduceMean of i64 over an empty set is undefined");

  // Reductions over an empty set give the identity: 0 for sums, the lowest
  // value for Max, NaN for an f32 mean.
  Acc initial = 0;
  if (kind == ReduceKind::Max) {
    if constexpr (std::is_same_v<T, float>)
      initial = Acc(-std::numeric_limits<float>::infinity());
    else if constexpr (std::is_same_v<T, int64_t>)
      initial = std::numeric_limits<int64_t>::min();
    // bool: false, so Max is a logical or
  }
  std::vector<Acc> acc(product(keptShape), initial);
  const T *src = input.data<T>();
  OffsetWalker walker(input.shape(), {broadcastStrides(keptShape, input.shape())});
  for (int64_t i = 0, n = input.numElements(); i < n; ++i, walker.next()) {
    Acc &slot = acc[walker.offset(0)];
    if (kind == ReduceKind::Max)
      slot = std::max<Acc>(slot, src[i]);
    else if constexpr (std::is_same_v<T, float>)
      slot += src[i];
    else
      slot = int64_t(uint64_t(slot) + uint64_t(src[i]));
  }
  Tensor out(input.dtype(), outShape);
  T *dst = out.data<T>();
  for (size_t i = 0; i < acc.size(); ++i) {
    Acc value = acc[i];
    if (kind == ReduceKind::Mean) {
      if constexpr (std::is_same_v<T, float>)
        value = count == 0 ? std::numeric_limits<double>::quiet_NaN() : value / double(count);
      else
        value /= count; // truncates toward zero, like ONNX's cast of the mean
    }
    dst[i] = T(value);
  }
  return out;
}

/// running + value, wrapping for integers.
double accumulate(double running, float value) { return running + value; }
int64_t accumulate(int64_t running, int64_t value) {
  return int64_t(uint64_t(running) + uint64_t(value));
}

} // namespace

llvm::Expected<Tensor> kernels::reduce(ReduceKind kind, const Tensor &input, const Tensor *axes,
                                       bool keepDims, bool noopWithEmptyAxes) {
  // ReduceMax (opset 20) also takes bool: a logical or.
  if (input.dtype() == DType::Bool && kind != ReduceKind::Max)
    return kernelError("only ReduceMax takes a bool input");
  if (llvm::Error error = expectDType(input, {DType::F32, DType::I64, DType::Bool}, "input"))
    return std::move(error);
  std::vector<int64_t> list;
  if (axes) {
    llvm::Expected<std::vector<int64_t>> read = readIndexVector(*axes, "axes");
    if (!read)
      return read.takeError();
    list = *read;
  }
  std::vector<bool> reduced(input.rank(), list.empty());
  if (list.empty() && noopWithEmptyAxes)
    return input;
  for (int64_t axis : list) {
    llvm::Expected<int64_t> normalized = normalizeAxis(axis, input.rank(), "axis");
    if (!normalized)
      return normalized.takeError();
    if (reduced[*normalized])
      return kernelError("axis " + llvm::Twine(axis) + " appears twice");
    reduced[*normalized] = true;
  }
  if (input.dtype() == DType::F32)
    return reduceTyped<float>(kind, input, reduced, keepDims);
  if (input.dtype() == DType::Bool)
    return reduceTyped<uint8_t>(kind, input, reduced, keepDims);
  return reduceTyped<int64_t>(kind, input, reduced, keepDims);
}

llvm::Expected<Tensor> kernels::softmax(const Tensor &input, int64_t axis) {
  if (llvm::Error error = expectDType(input, {DType::F32}, "input"))
    return std::move(error);
  // A scalar has one element along a virtual axis (ONNX accepts rank 0 here).
  llvm::Expected<int64_t> dim = normalizeAxis(axis, std::max<int64_t>(input.rank(), 1), "axis");
  if (!dim)
    return dim.takeError();
  llvm::ArrayRef<int64_t> dims = input.shape();
  int64_t extent = input.rank() == 0 ? 1 : dims[*dim];
  int64_t outer = product(dims.take_front(*dim));
  int64_t inner = input.rank() == 0 ? 1 : product(dims.drop_front(*dim + 1));
  Tensor out(DType::F32, input.shape());
  const float *src = input.f32();
  float *dst = out.f32();
  // softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * extent * inner + in;
      double maximum = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < extent; ++j)
        maximum = std::max<double>(maximum, src[base + j * inner]);
      double sum = 0;
      for (int64_t j = 0; j < extent; ++j)
        sum += std::exp(double(src[base + j * inner]) - maximum);
      for (int64_t j = 0; j < extent; ++j)
        dst[base + j * inner] = float(std::exp(double(src[base + j * inner]) - maximum) / sum);
    }
  }
  return out;
}

llvm::Expected<Tensor> kernels::layerNorm(const Tensor &input, const Tensor &scale,
                                          const Tensor *bias, int64_t axis, float epsilon) {
  if (llvm::Error error = expectDType(input, {DType::F32}, "input"))
    return std::move(error);
  if (llvm::Error error = expectDType(scale, {DType::F32}, "scale"))
    return std::move(error);
  if (bias)
    if (llvm::Error error = expectDType(*bias, {DType::F32}, "bias"))
      return std::move(error);
  llvm::Expected<int64_t> dim = normalizeAxis(axis, input.rank(), "axis");
  if (!dim)
    return dim.takeError();
  // Scale and bias broadcast to the input's shape (ONNX applies them with Mul/Add).
  llvm::Expected<Tensor> scaleFull = broadcastTo(scale, input.shape());
  if (!scaleFull)
    return scaleFull.takeError();
  std::optional<Tensor> biasFull;
  if (bias) {
    llvm::Expected<Tensor> expanded = broadcastTo(*bias, input.shape());
    if (!expanded)
      return expanded.takeError();
    biasFull = std::move(*expanded);
  }
  llvm::ArrayRef<int64_t> dims = input.shape();
  int64_t rows = product(dims.take_front(*dim));
  int64_t width = product(dims.drop_front(*dim));
  Tensor out(DType::F32, input.shape());
  const float *src = input.f32();
  const float *gamma = scaleFull->f32();
  float *dst = out.f32();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t base = r * width;
    double mean = 0, variance = 0;
    for (int64_t i = 0; i < width; ++i)
      mean += src[base + i];
    mean /= double(width);
    for (int64_t i = 0; i < width; ++i)
      variance += (src[base + i] - mean) * (src[base + i] - mean);
    variance /= double(width);
    double invStdDev = 1.0 / std::sqrt(variance + double(epsilon));
    for (int64_t i = 0; i < width; ++i) {
      double y = (src[base + i] - mean) * invStdDev * gamma[base + i];
      if (biasFull)
        y += biasFull->f32()[base + i];
      dst[base + i] = float(y);
    }
  }
  return out;
}

llvm::Expected<Tensor> kernels::cumSum(const Tensor &input, const Tensor &axisTensor,
                                       bool exclusive, bool reverse) {
  if (llvm::Error error = expectDType(input, {DType::F32, DType::I64}, "input"))
    return std::move(error);
  llvm::Expected<int64_t> axis = readIndexScalar(axisTensor, "axis");
  if (!axis)
    return axis.takeError();
  llvm::Expected<int64_t> dim = normalizeAxis(*axis, input.rank(), "axis");
  if (!dim)
    return dim.takeError();
  llvm::ArrayRef<int64_t> dims = input.shape();
  int64_t extent = dims[*dim];
  int64_t outer = product(dims.take_front(*dim));
  int64_t inner = product(dims.drop_front(*dim + 1));
  Tensor out(input.dtype(), input.shape());
  auto scan = [&](auto *dst, const auto *src, auto zero) {
    using Out = std::remove_reference_t<decltype(*dst)>;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t in = 0; in < inner; ++in) {
        auto running = zero;
        for (int64_t step = 0; step < extent; ++step) {
          int64_t j = reverse ? extent - 1 - step : step;
          int64_t index = (o * extent + j) * inner + in;
          if (exclusive)
            dst[index] = Out(running);
          running = accumulate(running, src[index]);
          if (!exclusive)
            dst[index] = Out(running);
        }
      }
  };
  if (input.dtype() == DType::F32)
    scan(out.f32(), input.f32(), 0.0);
  else
    scan(out.i64(), input.i64(), int64_t(0));
  return out;
}
