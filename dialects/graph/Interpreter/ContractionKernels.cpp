//===- ContractionKernels.cpp - MatMul, Gemm, Einsum ----------------------===//
//
// Products accumulate in double (f32) or wrapping int64 (i64) and are rounded
// to the element type once per output element.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/Kernels.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>

using namespace infer::interp;
using namespace infer::interp::kernels;

namespace {

template <typename T>
using Accumulator = std::conditional_t<std::is_same_v<T, float>, double, int64_t>;

template <typename T> Accumulator<T> multiplyAdd(Accumulator<T> acc, T a, T b) {
  if constexpr (std::is_same_v<T, float>)
    return acc + double(a) * double(b);
  else
    return int64_t(uint64_t(acc) + uint64_t(a) * uint64_t(b));
}

/// out[batch] = lhs[batch] (M x K) * rhs[batch] (K x N), batches broadcast.
template <typename T>
void batchedMatmul(const Tensor &lhs, const Tensor &rhs, Tensor &out, const Shape &batchShape,
                   const Shape &lhsBatch, const Shape &rhsBatch, int64_t m, int64_t k, int64_t n) {
  const T *a = lhs.data<T>();
  const T *b = rhs.data<T>();
  T *c = out.data<T>();
  // Batch strides are counted in whole matrices.
  OffsetWalker walker(
      batchShape, {broadcastStrides(lhsBatch, batchShape), broadcastStrides(rhsBatch, batchShape)});
  // Bands of output columns in parallel; each element sums over p in order.
  constexpr int64_t kBand = 256;
  for (int64_t batch = 0, count = product(batchShape); batch < count; ++batch, walker.next()) {
    const T *aMatrix = a + walker.offset(0) * m * k;
    const T *bMatrix = b + walker.offset(1) * k * n;
    T *cMatrix = c + batch * m * n;
    auto band = [&](size_t index) {
      const int64_t j0 = int64_t(index) * kBand, width = std::min(kBand, n - j0);
      // rhs's band is read once, row by row; every lhs row's sums stay.
      std::vector<Accumulator<T>> sums(static_cast<size_t>(m * width), Accumulator<T>(0));
      for (int64_t p = 0; p < k; ++p)
        for (int64_t i = 0; i < m; ++i) {
          Accumulator<T> *row = &sums[i * width];
          for (int64_t j = 0; j < width; ++j)
            row[j] = multiplyAdd<T>(row[j], aMatrix[i * k + p], bMatrix[p * n + j0 + j]);
        }
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < width; ++j)
          cMatrix[i * n + j0 + j] = T(sums[i * width + j]);
    };
    const size_t bands = size_t((n + kBand - 1) / kBand);
    if (m * k * n >= (int64_t(1) << 22))
      llvm::parallelFor(0, bands, band);
    else
      for (size_t index = 0; index < bands; ++index)
        band(index);
  }
}

template <typename T>
void contract(llvm::ArrayRef<const Tensor *> inputs, Tensor &out, const Shape &letterSizes,
              const std::vector<Shape> &letterStrides, int64_t outputLetters) {
  using Acc = Accumulator<T>;
  llvm::ArrayRef<int64_t> sizes = letterSizes;
  int64_t sumCount = product(sizes.drop_front(outputLetters));
  if (sumCount == 0)
    return; // an empty sum: the zero-filled output is the answer
  T *dst = out.data<T>();
  // Walk the full letter space: output letters outermost (so that outputs
  // are produced in order), summed letters innermost.
  OffsetWalker walker(sizes, letterStrides);
  for (int64_t o = 0, n = out.numElements(); o < n; ++o) {
    Acc acc = 0;
    for (int64_t s = 0; s < sumCount; ++s, walker.next()) {
      if constexpr (std::is_same_v<T, float>) {
        double term = 1;
        for (size_t t = 0; t < inputs.size(); ++t)
          term *= inputs[t]->data<T>()[walker.offset(t)];
        acc += term;
      } else {
        uint64_t term = 1;
        for (size_t t = 0; t < inputs.size(); ++t)
          term *= uint64_t(inputs[t]->data<T>()[walker.offset(t)]);
        acc = int64_t(uint64_t(acc) + term);
      }
    }
    dst[o] = T(acc);
  }
}

} // namespace

llvm::Expected<Tensor> kernels::matmul(const Tensor &lhs, const Tensor &rhs) {
  if (llvm::Error error = expectDType(lhs, {DType::F32, DType::I64}, "lhs"))
    return std::move(error);
  if (lhs.dtype() != rhs.dtype())
    return kernelError(llvm::Twine("operands have different element types ") +
                       dtypeName(lhs.dtype()) + " and " + dtypeName(rhs.dtype()));
  if (lhs.rank() == 0 || rhs.rank() == 0)
    return kernelError("operands must have rank >= 1, got " + lhs.shapeString() + " and " +
                       rhs.shapeString());
  // Numpy promotion: a 1-D lhs is a row [1, K], a 1-D rhs a column [K, 1];
  // the added dim is dropped from the result.
  Shape a(lhs.shape()), b(rhs.shape());
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
  if (b[b.size() - 2] != k)
    return kernelError("cannot multiply " + lhs.shapeString() + " by " + rhs.shapeString() +
                       ": contraction dims " + llvm::Twine(k) + " and " +
                       llvm::Twine(b[b.size() - 2]) + " differ");
  Shape lhsBatch(a.begin(), a.end() - 2), rhsBatch(b.begin(), b.end() - 2);
  llvm::Expected<Shape> batchShape = broadcastShapes(lhsBatch, rhsBatch);
  if (!batchShape)
    return batchShape.takeError();
  Shape outShape(*batchShape);
  if (!lhsVector)
    outShape.push_back(m);
  if (!rhsVector)
    outShape.push_back(n);
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(lhs.dtype(), outShape);
  if (lhs.dtype() == DType::F32)
    batchedMatmul<float>(lhs, rhs, out, *batchShape, lhsBatch, rhsBatch, m, k, n);
  else
    batchedMatmul<int64_t>(lhs, rhs, out, *batchShape, lhsBatch, rhsBatch, m, k, n);
  return out;
}

llvm::Expected<Tensor> kernels::gemm(const Tensor &a, const Tensor &b, const Tensor *c, float alpha,
                                     float beta, bool transA, bool transB) {
  for (const Tensor *operand : {&a, &b})
    if (llvm::Error error = expectDType(*operand, {DType::F32}, "operands"))
      return std::move(error);
  if (a.rank() != 2 || b.rank() != 2)
    return kernelError("A and B must be 2-D, got " + a.shapeString() + " and " + b.shapeString());
  // op(A) is M x K, op(B) is K x N.
  int64_t m = transA ? a.shape()[1] : a.shape()[0];
  int64_t k = transA ? a.shape()[0] : a.shape()[1];
  int64_t kb = transB ? b.shape()[1] : b.shape()[0];
  int64_t n = transB ? b.shape()[0] : b.shape()[1];
  if (k != kb)
    return kernelError("op(A) is " + llvm::Twine(m) + "x" + llvm::Twine(k) + " but op(B) is " +
                       llvm::Twine(kb) + "x" + llvm::Twine(n));
  std::optional<Tensor> bias;
  if (c) {
    if (llvm::Error error = expectDType(*c, {DType::F32}, "C"))
      return std::move(error);
    llvm::Expected<Tensor> expanded = broadcastTo(*c, {m, n});
    if (!expanded)
      return expanded.takeError();
    bias = std::move(*expanded);
  }
  Tensor out(DType::F32, {m, n});
  const float *pa = a.f32(), *pb = b.f32();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0;
      for (int64_t p = 0; p < k; ++p) {
        double x = transA ? pa[p * m + i] : pa[i * k + p];
        double y = transB ? pb[j * k + p] : pb[p * n + j];
        acc += x * y;
      }
      double value = double(alpha) * acc;
      if (bias)
        value += double(beta) * bias->f32()[i * n + j];
      out.f32()[i * n + j] = float(value);
    }
  return out;
}

llvm::Expected<Tensor> kernels::einsum(llvm::StringRef equation,
                                       llvm::ArrayRef<const Tensor *> inputs) {
  auto [lhsText, outputText] = equation.split("->");
  if (lhsText.size() == equation.size())
    return kernelError("equation \"" + equation + "\" must be explicit (contain '->')");
  llvm::SmallVector<llvm::StringRef> terms;
  lhsText.split(terms, ',');
  if (terms.size() != inputs.size())
    return kernelError("equation \"" + equation + "\" names " + llvm::Twine(terms.size()) +
                       " inputs but there are " + llvm::Twine(inputs.size()));
  for (const Tensor *input : inputs) {
    if (llvm::Error error = expectDType(*input, {DType::F32, DType::I64}, "inputs"))
      return std::move(error);
    if (input->dtype() != inputs.front()->dtype())
      return kernelError("inputs must share one element type");
  }

  // Letter ids: output letters first (in output order), then summed letters.
  std::string output = outputText.trim().str();
  std::string letters;
  for (char letter : output) {
    if (!llvm::isAlpha(letter))
      return kernelError("equation \"" + equation + "\" has an invalid output label");
    if (letters.find(letter) != std::string::npos)
      return kernelError("equation \"" + equation + "\" repeats an output label");
    letters.push_back(letter);
  }
  std::vector<std::string> inputLabels;
  for (llvm::StringRef term : terms) {
    std::string labels = term.trim().str();
    for (char letter : labels) {
      if (!llvm::isAlpha(letter))
        return kernelError("equation \"" + equation + "\" has an invalid label");
      if (letters.find(letter) == std::string::npos)
        letters.push_back(letter);
    }
    inputLabels.push_back(labels);
  }
  Shape letterSizes(letters.size(), -1);
  std::vector<Shape> letterStrides(inputs.size(), Shape(letters.size(), 0));
  for (size_t t = 0; t < inputs.size(); ++t) {
    const Tensor &input = *inputs[t];
    if (static_cast<int64_t>(inputLabels[t].size()) != input.rank())
      return kernelError("term '" + inputLabels[t] + "' does not match input " + llvm::Twine(t) +
                         " of shape " + input.shapeString());
    Shape strides = stridesOf(input.shape());
    for (size_t p = 0; p < inputLabels[t].size(); ++p) {
      size_t id = letters.find(inputLabels[t][p]);
      int64_t dim = input.shape()[p];
      if (letterSizes[id] != -1 && letterSizes[id] != dim)
        return kernelError("label '" + llvm::Twine(inputLabels[t][p]) + "' has sizes " +
                           llvm::Twine(letterSizes[id]) + " and " + llvm::Twine(dim));
      letterSizes[id] = dim;
      // A label repeated within a term walks the diagonal: strides add up.
      letterStrides[t][id] += strides[p];
    }
  }
  for (size_t id = 0; id < output.size(); ++id)
    if (letterSizes[id] == -1)
      return kernelError("output label '" + llvm::Twine(output[id]) +
                         "' does not appear in any input");
  Shape outShape(letterSizes.begin(), letterSizes.begin() + output.size());
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(inputs.front()->dtype(), outShape);
  int64_t outputLetters = static_cast<int64_t>(output.size());
  if (out.dtype() == DType::F32)
    contract<float>(inputs, out, letterSizes, letterStrides, outputLetters);
  else
    contract<int64_t>(inputs, out, letterSizes, letterStrides, outputLetters);
  return out;
}
