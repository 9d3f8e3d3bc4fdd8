//===- QuantizedGemvMma.cuh - int4 decode GEMV on tensor cores ------------===//
//
// infer_quantized_gemv_mma<T, kBlockK> (QuantizedGemmParams; T bf16 or f16):
// exec.quantized_gemm's int4 math for steps of up to kQuantizedMmaTokens
// tokens, where SelectKernels gave the launch `mma_block_k`
// (QuantizedGemvGeometry.h: k and the group multiples of kBlockK).
//
// Why: infer_quantized_gemm decodes each nibble to a float with three
// integer instructions and a subtraction, then one FMA a token, and at
// batch 1 those instructions, not the 4-bit weight stream, set its pace
// (llama3-8b int4 g128 at 239 tok/s on the H200, 27% of the bandwidth
// limit; bench/results/gpu/2026-12-07-h200-issue47.md). Here a lop3 turns
// two nibbles into two T values at once (n XOR 8 in the mantissa of 128.0
// (bf16) or 1024.0 (f16), minus 136 or 1032: exact), and one
// mma.m16n8k16 multiplies 128 of them with every token: the tokens are A's
// rows 0-7 (rows 8-15 zero), 8 output rows B's columns, fp32 accumulators.
//
// Lane (g, q) = (lane / 4, lane % 4) of a warp loads, for each of the
// block's two tiles of 8 rows, row g's q-th quarter of a k step (kBlockK / 4
// weights: 16 or 8 bytes), and token g's inputs at the same k. Its word u of
// weights holds nibbles 8u .. 8u + 7; (word >> 4s) & 0x000f000f pairs nibble
// s with s + 4, so mma (u, h) takes K slots {2q, 2q + 1} from pair s = 2h and
// {2q + 8, 2q + 9} from s = 2h + 1, for the weights (B) and, moved by
// byte_perm, for the inputs (A) alike. A step's products are one group's:
// they are scaled (and their zero point taken off: zero * scale * the step's
// inputs summed) before they join the lane's sums. AWQ's input scale divides
// the inputs (in fp32, rounded to T) as they are loaded.
//
// Warp w takes k steps w, w + 8, ...; kDepth steps of loads are in flight
// at once, the first before the wait for the previous kernel. The warps'
// sums meet in shared memory, added in warp order (the same bits at every
// run), then bias and residual (which may be the output).
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVMMA_CUH
#define INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVMMA_CUH

#include "codegen/cuda/kernels/Gemv.cuh"
#include "runtime/cuda/abi/QuantizedGemvGeometry.h"

namespace infer {
namespace kernels {
namespace quantmma {

using gemvimpl::U32;
constexpr int kTiles = kQuantizedMmaRows / 8;
constexpr int kDepth = 4;

/// A lane's weights of one k step and row: kBlockK / 8 nibbles.
template <int kBlockK> struct Weights { U32 word[kBlockK / 32]; };

template <int kBlockK>
__device__ __forceinline__ void loadWeights(const QuantizedGemmParams &p, long long step,
                                            Weights<kBlockK> &w, int tile) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  long long row = (long long)blockIdx.x * kQuantizedMmaRows + tile * 8 + g;
  row = row < p.n ? row : p.n - 1;
  const unsigned char *at = p.q + row * (p.k / 2) + step * (kBlockK / 2) + q * (kBlockK / 8);
  if constexpr (kBlockK == 128) {
    const uint4 v = gemvimpl::loadStream(at);
    w.word[0] = v.x, w.word[1] = v.y, w.word[2] = v.z, w.word[3] = v.w;
  } else {
    uint2 v;
    asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(at));
    w.word[0] = v.x, w.word[1] = v.y;
  }
}

/// The loads of steps first, first + kQuantizedMmaWarps, ... (kDepth).
template <int kBlockK>
__device__ __forceinline__ void loadSteps(const QuantizedGemmParams &p, long long first,
                                          Weights<kBlockK> (&w)[kDepth][kTiles]) {
  const long long steps = p.k / kBlockK;
#pragma unroll
  for (int d = 0; d < kDepth; ++d)
#pragma unroll
    for (int t = 0; t < kTiles; ++t)
      if (first + d * kQuantizedMmaWarps < steps)
        loadWeights<kBlockK>(p, first + d * kQuantizedMmaWarps, w[d][t], t);
}

/// The kernel's first statement (check_kernel_entries.py): the warp's first
/// weights (no kernel's output) are requested, then the next kernel may
/// launch, then the wait for the previous kernel's output.
template <int kBlockK>
__device__ __forceinline__ void
loadWeightsThenWaitForPreviousKernel(const QuantizedGemmParams &p,
                                     Weights<kBlockK> (&w)[kDepth][kTiles]) {
  loadSteps<kBlockK>(p, threadIdx.x >> 5, w);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Nibbles s and s + 4 of `word` as two T (low half: nibble s), exact:
/// (word >> 4s) & 0x000f000f ^ magic puts each nibble with bit 3 flipped (n + 8
/// for a signed n) under the exponent of 128.0 (bf16 0x4300) or 1024.0 (f16
/// 0x6400); an fma takes 136 or 1032 off.
template <typename T> __device__ __forceinline__ U32 weightPair(U32 word, int s);
template <> __device__ __forceinline__ U32 weightPair<__nv_bfloat16>(U32 word, int s) {
  U32 biased, value;
  asm("lop3.b32 %0, %1, %2, %3, 0x6a;"
      : "=r"(biased)
      : "r"(word >> (4 * s)), "r"(0x000f000fu), "r"(0x43084308u));
  asm("fma.rn.bf16x2 %0, %1, %2, %3;"
      : "=r"(value)
      : "r"(biased), "r"(0x3f803f80u), "r"(0xc308c308u));
  return value;
}
template <> __device__ __forceinline__ U32 weightPair<__half>(U32 word, int s) {
  U32 biased, value;
  asm("lop3.b32 %0, %1, %2, %3, 0x6a;"
      : "=r"(biased)
      : "r"(word >> (4 * s)), "r"(0x000f000fu), "r"(0x64086408u));
  asm("fma.rn.f16x2 %0, %1, %2, %3;"
      : "=r"(value)
      : "r"(biased), "r"(0x3c003c00u), "r"(0xe408e408u));
  return value;
}

/// Half `hi` of a pair of T as a float.
template <typename T> __device__ __forceinline__ float halfOf(U32 pair, int hi);
template <> __device__ __forceinline__ float halfOf<__nv_bfloat16>(U32 pair, int hi) {
  return __uint_as_float(hi ? pair & 0xffff0000u : pair << 16);
}
template <> __device__ __forceinline__ float halfOf<__half>(U32 pair, int hi) {
  return __half2float(__ushort_as_half((unsigned short)(hi ? pair >> 16 : pair & 0xffffu)));
}

/// Inputs s and s + 4 of word group u (x[8u + s], x[8u + s + 4]) as a pair.
__device__ __forceinline__ U32 inputPair(const U32 *x, int u, int s) {
  return __byte_perm(x[4 * u + s / 2], x[4 * u + 2 + s / 2], s % 2 ? 0x7632 : 0x5410);
}

/// Token g's kBlockK / 4 inputs of step `step` (lane quarter q) as pairs of
/// T, divided by the input scale when there is one; zeros for g >= tokens.
/// Returns their sum over the lane's quad (zero points need it).
template <typename T, int kBlockK>
__device__ __forceinline__ float loadInputs(const QuantizedGemmParams &p, long long step, int g,
                                            int q, U32 (&x)[kBlockK / 8]) {
  constexpr int kVectors = kBlockK / 32; // 16-byte loads: 8 inputs each
  const long long first = step * kBlockK + q * (kBlockK / 4);
  float sum = 0.f;
  if (g < p.tokens) {
    const uint4 *src =
        reinterpret_cast<const uint4 *>(static_cast<const T *>(p.input) + g * p.k + first);
#pragma unroll
    for (int v = 0; v < kVectors; ++v) {
      const uint4 raw = __ldg(src + v);
      x[4 * v] = raw.x, x[4 * v + 1] = raw.y, x[4 * v + 2] = raw.z, x[4 * v + 3] = raw.w;
    }
    if (p.inputScale || p.zeros) {
#pragma unroll
      for (int i = 0; i < kBlockK / 8; ++i) {
        float lo = halfOf<T>(x[i], 0), hi = halfOf<T>(x[i], 1);
        if (p.inputScale) {
          const long long at = first + 2 * i;
          float f0, f1;
          if (p.inputScaleType == 1) {
            f0 = static_cast<const float *>(p.inputScale)[at];
            f1 = static_cast<const float *>(p.inputScale)[at + 1];
          } else if (p.inputScaleType == 2) {
            f0 = toFloat(static_cast<const __half *>(p.inputScale)[at]);
            f1 = toFloat(static_cast<const __half *>(p.inputScale)[at + 1]);
          } else {
            f0 = toFloat(static_cast<const __nv_bfloat16 *>(p.inputScale)[at]);
            f1 = toFloat(static_cast<const __nv_bfloat16 *>(p.inputScale)[at + 1]);
          }
          x[i] = packPair<T>(__fdiv_rn(lo, f0), __fdiv_rn(hi, f1));
          lo = halfOf<T>(x[i], 0), hi = halfOf<T>(x[i], 1);
        }
        sum += lo + hi;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kBlockK / 8; ++i)
      x[i] = 0u;
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  return sum + __shfl_xor_sync(0xffffffffu, sum, 2);
}

/// The warps' partial sums of the block's outputs (warp, token, row).
typedef float BlockSums[kQuantizedMmaWarps][kQuantizedMmaTokens][kQuantizedMmaRows];

/// Stores the block's outputs, rows j0 .. j0 + kQuantizedMmaRows of the first
/// `tokens` tokens: each sum of the warps' partials in warp order (the same
/// bits at every run), through `finish(sum, token, j)`, then bias and
/// residual (which may be the output).
template <typename T, typename Finish>
__device__ __forceinline__ void storeOutputs(const QuantizedGemmParams &p, const BlockSums &sums,
                                             long long j0, int tokens, Finish finish) {
  for (int i = threadIdx.x; i < tokens * kQuantizedMmaRows; i += blockDim.x) {
    const int token = i / kQuantizedMmaRows, r = i % kQuantizedMmaRows;
    const long long j = j0 + r;
    if (j >= p.n)
      continue;
    float sum = 0.f;
#pragma unroll
    for (int v = 0; v < kQuantizedMmaWarps; ++v)
      sum += sums[v][token][r];
    sum = finish(sum, token, j);
    const long long out = token * p.n + j;
    if (p.bias)
      sum += loadFloat<T>(p.bias, j);
    if (p.residual)
      sum += loadFloat<T>(p.residual, out);
    storeFloat<T>(p.output, out, sum);
  }
}

} // namespace quantmma

template <typename T, int kBlockK>
__global__ void __launch_bounds__(kQuantizedMmaThreads)
    infer_quantized_gemv_mma(QuantizedGemmParams p) {
  quantmma::Weights<kBlockK> w[quantmma::kDepth][quantmma::kTiles];
  quantmma::loadWeightsThenWaitForPreviousKernel<kBlockK>(p, w);
  using namespace quantmma;
  __shared__ BlockSums sums;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const long long j0 = (long long)blockIdx.x * kQuantizedMmaRows;
  const long long steps = p.k / kBlockK, groups = p.k / p.group;
  float acc[kTiles][2] = {};
  for (long long first = warp; first < steps; first += kQuantizedMmaWarps * kDepth) {
    if (first != warp)
      loadSteps<kBlockK>(p, first, w);
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const long long step = first + d * kQuantizedMmaWarps;
      if (step >= steps)
        break;
      U32 x[kBlockK / 8];
      const float inputs = loadInputs<T, kBlockK>(p, step, g, q, x);
      const long long group = step * kBlockK / p.group;
#pragma unroll
      for (int t = 0; t < kTiles; ++t) {
        float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int u = 0; u < kBlockK / 32; ++u)
#pragma unroll
          for (int h = 0; h < 2; ++h)
            gemvimpl::mma<T>(part, inputPair(x, u, 2 * h), 0u, inputPair(x, u, 2 * h + 1), 0u,
                             weightPair<T>(w[d][t].word[u], 2 * h),
                             weightPair<T>(w[d][t].word[u], 2 * h + 1));
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          long long row = j0 + t * 8 + 2 * q + c;
          row = row < p.n ? row : p.n - 1;
          const float scale = p.scales[row * groups + group];
          acc[t][c] +=
              (p.zeros ? part[c] - p.zeros[row * groups + group] * inputs : part[c]) * scale;
        }
      }
    }
  }
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int c = 0; c < 2; ++c)
      sums[warp][g][t * 8 + 2 * q + c] = acc[t][c];
  __syncthreads();
  const int tokens = int(p.tokens < kQuantizedMmaTokens ? p.tokens : kQuantizedMmaTokens);
  storeOutputs<T>(p, sums, j0, tokens, [](float sum, int, long long) { return sum; });
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVMMA_CUH
