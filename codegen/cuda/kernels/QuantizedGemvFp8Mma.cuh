//===- QuantizedGemvFp8Mma.cuh - fp8 W8A8 decode GEMV on tensor cores -----===//
//
// infer_quantized_gemv_fp8_mma<T> (QuantizedGemmParams; T bf16 or f16):
// exec.quantized_gemm's fp8 math for steps of up to kQuantizedMmaTokens
// tokens, where quantizedFp8MmaSupported (QuantizedGemvGeometry.h) holds: k a multiple of
// kFp8MmaStepK. Geometry and walk as infer_quantized_gemv_mma's
// (QuantizedGemvGeometry.h, QuantizedGemvMma.cuh): persistent blocks,
// grid.x = quantizedMmaGrid(n), kQuantizedMmaThreads threads, no dynamic
// shared memory. sm_89 or newer.
//
// Why: infer_quantized_gemm decodes each E4M3 byte to a float and multiplies
// it with every token in FMAs, and at batch 1 those instructions, not the
// 8-bit weight stream, set its pace (llama3-8b fp8 at 131 tok/s on the H100,
// 31% of the bandwidth limit). Here one mma.m16n8k32 over E4M3 multiplies
// 256 weights with every token: the tokens are A's rows 0-7 (rows 8-15
// zero), 8 output rows B's columns, the bytes as they are stored.
//
// The math is the cpu backend's (QuantizedGemmKernel.cpp), as
// infer_quantized_gemm's fp8 path: the block first finds each token's scale
// s_t = max |x / inputScale| / 448 (1 for a zero row; a row with a NaN or
// Inf is used unrounded); x / inputScale / s_t (IEEE divisions) rounded to
// E4M3 (nearest even, saturated at 448: quant::e4m3FromFloat); the E4M3
// products summed (exact products; see below for the sums) and scaled once
// by s_t * scale_j; then bias and residual (which may be the output).
//
// Fragments (PTX ISA, mma.m16n8k32 with .e4m3, g = lane / 4, q = lane % 4;
// a register's 4 bytes hold 4 consecutive k, the lowest k in the lowest
// byte): A (16 x 32, row) a0 = row g, k 4q..4q+3; a1 = row g + 8, same k;
// a2 = row g, k 16+4q..16+4q+3; a3 = row g + 8, same k. B (32 x 8, col)
// b0 = column g, k 4q..4q+3; b1 = column g, k 16+4q..16+4q+3. D (f32)
// d0, d1 = row g, columns 2q, 2q + 1; d2, d3 = row g + 8.
//
// A k step covers kFp8MmaStepK = 64 k. Lane (g, q) loads 16 bytes of weight
// row tile * 8 + g at k = 64 step + 16q (words w.x .. w.w, 4 k each) and
// holds token g's E4M3 inputs at the same k as words x0 .. x3. The sum over
// k does not care which K slot a k takes, as long as A and B of a slot hold
// the same k: mma #0 takes a0 = x0, a2 = x1, b0 = w.x, b1 = w.y (slot 4q + i
// <-> k 16q + i, slot 16 + 4q + i <-> k 16q + 4 + i, for every lane of that
// q, in A and B alike), mma #1 x2, x3, w.z, w.w. a1 = a3 = 0.
//
// A step's inputs are rounded by the whole warp, two tokens a pass: lane
// 16h + m divides token (pass + h)'s 4 inputs at k = 64 step + 4m and packs
// their E4M3 bytes in a word (cvt.rn.satfinite.e4m3x2.f32: its first source
// goes to the upper byte); lane (g, q) then takes its word u from lane
// 16 (g % 2) + 4q + u by a shuffle. At one token that is 4 divisions a lane
// where lanes owning their token's 16 inputs would take 16.
//
// Sums: Hopper's FP8 tensor cores are reported not to keep full fp32
// precision in the accumulator along a long k (DeepSeek-V3, for wgmma), so
// each step's two mmas start from zero and their sums join the lane's fp32
// sums on the CUDA cores.
//
// Warp w takes k steps w, w + 8, ... of each of its block's tiles, kDepth
// items of weight loads in flight (loadAheadWaitForPreviousKernelThenStream);
// the tokens' scales are found once a block. The warps' sums meet in shared
// memory, added in warp order (the same bits at every run). A token row
// with a NaN or Inf (x used unrounded: its outputs are NaN or +-Inf as on the
// cpu) is left out of the mmas and summed on CUDA cores afterwards, a warp
// an output; it happens only in broken models.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVFP8MMA_CUH
#define INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVFP8MMA_CUH

#include "codegen/cuda/kernels/QuantizedGemm.cuh"
#include "codegen/cuda/kernels/QuantizedGemvMma.cuh"
#include "runtime/cuda/abi/QuantizedGemvGeometry.h"

namespace infer {
namespace kernels {

namespace quantfp8mma {

using gemvimpl::U32;
using quantmma::kDepth;
using quantmma::kTiles;

/// One item of a warp's stream: lane (g, q)'s 16 bytes of rows tile * 16 +
/// 8t + g at k = 64 step + 16q, for both tiles t.
struct Fp8Item {
  uint4 w[kTiles];
};

__device__ __forceinline__ void loadFp8Item(const QuantizedGemmParams &p, long long tile,
                                            long long step, Fp8Item &item) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
    item.w[t] = gemvimpl::loadStream(p.q + quantmma::tileRow(p, tile, t * 8 + g) * p.k +
                                     step * kFp8MmaStepK + q * 16);
}

/// lo and hi as E4M3 bytes (lo in the low byte): nearest even, saturated at
/// 448, as quant::e4m3FromFloat for finite values (quantized_fp8_gemv_test
/// checks it bit for bit on the device). cvt's first source is the upper byte.
__device__ __forceinline__ U32 e4m3Pair(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  unsigned short r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
#else
  return e4m3FromFloat(lo) | e4m3FromFloat(hi) << 8;
#endif
}

/// d += A * B for one m16n8k32 over E4M3 (fp32 accumulators); A's rows 8-15
/// (a1, a3) are zero.
__device__ __forceinline__ void mma(float (&d)[4], U32 a0, U32 a2, U32 b0, U32 b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(0u), "r"(a2), "r"(0u), "r"(b0), "r"(b1));
#else
  __trap(); // quantizedFp8MmaSupported's launches need sm_89
#endif
}

/// Token g's E4M3 inputs of step `step` at k = 64 step + 16q + 4u .. + 3 as
/// x[u] (zeros for g >= tokens and for an unrounded token), rounded two
/// tokens a pass by the whole warp (see the file comment).
template <typename T>
__device__ __forceinline__ void loadInputs(const QuantizedGemmParams &p, long long step, int tokens,
                                           const float *tokenScales, const bool *tokenRounds,
                                           U32 (&x)[4]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3, h = lane >> 4;
  const long long first = step * kFp8MmaStepK + 4 * (lane & 15);
#pragma unroll
  for (int u = 0; u < 4; ++u)
    x[u] = 0u;
  for (int pass = 0; pass < tokens; pass += 2) {
    const int token = pass + h;
    U32 word = 0u;
    if (token < tokens && tokenRounds[token]) {
      const uint2 raw = __ldg(
          reinterpret_cast<const uint2 *>(static_cast<const T *>(p.input) + token * p.k + first));
      const float scale = tokenScales[token];
      float v[4] = {quantmma::halfOf<T>(raw.x, 0), quantmma::halfOf<T>(raw.x, 1),
                    quantmma::halfOf<T>(raw.y, 0), quantmma::halfOf<T>(raw.y, 1)};
#pragma unroll
      for (int e = 0; e < 4; ++e)
        v[e] = __fdiv_rn(quantimpl::feature<T, quantimpl::kFp8>(p, v[e], first + e, 1.f, false),
                         scale);
      word = e4m3Pair(v[0], v[1]) | e4m3Pair(v[2], v[3]) << 16;
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const U32 got = __shfl_sync(0xffffffffu, word, ((g - pass) & 1) << 4 | q << 2 | u);
      if ((g & ~1) == pass)
        x[u] = got;
    }
  }
}

} // namespace quantfp8mma

template <typename T>
__global__ void __launch_bounds__(kQuantizedMmaThreads, kQuantizedMmaBlocksPerMultiprocessor)
    infer_quantized_gemv_fp8_mma(QuantizedGemmParams p) {
  quantfp8mma::Fp8Item items[quantfp8mma::kDepth];
  float acc[quantfp8mma::kTiles][2];
  __shared__ quantmma::BlockSums sums[2];
  __shared__ float partialMax[kQuantizedMmaWarps][kQuantizedMmaTokens];
  __shared__ bool partialBad[kQuantizedMmaWarps][kQuantizedMmaTokens];
  __shared__ float tokenScales[kQuantizedMmaTokens];
  __shared__ bool tokenRounds[kQuantizedMmaTokens];
  quantmma::loadAheadWaitForPreviousKernelThenStream(
      p.k / kFp8MmaStepK, p.n, items,
      [&](quantfp8mma::Fp8Item &item, long long tile, long long step) {
        quantfp8mma::loadFp8Item(p, tile, step, item);
      },
      [&] {
        // Each token's scale, the whole block over its k: max |x / inputScale|
        // (and whether a NaN or Inf is there), as infer_quantized_gemm's warps.
        using namespace quantfp8mma;
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        const int tokens = quantmma::stepTokens(p);
        const T *input = static_cast<const T *>(p.input);
#pragma unroll
        for (int t = 0; t < kTiles; ++t)
          acc[t][0] = acc[t][1] = 0.f;
#pragma unroll
        for (int t = 0; t < kQuantizedMmaTokens; ++t) {
          if (t >= tokens)
            break;
          float amax = 0.f;
          bool nan = false;
          for (long long c = threadIdx.x; c < p.k / 8; c += kQuantizedMmaThreads) {
            const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(input + t * p.k) + c);
            const U32 words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
            for (int e = 0; e < 8; ++e) {
              const float x = quantmma::halfOf<T>(words[e / 2], e % 2);
              const float a =
                  fabsf(quantimpl::feature<T, quantimpl::kFp8>(p, x, c * 8 + e, 1.f, false));
              nan |= a != a;
              amax = fmaxf(amax, a);
            }
          }
          amax = warpMax(amax);
          nan = __any_sync(0xffffffffu, nan);
          if (lane == 0)
            partialMax[warp][t] = amax, partialBad[warp][t] = nan;
        }
        __syncthreads();
        if (threadIdx.x < tokens) {
          float amax = 0.f;
          bool nan = false;
          for (int v = 0; v < kQuantizedMmaWarps; ++v)
            amax = fmaxf(amax, partialMax[v][threadIdx.x]), nan |= partialBad[v][threadIdx.x];
          const bool round = !nan && amax <= 3.402823466e38f;
          const float scale = __fdiv_rn(amax, kE4M3Max);
          tokenRounds[threadIdx.x] = round;
          tokenScales[threadIdx.x] = round && scale != 0.f ? scale : 1.f;
        }
        __syncthreads();
      },
      [&](const quantfp8mma::Fp8Item &item, long long, long long step) {
        using namespace quantfp8mma;
        const int tokens = quantmma::stepTokens(p);
        U32 x[4];
        loadInputs<T>(p, step, tokens, tokenScales, tokenRounds, x);
#pragma unroll
        for (int t = 0; t < kTiles; ++t) {
          float part[4] = {0.f, 0.f, 0.f, 0.f};
          mma(part, x[0], x[1], item.w[t].x, item.w[t].y);
          mma(part, x[2], x[3], item.w[t].z, item.w[t].w);
          acc[t][0] += part[0];
          acc[t][1] += part[1];
        }
      },
      [&](long long tile, int buffer) {
        using namespace quantfp8mma;
        const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
        const int tokens = quantmma::stepTokens(p);
        const long long j0 = tile * kQuantizedMmaRows;
        quantmma::publishWarpSums(acc, sums[buffer]);
        bool unrounded = false; // a token with a NaN or Inf
        for (int t = 0; t < tokens; ++t)
          unrounded |= !tokenRounds[t];
        if (unrounded) {
          // An unrounded token's outputs: a warp each, sum e4m3 * x / inputScale.
          const T *input = static_cast<const T *>(p.input);
          for (int i = warp; i < tokens * kQuantizedMmaRows; i += kQuantizedMmaWarps) {
            const int token = i / kQuantizedMmaRows, r = i % kQuantizedMmaRows;
            if (tokenRounds[token])
              continue;
            const long long row = quantmma::tileRow(p, tile, r);
            float sum = 0.f;
            for (long long e = lane; e < p.k; e += 32)
              sum += e4m3ToFloat(p.q[row * p.k + e]) *
                     quantimpl::feature<T, quantimpl::kFp8>(p, toFloat(input[token * p.k + e]), e,
                                                            1.f, false);
            sum = warpSum(sum);
            if (lane < kQuantizedMmaWarps)
              sums[buffer][lane][token][r] = lane == 0 ? sum : 0.f;
          }
          __syncthreads();
        }
        // The sums times the row's scale and, for a rounded token, the token's.
        quantmma::storeOutputs<T>(
            p, sums[buffer], j0, tokens, [&](float sum, int token, long long j) {
              const float rowScale = p.scales[j];
              return sum * (tokenRounds[token] ? tokenScales[token] * rowScale : rowScale);
            });
      });
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVFP8MMA_CUH
