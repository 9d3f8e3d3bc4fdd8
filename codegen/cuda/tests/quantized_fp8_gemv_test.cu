//===- quantized_fp8_gemv_test.cu - QuantizedGemvFp8Mma.cuh against the cpu math ===//
//
// Runs infer_quantized_gemv_fp8_mma (the fp8 W8A8 decode GEMV on tensor cores) over bf16 and f16
// activations on random weights quantized by runtime/base/Quantization.cpp and compares with the
// cpu backend's math in double (QuantizedGemmKernel.cpp: x / input_scale, each token rounded to
// E4M3 with its scale max|x| / 448 by quant::fakeQuantizeRowFp8, the dequantized rows, bias,
// residual). Tolerance: 1e-5 + 2^-8 times sum |x w| of the element (quantized_gemm_test's for
// 16-bit types). Cases: 1, 2, 3, 7 and 8 tokens; n x k = 64 x 64, 40 x 192 (n not a multiple of
// 16), 4096 x 4096, 1024 x 14336; bias; a residual that is the output; AWQ input scales (f32, f16,
// bf16); a token of zeros (outputs: bias + residual exactly); a token with a NaN or an Inf (used
// unrounded, as on the cpu: the element's NaN or +-Inf must come out as the reference's). Each case
// also runs infer_quantized_gemm (the CUDA-core kernel: the one-token instance at one token, the
// tile instance otherwise, as the runtime launches them) on the same inputs, checks it the same way
// and prints the largest difference between the two kernels. Before that, the kernel's E4M3
// rounding (cvt.rn.satfinite.e4m3x2.f32, quantfp8mma::e4m3Pair) against quant::e4m3FromFloat bit
// for bit, which also pins cvt's operand order. Then (not asserted) the decode timings at
// Llama-3-8B's projections (n x k = 4096 x 4096, 14336 x 4096, 4096 x 14336, 6144 x 4096) for 1
// and 4 tokens, both kernels, in microseconds and GB/s of weight bytes beside the H100's 3.35 TB/s,
// cycling over copies of the weight that together exceed the L2. Exit 0: all pass; 1: a case
// failed; 77: no CUDA device (skip).
//
//   nvcc -std=c++17 -O2 -arch=sm_90a -I<repo> -o quantized_fp8_gemv_test
//       codegen/cuda/tests/quantized_fp8_gemv_test.cu
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/kernels/QuantizedGemm.cuh"
#include "codegen/cuda/kernels/QuantizedGemvFp8Mma.cuh"
#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "runtime/base/Quantization.cpp"

#include <cmath>
#include <cstdio>
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
  i64 tokens, n, k;
  int inputScaleType; // 0: none; 1 f32, 2 f16, 3 bf16
  bool bias, residualIsOutput;
  int zeroToken = -1; // a token whose inputs are all zero
  int badToken = -1;  // a token with one NaN or Inf input (badValue)
  float badValue = NAN;
};

template <typename T> T *upload(const std::vector<T> &host) {
  T *device = nullptr;
  CUDA_CHECK(cudaMalloc(&device, std::max<size_t>(host.size(), 1) * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

/// Blocks of the tensor-core kernel when not 0: each block walks more tiles than the runtime's
/// grid gives it (the checks run both).
unsigned mmaGridCap = 0;

/// As the runtime launches it: quantizedMmaGrid(n) persistent blocks of 8 warps.
template <typename T> void launchMma(const QuantizedGemmParams &p) {
  unsigned blocks = quantizedMmaGrid(p.n);
  blocks = mmaGridCap && mmaGridCap < blocks ? mmaGridCap : blocks;
  infer_quantized_gemv_fp8_mma<T><<<dim3(blocks), kQuantizedMmaThreads>>>(p);
}

/// infer_quantized_gemm's fp8 decode as the runtime launches it (quantized_gemm_test's launch):
/// the kTokens = 1 instance for one token, the tile instance otherwise. allowCudaCores first.
template <typename T> void launchCudaCores(const QuantizedGemmParams &p) {
  const bool single = p.tokens == 1;
  const int tile = single ? 1 : quantizedGemmTileTokens(p.k);
  const int warps = single ? quantizedGemmSingleTokenWarps(p.n) : kQuantizedGemmWarps;
  const i64 rows = warps * kQuantizedGemmRowsPerWarp;
  const dim3 grid(unsigned((p.n + rows - 1) / rows), unsigned((p.tokens + tile - 1) / tile));
  const size_t shared = size_t(4 * p.k * tile);
  if (single)
    infer_quantized_gemm<T, 1, true, 1><<<grid, warps * 32, shared>>>(p);
  else
    infer_quantized_gemm<T, 1, true><<<grid, kQuantizedGemmThreads, shared>>>(p);
}

/// Lets both instances stage the largest k here (once, not in the timed loops).
template <typename T> void allowCudaCores(i64 maxK) {
  const size_t bytes = size_t(std::max<i64>(4 * maxK, kQuantizedGemmStageBytes));
  infer::kerneltest::allowDynamicShared(infer_quantized_gemm<T, 1, true, 1>, bytes);
  infer::kerneltest::allowDynamicShared(infer_quantized_gemm<T, 1, true>, bytes);
}

/// One kernel's outputs against the reference: the worst error over sum |x w|, how many
/// elements are past `relative`, how many non-finite references it missed (NaN for NaN, the
/// same infinity for an infinity).
struct Check {
  double worst = 0;
  i64 bad = 0, missed = 0;
};
template <typename T>
Check check(const std::vector<T> &got, const std::vector<double> &want,
            const std::vector<double> &magnitude, double relative) {
  Check r;
  for (size_t e = 0; e < got.size(); ++e) {
    const double g = Element<T>::value(got[e]);
    if (!std::isfinite(want[e])) {
      r.missed += std::isnan(want[e]) ? !std::isnan(g) : g != want[e];
      continue;
    }
    const double err = std::fabs(g - want[e]) / std::max(magnitude[e], 1e-30);
    r.worst = std::max(r.worst, std::isnan(err) ? INFINITY : err);
    r.bad += !(err <= relative);
  }
  return r;
}

template <typename T> void runCase(const Case &c, std::mt19937 &rng) {
  std::vector<double> xValues;
  std::vector<T> x = infer::kerneltest::randomElements<T>(size_t(c.tokens * c.k), rng, &xValues);
  for (i64 i = 0; c.zeroToken >= 0 && i < c.k; ++i) {
    x[size_t(c.zeroToken * c.k + i)] = Element<T>::from(0.0);
    xValues[size_t(c.zeroToken * c.k + i)] = 0;
  }
  if (c.badToken >= 0) {
    const size_t at = size_t(c.badToken * c.k + c.k / 3);
    x[at] = Element<T>::from(c.badValue);
    xValues[at] = c.badValue;
  }
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  std::uniform_real_distribution<double> positive(0.5, 2.0);
  std::vector<float> w(size_t(c.n * c.k));
  for (float &v : w)
    v = uniform(rng);
  std::vector<uint8_t> q(size_t(c.n * c.k));
  std::vector<float> scales(size_t(c.n));
  quant::quantize(quant::Scheme::Fp8, w.data(), c.n, c.k, 0, q.data(), scales.data());
  // The input scale in its stored type; inputScale holds its values as floats.
  std::vector<float> inputScale(size_t(c.k), 1.f), scaleF32(size_t(c.k));
  std::vector<__half> scaleF16(size_t(c.k));
  std::vector<bf16> scaleBf16(size_t(c.k));
  for (i64 i = 0; i < c.k; ++i) {
    const double s = positive(rng);
    scaleF32[size_t(i)] = float(s);
    scaleF16[size_t(i)] = __float2half_rn(float(s));
    scaleBf16[size_t(i)] = __float2bfloat16_rn(float(s));
    if (c.inputScaleType)
      inputScale[size_t(i)] = c.inputScaleType == 1   ? scaleF32[size_t(i)]
                              : c.inputScaleType == 2 ? __half2float(scaleF16[size_t(i)])
                                                      : __bfloat162float(scaleBf16[size_t(i)]);
  }
  std::vector<double> biasValues, outValues;
  std::vector<T> bias = infer::kerneltest::randomElements<T>(size_t(c.n), rng, &biasValues);
  std::vector<T> out =
      infer::kerneltest::randomElements<T>(size_t(c.tokens * c.n), rng, &outValues);

  // The reference: runtime/cpu/QuantizedGemmKernel.cpp's math, in double.
  std::vector<float> xs(size_t(c.tokens * c.k));
  for (size_t i = 0; i < xs.size(); ++i)
    xs[i] = c.inputScaleType ? float(xValues[i]) / inputScale[i % size_t(c.k)] : float(xValues[i]);
  for (i64 t = 0; t < c.tokens; ++t)
    quant::fakeQuantizeRowFp8(xs.data() + t * c.k, c.k);
  std::vector<float> row(size_t(c.k));
  std::vector<double> want(size_t(c.tokens * c.n)), magnitude(want.size());
  for (i64 j = 0; j < c.n; ++j) {
    quant::dequantizeRow(quant::Scheme::Fp8, q.data(), scales.data(), nullptr, c.k, 0, j,
                         row.data());
    for (i64 t = 0; t < c.tokens; ++t) {
      double sum = 0, size = 0;
      for (i64 i = 0; i < c.k; ++i) {
        sum += double(xs[size_t(t * c.k + i)]) * row[size_t(i)];
        size += std::fabs(double(xs[size_t(t * c.k + i)]) * row[size_t(i)]);
      }
      const size_t e = size_t(t * c.n + j);
      if (c.bias)
        sum += biasValues[size_t(j)], size += std::fabs(biasValues[size_t(j)]);
      if (c.residualIsOutput)
        sum += outValues[e], size += std::fabs(outValues[e]);
      want[e] = sum;
      magnitude[e] = size;
    }
  }

  T *dx = upload(x), *dBias = upload(bias), *dOut = upload(out);
  uint8_t *dq = upload(q);
  float *dScales = upload(scales), *dScaleF32 = upload(scaleF32);
  __half *dScaleF16 = upload(scaleF16);
  bf16 *dScaleBf16 = upload(scaleBf16);
  QuantizedGemmParams p{};
  p.input = dx;
  p.q = dq;
  p.scales = dScales;
  p.inputScale = c.inputScaleType == 1   ? (const void *)dScaleF32
                 : c.inputScaleType == 2 ? (const void *)dScaleF16
                 : c.inputScaleType == 3 ? (const void *)dScaleBf16
                                         : nullptr;
  p.inputScaleType = c.inputScaleType ? c.inputScaleType : 1;
  p.bias = c.bias ? dBias : nullptr;
  p.residual = c.residualIsOutput ? dOut : nullptr;
  p.output = dOut;
  p.tokens = c.tokens;
  p.n = c.n;
  p.k = c.k;
  std::vector<T> got[2];
  for (int kernel = 0; kernel < 2; ++kernel) {
    CUDA_CHECK(cudaMemcpy(dOut, out.data(), out.size() * sizeof(T), cudaMemcpyHostToDevice));
    kernel == 0 ? launchMma<T>(p) : launchCudaCores<T>(p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    got[kernel].resize(out.size());
    CUDA_CHECK(
        cudaMemcpy(got[kernel].data(), dOut, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  }
  const double relative = 1e-5 + 1.0 / 256;
  const Check mma = check(got[0], want, magnitude, relative);
  const Check cores = check(got[1], want, magnitude, relative);
  double apart = 0; // the two kernels' largest difference over sum |x w|
  for (size_t e = 0; e < want.size(); ++e)
    if (std::isfinite(want[e]))
      apart =
          std::max(apart, std::fabs(Element<T>::value(got[0][e]) - Element<T>::value(got[1][e])) /
                              std::max(magnitude[e], 1e-30));
  const bool ok = mma.bad == 0 && mma.missed == 0 && cores.bad == 0 && cores.missed == 0;
  failures += ok ? 0 : 1;
  static const char *scaleNames[] = {"", " input_scale f32", " input_scale f16",
                                     " input_scale bf16"};
  const char *bad = c.badToken < 0 ? "" : std::isnan(c.badValue) ? " NaN token" : " Inf token";
  std::printf("%s: fp8 %s T=%lld n=%lld k=%lld%s%s%s%s%s: tensor cores max error %.3g, "
              "infer_quantized_gemm %.3g of sum |x w| (tolerance %.3g), apart %.3g%s%s\n",
              ok ? "PASS" : "FAIL", Element<T>::name, c.tokens, c.n, c.k,
              scaleNames[c.inputScaleType], c.bias ? " bias" : "",
              c.residualIsOutput ? " residual=output" : "", c.zeroToken >= 0 ? " zero token" : "",
              bad, mma.worst, cores.worst, relative, apart,
              mma.missed ? " (tensor cores missed a NaN / Inf)" : "",
              cores.missed ? " (infer_quantized_gemm missed a NaN / Inf)" : "");
  for (void *ptr : {(void *)dx, (void *)dBias, (void *)dOut, (void *)dq, (void *)dScales,
                    (void *)dScaleF32, (void *)dScaleF16, (void *)dScaleBf16})
    CUDA_CHECK(cudaFree(ptr));
}

/// Decode timings of both kernels through an n x k weight; the weight cycles over copies that
/// together exceed the 50 MB L2, so it streams from HBM as in a model.
void timeDecode(i64 n, i64 k, i64 tokens) {
  const size_t bytes = size_t(n * k);
  const int copies = int(std::max<size_t>(1, (160u << 20) / bytes + 1));
  std::vector<uint8_t> q(bytes);
  for (size_t i = 0; i < bytes; ++i)
    q[i] = uint8_t((i * 37) % 0x7e) | (i & 64 ? 0x80 : 0); // finite codes of both signs
  std::vector<float> scales(size_t(n), 0.01f);
  std::vector<bf16> x(size_t(tokens * k), __float2bfloat16(0.5f)), out(size_t(tokens * n));
  bf16 *dx = upload(x), *dOut = upload(out);
  float *dScales = upload(scales);
  uint8_t *dq = nullptr;
  CUDA_CHECK(cudaMalloc(&dq, bytes * copies));
  for (int c = 0; c < copies; ++c)
    CUDA_CHECK(cudaMemcpy(dq + c * bytes, q.data(), bytes, cudaMemcpyHostToDevice));
  QuantizedGemmParams p{};
  p.input = dx;
  p.scales = dScales;
  p.output = dOut;
  p.tokens = tokens;
  p.n = n;
  p.k = k;
  double us[2];
  for (int kernel = 0; kernel < 2; ++kernel) {
    int next = 0;
    us[kernel] = 1e3 * infer::kerneltest::timeMs(
                           [&] {
                             p.q = dq + size_t(next++ % copies) * bytes;
                             kernel == 0 ? launchMma<bf16>(p) : launchCudaCores<bf16>(p);
                           },
                           200);
  }
  const double weightBytes = double(bytes) + 4.0 * double(n);
  std::printf("timing: fp8 bf16 T=%lld %lld x %lld (%.1f MB): tensor cores %.1f us (%.0f GB/s), "
              "infer_quantized_gemm %.1f us (%.0f GB/s); H100 limit 3350 GB/s (%.1f us)\n",
              tokens, n, k, weightBytes / 1e6, us[0], weightBytes / us[0] / 1e3, us[1],
              weightBytes / us[1] / 1e3, weightBytes / 3.35e6);
  for (void *ptr : {(void *)dx, (void *)dOut, (void *)dScales, (void *)dq})
    CUDA_CHECK(cudaFree(ptr));
}

} // namespace

__global__ void roundPairs(const float *x, unsigned *codes, int pairs) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < pairs)
    codes[i] = quantfp8mma::e4m3Pair(x[2 * i], x[2 * i + 1]);
}

/// quantfp8mma::e4m3Pair (cvt.rn.satfinite.e4m3x2.f32) against quant::e4m3FromFloat bit for bit
/// on finite values: every code's value, the midpoints between neighbours (ties to even) and the
/// floats beside them, values past 448, subnormals and what rounds to zero, signed zeros, random
/// floats over 2^-12 .. 2^10. Pairs of unequal values, so a swapped operand order shows. A code
/// that differs only in the sign of a zero is counted apart (the products do not see it).
void checkE4M3Pairs(std::mt19937 &rng) {
  std::vector<float> x = {0.f,   -0.f,   448.f,    -448.f,    449.f,     464.f,    -464.f, 500.f,
                          1e30f, -1e30f, 0x1p-10f, -0x1p-10f, 0x1.8p-9f, 0x1p-11f, -1e-5f, 3e-40f};
  for (int code = 0; code < 256; ++code) {
    const float v = quant::floatFromE4M3(uint8_t(code));
    const float next = quant::floatFromE4M3(uint8_t(code + 1));
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
    x.push_back((i % 3 ? -1.f : 1.f) * std::exp2(exponent(rng)));
  if (x.size() % 2)
    x.push_back(1.f);
  const int pairs = int(x.size() / 2);
  float *dX;
  unsigned *dCodes;
  CUDA_CHECK(cudaMalloc(&dX, x.size() * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&dCodes, pairs * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(dX, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  roundPairs<<<(pairs + 255) / 256, 256>>>(dX, dCodes, pairs);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> codes(pairs);
  CUDA_CHECK(cudaMemcpy(codes.data(), dCodes, pairs * sizeof(unsigned), cudaMemcpyDeviceToHost));
  int bad = 0, zeroSigns = 0;
  for (int i = 0; i < 2 * pairs; ++i) {
    const unsigned got = (codes[i / 2] >> (8 * (i % 2))) & 0xffu, want = quant::e4m3FromFloat(x[i]);
    if (got == want)
      continue;
    if ((got & 0x7fu) == 0 && (want & 0x7fu) == 0) {
      ++zeroSigns;
      continue;
    }
    if (bad++ < 8)
      std::printf("e4m3Pair: %a (%s of a pair): device 0x%02x, host 0x%02x\n", x[i],
                  i % 2 ? "hi" : "lo", got, want);
  }
  std::printf("%s: cvt.rn.satfinite.e4m3x2.f32 against quant::e4m3FromFloat, %d values "
              "(%d differ only in a zero's sign)\n",
              bad ? "FAIL" : "PASS", 2 * pairs, zeroSigns);
  failures += bad ? 1 : 0;
  CUDA_CHECK(cudaFree(dX));
  CUDA_CHECK(cudaFree(dCodes));
}

int main(int argc, char **argv) {
  const bool timings = !(argc > 1 && std::strcmp(argv[1], "--no-timings") == 0);
  if (!infer::kerneltest::haveDevice())
    return 77;
  if (argc == 5 && std::strcmp(argv[1], "--time") == 0) { // --time N K TOKENS: for a profiler
    allowCudaCores<bf16>(14336);
    timeDecode(std::atoll(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]));
    return 0;
  }
  std::mt19937 rng(11);
  allowCudaCores<bf16>(14336);
  allowCudaCores<__half>(14336);
  checkE4M3Pairs(rng);
  // {tokens, n, k, input scale type, bias, residual = output, zero token, bad token, its value}
  const Case cases[] = {
      {1, 64, 64, 0, false, false},                   // one k step a warp at most
      {2, 64, 64, 1, true, true},                     // AWQ f32
      {3, 64, 64, 0, true, false, 0, 2, NAN},         // a zero token and a NaN one
      {8, 64, 64, 2, false, true, 5, 7, INFINITY},    // AWQ f16, an Inf token
      {1, 40, 192, 3, true, false},                   // n past the last full block; AWQ bf16
      {3, 40, 192, 0, false, true, 1},                // a zero token, 3 of 8 warps
      {7, 40, 192, 1, true, true, 0, 6, NAN},         // a last pass of one token
      {8, 40, 192, 0, true, false, -1, 3, -INFINITY}, // -Inf
      {1, 4096, 4096, 0, false, false},               // Llama-3-8B's o projection
      {2, 4096, 4096, 3, true, true},                 // AWQ bf16, bias, residual
      {7, 4096, 4096, 0, false, true, 3},             // a zero token among 7
      {8, 4096, 4096, 1, true, false},                // a full step, AWQ f32
      {1, 1024, 14336, 0, true, true},                // down's k, several rounds of kDepth
      {3, 1024, 14336, 3, false, false, -1, 1, NAN},  // the fallback over a long k
      {8, 1024, 14336, 0, false, true},               // 8 tokens over a long k
  };
  for (unsigned cap : {0u, 3u}) { // the runtime's grid, then 3 blocks walking every tile
    mmaGridCap = cap;
    if (cap)
      std::printf("tensor-core kernel on %u blocks:\n", cap);
    for (const Case &c : cases) {
      runCase<bf16>(c, rng);
      runCase<__half>(c, rng);
    }
  }
  mmaGridCap = 0;
  // Llama-3-8B's decode projections: o, gate / up, down, qkv.
  if (timings)
    for (i64 tokens : {1, 4})
      for (auto [n, k] :
           {std::pair<i64, i64>{4096, 4096}, {14336, 4096}, {4096, 14336}, {6144, 4096}})
        timeDecode(n, k, tokens);
  std::printf("%s: %d failed\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
