//===- ElementwiseKernels.cpp - unary, binary, Where, Cast, Clip, Gelu ----===//
//
// Transcendental functions are evaluated in double and rounded once to f32,
// so results are within half an ulp of the exact value; +, -, *, / are done in
// f32, which gives the same correctly rounded result. Integer arithmetic wraps
// (it goes through uint64_t) instead of being undefined on overflow.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/Kernels.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace infer::interp;
using namespace infer::interp::kernels;

namespace {

constexpr double kPi = 3.14159265358979323846;

int64_t wrapAdd(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
int64_t wrapSub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }

/// x ** n for integers, truncating like ONNX when n is negative.
int64_t integerPow(int64_t base, int64_t exponent) {
  if (exponent < 0)
    return static_cast<int64_t>(std::pow(double(base), double(exponent)));
  int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1)
      result = wrapMul(result, base);
    base = wrapMul(base, base);
    exponent >>= 1;
  }
  return result;
}

/// f32 -> i64 truncating toward zero, saturating instead of undefined
/// behaviour out of range (NaN maps to INT64_MIN, as x86 does).
int64_t floatToInt(double value) {
  if (std::isnan(value))
    return std::numeric_limits<int64_t>::min();
  if (value >= 9223372036854775807.0)
    return std::numeric_limits<int64_t>::max();
  if (value <= -9223372036854775808.0)
    return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(value);
}

/// Applies `fn` to each element of `input`, producing `Out` elements.
template <typename In, typename Out, typename Fn> Tensor mapElements(const Tensor &input, Fn fn) {
  Tensor out(dtypeOf<Out>(), input.shape());
  const In *src = input.data<In>();
  Out *dst = out.data<Out>();
  for (int64_t i = 0, n = input.numElements(); i < n; ++i)
    dst[i] = fn(src[i]);
  return out;
}

/// Applies `fn` to broadcast pairs of `lhs` and `rhs` elements.
template <typename L, typename R, typename Out, typename Fn>
Tensor zipElements(const Tensor &lhs, const Tensor &rhs, const Shape &shape, Fn fn) {
  Tensor out(dtypeOf<Out>(), shape);
  const L *a = lhs.data<L>();
  const R *b = rhs.data<R>();
  Out *dst = out.data<Out>();
  OffsetWalker walker(shape,
                      {broadcastStrides(lhs.shape(), shape), broadcastStrides(rhs.shape(), shape)});
  for (int64_t i = 0, n = out.numElements(); i < n; ++i, walker.next())
    dst[i] = fn(a[walker.offset(0)], b[walker.offset(1)]);
  return out;
}

llvm::Expected<Tensor> floatUnary(const Tensor &input, llvm::StringRef name, double (*fn)(double)) {
  if (llvm::Error error = expectDType(input, {DType::F32}, name + " input"))
    return std::move(error);
  return mapElements<float, float>(input, [fn](float x) { return float(fn(double(x))); });
}

double sigmoid(double x) {
  // Both branches avoid exp overflow for large |x|.
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

template <typename T>
llvm::Expected<Tensor> arithmetic(BinaryKind kind, const Tensor &lhs, const Tensor &rhs,
                                  const Shape &shape) {
  switch (kind) {
  case BinaryKind::Add:
    if constexpr (std::is_same_v<T, float>)
      return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) { return a + b; });
    else
      return zipElements<T, T, T>(lhs, rhs, shape, wrapAdd);
  case BinaryKind::Sub:
    if constexpr (std::is_same_v<T, float>)
      return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) { return a - b; });
    else
      return zipElements<T, T, T>(lhs, rhs, shape, wrapSub);
  case BinaryKind::Mul:
    if constexpr (std::is_same_v<T, float>)
      return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) { return a * b; });
    else
      return zipElements<T, T, T>(lhs, rhs, shape, wrapMul);
  case BinaryKind::Div:
    if constexpr (std::is_same_v<T, float>) {
      return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) { return a / b; });
    } else {
      // Integer division truncates toward zero (ONNX casts numpy's quotient back).
      for (int64_t b : rhs.values<int64_t>())
        if (b == 0)
          return kernelError("integer division by zero");
      return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) {
        return b == -1 ? wrapSub(0, a) : a / b; // INT64_MIN / -1 wraps
      });
    }
  case BinaryKind::Max:
    return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) { return a < b ? b : a; });
  case BinaryKind::Min:
    return zipElements<T, T, T>(lhs, rhs, shape, [](T a, T b) { return b < a ? b : a; });
  default:
    break;
  }
  return kernelError("not an arithmetic op");
}

template <typename T>
Tensor compare(BinaryKind kind, const Tensor &lhs, const Tensor &rhs, const Shape &shape) {
  auto run = [&](auto fn) { return zipElements<T, T, uint8_t>(lhs, rhs, shape, fn); };
  switch (kind) {
  case BinaryKind::Equal:
    return run([](T a, T b) -> uint8_t { return a == b; });
  case BinaryKind::Less:
    return run([](T a, T b) -> uint8_t { return a < b; });
  case BinaryKind::LessOrEqual:
    return run([](T a, T b) -> uint8_t { return a <= b; });
  case BinaryKind::Greater:
    return run([](T a, T b) -> uint8_t { return a > b; });
  default:
    return run([](T a, T b) -> uint8_t { return a >= b; });
  }
}

llvm::Expected<Tensor> power(const Tensor &lhs, const Tensor &rhs, const Shape &shape) {
  if (llvm::Error error = expectDType(lhs, {DType::F32, DType::I64}, "Pow base"))
    return std::move(error);
  if (llvm::Error error = expectDType(rhs, {DType::F32, DType::I64}, "Pow exponent"))
    return std::move(error);
  bool floatBase = lhs.dtype() == DType::F32, floatExp = rhs.dtype() == DType::F32;
  if (floatBase && floatExp)
    return zipElements<float, float, float>(
        lhs, rhs, shape, [](float a, float b) { return float(std::pow(double(a), double(b))); });
  if (floatBase)
    return zipElements<float, int64_t, float>(
        lhs, rhs, shape, [](float a, int64_t b) { return float(std::pow(double(a), double(b))); });
  if (floatExp)
    return zipElements<int64_t, float, int64_t>(lhs, rhs, shape, [](int64_t a, float b) {
      return floatToInt(std::pow(double(a), double(b)));
    });
  return zipElements<int64_t, int64_t, int64_t>(lhs, rhs, shape, integerPow);
}

} // namespace

llvm::Expected<Tensor> kernels::unary(UnaryKind kind, const Tensor &input) {
  switch (kind) {
  case UnaryKind::Identity:
    return input;
  case UnaryKind::Not:
    if (llvm::Error error = expectDType(input, {DType::Bool}, "Not input"))
      return std::move(error);
    return mapElements<uint8_t, uint8_t>(input, [](uint8_t x) -> uint8_t { return !x; });
  case UnaryKind::Neg:
  case UnaryKind::Abs:
  case UnaryKind::Relu: {
    if (llvm::Error error = expectDType(input, {DType::F32, DType::I64}, "input"))
      return std::move(error);
    if (input.dtype() == DType::I64) {
      if (kind == UnaryKind::Neg)
        return mapElements<int64_t, int64_t>(input, [](int64_t x) { return wrapSub(0, x); });
      if (kind == UnaryKind::Abs)
        return mapElements<int64_t, int64_t>(input,
                                             [](int64_t x) { return x < 0 ? wrapSub(0, x) : x; });
      return mapElements<int64_t, int64_t>(input, [](int64_t x) { return x < 0 ? 0 : x; });
    }
    if (kind == UnaryKind::Neg)
      return mapElements<float, float>(input, [](float x) { return -x; });
    if (kind == UnaryKind::Abs)
      return mapElements<float, float>(input, [](float x) { return std::fabs(x); });
    return mapElements<float, float>(input, [](float x) { return x < 0 ? 0.0f : x; });
  }
  case UnaryKind::Sqrt:
    return floatUnary(input, "Sqrt", [](double x) { return std::sqrt(x); });
  case UnaryKind::Reciprocal:
    return floatUnary(input, "Reciprocal", [](double x) { return 1.0 / x; });
  case UnaryKind::Exp:
    return floatUnary(input, "Exp", [](double x) { return std::exp(x); });
  case UnaryKind::Log:
    return floatUnary(input, "Log", [](double x) { return std::log(x); });
  case UnaryKind::Sin:
    return floatUnary(input, "Sin", [](double x) { return std::sin(x); });
  case UnaryKind::Cos:
    return floatUnary(input, "Cos", [](double x) { return std::cos(x); });
  case UnaryKind::Tanh:
    return floatUnary(input, "Tanh", [](double x) { return std::tanh(x); });
  case UnaryKind::Erf:
    return floatUnary(input, "Erf", [](double x) { return std::erf(x); });
  case UnaryKind::Sigmoid:
    return floatUnary(input, "Sigmoid", sigmoid);
  }
  return kernelError("unknown unary op");
}

llvm::Expected<Tensor> kernels::binary(BinaryKind kind, const Tensor &lhs, const Tensor &rhs) {
  llvm::Expected<Shape> shape = broadcastShapes(lhs.shape(), rhs.shape());
  if (!shape)
    return shape.takeError();
  if (llvm::Error error = checkElements(*shape))
    return std::move(error);
  if (kind == BinaryKind::Pow)
    return power(lhs, rhs, *shape);
  if (lhs.dtype() != rhs.dtype())
    return kernelError(llvm::Twine("operands have different element types ") +
                       dtypeName(lhs.dtype()) + " and " + dtypeName(rhs.dtype()));
  switch (kind) {
  case BinaryKind::And:
  case BinaryKind::Or:
    if (llvm::Error error = expectDType(lhs, {DType::Bool}, "operands"))
      return std::move(error);
    if (kind == BinaryKind::And)
      return zipElements<uint8_t, uint8_t, uint8_t>(
          lhs, rhs, *shape, [](uint8_t a, uint8_t b) -> uint8_t { return a && b; });
    return zipElements<uint8_t, uint8_t, uint8_t>(
        lhs, rhs, *shape, [](uint8_t a, uint8_t b) -> uint8_t { return a || b; });
  case BinaryKind::Equal:
  case BinaryKind::Less:
  case BinaryKind::LessOrEqual:
  case BinaryKind::Greater:
  case BinaryKind::GreaterOrEqual:
    if (lhs.dtype() == DType::F32)
      return compare<float>(kind, lhs, rhs, *shape);
    if (lhs.dtype() == DType::I64)
      return compare<int64_t>(kind, lhs, rhs, *shape);
    return compare<uint8_t>(kind, lhs, rhs, *shape);
  default:
    if (llvm::Error error = expectDType(lhs, {DType::F32, DType::I64}, "operands"))
      return std::move(error);
    if (lhs.dtype() == DType::F32)
      return arithmetic<float>(kind, lhs, rhs, *shape);
    return arithmetic<int64_t>(kind, lhs, rhs, *shape);
  }
}

llvm::Expected<Tensor> kernels::where(const Tensor &condition, const Tensor &x, const Tensor &y) {
  if (llvm::Error error = expectDType(condition, {DType::Bool}, "condition"))
    return std::move(error);
  if (x.dtype() != y.dtype())
    return kernelError(llvm::Twine("x and y have different element types ") + dtypeName(x.dtype()) +
                       " and " + dtypeName(y.dtype()));
  llvm::Expected<Shape> partial = broadcastShapes(condition.shape(), x.shape());
  if (!partial)
    return partial.takeError();
  llvm::Expected<Shape> shape = broadcastShapes(*partial, y.shape());
  if (!shape)
    return shape.takeError();
  if (llvm::Error error = checkElements(*shape))
    return std::move(error);
  Tensor out(x.dtype(), *shape);
  int64_t size = elementSize(x.dtype());
  const uint8_t *cond = condition.boolData();
  const char *xs = static_cast<const char *>(x.rawData());
  const char *ys = static_cast<const char *>(y.rawData());
  char *dst = static_cast<char *>(out.rawData());
  OffsetWalker walker(*shape,
                      {broadcastStrides(condition.shape(), *shape),
                       broadcastStrides(x.shape(), *shape), broadcastStrides(y.shape(), *shape)});
  for (int64_t i = 0, n = out.numElements(); i < n; ++i, walker.next()) {
    const char *src =
        cond[walker.offset(0)] ? xs + walker.offset(1) * size : ys + walker.offset(2) * size;
    std::memcpy(dst + i * size, src, size);
  }
  return out;
}

llvm::Expected<Tensor> kernels::cast(const Tensor &input, DType to) {
  if (input.dtype() == to)
    return input;
  switch (input.dtype()) {
  case DType::F32:
    if (to == DType::I64)
      return mapElements<float, int64_t>(input, [](float x) { return floatToInt(x); });
    return mapElements<float, uint8_t>(input, [](float x) -> uint8_t { return x != 0.0f; });
  case DType::I64:
    if (to == DType::F32)
      return mapElements<int64_t, float>(input, [](int64_t x) { return float(x); });
    return mapElements<int64_t, uint8_t>(input, [](int64_t x) -> uint8_t { return x != 0; });
  case DType::Bool:
    if (to == DType::F32)
      return mapElements<uint8_t, float>(input, [](uint8_t x) { return x ? 1.0f : 0.0f; });
    return mapElements<uint8_t, int64_t>(input, [](uint8_t x) -> int64_t { return x ? 1 : 0; });
  }
  return kernelError("unknown cast");
}

llvm::Expected<Tensor> kernels::clip(const Tensor &input, const Tensor *min, const Tensor *max) {
  if (llvm::Error error = expectDType(input, {DType::F32, DType::I64}, "input"))
    return std::move(error);
  for (const Tensor *bound : {min, max}) {
    if (!bound)
      continue;
    if (bound->dtype() != input.dtype())
      return kernelError(llvm::Twine("bound has element type ") + dtypeName(bound->dtype()) +
                         " but the input has " + dtypeName(input.dtype()));
    if (bound->rank() > 1 || bound->numElements() != 1)
      return kernelError("bounds must be scalars, got shape " + bound->shapeString());
  }
  // With min > max every element becomes max, as ONNX specifies.
  if (input.dtype() == DType::F32) {
    float lo = min ? min->f32()[0] : -std::numeric_limits<float>::infinity();
    float hi = max ? max->f32()[0] : std::numeric_limits<float>::infinity();
    return mapElements<float, float>(input, [lo, hi](float x) {
      float clamped = x < lo ? lo : x;
      return clamped > hi ? hi : clamped;
    });
  }
  int64_t lo = min ? min->i64()[0] : std::numeric_limits<int64_t>::min();
  int64_t hi = max ? max->i64()[0] : std::numeric_limits<int64_t>::max();
  return mapElements<int64_t, int64_t>(input, [lo, hi](int64_t x) {
    int64_t clamped = x < lo ? lo : x;
    return clamped > hi ? hi : clamped;
  });
}

llvm::Expected<Tensor> kernels::gelu(const Tensor &input, bool tanhApproximation) {
  if (llvm::Error error = expectDType(input, {DType::F32}, "Gelu input"))
    return std::move(error);
  if (tanhApproximation)
    return mapElements<float, float>(input, [](float value) {
      double x = value;
      double inner = std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x);
      return float(0.5 * x * (1.0 + std::tanh(inner)));
    });
  return mapElements<float, float>(input, [](float value) {
    double x = value;
    return float(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
  });
}

llvm::Expected<Tensor> kernels::isNaN(const Tensor &input) {
  if (llvm::Error error = expectDType(input, {DType::F32}, "IsNaN input"))
    return std::move(error);
  return mapElements<float, uint8_t>(input, [](float x) -> uint8_t { return std::isnan(x); });
}
