//===- QuantizedGemm.cuh - GEMM over int4 / fp8 weights (exec.quantized_gemm) ===//
//
// infer_quantized_gemm<T, kScheme, kVector> (QuantizedGemmParams in
// KernelParams.h): the math of runtime/cpu/QuantizedGemmKernel.cpp with fp32
// accumulation, for steps of up to kQuantizedGemmTokens tokens (decode). A
// block first stages its tile of tokens' inputs in shared memory as the
// products take them (divided by AWQ's input scale; fp8: rounded to E4M3),
// once for all its rows; each warp then owns kQuantizedGemmRowsPerWarp output
// rows, reads their quantized bytes once, decodes them in registers and
// multiplies them with every staged token, so a decode step streams 4 (int4)
// or 8 (fp8) bits a weight.
//
//   int4 (kScheme 0): a group's integer products are summed, then scaled by
//        the group's scale. kVector: k and the group are multiples of 32, so a
//        lane's 16-byte load (32 weights) lies in one group.
//   fp8  (kScheme 1): the block first finds each token's scale s_t = max|x| /
//        448 (1 for a zero row); x / s_t is rounded to E4M3 (nearest even,
//        saturated) as quant::fakeQuantizeRowFp8 does, the E4M3 products are
//        summed and scaled once by s_t * scale_j. kVector: k % 16 == 0.
//        A token with a NaN or Inf feature is used unrounded, as on the cpu.
//   int8 (kScheme 2): as int4 with a byte a weight; kVector: k and the group
//        are multiples of 16.
//   fp8-weight (kScheme 3): fp8's weights, the inputs as they are.
// The numbers are quant::Scheme's. Imported int4 / int8 weights may bring
// zero points (p.zeros, shaped as the scales): a group then adds
// -zero * scale * (the sum of its inputs).
//
// Without kVector a lane takes single elements (any k, any even group).
// Inputs of more than kQuantizedGemmMaxK features do not fit the staging:
// codegen then sends every step to the path below.
// Steps of more than kQuantizedGemmTokens tokens run on tensor cores instead:
// fp8 with `fp8_gemm` (QuantizedFp8Gemm.h) as a cuBLASLt FP8 GEMM over the
// stored weight, its inputs written as E4M3 by infer_quantized_fp8_inputs;
// the others dequantized: infer_quantized_dequantize writes the weight as T
// (and fp8's infer_quantized_round_inputs the rounded inputs) for a cuBLASLt
// GEMM.
// With `inputScale` (AWQ) x[t, i] is divided by inputScale[i] first. The
// residual may be the output: the lane that writes out[t, j] read it first.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMM_CUH
#define INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMM_CUH

#include "codegen/cuda/kernels/Common.cuh"
#include "runtime/cuda/abi/QuantizedFp8Gemm.h"

namespace infer {
namespace kernels {
namespace quantimpl {

constexpr int kInt4 = 0, kFp8 = 1, kInt8 = 2, kFp8Weight = 3;
/// Schemes with a scale (and zero point) a group of k; the others one a row.
__device__ __forceinline__ constexpr bool grouped(int scheme) {
  return scheme == kInt4 || scheme == kInt8;
}
/// Schemes whose bytes are E4M3 values.
__device__ __forceinline__ constexpr bool e4m3(int scheme) {
  return scheme == kFp8 || scheme == kFp8Weight;
}

/// Element `index` of row-major quantized weights as its integer (int4,
/// int8) or float (fp8), unscaled.
template <int kScheme>
__device__ __forceinline__ float quantizedAt(const unsigned char *q, long long index) {
  if (kScheme == kInt4) {
    const unsigned byte = q[index / 2];
    const int nibble = int(index % 2 ? byte >> 4 : byte & 0xfu);
    return float(nibble >= 8 ? nibble - 16 : nibble);
  }
  if (kScheme == kInt8)
    return float(static_cast<signed char>(q[index]));
  return e4m3ToFloat(q[index]);
}

/// x rounded to the nearest E4M3FN value (ties to even), |x| clamped to 448
/// first: quant::e4m3FromFloat then floatFromE4M3, as one float.
__device__ __forceinline__ float roundToE4M3(float x) {
  const float a = fminf(fabsf(x), kE4M3Max);
  float r;
  if (a < 0x1p-6f) { // subnormal: units of 2^-9
    r = rintf(a * 512.f) * 0x1p-9f;
  } else {
    unsigned bits = __float_as_uint(a);
    bits += (1u << 19) - 1u + ((bits >> 20) & 1u);
    r = __uint_as_float(bits & ~((1u << 20) - 1u));
  }
  return copysignf(r, x);
}

/// x[t, i] as the GEMM multiplies it: divided by the input scale, and for
/// fp8 divided by the token's scale and rounded to E4M3 (when `round`).
template <typename T, int kScheme>
__device__ __forceinline__ float feature(const QuantizedGemmParams &p, float x, long long i,
                                         float tokenScale, bool round) {
  if (p.inputScale) {
    float f = p.inputScaleType == 1 ? static_cast<const float *>(p.inputScale)[i]
              : p.inputScaleType == 2
                  ? toFloat(static_cast<const __half *>(p.inputScale)[i])
                  : toFloat(static_cast<const __nv_bfloat16 *>(p.inputScale)[i]);
    x = __fdiv_rn(x, f);
  }
  if (kScheme == kFp8 && round)
    x = roundToE4M3(__fdiv_rn(x, tokenScale));
  return x;
}

/// N consecutive elements of T at `src` (16-byte aligned) as floats.
template <typename T, int N> __device__ __forceinline__ void loadFloats(const T *src, float *dst) {
  constexpr int kPer = 16 / int(sizeof(T));
#pragma unroll
  for (int v = 0; v < N / kPer; ++v) {
    uint4 raw = *reinterpret_cast<const uint4 *>(src + v * kPer);
    const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
    for (int u = 0; u < kPer; ++u)
      dst[v * kPer + u] = toFloat(e[u]);
  }
}

/// The 16 weights (fp8, int8) or 32 (int4) of one 16-byte load, as floats,
/// without a conversion instruction:
///   int4: each nibble XOR 8 (n + 8, 0..15) as the low mantissa bits of
///         2^23, minus 2^23 + 8 (int8: each byte XOR 0x80, minus 2^23 + 128);
///   fp8:  the E4M3 value times 2^-120: its exponent and mantissa bits moved
///         to a float's (a normal's exponent e - 7 becomes e - 127, a
///         subnormal's m * 2^-9 becomes a float subnormal m * 2^-129); the
///         caller scales the sum back by 2^120. (0x7f, E4M3's NaN, reads as
///         480: the quantizer writes it only for a NaN weight.)
constexpr float kFp8Unscale = 0x1p120f;
template <int kScheme, int N> __device__ __forceinline__ void decode(uint4 raw, float *w) {
  const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if (kScheme == kInt4) {
      const unsigned biased = words[i] ^ 0x88888888u;
#pragma unroll
      for (int b = 0; b < 8; ++b)
        w[i * 8 + b] = __uint_as_float(0x4b000000u | ((biased >> (4 * b)) & 0xfu)) - 8388616.f;
    } else if (kScheme == kInt8) { // byte XOR 0x80 (b + 128), the same way
      const unsigned biased = words[i] ^ 0x80808080u;
#pragma unroll
      for (int b = 0; b < 4; ++b)
        w[i * 4 + b] = __uint_as_float(0x4b000000u | ((biased >> (8 * b)) & 0xffu)) - 8388736.f;
    } else {
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const unsigned byte = words[i] >> (8 * b);
        w[i * 4 + b] = __uint_as_float(((byte & 0x80u) << 24) | ((byte & 0x7fu) << 20));
      }
    }
  }
}

} // namespace quantimpl

/// kTokens: the most tokens a block takes (a tile). Batch-1 decode runs the
/// kTokens = 1 instance (CudaLaunch.gemv_single_row) in blocks of
/// quantizedGemmSingleTokenWarps(n) warps: its few registers let two blocks
/// share an SM, which hides the weight loads' latency better.
template <typename T, int kScheme, bool kVector, int kTokens = kQuantizedGemmTokens>
__global__ void __launch_bounds__(kQuantizedGemmThreads, kTokens == 1 ? 2 : 1)
    infer_quantized_gemm(QuantizedGemmParams p) {
  // [tile, k]: the inputs as the products take them. (An extern __shared__
  // name is one per NVRTC program: GemvRows.cuh's `staged` is uint4.)
  extern __shared__ float quantizedStaged[];
  __shared__ float tokenScales[kTokens];
  __shared__ bool tokenRounds[kTokens];
  waitForPreviousKernel();
  float *staged = quantizedStaged;
  using namespace quantimpl;
  constexpr int kRows = kQuantizedGemmRowsPerWarp;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tileTokens =
      quantizedGemmTileTokens(p.k) < kTokens ? quantizedGemmTileTokens(p.k) : kTokens;
  const long long t0 = (long long)blockIdx.y * tileTokens;
  const int tile = int(p.tokens - t0 < tileTokens ? p.tokens - t0 : tileTokens);
  const T *input = static_cast<const T *>(p.input) + t0 * p.k;
  const long long j0 = (long long)blockIdx.x * (blockDim.x >> 5) * kRows + warp * kRows;
  // kVector: kDepth 16-byte loads a row in flight per lane (a decode step's
  // GEMV is a few loads per lane, so they are all issued before any is
  // used); the first ones before the inputs are staged, so the weight
  // stream starts at once.
  constexpr int kChunk = kScheme == kInt4 ? 32 : 16; // weights a 16-byte load holds
  constexpr int kDepth = 2;
  const long long chunks = p.k / kChunk;
  const long long rowBytes = kScheme == kInt4 ? p.k / 2 : p.k;
  const uint4 *rows[kRows];
  uint4 raw[kDepth][kRows];
  auto loadChunks = [&](long long c0) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        raw[d][r] = c0 + 32 * d < chunks ? __ldg(rows[r] + c0 + 32 * d) : make_uint4(0, 0, 0, 0);
  };
  if (kVector && j0 < p.n) {
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      rows[r] = reinterpret_cast<const uint4 *>(p.q + (j0 + r < p.n ? j0 + r : j0) * rowBytes);
    loadChunks(lane);
  }
  if (kScheme == kFp8) {
    // Warp w finds token t0 + w's scale: max |x / inputScale| / 448.
    if (warp < tile) {
      const T *x = input + warp * p.k;
      float amax = 0.f;
      bool nan = false;
      for (long long i = lane; i < p.k; i += 32) {
        float a = fabsf(feature<T, kInt4>(p, toFloat(x[i]), i, 1.f, false));
        nan |= a != a;
        amax = fmaxf(amax, a);
      }
      amax = warpMax(amax);
      nan = __any_sync(0xffffffffu, nan);
      if (lane == 0) {
        bool finite = !nan && amax <= 3.402823466e38f;
        float scale = __fdiv_rn(amax, kE4M3Max);
        tokenRounds[warp] = finite;
        tokenScales[warp] = finite && scale != 0.f ? scale : 1.f;
      }
    }
    __syncthreads();
  }
  // One token of a weight-only scheme without AWQ's input scale: the
  // products take the inputs as they are, from global memory (L1), with no
  // staging pass and no barrier before the weights are used.
  const bool direct = kTokens == 1 && kScheme != kFp8 && !p.inputScale;
  if (!direct) {
    // The tile's inputs once for the block: / inputScale, fp8: / s_t
    // rounded to E4M3 (the E4M3 value; s_t multiplies the sums).
    for (int t = 0; t < tile; ++t)
      for (long long i = threadIdx.x; i < p.k; i += blockDim.x) {
        const long long e = t * p.k + i;
        staged[e] = kScheme == kFp8
                        ? feature<T, kFp8>(p, toFloat(input[e]), i, tokenScales[t], tokenRounds[t])
                        : feature<T, kInt4>(p, toFloat(input[e]), i, 1.f, false);
      }
    __syncthreads();
  }
  if (j0 >= p.n)
    return;
  float acc[kRows][kTokens];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int t = 0; t < kTokens; ++t)
      acc[r][t] = 0.f;
  const long long groups = grouped(kScheme) ? p.k / p.group : 1;
  if (kVector) {
    for (long long c0 = lane; c0 < chunks; c0 += 32 * kDepth) {
      if (c0 != lane) // the first loads were issued before the staging
        loadChunks(c0);
#pragma unroll
      for (int d = 0; d < kDepth; ++d) {
        const long long c = c0 + 32 * d;
        if (c >= chunks)
          break;
        float w[kRows][kChunk];
        float groupScale[kRows], groupZero[kRows];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          decode<kScheme, kChunk>(raw[d][r], w[r]);
          groupScale[r] =
              grouped(kScheme)
                  ? p.scales[(j0 + r < p.n ? j0 + r : j0) * groups + c * kChunk / p.group]
                  : kFp8Unscale;
          groupZero[r] =
              p.zeros ? p.zeros[(j0 + r < p.n ? j0 + r : j0) * groups + c * kChunk / p.group] : 0.f;
        }
#pragma unroll
        for (int t = 0; t < kTokens; ++t) {
          if (t >= tile)
            break;
          float4 xs[kChunk / 4];
          if (direct) {
            loadFloats<T, kChunk>(input + t * p.k + c * kChunk, reinterpret_cast<float *>(xs));
          } else {
            const float4 *x4 = reinterpret_cast<const float4 *>(staged + t * p.k + c * kChunk);
#pragma unroll
            for (int v = 0; v < kChunk / 4; ++v)
              xs[v] = x4[v];
          }
          float partial[kRows] = {};
          float inputs = 0.f; // the chunk's inputs summed, for zero points
#pragma unroll
          for (int v = 0; v < kChunk / 4; ++v) {
            const float4 x = xs[v];
            if (grouped(kScheme) && p.zeros)
              inputs += x.x + x.y + x.z + x.w;
#pragma unroll
            for (int r = 0; r < kRows; ++r)
              partial[r] += w[r][4 * v] * x.x + w[r][4 * v + 1] * x.y + w[r][4 * v + 2] * x.z +
                            w[r][4 * v + 3] * x.w;
          }
#pragma unroll
          for (int r = 0; r < kRows; ++r)
            acc[r][t] += (partial[r] - groupZero[r] * inputs) * groupScale[r];
        }
      }
    }
  } else {
    for (long long i = lane; i < p.k; i += 32) {
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const long long j = j0 + r < p.n ? j0 + r : j0;
        float w = quantizedAt<kScheme>(p.q, j * p.k + i);
        if (grouped(kScheme)) {
          const long long at = j * groups + i / p.group;
          w = (p.zeros ? w - p.zeros[at] : w) * p.scales[at];
        }
#pragma unroll
        for (int t = 0; t < kTokens; ++t) {
          if (t >= tile)
            break;
          acc[r][t] += w * (direct ? toFloat(input[t * p.k + i]) : staged[t * p.k + i]);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const long long j = j0 + r;
    const float rowScale = e4m3(kScheme) && j < p.n ? p.scales[j] : 1.f;
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      if (t >= tile)
        break;
      float sum = warpSum(acc[r][t]);
      if (lane != 0 || j >= p.n)
        continue;
      if (kScheme == kFp8)
        sum *= tokenRounds[t] ? tokenScales[t] * rowScale : rowScale;
      else if (kScheme == kFp8Weight)
        sum *= rowScale;
      const long long out = (t0 + t) * p.n + j;
      if (p.bias)
        sum += loadFloat<T>(p.bias, j);
      if (p.residual)
        sum += loadFloat<T>(p.residual, out);
      storeFloat<T>(p.output, out, sum);
    }
  }
}

/// Steps of more tokens (CudaLaunch.dequantize): row blockIdx.x of the
/// weight dequantized to T at p.output, [n, k] (int4, int8: (q - zero) *
/// scale divided by the input scale, so the GEMM takes the inputs as they
/// are; fp8, fp8-weight: E4M3 value * scale).
template <typename T, int kScheme>
__global__ void __launch_bounds__(kQuantizedGemmThreads)
    infer_quantized_dequantize(QuantizedGemmParams p) {
  waitForPreviousKernel();
  using namespace quantimpl;
  const long long j = blockIdx.x;
  T *row = static_cast<T *>(p.output) + j * p.k;
  for (long long i = threadIdx.x; i < p.k; i += blockDim.x) {
    float w = quantizedAt<kScheme>(p.q, j * p.k + i);
    if (grouped(kScheme)) {
      const long long at = j * (p.k / p.group) + i / p.group;
      w = (p.zeros ? w - p.zeros[at] : w) * p.scales[at];
      w = feature<T, kInt4>(p, w, i, 1.f, false);
    } else {
      w *= p.scales[j];
    }
    row[i] = fromFloat<T>(w);
  }
}

namespace quantimpl {

/// Token t's fp8 scale s_t = max |x / inputScale| / 448 (1 for a zero row),
/// found by the whole block; `round` false for a row with a NaN or Inf.
template <typename T>
__device__ __forceinline__ float blockTokenScale(const QuantizedGemmParams &p, long long t,
                                                 bool &round) {
  __shared__ float partial[kQuantizedGemmWarps];
  __shared__ int partialNan[kQuantizedGemmWarps];
  const T *x = static_cast<const T *>(p.input) + t * p.k;
  float amax = 0.f;
  bool nan = false;
  for (long long i = threadIdx.x; i < p.k; i += blockDim.x) {
    float a = fabsf(feature<T, kInt4>(p, toFloat(x[i]), i, 1.f, false));
    nan |= a != a;
    amax = fmaxf(amax, a);
  }
  amax = warpMax(amax);
  nan = __any_sync(0xffffffffu, nan);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    partial[warp] = amax;
    partialNan[warp] = nan;
  }
  __syncthreads();
  amax = 0.f;
  nan = false;
  for (int w = 0; w < int(blockDim.x >> 5); ++w) {
    amax = fmaxf(amax, partial[w]);
    nan |= partialNan[w] != 0;
  }
  round = !nan && amax <= 3.402823466e38f;
  const float scale = __fdiv_rn(amax, kE4M3Max);
  return round && scale != 0.f ? scale : 1.f;
}

} // namespace quantimpl

/// fp8's inputs for the GEMM over the dequantized weight: token blockIdx.x's
/// features divided by the input scale, rounded to E4M3 with the token's
/// scale and multiplied back (quant::fakeQuantizeRowFp8), as T at p.output.
template <typename T>
__global__ void __launch_bounds__(kQuantizedGemmThreads)
    infer_quantized_round_inputs(QuantizedGemmParams p) {
  waitForPreviousKernel();
  using namespace quantimpl;
  const long long t = blockIdx.x;
  bool round;
  const float scale = blockTokenScale<T>(p, t, round);
  const T *x = static_cast<const T *>(p.input) + t * p.k;
  T *out = static_cast<T *>(p.output) + t * p.k;
  for (long long i = threadIdx.x; i < p.k; i += blockDim.x) {
    float v = feature<T, kFp8>(p, toFloat(x[i]), i, scale, round);
    out[i] = fromFloat<T>(round ? v * scale : v);
  }
}

/// fp8's inputs for cuBLASLt's FP8 GEMM (CudaLaunch.fp8_gemm,
/// QuantizedFp8Gemm.h): token blockIdx.x's features divided by the input
/// scale, as the E4M3 bytes of x / s_t (the rounding of
/// quant::fakeQuantizeRowFp8) at p.output [tokens, k], and s_t as f32 at
/// quantizedFp8ScalesOffset. The GEMM sums the E4M3 products in fp32 and
/// scales them by s_t * scale_j: the cpu backend's math. The cpu uses a row
/// with a NaN or Inf unrounded; E4M3 has no Inf, so such a row is written as
/// NaNs and its outputs stay non-finite.
template <typename T>
__global__ void __launch_bounds__(kQuantizedGemmThreads)
    infer_quantized_fp8_inputs(QuantizedGemmParams p) {
  waitForPreviousKernel();
  using namespace quantimpl;
  const long long t = blockIdx.x;
  bool round;
  const float scale = blockTokenScale<T>(p, t, round);
  const T *x = static_cast<const T *>(p.input) + t * p.k;
  unsigned char *out = static_cast<unsigned char *>(p.output);
  for (long long i = threadIdx.x; i < p.k; i += blockDim.x)
    out[t * p.k + i] =
        round ? (unsigned char)e4m3FromFloat(feature<T, kFp8>(p, toFloat(x[i]), i, scale, true))
              : (unsigned char)0x7fu;
  if (threadIdx.x == 0)
    reinterpret_cast<float *>(out + quantizedFp8ScalesOffset(p.tokens, p.k))[t] = scale;
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMM_CUH
