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
// Blocks are persistent (quantizedMmaGrid: two a multiprocessor): block b
// takes the tiles of kQuantizedMmaRows rows b, b + gridDim.x, ..., and warp w
// of it k steps w, w + 8, ... of each tile. A warp's items (tile, step) form
// one stream with kDepth items' loads (weights and their scales) in flight:
// each item consumed is replaced by the load of the one kDepth later, across
// tile boundaries, the first kDepth before the wait for the previous kernel
// (loadAheadWaitForPreviousKernelThenStream). Why: with a block a tile, a
// block's life is a load, a dependent scale load, a reduction and an exit,
// and the weight stream stops at each. Every warp walks the same number of
// items a tile (warps past the last step take empty ones), so the block
// meets at each tile's end: the warps' sums meet in shared memory (two
// buffers, alternating), added in warp order (the same bits at every run),
// then bias and residual (which may be the output).
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

/// One item of a warp's stream: lane (g, q)'s weights of both tiles at one k
/// step, and the scales of its output rows 2q, 2q + 1 of each tile for the
/// step's group.
template <int kBlockK> struct Int4Item {
  Weights<kBlockK> w[kTiles];
  float scale[kTiles][2];
};

/// Row r of tile `tile`, or the last row for rows past n (loads stay in
/// bounds; their outputs are not stored).
__device__ __forceinline__ long long tileRow(const QuantizedGemmParams &p, long long tile, int r) {
  const long long row = tile * kQuantizedMmaRows + r;
  return row < p.n ? row : p.n - 1;
}

template <int kBlockK>
__device__ __forceinline__ void loadInt4Item(const QuantizedGemmParams &p, long long tile,
                                             long long step, Int4Item<kBlockK> &item) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const long long groups = p.k / p.group, group = step * kBlockK / p.group;
#pragma unroll
  for (int t = 0; t < kTiles; ++t) {
    const unsigned char *at =
        p.q + tileRow(p, tile, t * 8 + g) * (p.k / 2) + step * (kBlockK / 2) + q * (kBlockK / 8);
    if constexpr (kBlockK == 128) {
      const uint4 v = gemvimpl::loadStream(at);
      item.w[t].word[0] = v.x, item.w[t].word[1] = v.y, item.w[t].word[2] = v.z,
      item.w[t].word[3] = v.w;
    } else {
      uint2 v;
      asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(at));
      item.w[t].word[0] = v.x, item.w[t].word[1] = v.y;
    }
#pragma unroll
    for (int c = 0; c < 2; ++c)
      item.scale[t][c] = __ldg(p.scales + tileRow(p, tile, t * 8 + 2 * q + c) * groups + group);
  }
}

/// The persistent block's walk (the file comment), and the kernels' first
/// statement (check_kernel_entries.py): the warp's first kDepth items of
/// weights (no kernel's output) are requested, the next kernel may launch,
/// then the wait for the previous kernel. Then prepare(); for each item in
/// turn use(item, tile, step) (warp-uniform: not for empty items) and the
/// load of the item kDepth later into its registers; at each tile's end
/// finish(tile, buffer), buffer alternating 0, 1 (the block is together).
/// `steps` k steps a row, `n` rows.
template <typename Item, typename Load, typename Prepare, typename Use, typename Finish>
__device__ __forceinline__ void
loadAheadWaitForPreviousKernelThenStream(long long steps, long long n, Item (&items)[kDepth],
                                         Load load, Prepare prepare, Use use, Finish finish) {
  // Counts in int: steps <= k / 64 and tiles <= n / 16 (KernelParams' sizes).
  const int warp = threadIdx.x >> 5, block = blockIdx.x, blocks = gridDim.x;
  const int tiles = int((n + kQuantizedMmaRows - 1) / kQuantizedMmaRows);
  const int perTile = int((steps + kQuantizedMmaWarps - 1) / kQuantizedMmaWarps);
  const int blockTiles = block < tiles ? (tiles - 1 - block) / blocks + 1 : 0;
  const int total = perTile * blockTiles;
  int loadTile = 0, loadS = 0; // the next item to load: tile number, step number
  auto loadNext = [&](Item &item) {
    const int step = warp + loadS * kQuantizedMmaWarps;
    if (loadTile < blockTiles && step < steps)
      load(item, (long long)block + (long long)loadTile * blocks, (long long)step);
    if (++loadS == perTile)
      loadS = 0, ++loadTile;
  };
#pragma unroll
  for (int d = 0; d < kDepth; ++d)
    loadNext(items[d]);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  prepare();
  int useTile = 0, useS = 0, buffer = 0;
  for (int base = 0; base < total; base += kDepth) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      if (base + d >= total)
        break;
      const long long tile = (long long)block + (long long)useTile * blocks;
      const int step = warp + useS * kQuantizedMmaWarps;
      if (step < steps)
        use(items[d], tile, (long long)step);
      loadNext(items[d]);
      if (++useS == perTile) {
        finish(tile, buffer);
        buffer ^= 1, useS = 0, ++useTile;
      }
    }
  }
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

/// Tokens of the step the kernels compute (at most kQuantizedMmaTokens).
__device__ __forceinline__ int stepTokens(const QuantizedGemmParams &p) {
  return int(p.tokens < kQuantizedMmaTokens ? p.tokens : kQuantizedMmaTokens);
}

/// At a tile's end: lane (g, q)'s sums of token g, rows 8t + 2q + c, into
/// the warp's part of `sums`, zeroed for the next tile; then the block meets.
__device__ __forceinline__ void publishWarpSums(float (&acc)[kTiles][2], BlockSums &sums) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
#pragma unroll
  for (int t = 0; t < kTiles; ++t)
#pragma unroll
    for (int c = 0; c < 2; ++c)
      sums[warp][g][t * 8 + 2 * q + c] = acc[t][c], acc[t][c] = 0.f;
  __syncthreads();
}

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
__global__ void __launch_bounds__(kQuantizedMmaThreads, kQuantizedMmaBlocksPerMultiprocessor)
    infer_quantized_gemv_mma(QuantizedGemmParams p) {
  quantmma::Int4Item<kBlockK> items[quantmma::kDepth];
  float acc[quantmma::kTiles][2];
  __shared__ quantmma::BlockSums sums[2];
  quantmma::loadAheadWaitForPreviousKernelThenStream(
      p.k / kBlockK, p.n, items,
      [&](quantmma::Int4Item<kBlockK> &item, long long tile, long long step) {
        quantmma::loadInt4Item<kBlockK>(p, tile, step, item);
      },
      [&] {
#pragma unroll
        for (int t = 0; t < quantmma::kTiles; ++t)
          acc[t][0] = acc[t][1] = 0.f;
      },
      [&](const quantmma::Int4Item<kBlockK> &item, long long tile, long long step) {
        using namespace quantmma;
        const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
        U32 x[kBlockK / 8];
        const float inputs = loadInputs<T, kBlockK>(p, step, g, q, x);
        const long long groups = p.k / p.group, group = step * kBlockK / p.group;
#pragma unroll
        for (int t = 0; t < kTiles; ++t) {
          float part[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
          for (int u = 0; u < kBlockK / 32; ++u)
#pragma unroll
            for (int h = 0; h < 2; ++h)
              gemvimpl::mma<T>(part, inputPair(x, u, 2 * h), 0u, inputPair(x, u, 2 * h + 1), 0u,
                               weightPair<T>(item.w[t].word[u], 2 * h),
                               weightPair<T>(item.w[t].word[u], 2 * h + 1));
#pragma unroll
          for (int c = 0; c < 2; ++c)
            acc[t][c] +=
                (p.zeros ? part[c] - p.zeros[tileRow(p, tile, t * 8 + 2 * q + c) * groups + group] *
                                         inputs
                         : part[c]) *
                item.scale[t][c];
        }
      },
      [&](long long tile, int buffer) {
        quantmma::publishWarpSums(acc, sums[buffer]);
        quantmma::storeOutputs<T>(p, sums[buffer], tile * kQuantizedMmaRows,
                                  quantmma::stepTokens(p),
                                  [](float sum, int, long long) { return sum; });
      });
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_QUANTIZEDGEMVMMA_CUH
