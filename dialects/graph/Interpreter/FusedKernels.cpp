//===- FusedKernels.cpp - the raised LLM ops: norms, GEMM, RoPE, attention -===//
//
// Reference semantics of the fused ops in GraphFusedOps.td, written as the
// plain loops a reader can check against the op descriptions. Sums, norms and
// softmax run in double and each result is rounded to f32 once. Where the
// ONNX subgraph an op is raised from rounds to f32 at a point that changes
// the value by more than rounding noise (the RoPE angle), the kernel rounds
// there too, so the fused op matches the graph it replaces.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/Kernels.h"
#include "runtime/base/Quantization.h"
#include "runtime/base/ReferenceMath.h"
#include "runtime/base/ReferenceMoe.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace infer::interp;
using namespace infer::interp::kernels;

namespace {

constexpr double kPi = 3.14159265358979323846;

llvm::Error expectRank(const Tensor &tensor, int64_t rank, const llvm::Twine &what) {
  if (tensor.rank() == rank)
    return llvm::Error::success();
  return kernelError(what + " must have rank " + llvm::Twine(rank) + ", got " +
                     tensor.shapeString());
}

llvm::Error expectF32(llvm::ArrayRef<const Tensor *> tensors, llvm::ArrayRef<const char *> names) {
  for (auto [tensor, name] : llvm::zip(tensors, names))
    if (tensor)
      if (llvm::Error error = expectDType(*tensor, {DType::F32}, name))
        return error;
  return llvm::Error::success();
}

/// The activations gated_activation applies to its gate.
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double geluErf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluTanh(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / kPi) * (x + 0.044715 * x * x * x)));
}

/// One of attention's Q, K or V as a strided view of its operand (shared
/// with the cpu backend, so both compute attention identically).
using infer::reference::HeadView;

} // namespace

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> kernels::rmsNorm(const Tensor &input, const Tensor &weight, float epsilon,
                                        float weightOffset) {
  if (llvm::Error error = expectF32({&input, &weight}, {"input", "weight"}))
    return std::move(error);
  if (input.rank() < 1)
    return kernelError("input must have rank >= 1");
  int64_t width = input.shape().back();
  if (weight.rank() != 1 || weight.shape()[0] != width)
    return kernelError("weight is " + weight.shapeString() + " but the input's last dim is " +
                       llvm::Twine(width));
  int64_t rows = product(llvm::ArrayRef<int64_t>(input.shape()).drop_back());
  Tensor out(DType::F32, input.shape());
  const float *src = input.f32();
  const float *gamma = weight.f32();
  float *dst = out.f32();
  for (int64_t r = 0; r < rows; ++r) {
    const float *x = src + r * width;
    double sumOfSquares = 0;
    for (int64_t i = 0; i < width; ++i)
      sumOfSquares += double(x[i]) * x[i];
    double invRms = 1.0 / std::sqrt(sumOfSquares / double(width) + double(epsilon));
    for (int64_t i = 0; i < width; ++i)
      dst[r * width + i] = float(x[i] * invRms * (double(gamma[i]) + weightOffset));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> kernels::linear(const Tensor &input, const Tensor &weight,
                                       const Tensor *bias, const Tensor *residual,
                                       bool transposeWeight) {
  if (llvm::Error error =
          expectF32({&input, &weight, bias, residual}, {"input", "weight", "bias", "residual"}))
    return std::move(error);
  if (input.rank() < 1)
    return kernelError("input must have rank >= 1");
  if (llvm::Error error = expectRank(weight, 2, "weight"))
    return std::move(error);
  int64_t k = weight.shape()[transposeWeight ? 1 : 0];
  int64_t n = weight.shape()[transposeWeight ? 0 : 1];
  if (input.shape().back() != k)
    return kernelError("input " + input.shapeString() + " has " +
                       llvm::Twine(input.shape().back()) + " features but the weight " +
                       weight.shapeString() + " expects " + llvm::Twine(k));
  Shape outShape(input.shape().begin(), input.shape().end() - 1);
  outShape.push_back(n);
  if (bias && (bias->rank() != 1 || bias->shape()[0] != n))
    return kernelError("bias is " + bias->shapeString() + ", expected [" + llvm::Twine(n) + "]");
  if (residual && residual->shape() != outShape)
    return kernelError("residual is " + residual->shapeString() + ", expected the result's shape " +
                       formatShape(outShape));
  int64_t rows = product(llvm::ArrayRef<int64_t>(outShape).drop_back());
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(DType::F32, outShape);
  const float *x = input.f32();
  const float *w = weight.f32();
  float *dst = out.f32();
  // dst[r, j] = sum over i ascending of x[r, i] * w(i, j), then bias, then
  // residual, in double. Bands of output columns run in parallel; a band's
  // sums advance together along i (the additions of a row's columns are
  // independent: they vectorize, each still in i order). An [n, k] weight's
  // band is first copied to [k, width] so that it reads the same way.
  constexpr int64_t kBand = 64;
  const float *b = bias ? bias->f32() : nullptr;
  const float *res = residual ? residual->f32() : nullptr;
  llvm::parallelFor(0, (n + kBand - 1) / kBand, [&](size_t band) {
    const int64_t j0 = int64_t(band) * kBand, width = std::min(kBand, n - j0);
    std::vector<double> acc(size_t(rows * width), 0.0);
    std::vector<float> columns;
    const float *wBand = w + j0; // weight (i, j) of the band at wBand[i * stride + j]
    int64_t stride = n;
    if (transposeWeight) {
      columns.resize(size_t(k * width));
      for (int64_t j = 0; j < width; ++j)
        for (int64_t i = 0; i < k; ++i)
          columns[size_t(i * width + j)] = w[(j0 + j) * k + i];
      wBand = columns.data();
      stride = width;
    }
    for (int64_t i = 0; i < k; ++i)
      for (int64_t r = 0; r < rows; ++r) {
        const double xi = x[r * k + i];
        double *row = &acc[r * width];
        const float *wi = wBand + i * stride;
        for (int64_t j = 0; j < width; ++j)
          row[j] += xi * wi[j];
      }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < width; ++j) {
        double sum = acc[r * width + j];
        if (b)
          sum += b[j0 + j];
        if (res)
          sum += res[r * n + j0 + j];
        dst[r * n + j0 + j] = float(sum);
      }
  });
  return out;
}

//===----------------------------------------------------------------------===//
// quantized linear
//===----------------------------------------------------------------------===//

namespace {

llvm::Expected<infer::quant::Scheme> schemeOf(llvm::StringRef name, int64_t groupSize, int64_t k) {
  std::optional<infer::quant::Scheme> scheme = infer::quant::parseScheme(name);
  if (!scheme)
    return kernelError("unknown quantization scheme '" + name + "'");
  if (std::string error = infer::quant::shapeError(*scheme, k, groupSize); !error.empty())
    return kernelError(error);
  return *scheme;
}

llvm::Error checkInputScale(const Tensor *scale, int64_t k) {
  if (!scale || (scale->dtype() == DType::F32 && scale->rank() == 1 && scale->shape()[0] == k))
    return llvm::Error::success();
  return kernelError("input_scale is " + scale->shapeString() + ", expected f32 [" +
                     llvm::Twine(k) + "]");
}

} // namespace

llvm::Expected<std::vector<Tensor>>
kernels::quantizeWeight(const Tensor &weight, const Tensor *inputScale, const Tensor *clip,
                        llvm::StringRef name, int64_t groupSize, bool transpose) {
  if (llvm::Error error = expectF32({&weight}, {"weight"}))
    return std::move(error);
  if (llvm::Error error = expectRank(weight, 2, "weight"))
    return std::move(error);
  llvm::Expected<Tensor> rowsOrError = transpose ? kernels::transpose(weight, {1, 0}) : weight;
  if (!rowsOrError)
    return rowsOrError.takeError();
  const Tensor &rows = *rowsOrError;
  int64_t n = rows.shape()[0], k = rows.shape()[1];
  llvm::Expected<infer::quant::Scheme> scheme = schemeOf(name, groupSize, k);
  if (!scheme)
    return scheme.takeError();
  if (llvm::Error error = checkInputScale(inputScale, k))
    return std::move(error);
  std::vector<float> scaled(rows.f32(), rows.f32() + n * k);
  if (inputScale)
    infer::quant::scaleColumns(scaled.data(), n, k, inputScale->f32());
  if (clip) {
    if (*scheme != infer::quant::Scheme::Int4 || clip->shape() != Shape{n, k / groupSize})
      return llvm::createStringError("quantize_weight: clip must be an int4 weight's [n, k / "
                                     "group_size] ratios");
    if (llvm::Error error = expectF32({clip}, {"clip"}))
      return std::move(error);
    infer::quant::clipGroups(scaled.data(), n, k, groupSize, clip->f32());
  }
  std::vector<uint8_t> bytes(infer::quant::quantizedBytes(*scheme, n, k));
  std::vector<float> scales(infer::quant::scaleCount(*scheme, n, k, groupSize));
  infer::quant::quantize(*scheme, scaled.data(), n, k, groupSize, bytes.data(), scales.data());
  Shape scaleShape = infer::quant::isGrouped(*scheme) ? Shape{n, k / groupSize} : Shape{n};
  std::vector<Tensor> results;
  results.push_back(Tensor::fromI64({n, static_cast<int64_t>(bytes.size()) / n},
                                    std::vector<int64_t>(bytes.begin(), bytes.end())));
  results.push_back(Tensor::fromF32(scaleShape, std::move(scales)));
  return results;
}

namespace {

/// The f32 [n, k] weight of q (bytes held as i64), scales and zeros.
llvm::Expected<Tensor> dequantizedRows(const Tensor &q, const Tensor &scales, const Tensor *zeros,
                                       infer::quant::Scheme scheme, int64_t groupSize, int64_t k) {
  if (q.dtype() != DType::I64 || q.rank() != 2)
    return kernelError("q must be a rank-2 tensor of bytes");
  if (llvm::Error error = expectF32({&scales}, {"scales"}))
    return std::move(error);
  int64_t n = q.shape()[0];
  if (infer::quant::quantizedBytes(scheme, n, k) != q.numElements() ||
      infer::quant::scaleCount(scheme, n, k, groupSize) != scales.numElements())
    return kernelError("q " + q.shapeString() + " and scales " + scales.shapeString() +
                       " do not hold a [" + llvm::Twine(n) + ", " + llvm::Twine(k) + "] weight");
  if (zeros && (zeros->dtype() != DType::F32 || zeros->shape() != scales.shape()))
    return kernelError("zeros " + zeros->shapeString() + " must be f32 shaped as the scales " +
                       scales.shapeString());
  std::vector<uint8_t> bytes(q.i64(), q.i64() + q.numElements());
  std::vector<float> dequantized(static_cast<size_t>(n * k));
  for (int64_t row = 0; row < n; ++row)
    infer::quant::dequantizeRow(scheme, bytes.data(), scales.f32(), zeros ? zeros->f32() : nullptr,
                                k, groupSize, row, dequantized.data() + row * k);
  return Tensor::fromF32({n, k}, std::move(dequantized));
}

} // namespace

llvm::Expected<Tensor> kernels::dequantize(const Tensor &q, const Tensor &scales,
                                           const Tensor *zeros, llvm::StringRef name,
                                           int64_t groupSize, bool transpose) {
  if (q.rank() != 2)
    return kernelError("q must be a rank-2 tensor of bytes");
  int64_t k = name == "int4" ? q.shape()[1] * 2 : q.shape()[1];
  llvm::Expected<infer::quant::Scheme> scheme = schemeOf(name, groupSize, k);
  if (!scheme)
    return scheme.takeError();
  llvm::Expected<Tensor> rows = dequantizedRows(q, scales, zeros, *scheme, groupSize, k);
  if (!rows || !transpose)
    return rows;
  return kernels::transpose(*rows, {1, 0});
}

llvm::Expected<Tensor> kernels::quantizedLinear(const Tensor &input, const Tensor &q,
                                                const Tensor &scales, const Tensor *bias,
                                                const Tensor *residual, const Tensor *inputScale,
                                                const Tensor *zeros, llvm::StringRef name,
                                                int64_t groupSize) {
  if (llvm::Error error = expectF32({&input}, {"input"}))
    return std::move(error);
  if (input.rank() < 1)
    return kernelError("input must have rank >= 1");
  int64_t k = input.shape().back();
  llvm::Expected<infer::quant::Scheme> scheme = schemeOf(name, groupSize, k);
  if (!scheme)
    return scheme.takeError();
  llvm::Expected<Tensor> rows = dequantizedRows(q, scales, zeros, *scheme, groupSize, k);
  if (!rows)
    return rows.takeError();
  Tensor &weight = *rows;
  if (llvm::Error error = checkInputScale(inputScale, k))
    return std::move(error);
  Tensor scaled = input;
  for (int64_t r = 0; inputScale && r < input.numElements() / k; ++r)
    for (int64_t j = 0; j < k; ++j)
      scaled.f32()[r * k + j] /= inputScale->f32()[j];
  if (*scheme == infer::quant::Scheme::Fp8)
    for (int64_t r = 0; r < input.numElements() / k; ++r)
      infer::quant::fakeQuantizeRowFp8(scaled.f32() + r * k, k);
  return linear(scaled, weight, bias, residual, /*transposeWeight=*/true);
}

//===----------------------------------------------------------------------===//
// rotary
//===----------------------------------------------------------------------===//

// One token's features, num_heads = 3, rotated_heads = 2, head_dim = 8,
// rotary_dim = 4 (half = 2). Each pair (a, b) turns by angle[i]:
//   out[a] = x[a] cos - x[b] sin,   out[b] = x[b] cos + x[a] sin
//
//   | head 0                | head 1                | head 2 (pass) |
//   | r r r r . . . .       | r r r r . . . .       | . . . . . . . |
//   half-split: pairs (0,2) (1,3)      interleaved: pairs (0,1) (2,3)

llvm::Expected<Tensor> kernels::rotary(const Tensor &input, const Tensor *givenPositions,
                                       const RotaryTables &tables, const RotaryConfig &config) {
  auto [numHeads, rotatedHeads, headDim, rotaryDim, interleaved] = config;
  auto [invFreq, cosCache, sinCache] = tables;
  if (numHeads <= 0 || headDim <= 0)
    return kernelError("num_heads and head_dim must be positive");
  if (rotatedHeads < 0 || rotatedHeads > numHeads)
    return kernelError("rotated_heads must lie in [0, num_heads]");
  if (rotaryDim <= 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return kernelError("rotary_dim must be even and in (0, head_dim]");
  if (bool(cosCache) != bool(sinCache) || bool(invFreq) == bool(cosCache))
    return kernelError("takes inv_freq or the cos and sin caches");
  if (llvm::Error error = expectF32({&input, invFreq, cosCache, sinCache},
                                    {"input", "inv_freq", "cos cache", "sin cache"}))
    return std::move(error);
  if (llvm::Error error = expectRank(input, 3, "input"))
    return std::move(error);
  int64_t batch = input.shape()[0], seq = input.shape()[1];
  int64_t features = numHeads * headDim, half = rotaryDim / 2;
  if (input.shape()[2] != features)
    return kernelError("input " + input.shapeString() + " has " + llvm::Twine(input.shape()[2]) +
                       " features, not num_heads * head_dim = " + llvm::Twine(features));
  // Per-token caches, [batch or 1, seq, half], need no positions.
  bool perToken = cosCache && cosCache->rank() == 3;
  if (perToken && givenPositions)
    return kernelError("per-token [batch, seq, rotary_dim / 2] caches take no positions");
  // Without positions, token t of every sequence is at position t.
  Tensor defaultPositions(DType::I64, {1, seq});
  for (int64_t t = 0; t < seq; ++t)
    defaultPositions.i64()[t] = t;
  const Tensor &positions = givenPositions ? *givenPositions : defaultPositions;
  if (llvm::Error error = expectDType(positions, {DType::I64}, "positions"))
    return std::move(error);
  if (llvm::Error error = expectRank(positions, 2, "positions"))
    return std::move(error);
  int64_t positionBatch = positions.shape()[0];
  if ((positionBatch != batch && positionBatch != 1) || positions.shape()[1] != seq)
    return kernelError("positions " + positions.shapeString() + " must be [" + llvm::Twine(batch) +
                       " or 1, " + llvm::Twine(seq) + "]");
  int64_t cacheRows = 0, cacheBatch = 0;
  if (invFreq) {
    if (llvm::Error error = expectRank(*invFreq, 1, "inv_freq"))
      return std::move(error);
    if (invFreq->shape()[0] != half)
      return kernelError("inv_freq has " + llvm::Twine(invFreq->shape()[0]) +
                         " entries, not rotary_dim / 2 = " + llvm::Twine(half));
  } else {
    if (cosCache->shape() != sinCache->shape())
      return kernelError("cos cache " + cosCache->shapeString() + " and sin cache " +
                         sinCache->shapeString() + " must have the same shape");
    if (perToken) {
      cacheBatch = cosCache->shape()[0];
      if ((cacheBatch != batch && cacheBatch != 1) || cosCache->shape()[1] != seq ||
          cosCache->shape()[2] != half)
        return kernelError("per-token caches " + cosCache->shapeString() + " must be [" +
                           llvm::Twine(batch) + " or 1, " + llvm::Twine(seq) + ", " +
                           llvm::Twine(half) + "]");
    } else {
      if (llvm::Error error = expectRank(*cosCache, 2, "cos cache"))
        return std::move(error);
      cacheRows = cosCache->shape()[0];
      if (cosCache->shape()[1] != half)
        return kernelError("caches " + cosCache->shapeString() + " have " +
                           llvm::Twine(cosCache->shape()[1]) +
                           " columns, not rotary_dim / 2 = " + llvm::Twine(half));
    }
  }

  Tensor out = input;
  const float *src = input.f32();
  float *dst = out.f32();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      int64_t position = positions.i64()[(positionBatch == 1 ? 0 : b) * seq + s];
      // The cache row this token reads, when the angles come from caches.
      int64_t row = 0;
      if (perToken) {
        row = (cacheBatch == 1 ? 0 : b) * seq + s;
      } else if (cosCache) {
        if (position < 0 || position >= cacheRows)
          return kernelError("position " + llvm::Twine(position) + " is outside the caches' " +
                             llvm::Twine(cacheRows) + " rows");
        row = position;
      }
      int64_t base = (b * seq + s) * features;
      infer::reference::rotateToken(src + base, dst + base, rotatedHeads, headDim, half,
                                    interleaved, position, invFreq ? invFreq->f32() : nullptr,
                                    cosCache ? cosCache->f32() + row * half : nullptr,
                                    sinCache ? sinCache->f32() + row * half : nullptr);
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

// The packed operand's features per token, num_heads = 4, num_kv_heads = 2:
//   | q0 q1 q2 q3 | k0 k1 | v0 v1 |      (each head_dim wide)
// Query heads {0, 1} read kv head 0 and {2, 3} kv head 1.
// Causal, seq = 2, kv_seq = 4: query i sees keys j <= i + kv_seq - seq:
//   i = 0: k0 k1 k2 .      i = 1: k0 k1 k2 k3

llvm::Expected<Tensor> kernels::attention(llvm::ArrayRef<const Tensor *> inputs,
                                          const AttentionConfig &config) {
  auto [numHeads, numKvHeads, headDim, scale, causal, softcap, window, alibi, kCacheScale,
        vCacheScale] = config;
  if (inputs.size() != 1 && inputs.size() != 3)
    return kernelError("takes a packed qkv operand or q, k and v, got " +
                       llvm::Twine(inputs.size()) + " operands");
  if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0)
    return kernelError("num_heads, num_kv_heads and head_dim must be positive");
  if (numHeads % numKvHeads != 0)
    return kernelError("num_heads (" + llvm::Twine(numHeads) +
                       ") must be a multiple of num_kv_heads (" + llvm::Twine(numKvHeads) + ")");
  if (softcap < 0)
    return kernelError("softcap must be non-negative");
  if (window < 0 || (window > 0 && !causal))
    return kernelError("a window must be a positive count of keys of causal attention");
  for (const Tensor *input : inputs) {
    if (llvm::Error error = expectDType(*input, {DType::F32}, "operand"))
      return std::move(error);
    if (llvm::Error error = expectRank(*input, 3, "operand"))
      return std::move(error);
  }
  int64_t qFeatures = numHeads * headDim, kvFeatures = numKvHeads * headDim;
  const Tensor &first = *inputs[0];
  int64_t batch = first.shape()[0], seq = first.shape()[1];
  HeadView q, k, v;
  int64_t kvSeq;
  if (inputs.size() == 1) {
    int64_t packed = qFeatures + 2 * kvFeatures;
    if (first.shape()[2] != packed)
      return kernelError("packed qkv " + first.shapeString() + " has " +
                         llvm::Twine(first.shape()[2]) + " features, expected " +
                         llvm::Twine(packed));
    kvSeq = seq;
    q = {first.f32(), seq, packed, 0, headDim};
    k = {first.f32(), seq, packed, qFeatures, headDim};
    v = {first.f32(), seq, packed, qFeatures + kvFeatures, headDim};
  } else {
    const Tensor &keys = *inputs[1], &values = *inputs[2];
    if (first.shape()[2] != qFeatures)
      return kernelError("q " + first.shapeString() + " must have num_heads * head_dim = " +
                         llvm::Twine(qFeatures) + " features");
    if (keys.shape() != values.shape())
      return kernelError("k " + keys.shapeString() + " and v " + values.shapeString() +
                         " must have the same shape");
    if (keys.shape()[0] != batch || keys.shape()[2] != kvFeatures)
      return kernelError("k and v are " + keys.shapeString() + ", expected [" + llvm::Twine(batch) +
                         ", kv_seq, " + llvm::Twine(kvFeatures) + "]");
    kvSeq = keys.shape()[1];
    q = {first.f32(), seq, qFeatures, 0, headDim};
    k = {keys.f32(), kvSeq, kvFeatures, 0, headDim};
    v = {values.f32(), kvSeq, kvFeatures, 0, headDim};
  }
  // A query that sees no key has no softmax; the mask would leave the first
  // kv_seq - seq queries without one.
  if (batch > 0 && seq > 0 && (kvSeq == 0 || (causal && kvSeq < seq)))
    return kernelError("query 0 sees no key (seq = " + llvm::Twine(seq) +
                       ", kv_seq = " + llvm::Twine(kvSeq) + (causal ? ", causal)" : ")"));

  k.cacheScale = kCacheScale;
  v.cacheScale = vCacheScale;
  Tensor out(DType::F32, {batch, seq, qFeatures});
  infer::reference::attention(
      q, k, v,
      {batch, seq, kvSeq, numHeads, numKvHeads, headDim, scale, softcap, causal, window, alibi},
      out.f32());
  return out;
}

//===----------------------------------------------------------------------===//
// gated_activation
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> kernels::gatherFeatures(llvm::ArrayRef<const Tensor *> inputs,
                                               llvm::ArrayRef<int64_t> map) {
  if (inputs.empty())
    return kernelError("takes at least one input");
  const Tensor &first = *inputs[0];
  if (first.rank() < 1 || (first.dtype() != DType::F32 && first.dtype() != DType::I64))
    return kernelError("inputs must be f32 or i64 of rank >= 1");
  Shape rows(first.shape().begin(), first.shape().end() - 1);
  // (input, feature) of each feature of the concatenation.
  std::vector<std::pair<const Tensor *, int64_t>> sources;
  for (const Tensor *input : inputs) {
    if (input->dtype() != first.dtype() || input->rank() != first.rank() ||
        !std::equal(rows.begin(), rows.end(), input->shape().begin()))
      return kernelError("input " + input->shapeString() + " does not share the rows of " +
                         first.shapeString());
    for (int64_t f = 0; f < input->shape().back(); ++f)
      sources.push_back({input, f});
  }
  Shape outShape = rows;
  outShape.push_back(static_cast<int64_t>(map.size()));
  llvm::Expected<Tensor> out = allocate(first.dtype(), outShape);
  if (!out)
    return out.takeError();
  for (int64_t source : map)
    if (source < 0 || source >= static_cast<int64_t>(sources.size()))
      return kernelError("map entry " + llvm::Twine(source) + " is outside the inputs' " +
                         llvm::Twine(sources.size()) + " features");
  const int64_t count = product(rows), width = static_cast<int64_t>(map.size());
  for (int64_t r = 0; r < count; ++r)
    for (int64_t f = 0; f < width; ++f) {
      auto [input, feature] = sources[map[f]];
      const int64_t from = r * input->shape().back() + feature;
      if (first.dtype() == DType::F32)
        out->f32()[r * width + f] = input->f32()[from];
      else
        out->i64()[r * width + f] = input->i64()[from];
    }
  return out;
}

llvm::Expected<Tensor> kernels::gatedActivation(llvm::ArrayRef<const Tensor *> inputs,
                                                llvm::StringRef activation) {
  double (*act)(double) = nullptr;
  if (activation == "silu")
    act = silu;
  else if (activation == "gelu")
    act = geluErf;
  else if (activation == "gelu_tanh")
    act = geluTanh;
  else
    return kernelError("activation must be \"silu\", \"gelu\" or \"gelu_tanh\", got \"" +
                       activation + "\"");
  if (inputs.size() != 1 && inputs.size() != 2)
    return kernelError("takes gate_up or gate and up, got " + llvm::Twine(inputs.size()) +
                       " operands");
  for (const Tensor *input : inputs) {
    if (llvm::Error error = expectDType(*input, {DType::F32}, "operand"))
      return std::move(error);
    if (input->rank() < 1)
      return kernelError("operands must have rank >= 1");
  }
  // gate(r, i) = gate[r * gateStride + i], up(r, i) = up[r * upStride + upOffset + i].
  const Tensor &first = *inputs[0];
  int64_t width = first.shape().back();
  const float *gate = first.f32(), *up = first.f32();
  int64_t stride = width, upOffset = 0;
  Shape outShape = first.shape();
  if (inputs.size() == 1) {
    if (width % 2 != 0)
      return kernelError("packed gate_up " + first.shapeString() +
                         " has an odd number of features");
    width /= 2;
    upOffset = width;
    outShape.back() = width;
  } else {
    if (inputs[1]->shape() != first.shape())
      return kernelError("gate " + first.shapeString() + " and up " + inputs[1]->shapeString() +
                         " must have the same shape");
    up = inputs[1]->f32();
  }
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(DType::F32, outShape);
  float *dst = out.f32();
  int64_t rows = product(llvm::ArrayRef<int64_t>(outShape).drop_back());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i)
      dst[r * width + i] = float(act(gate[r * stride + i]) * up[r * stride + upOffset + i]);
  return out;
}

//===----------------------------------------------------------------------===//
// moe
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> kernels::moe(const Tensor &input, const Tensor &router, const Tensor &gateUp,
                                    const Tensor &down, const Tensor *scoreBias,
                                    const MoeRouting &routing) {
  const int64_t topK = routing.topK;
  for (const Tensor *t : {&input, &router, &gateUp, &down})
    if (llvm::Error error = expectDType(*t, {DType::F32}, "operand"))
      return std::move(error);
  if (router.rank() != 2 || gateUp.rank() != 3 || down.rank() != 3 || input.rank() < 1)
    return kernelError("router, gate_up and down must have ranks 2, 3 and 3");
  int64_t experts = router.shape()[0], hidden = router.shape()[1], inter = down.shape()[2];
  if (gateUp.shape() != Shape{experts, 2 * inter, hidden} ||
      down.shape() != Shape{experts, hidden, inter} || input.shape().back() != hidden)
    return kernelError("input " + input.shapeString() + ", router " + router.shapeString() +
                       ", gate_up " + gateUp.shapeString() + " and down " + down.shapeString() +
                       " do not fit together");
  if (scoreBias && (scoreBias->dtype() != DType::F32 || scoreBias->numElements() != experts))
    return kernelError("score_bias " + scoreBias->shapeString() + " is not [" +
                       llvm::Twine(experts) + "] f32");
  Tensor out(DType::F32, input.shape());
  reference::MoeShape shape{input.numElements() / std::max<int64_t>(hidden, 1),
                            hidden,
                            experts,
                            inter,
                            topK,
                            routing.normalize};
  shape.sigmoid = routing.sigmoid;
  shape.groups = routing.groups;
  shape.topkGroups = routing.topkGroups;
  shape.scale = routing.scale;
  if (std::string error = reference::routingError(shape); !error.empty())
    return kernelError(error);
  reference::moe(input.f32(), router.f32(), gateUp.f32(), down.f32(),
                 scoreBias ? scoreBias->f32() : nullptr, shape, out.f32());
  return out;
}

//===----------------------------------------------------------------------===//
// embedding
//===----------------------------------------------------------------------===//

llvm::Expected<Tensor> kernels::embedding(const Tensor &table, const Tensor &ids,
                                          const Tensor *positions, int64_t positionOffset) {
  if (llvm::Error error = expectRank(table, 2, "table"))
    return std::move(error);
  if (llvm::Error error = expectDType(ids, {DType::I64}, "ids"))
    return std::move(error);
  int64_t vocab = table.shape()[0], hidden = table.shape()[1];
  Shape outShape = ids.shape();
  outShape.push_back(hidden);
  if (llvm::Error error = checkElements(outShape))
    return std::move(error);
  Tensor out(table.dtype(), outShape);
  int64_t rowBytes = hidden * elementSize(table.dtype());
  const char *src = static_cast<const char *>(table.rawData());
  char *dst = static_cast<char *>(out.rawData());
  for (int64_t j = 0, n = ids.numElements(); j < n; ++j) {
    int64_t id = ids.i64()[j];
    if (id < 0 || id >= vocab)
      return kernelError("id " + llvm::Twine(id) + " is outside [0, " + llvm::Twine(vocab) +
                         "), the table's rows");
    if (rowBytes > 0)
      std::memcpy(dst + j * rowBytes, src + id * rowBytes, rowBytes);
  }
  if (!positions)
    return out;
  if (llvm::Error error = expectRank(*positions, 2, "position table"))
    return std::move(error);
  if (table.dtype() != DType::F32 || positions->dtype() != DType::F32 ||
      positions->shape()[1] != hidden)
    return kernelError("the position table must be f32 [positions, " + llvm::Twine(hidden) + "]");
  int64_t seq = ids.rank() ? ids.shape().back() : 1;
  for (int64_t j = 0, n = ids.numElements(); j < n; ++j) {
    int64_t row = positionOffset + (seq ? j % seq : 0);
    if (row < 0 || row >= positions->shape()[0])
      return kernelError("position " + llvm::Twine(row) + " is outside the position table's " +
                         llvm::Twine(positions->shape()[0]) + " rows");
    for (int64_t h = 0; h < hidden; ++h)
      out.f32()[j * hidden + h] += positions->f32()[row * hidden + h];
  }
  return out;
}
