//===- quantized_gemm_test.cu - QuantizedGemm.cuh against the cpu math ----===//
//
// Runs infer_quantized_gemm (int4, fp8, int8 and fp8-weight, both load
// paths, f32 and bf16 activations, zero points on int4 / int8) on random weights quantized by
// runtime/base/Quantization.cpp and compares with the cpu backend's math in double
// (QuantizedGemmKernel.cpp: x / input_scale, fp8's per-token E4M3 rounding, the dequantized rows,
// bias, residual), rounded to T. Tolerance: 1e-5 (f32) or 1e-5 + 2^-8 (bf16) times sum |x w| of the
// element. Shapes: decode and prefill tiles, k and groups that take the 16-byte loads and ones that
// do not, a residual that is the output, a token with a NaN (fp8: used unrounded, so NaN out),
// Common.cuh's E4M3 codec bit for bit against the host's (checkE4M3Codec),
// inputs staged a token or a few per block (large k). Then the decode timings at Llama-3-8B's 4096
// x 4096 and 14336 x 4096 projections, beside the weight bytes over the memory bandwidth. Exit 0:
// all pass; 1: a case failed; 77: no CUDA device (skip).
//
//   nvcc -std=c++17 -arch=sm_90a -I<repo> -o quantized_gemm_test
//       codegen/cuda/tests/quantized_gemm_test.cu
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/kernels/QuantizedGemm.cuh"
#include "codegen/cuda/kernels/QuantizedGemvMma.cuh"
#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "runtime/base/Quantization.cpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using namespace infer::kernels;
using infer::kerneltest::Element;
using bf16 = __nv_bfloat16;
using i64 = long long;
namespace quant = infer::quant;

int failures = 0;

struct Case {
  quant::Scheme scheme;
  i64 tokens, n, k, group;
  bool inputScale, bias, residualIsOutput, nanToken;
  bool zeros = false; // imported weights' zero points (int4, int8)
};

template <typename T> T *upload(const std::vector<T> &host) {
  T *device = nullptr;
  CUDA_CHECK(cudaMalloc(&device, std::max<size_t>(host.size(), 1) * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

/// CudaCodegen's choice.
bool vectorPath(const Case &c) {
  const i64 perLoad = c.scheme == quant::Scheme::Int4 ? 32 : 16;
  return c.k % perLoad == 0 && (!quant::isGrouped(c.scheme) || c.group % perLoad == 0);
}

/// As the runtime: one token takes the kTokens = 1 instance (gemv_single_row).
template <typename T, int kScheme, bool kVector> void launch(const QuantizedGemmParams &p) {
  const bool single = p.tokens == 1;
  const int tile = single ? 1 : quantizedGemmTileTokens(p.k);
  const int warps = single ? quantizedGemmSingleTokenWarps(p.n) : kQuantizedGemmWarps;
  const long long rows = warps * kQuantizedGemmRowsPerWarp;
  dim3 grid(unsigned((p.n + rows - 1) / rows), unsigned((p.tokens + tile - 1) / tile));
  const size_t shared = size_t(4 * p.k * tile);
  if (single) {
    infer::kerneltest::allowDynamicShared(infer_quantized_gemm<T, kScheme, kVector, 1>, shared);
    infer_quantized_gemm<T, kScheme, kVector, 1><<<grid, warps * 32, shared>>>(p);
    return;
  }
  infer::kerneltest::allowDynamicShared(infer_quantized_gemm<T, kScheme, kVector>, shared);
  infer_quantized_gemm<T, kScheme, kVector><<<grid, kQuantizedGemmThreads, shared>>>(p);
}

/// SelectKernels' `mma_block_k` (0: none).
template <typename T> int mmaBlockK(const Case &c) {
  return c.tokens <= kQuantizedMmaTokens
             ? quantizedMmaBlockK(c.scheme == quant::Scheme::Int4, int(sizeof(T)), c.k, c.group)
             : 0;
}

/// Blocks of the tensor-core kernel when not 0: each block walks more tiles than the runtime's
/// grid gives it (the checks run both).
unsigned mmaGridCap = 0;

/// As the runtime runs a launch with `mma_block_k`: infer_quantized_gemv_mma on
/// quantizedMmaGrid(n) persistent blocks.
template <typename T> void launchMma(const Case &c, const QuantizedGemmParams &p) {
  unsigned blocks = quantizedMmaGrid(p.n);
  const dim3 grid(mmaGridCap && mmaGridCap < blocks ? mmaGridCap : blocks);
  if constexpr (sizeof(T) == 2) {
    if (mmaBlockK<T>(c) == 128)
      infer_quantized_gemv_mma<T, 128><<<grid, kQuantizedMmaThreads>>>(p);
    else
      infer_quantized_gemv_mma<T, 64><<<grid, kQuantizedMmaThreads>>>(p);
  }
}

template <typename T, int kScheme>
void dispatchVector(const Case &c, const QuantizedGemmParams &p) {
  vectorPath(c) ? launch<T, kScheme, true>(p) : launch<T, kScheme, false>(p);
}

template <typename T> void dispatch(const Case &c, const QuantizedGemmParams &p) {
  switch (c.scheme) {
  case quant::Scheme::Int4:
    return dispatchVector<T, 0>(c, p);
  case quant::Scheme::Fp8:
    return dispatchVector<T, 1>(c, p);
  case quant::Scheme::Int8:
    return dispatchVector<T, 2>(c, p);
  case quant::Scheme::Fp8Weight:
    return dispatchVector<T, 3>(c, p);
  }
}

template <typename T> void runCase(const Case &c, std::mt19937 &rng, bool mma = false) {
  std::vector<double> xValues;
  std::vector<T> x = infer::kerneltest::randomElements<T>(size_t(c.tokens * c.k), rng, &xValues);
  if (c.nanToken && c.tokens > 1) {
    x[size_t(c.k + 3)] = Element<T>::from(NAN);
    xValues[size_t(c.k + 3)] = NAN;
  }
  std::uniform_real_distribution<float> uniform(-1.f, 1.f), positive(0.5f, 2.f);
  std::vector<float> w(size_t(c.n * c.k)), inputScale(size_t(c.k));
  for (float &v : w)
    v = uniform(rng);
  for (float &v : inputScale)
    v = positive(rng);
  std::vector<uint8_t> q(size_t(quant::quantizedBytes(c.scheme, c.n, c.k)));
  std::vector<float> scales(size_t(quant::scaleCount(c.scheme, c.n, c.k, c.group)));
  quant::quantize(c.scheme, w.data(), c.n, c.k, c.group, q.data(), scales.data());
  std::vector<float> zeros(scales.size());
  std::uniform_int_distribution<int> zeroPoint(-3, 3);
  for (float &z : zeros)
    z = c.zeros ? float(zeroPoint(rng)) : 0.f;
  std::vector<double> biasValues, outValues;
  std::vector<T> bias = infer::kerneltest::randomElements<T>(size_t(c.n), rng, &biasValues);
  std::vector<T> out =
      infer::kerneltest::randomElements<T>(size_t(c.tokens * c.n), rng, &outValues);

  // The reference: runtime/cpu/QuantizedGemmKernel.cpp's math.
  std::vector<float> xs(size_t(c.tokens * c.k));
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = float(xValues[i]) / (c.inputScale ? inputScale[i % size_t(c.k)] : 1.f);
  if (c.scheme == quant::Scheme::Fp8)
    for (i64 t = 0; t < c.tokens; ++t)
      quant::fakeQuantizeRowFp8(xs.data() + t * c.k, c.k);
  std::vector<float> row(size_t(c.k));
  std::vector<double> want(size_t(c.tokens * c.n)), magnitude(want.size());
  for (i64 j = 0; j < c.n; ++j) {
    quant::dequantizeRow(c.scheme, q.data(), scales.data(), c.zeros ? zeros.data() : nullptr, c.k,
                         c.group, j, row.data());
    for (i64 t = 0; t < c.tokens; ++t) {
      double sum = 0, size = 0;
      for (i64 i = 0; i < c.k; ++i) {
        sum += double(xs[size_t(t * c.k + i)]) * row[size_t(i)];
        size += std::fabs(double(xs[size_t(t * c.k + i)]) * row[size_t(i)]);
      }
      if (c.bias)
        sum += biasValues[size_t(j)], size += std::fabs(biasValues[size_t(j)]);
      if (c.residualIsOutput)
        sum += outValues[size_t(t * c.n + j)], size += std::fabs(outValues[size_t(t * c.n + j)]);
      want[size_t(t * c.n + j)] = sum;
      magnitude[size_t(t * c.n + j)] = size;
    }
  }

  T *dx = upload(x), *dBias = upload(bias), *dOut = upload(out);
  uint8_t *dq = upload(q);
  float *dScales = upload(scales), *dInputScale = upload(inputScale), *dZeros = upload(zeros);
  QuantizedGemmParams p{};
  p.input = dx;
  p.q = dq;
  p.scales = dScales;
  p.zeros = c.zeros ? dZeros : nullptr;
  p.inputScale = c.inputScale ? dInputScale : nullptr;
  p.inputScaleType = 1;
  p.bias = c.bias ? dBias : nullptr;
  p.residual = c.residualIsOutput ? dOut : nullptr;
  p.output = dOut;
  p.tokens = c.tokens;
  p.n = c.n;
  p.k = c.k;
  p.group = quant::isGrouped(c.scheme) ? c.group : 0;
  mma ? launchMma<T>(c, p) : dispatch<T>(c, p);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> got(out.size());
  CUDA_CHECK(cudaMemcpy(got.data(), dOut, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
  const double relative = sizeof(T) == 4 ? 1e-5 : 1e-5 + 1.0 / 256;
  double worst = 0;
  i64 bad = 0, nanRows = 0;
  for (size_t e = 0; e < got.size(); ++e) {
    double g = Element<T>::value(got[e]);
    if (std::isnan(want[e])) {
      nanRows += std::isnan(g) ? 0 : 1;
      continue;
    }
    double err = std::fabs(g - want[e]) / std::max(magnitude[e], 1e-30);
    worst = std::max(worst, std::isnan(err) ? INFINITY : err);
    bad += !(err <= relative);
  }
  bool ok = bad == 0 && nanRows == 0;
  failures += ok ? 0 : 1;
  std::printf("%s: %s %s T=%lld n=%lld k=%lld%s%s%s%s%s%s: max error %.3g of sum |x w| "
              "(tolerance %.3g)%s\n",
              ok ? "PASS" : "FAIL", quant::schemeName(c.scheme), Element<T>::name, c.tokens, c.n,
              c.k, quant::isGrouped(c.scheme) ? (" g" + std::to_string(c.group)).c_str() : "",
              c.zeros ? " zeros" : "",
              mma ? (" tensor cores, k steps of " + std::to_string(mmaBlockK<T>(c))).c_str()
              : vectorPath(c) ? " 16-byte loads"
                              : " element-wise",
              c.inputScale ? " input_scale" : "", c.bias ? " bias" : "",
              c.residualIsOutput ? " residual=output" : "", worst, relative,
              nanRows ? " (a NaN token's outputs not NaN)" : "");
  for (void *ptr : {(void *)dx, (void *)dBias, (void *)dOut, (void *)dq, (void *)dScales,
                    (void *)dInputScale, (void *)dZeros})
    CUDA_CHECK(cudaFree(ptr));
}

/// Decode timings: one token (and 8) through an n x k weight; the weight cycles over copies that
/// together exceed the 50 MB L2, so it streams from HBM as in a model.
void timeDecode(quant::Scheme scheme, i64 n, i64 k, i64 tokens, bool mma = false) {
  const i64 group = 128;
  std::vector<uint8_t> q(size_t(quant::quantizedBytes(scheme, n, k)), 0x11);
  const int copies = int(std::max<size_t>(1, (160u << 20) / q.size() + 1));
  std::vector<float> scales(size_t(quant::scaleCount(scheme, n, k, group)), 0.01f);
  std::vector<bf16> x(size_t(tokens * k), __float2bfloat16(0.5f)), out(size_t(tokens * n));
  bf16 *dx = upload(x), *dOut = upload(out);
  uint8_t *dq = nullptr;
  CUDA_CHECK(cudaMalloc(&dq, q.size() * copies));
  for (int c = 0; c < copies; ++c)
    CUDA_CHECK(cudaMemcpy(dq + c * q.size(), q.data(), q.size(), cudaMemcpyHostToDevice));
  float *dScales = upload(scales);
  QuantizedGemmParams p{};
  p.input = dx;
  p.q = dq;
  p.scales = dScales;
  p.output = dOut;
  p.tokens = tokens;
  p.n = n;
  p.k = k;
  p.group = quant::isGrouped(scheme) ? group : 0;
  Case c{scheme, tokens, n, k, group, false, false, false, false};
  int next = 0;
  double ms = infer::kerneltest::timeMs(
      [&] {
        p.q = dq + size_t(next++ % copies) * q.size();
        mma ? launchMma<bf16>(c, p) : dispatch<bf16>(c, p);
      },
      50);
  double bytes = double(q.size()) + double(scales.size()) * 4;
  std::printf("timing: %s bf16 T=%lld %lld x %lld%s: %.1f us, weights %.1f MB at %.0f GB/s\n",
              quant::isGrouped(scheme) ? (std::string(quant::schemeName(scheme)) + " g128").c_str()
                                       : quant::schemeName(scheme),
              tokens, n, k, mma ? " tensor cores" : "", ms * 1e3, bytes / 1e6,
              bytes / (ms * 1e-3) / 1e9);
  for (void *ptr : {(void *)dx, (void *)dOut, (void *)dq, (void *)dScales})
    CUDA_CHECK(cudaFree(ptr));
}

} // namespace

__global__ void encodeDecodeE4M3(const float *x, unsigned *codes, float *decoded, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    codes[i] = e4m3FromFloat(x[i]);
  if (i < 256)
    decoded[i] = e4m3ToFloat(unsigned(i));
}

/// Common.cuh's E4M3 codec (the FP8 KV cache's write, fp8 weights' reads) against
/// quant::e4m3FromFloat / floatFromE4M3 bit for bit: every code's value, every code value and
/// the midpoints between neighbours (ties to even) with the floats just beside them, values past
/// 448, subnormals, signed zeros, infinities, NaN, and random floats over 2^-12 .. 2^10.
void checkE4M3Codec(std::mt19937 &rng) {
  std::vector<float> x = {0.f, -0.f, INFINITY, -INFINITY, NAN, -NAN, 448.f, 464.f, 1e30f, -1e30f};
  for (int code = 0; code < 256; ++code) {
    const float v = quant::floatFromE4M3(uint8_t(code)), next = quant::floatFromE4M3(uint8_t(code + 1));
    if (!std::isfinite(v))
      continue;
    x.push_back(v);
    if ((code & 0x7f) < 0x7e && std::isfinite(next)) {
      const float mid = 0.5f * (v + next);
      x.insert(x.end(), {mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e30f * mid)});
    }
  }
  std::uniform_real_distribution<float> exponent(-12.f, 10.f);
  for (int i = 0; i < 20000; ++i)
    x.push_back((i % 2 ? -1.f : 1.f) * std::exp2(exponent(rng)));
  const int n = int(x.size());
  float *dX, *dDecoded;
  unsigned *dCodes;
  CUDA_CHECK(cudaMalloc(&dX, n * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dCodes, n * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&dDecoded, 256 * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dX, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  encodeDecodeE4M3<<<(std::max(n, 256) + 255) / 256, 256>>>(dX, dCodes, dDecoded, n);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> codes(n);
  std::vector<float> decoded(256);
  CUDA_CHECK(cudaMemcpy(codes.data(), dCodes, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(decoded.data(), dDecoded, 256 * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < n; ++i)
    if (codes[i] != quant::e4m3FromFloat(x[i]) && bad++ < 5)
      std::printf("e4m3FromFloat(%a): device 0x%02x, host 0x%02x\n", x[i], codes[i],
                  quant::e4m3FromFloat(x[i]));
  for (int code = 0; code < 256; ++code) {
    const float want = quant::floatFromE4M3(uint8_t(code));
    if (!(decoded[code] == want || (std::isnan(want) && std::isnan(decoded[code]))) && bad++ < 10)
      std::printf("e4m3ToFloat(0x%02x): device %a, host %a\n", code, decoded[code], want);
  }
  std::printf("%s: E4M3 codec, %d values and 256 codes against the host's\n", bad ? "FAIL" : "PASS",
              n);
  failures += bad ? 1 : 0;
  CUDA_CHECK(cudaFree(dX));
  CUDA_CHECK(cudaFree(dCodes));
  CUDA_CHECK(cudaFree(dDecoded));
}

int main(int argc, char **argv) {
  const bool timings = !(argc > 1 && std::strcmp(argv[1], "--no-timings") == 0);
  if (!infer::kerneltest::haveDevice())
    return 77;
  if (argc == 5 && std::strcmp(argv[1], "--time") == 0) { // --time N K TOKENS: for a profiler
    timeDecode(quant::Scheme::Int4, std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]),
               /*mma=*/true);
    return 0;
  }
  std::mt19937 rng(7);
  using S = quant::Scheme;
  const Case cases[] = {
      {S::Int4, 1, 300, 4096, 128, false, false, false, false},
      {S::Int4, 5, 77, 160, 32, true, true, false, false},
      {S::Int4, 9, 33, 64, 16, false, false, true, false},
      {S::Int4, 20, 41, 24, 8, true, true, true, false},
      {S::Int4, 8, 64, 480, 160, false, true, false, false},
      {S::Fp8, 1, 300, 4096, 0, false, false, false, false},
      {S::Fp8, 17, 64, 160, 0, true, true, true, true},
      {S::Fp8, 13, 40, 24, 0, false, true, false, true},
      {S::Fp8, 3, 9, 7, 0, true, false, true, false},
      {S::Fp8, 3, 35, 20000, 0, true, true, false, true},    // one token a tile
      {S::Int4, 8, 17, 6144, 64, false, false, true, false}, // two tokens a tile
      // Imported weights: int8, fp8-weight, zero points.
      {S::Int8, 1, 300, 4096, 128, false, false, false, false, true},
      {S::Int8, 7, 41, 96, 48, false, true, true, false, true},
      {S::Int8, 3, 9, 24, 8, false, false, false, false},
      {S::Int4, 4, 70, 256, 32, false, true, false, false, true},
      {S::Int4, 6, 19, 48, 16, false, false, true, false, true},
      {S::Fp8Weight, 1, 300, 4096, 0, false, false, false, false},
      {S::Fp8Weight, 9, 33, 40, 0, false, true, true, true},
      // The tensor-core decode GEMV's k steps of 128 and 64, tails of rows, AWQ, zero points.
      {S::Int4, 1, 4099, 4096, 128, false, false, false, false},
      {S::Int4, 8, 61, 14336, 128, true, true, true, false},
      {S::Int4, 3, 40, 192, 64, false, true, false, false, true},
      {S::Int4, 5, 16, 64, 64, true, false, true, false, true},
      {S::Int4, 2, 300, 1024, 256, false, false, true, false},
  };
  checkE4M3Codec(rng);
  for (const Case &c : cases) {
    runCase<float>(c, rng);
    runCase<bf16>(c, rng);
    if (mmaBlockK<bf16>(c))
      for (unsigned cap : {0u, 3u}) { // the runtime's grid, then 3 blocks walking every tile
        mmaGridCap = cap;
        if (cap)
          std::printf("tensor-core kernel on %u blocks:\n", cap);
        runCase<bf16>(c, rng, /*mma=*/true);
      }
    mmaGridCap = 0;
  }
  if (timings)
    for (S scheme : {S::Int4, S::Fp8, S::Int8})
      for (i64 tokens : {1, 8}) {
        timeDecode(scheme, 4096, 4096, tokens);
        timeDecode(scheme, 14336, 4096, tokens);
      }
  // Llama-3-8B's int4 g128 decode GEMMs on tensor cores: qkv, o, gate/up, down, the LM head.
  if (timings)
    for (i64 tokens : {1, 8})
      for (auto [n, k] : {std::pair<i64, i64>{6144, 4096},
                          {4096, 4096},
                          {28672, 4096},
                          {4096, 14336},
                          {128256, 4096}})
        timeDecode(S::Int4, n, k, tokens, /*mma=*/true);
  std::printf("%s: %d failed\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
