//===- Gemv.cuh - bandwidth-bound small-T GEMM for decode -----------------===//
//
// infer_gemv<T> (KernelParams.h, GemvParams): out[t, j] = sum_k input[t, k] *
// W(k, j) (+ bias[j]) (+ residual[t, j]) for t < rows <= kGemvMaxRows, fp32
// accumulation, one rounding to T. Every weight is read once for all rows,
// so the kernel streams the weights at close to memory bandwidth; the
// geometry (tiles, k splits, the split-k workspace) is GemvGeometry.h's.
//
// 16-bit T runs on tensor cores: mma.m16n8k16 with the output columns as M
// (16 per instruction), k as K and the (up to 8) rows as N, so one
// instruction covers all rows. A lane's registers come straight from its
// 16-byte weight loads; the K order inside each 16-wide step is permuted
// (identically for A and B) so that no shuffle or shared memory is needed.
// With g = lane / 4, q = lane % 4 (PTX "groupID", "threadID_in_group"):
//
//   [k, n] weight, one warp = 64 columns x 32 rows per step:
//     lane loads W[kb + 8q + j][n0 .. n0 + 7], j < 8, n0 = 8g (8 x 16 B)
//     and x[g][kb + 8q .. + 7]; mma (s, i) for s < 2, i < 4 takes
//       M row g <-> column n0 + 2i, M row g + 8 <-> n0 + 2i + 1,
//       K {2q, 2q+1, 2q+8, 2q+9} <-> k = kb + 8q + 4s + {0, 1, 2, 3},
//     so A's registers are byte permutes of two loaded rows (low halves
//     for M row g, high halves for g + 8) and B is x's words 2s, 2s + 1.
//
//   [n, k] weight, one warp = 32 columns x 64 k per step:
//     lane loads W[nb + 8r + g][kb + 32u + 8q .. + 7], r < 4, u < 2, and
//     x[g][kb + 32u + 8q .. + 7]; mma (u, m, s) takes M rows g, g + 8 <->
//     columns nb + 16m + g, nb + 16m + 8 + g and the same K order, so A's
//     registers are loaded words as they are.
//
// fp32 T runs on CUDA cores (exact fp32 products): [k, n] lanes own 4
// columns and 8 of 16 rows per step; [n, k] lanes own 8 columns and 4 of 32
// k per step, summed across the 8 lanes of a row group at the end.
//
// Every weight access of a full step is a 16-byte load that skips L1; a
// step that runs past the split or past n, or whose pointers or row pitch
// are not 16-byte aligned, checks each 16 bytes: one load when whole and
// aligned, else element by element (zeros outside). Input and residual must
// not alias the output.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_GEMV_CUH
#define INFER_CODEGEN_CUDA_KERNELS_GEMV_CUH

#include "codegen/cuda/kernels/Common.cuh"
#include "runtime/cuda/abi/GemvGeometry.h"

namespace infer {
namespace kernels {
namespace gemvimpl {

using U32 = unsigned int;

/// Floats of the block's partial sums: kGemvWarps x 64 columns x 8 rows.
constexpr int kSharedFloats = kGemvWarps * 64 * kGemvMaxRows;

__device__ __forceinline__ bool aligned16(const void *p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

/// 16 bytes read once: not kept in L1.
__device__ __forceinline__ uint4 loadStream(const void *p) {
  uint4 r;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
      : "l"(p));
  return r;
}

/// The first `valid` (clamped to [0, 16 / sizeof(T)]) elements at p as raw
/// bits, zeros after them; one 16-byte load when all are valid and p is
/// aligned.
template <typename T> __device__ __forceinline__ uint4 loadChecked(const T *p, long long valid) {
  constexpr int kN = int(16 / sizeof(T));
  if (valid >= kN && aligned16(p))
    return __ldg(reinterpret_cast<const uint4 *>(p));
  U32 w[4] = {0u, 0u, 0u, 0u};
  if constexpr (sizeof(T) == 4) {
    const U32 *s = reinterpret_cast<const U32 *>(p);
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (e < valid)
        w[e] = s[e];
  } else {
    const unsigned short *s = reinterpret_cast<const unsigned short *>(p);
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (e < valid)
        w[e >> 1] |= U32(s[e]) << (16 * (e & 1));
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

__device__ __forceinline__ U32 word(const uint4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/// Element e of 16 bytes of T as float.
template <typename T> __device__ __forceinline__ float elementOf(const uint4 &v, int e) {
  const U32 w = word(v, sizeof(T) == 4 ? e : e >> 1);
  if constexpr (sizeof(T) == 4) {
    return __uint_as_float(w);
  } else {
    const unsigned short bits = (unsigned short)(w >> (16 * (e & 1)));
    return toFloat(*reinterpret_cast<const T *>(&bits));
  }
}

/// 16 bytes of T from kN floats, each rounded to T.
template <typename T> __device__ __forceinline__ uint4 packElements(const float *values) {
  U32 w[4] = {0u, 0u, 0u, 0u};
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int e = 0; e < 4; ++e)
      w[e] = __float_as_uint(values[e]);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const T rounded = fromFloat<T>(values[e]);
      w[e >> 1] |= U32(*reinterpret_cast<const unsigned short *>(&rounded)) << (16 * (e & 1));
    }
  }
  return make_uint4(w[0], w[1], w[2], w[3]);
}

/// 16 bytes of input row t from k index kk (the first `valid` elements, zeros
/// after), through the fused prologue (GemvParams::prologue). The rms_norm
/// prologue leaves out the row's 1 / rms (a factor of the whole output row,
/// applied in finishTile) and adds the squares of the raw inputs to
/// *squares when it is not null: the block's share of the row's sum of
/// squares comes from the loads the product needs anyway.
template <typename T, int kPrologue>
__device__ __forceinline__ uint4 loadInput(const GemvParams &p, float *squares, int t,
                                           long long kk, long long valid) {
  const T *input = static_cast<const T *>(p.input);
  if constexpr (kPrologue == 0)
    return loadChecked(input + t * p.k + kk, valid);
  constexpr int kN = int(16 / sizeof(T));
  const uint4 x = loadChecked(input + t * p.inputRowStride + kk, valid);
  const uint4 other =
      kPrologue == 1 ? loadChecked(static_cast<const T *>(p.normWeight) + kk, valid)
                     : loadChecked(static_cast<const T *>(p.up) + t * p.upRowStride + kk, valid);
  float values[kN];
#pragma unroll
  for (int e = 0; e < kN; ++e) {
    const float a = elementOf<T>(x, e), b = elementOf<T>(other, e);
    if constexpr (kPrologue == 1) {
      values[e] = a * (b + p.normWeightOffset);
      if (squares)
        *squares += a * a;
    } else {
      values[e] = gatedValue<T>(p.activation, a) * b;
    }
  }
  return packElements<T>(values);
}

__device__ __forceinline__ float4 asFloat4(const uint4 &v) {
  return make_float4(__uint_as_float(v.x), __uint_as_float(v.y), __uint_as_float(v.z),
                     __uint_as_float(v.w));
}

__device__ __forceinline__ float component(const float4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

/// d += A * B for one m16n8k16 (fp32 accumulators).
template <typename T>
__device__ __forceinline__ void mma(float (&d)[4], U32 a0, U32 a1, U32 a2, U32 a3, U32 b0, U32 b1);
template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&d)[4], U32 a0, U32 a1, U32 a2, U32 a3,
                                                   U32 b0, U32 b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma<__half>(float (&d)[4], U32 a0, U32 a1, U32 a2, U32 a3, U32 b0,
                                            U32 b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
      "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// What one warp works on: its first output column, where its partial sums
/// go (this k group's [kGemvMaxRows][kTile] slice of shared memory), and the
/// steps it takes of the split [kBegin, kEnd).
struct WarpTask {
  long long column;  // first global output column of the warp
  int localColumn;   // the same within the tile
  float *partial;    // [kGemvMaxRows][tile] floats
  long long kFirst;  // first step's k
  long long kStride; // k between the warp's steps
  long long kEnd;
  float *squares; // [kGemvMaxRows]: this warp's sums of squared inputs (rms_norm prologue)
};

/// The four mmas of half a [k, n] step: rows l0 .. l3 (8 columns each) are
/// K {2q, 2q+1, 2q+8, 2q+9}; x0, x1 the same k of x.
template <typename T>
__device__ __forceinline__ void mmaRowsKN(float (&acc)[4][4], const uint4 &l0, const uint4 &l1,
                                          const uint4 &l2, const uint4 &l3, U32 x0, U32 x1) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const U32 w0 = word(l0, i), w1 = word(l1, i), w2 = word(l2, i), w3 = word(l3, i);
    mma<T>(acc[i], __byte_perm(w0, w1, 0x5410), __byte_perm(w0, w1, 0x7632),
           __byte_perm(w2, w3, 0x5410), __byte_perm(w2, w3, 0x7632), x0, x1);
  }
}

/// 16-bit T, W [k, n]: 64 columns, steps of 32 rows.
template <typename T, int kTile, int kPrologue>
__device__ __forceinline__ void warpMmaKN(const GemvParams &p, const WarpTask &w) {
  const T *weight = static_cast<const T *>(p.weight);
  const long long n = p.n;
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const long long n0 = w.column + 8 * g;
  const bool hasRow = g < p.rows;
  const bool vector = aligned16(weight) && n % 8 == 0 && w.column + 64 <= n;
  float acc[4][4] = {};
  float squares = 0.f; // row g's inputs at this lane's k (rms_norm prologue)
#pragma unroll 1
  for (long long kb = w.kFirst; kb < w.kEnd; kb += w.kStride) {
    const long long r0 = kb + 8 * q;
    const uint4 x =
        hasRow ? loadInput<T, kPrologue>(p, &squares, g, r0, w.kEnd - r0)
               : make_uint4(0u, 0u, 0u, 0u);
    if (vector && kb + 32 <= w.kEnd) {
      const T *src = weight + r0 * n + n0;
      uint4 l[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        l[j] = loadStream(src + j * n);
      mmaRowsKN<T>(acc, l[0], l[1], l[2], l[3], x.x, x.y);
      mmaRowsKN<T>(acc, l[4], l[5], l[6], l[7], x.z, x.w);
    } else {
#pragma unroll 1
      for (int s = 0; s < 2; ++s) {
        const long long r = r0 + 4 * s;
        const T *src = weight + r * n + n0;
        const long long columns = n - n0;
        const uint4 l0 = loadChecked(src, r < w.kEnd ? columns : 0);
        const uint4 l1 = loadChecked(src + n, r + 1 < w.kEnd ? columns : 0);
        const uint4 l2 = loadChecked(src + 2 * n, r + 2 < w.kEnd ? columns : 0);
        const uint4 l3 = loadChecked(src + 3 * n, r + 3 < w.kEnd ? columns : 0);
        mmaRowsKN<T>(acc, l0, l1, l2, l3, s ? x.z : x.x, s ? x.w : x.y);
      }
    }
  }
  if constexpr (kPrologue == 1) {
    // Row g's squares over the warp's k: the 4 lanes of group g.
    squares += __shfl_xor_sync(0xffffffffu, squares, 1);
    squares += __shfl_xor_sync(0xffffffffu, squares, 2);
    if (q == 0)
      w.squares[g] = squares;
  }
  // d0: (column n0 + 2i, row 2q), d1: row 2q + 1, d2/d3: column n0 + 2i + 1.
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int c = w.localColumn + 8 * g + 2 * i;
    *reinterpret_cast<float2 *>(w.partial + (2 * q) * kTile + c) =
        make_float2(acc[i][0], acc[i][2]);
    *reinterpret_cast<float2 *>(w.partial + (2 * q + 1) * kTile + c) =
        make_float2(acc[i][1], acc[i][3]);
  }
}

/// The four mmas of 32 k of an [n, k] step: l0 .. l3 = columns g, 8 + g,
/// 16 + g, 24 + g at k 8q .. 8q + 7, x the same k of x.
template <typename T>
__device__ __forceinline__ void mmaColumnsNK(float (&acc)[2][4], const uint4 &l0, const uint4 &l1,
                                             const uint4 &l2, const uint4 &l3, const uint4 &x) {
  mma<T>(acc[0], l0.x, l1.x, l0.y, l1.y, x.x, x.y);
  mma<T>(acc[0], l0.z, l1.z, l0.w, l1.w, x.z, x.w);
  mma<T>(acc[1], l2.x, l3.x, l2.y, l3.y, x.x, x.y);
  mma<T>(acc[1], l2.z, l3.z, l2.w, l3.w, x.z, x.w);
}

/// 16-bit T, W [n, k]: 32 columns, steps of 64 k.
template <typename T, int kTile>
__device__ __forceinline__ void warpMmaNK(const GemvParams &p, const WarpTask &w) {
  const T *weight = static_cast<const T *>(p.weight);
  const long long k = p.k, n = p.n;
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const bool hasRow = g < p.rows;
  const bool vector = aligned16(weight) && k % 8 == 0 && w.column + 32 <= n;
  const long long column = w.column + g; // and + 8, + 16, + 24
  const T *rows = weight + column * k + 8 * q;
  float acc[2][4] = {};
#pragma unroll 1
  for (long long kb = w.kFirst; kb < w.kEnd; kb += w.kStride) {
    if (vector && kb + 64 <= w.kEnd) {
      uint4 l[2][4], x[2] = {};
#pragma unroll
      for (int u = 0; u < 2; ++u)
#pragma unroll
        for (int r = 0; r < 4; ++r)
          l[u][r] = loadStream(rows + 8 * r * k + kb + 32 * u);
      if (hasRow) {
        x[0] = loadInput<T, 0>(p, nullptr, g, kb + 8 * q, 8);
        x[1] = loadInput<T, 0>(p, nullptr, g, kb + 32 + 8 * q, 8);
      }
#pragma unroll
      for (int u = 0; u < 2; ++u)
        mmaColumnsNK<T>(acc, l[u][0], l[u][1], l[u][2], l[u][3], x[u]);
    } else {
#pragma unroll 1
      for (int u = 0; u < 2; ++u) {
        const long long kk = kb + 32 * u + 8 * q, left = w.kEnd - kk;
        const T *src = rows + kb + 32 * u;
        const uint4 l0 = loadChecked(src, column < n ? left : 0);
        const uint4 l1 = loadChecked(src + 8 * k, column + 8 < n ? left : 0);
        const uint4 l2 = loadChecked(src + 16 * k, column + 16 < n ? left : 0);
        const uint4 l3 = loadChecked(src + 24 * k, column + 24 < n ? left : 0);
        const uint4 x =
            hasRow ? loadInput<T, 0>(p, nullptr, g, kk, left) : make_uint4(0u, 0u, 0u, 0u);
        mmaColumnsNK<T>(acc, l0, l1, l2, l3, x);
      }
    }
  }
  // d0: (column w.column + 16m + g, row 2q), d1: row 2q + 1, d2/d3: column + 8.
#pragma unroll
  for (int m = 0; m < 2; ++m) {
    const int c = w.localColumn + 16 * m + g;
    w.partial[(2 * q) * kTile + c] = acc[m][0];
    w.partial[(2 * q + 1) * kTile + c] = acc[m][1];
    w.partial[(2 * q) * kTile + c + 8] = acc[m][2];
    w.partial[(2 * q + 1) * kTile + c + 8] = acc[m][3];
  }
}

/// acc[t][c] += x[t][kk + j] * l_j[c] for rows j < 4 of a [k, n] step;
/// squares[t] gets the squared inputs when it is not null (rms_norm prologue).
template <int kPrologue>
__device__ __forceinline__ void fmaRowsKN(float (&acc)[kGemvMaxRows][4], const float4 &l0,
                                          const float4 &l1, const float4 &l2, const float4 &l3,
                                          const GemvParams &p, float *squares, int rows,
                                          long long kk, long long left) {
#pragma unroll
  for (int t = 0; t < kGemvMaxRows; ++t) {
    if (t < rows) {
      const float4 x = asFloat4(
          loadInput<float, kPrologue>(p, squares ? squares + t : nullptr, t, kk, left));
      const float4 l[4] = {l0, l1, l2, l3};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float xs = component(x, j);
        acc[t][0] += xs * l[j].x;
        acc[t][1] += xs * l[j].y;
        acc[t][2] += xs * l[j].z;
        acc[t][3] += xs * l[j].w;
      }
    }
  }
}

/// fp32, W [k, n]: 64 columns, steps of 16 rows; lane = 4 columns x 8 rows.
template <int kTile, int kPrologue>
__device__ __forceinline__ void warpFmaKN(const GemvParams &p, const WarpTask &w) {
  const float *weight = static_cast<const float *>(p.weight);
  const long long n = p.n;
  const int rows = int(p.rows);
  const int lane = threadIdx.x & 31, cq = lane & 15, rp = lane >> 4;
  const long long n0 = w.column + 4 * cq;
  const bool vector = aligned16(weight) && n % 4 == 0 && w.column + 64 <= n;
  float acc[kGemvMaxRows][4] = {};
  // The rms_norm prologue's squares: lanes cq = 0 (lanes 0 and 16, the two
  // halves of each step) count each input once.
  float squareSums[kGemvMaxRows] = {};
  float *squares = kPrologue == 1 && cq == 0 ? squareSums : nullptr;
#pragma unroll 1
  for (long long kb = w.kFirst; kb < w.kEnd; kb += w.kStride) {
    const long long r0 = kb + 8 * rp;
    if (vector && kb + 16 <= w.kEnd) {
      const float *src = weight + r0 * n + n0;
      float4 l[8];
#pragma unroll
      for (int j = 0; j < 8; ++j)
        l[j] = asFloat4(loadStream(src + j * n));
      fmaRowsKN<kPrologue>(acc, l[0], l[1], l[2], l[3], p, squares, rows, r0, w.kEnd - r0);
      fmaRowsKN<kPrologue>(acc, l[4], l[5], l[6], l[7], p, squares, rows, r0 + 4, w.kEnd - r0 - 4);
    } else {
#pragma unroll 1
      for (int h = 0; h < 2; ++h) {
        const long long r = r0 + 4 * h, columns = n - n0;
        const float *src = weight + r * n + n0;
        const float4 l0 = asFloat4(loadChecked(src, r < w.kEnd ? columns : 0));
        const float4 l1 = asFloat4(loadChecked(src + n, r + 1 < w.kEnd ? columns : 0));
        const float4 l2 = asFloat4(loadChecked(src + 2 * n, r + 2 < w.kEnd ? columns : 0));
        const float4 l3 = asFloat4(loadChecked(src + 3 * n, r + 3 < w.kEnd ? columns : 0));
        fmaRowsKN<kPrologue>(acc, l0, l1, l2, l3, p, squares, rows, r, w.kEnd - r);
      }
    }
  }
  if constexpr (kPrologue == 1) {
#pragma unroll
    for (int t = 0; t < kGemvMaxRows; ++t) {
      const float both = squareSums[t] + __shfl_xor_sync(0xffffffffu, squareSums[t], 16);
      if (lane == 0)
        w.squares[t] = both;
    }
  }
  // Lanes rp = 0 and 1 hold the two halves of each step: add them, then lane
  // rp writes rows 4rp .. 4rp + 3.
#pragma unroll
  for (int t = 0; t < kGemvMaxRows; ++t)
#pragma unroll
    for (int c = 0; c < 4; ++c)
      acc[t][c] += __shfl_xor_sync(0xffffffffu, acc[t][c], 16);
#pragma unroll
  for (int tt = 0; tt < 4; ++tt) {
    const int t = 4 * rp + tt;
    const float4 v =
        rp ? make_float4(acc[4 + tt][0], acc[4 + tt][1], acc[4 + tt][2], acc[4 + tt][3])
           : make_float4(acc[tt][0], acc[tt][1], acc[tt][2], acc[tt][3]);
    *reinterpret_cast<float4 *>(w.partial + t * kTile + w.localColumn + 4 * cq) = v;
  }
}

/// fp32, W [n, k]: 32 columns, steps of 32 k; lane = 8 columns (r4 + 4m) x 4 k.
template <int kTile>
__device__ __forceinline__ void warpFmaNK(const GemvParams &p, const WarpTask &w) {
  const float *weight = static_cast<const float *>(p.weight);
  const long long k = p.k, n = p.n;
  const int rows = int(p.rows);
  const int lane = threadIdx.x & 31, kq = lane & 7, r4 = lane >> 3;
  const bool vector = aligned16(weight) && k % 4 == 0 && w.column + 32 <= n;
  float acc[8][kGemvMaxRows] = {};
#pragma unroll 1
  for (long long kb = w.kFirst; kb < w.kEnd; kb += w.kStride) {
    const long long kk = kb + 4 * kq;
    float4 l[8];
    if (vector && kb + 32 <= w.kEnd) {
#pragma unroll
      for (int m = 0; m < 8; ++m)
        l[m] = asFloat4(loadStream(weight + (w.column + r4 + 4 * m) * k + kk));
    } else {
#pragma unroll
      for (int m = 0; m < 8; ++m) {
        const long long column = w.column + r4 + 4 * m;
        l[m] = asFloat4(loadChecked(weight + column * k + kk, column < n ? w.kEnd - kk : 0));
      }
    }
#pragma unroll
    for (int t = 0; t < kGemvMaxRows; ++t) {
      if (t < rows) {
        const float4 x = asFloat4(loadInput<float, 0>(p, nullptr, t, kk, w.kEnd - kk));
#pragma unroll
        for (int m = 0; m < 8; ++m)
          acc[m][t] += x.x * l[m].x + x.y * l[m].y + x.z * l[m].z + x.w * l[m].w;
      }
    }
  }
  // Sum over the 8 lanes of a row group; lane kq then writes row kq.
#pragma unroll
  for (int m = 0; m < 8; ++m)
#pragma unroll
    for (int t = 0; t < kGemvMaxRows; ++t) {
      float v = acc[m][t];
      v += __shfl_xor_sync(0xffffffffu, v, 1);
      v += __shfl_xor_sync(0xffffffffu, v, 2);
      v += __shfl_xor_sync(0xffffffffu, v, 4);
      acc[m][t] = v;
    }
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    float v = acc[m][0];
#pragma unroll
    for (int t = 1; t < kGemvMaxRows; ++t)
      v = kq == t ? acc[m][t] : v;
    w.partial[kq * kTile + w.localColumn + r4 + 4 * m] = v;
  }
}

/// out[t, column .. column + 3] = v * scale (+ bias) (+ residual), rounded
/// once; `scale` is row t's 1 / rms under the rms_norm prologue, else 1.
template <typename T>
__device__ __forceinline__ void writeOutput(const GemvParams &p, int t, long long column,
                                            float4 v, float scale) {
  const T *bias = static_cast<const T *>(p.bias);
  const T *residual = static_cast<const T *>(p.residual);
  T *out = static_cast<T *>(p.output);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const long long j = column + e;
    if (j < p.n) {
      float r = component(v, e) * scale;
      if (bias)
        r += toFloat(bias[j]);
      if (residual)
        r += toFloat(residual[t * p.n + j]);
      out[t * p.n + j] = fromFloat<T>(r);
    }
  }
}

/// Row t's 1 / rms from the sum of squares of its k inputs.
__device__ __forceinline__ float inverseRms(const GemvParams &p, float squares) {
  return 1.f / sqrtf(squares / float(p.k) + p.normEpsilon);
}

/// What the warps leave in shared memory: their partial sums ([k group][row]
/// [column]) and, under the rms_norm prologue, their sums of squared inputs
/// per row, then the block's.
struct GemvShared {
  float partial[kSharedFloats];
  float warpSquares[kGemvWarps][kGemvMaxRows];
  float squares[kGemvMaxRows];
};

/// The block's product for row t, columns c .. c + 3 of its tile: the sum of
/// the kWarpsK warp groups' partials (each covered its own k steps).
template <int kWarpsK, int kTile>
__device__ __forceinline__ float4 sumOfWarpGroups(const GemvShared &shared, int t, int c) {
  float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int g = 0; g < kWarpsK; ++g) {
    const float4 s =
        *reinterpret_cast<const float4 *>(shared.partial + (g * kGemvMaxRows + t) * kTile + c);
    v.x += s.x, v.y += s.y, v.z += s.z, v.w += s.w;
  }
  return v;
}

/// Sums the k groups' partials of the tile and writes the output, directly
/// (one split) or through the workspace (module comment of GemvGeometry.h).
/// Under the rms_norm prologue the splits' squares meet the same way, in the
/// split's squares after all the sums (GemvGeometry.h, gemvSplitSquares).
template <typename T, int kWarpsN, int kWarpsK, int kTile, int kPrologue>
__device__ __forceinline__ void finishTile(const GemvParams &p, GemvShared &shared,
                                           long long tileColumn, bool emptySplit, int *last) {
  constexpr int kVectors = kTile / 4;
  const int rows = p.rows < kGemvMaxRows ? int(p.rows) : kGemvMaxRows;
  const int total = rows * kVectors;
  if constexpr (kPrologue == 1) {
    // The warps of one column group (wn = 0) cover the block's k range once.
    if (threadIdx.x < rows) {
      float sum = 0.f;
#pragma unroll
      for (int wk = 0; wk < kWarpsK; ++wk)
        sum += shared.warpSquares[wk * kWarpsN][threadIdx.x];
      shared.squares[threadIdx.x] = sum;
    }
    __syncthreads();
  }
  if (gridDim.y == 1) {
    for (int i = threadIdx.x; i < total; i += kGemvThreads) {
      const int t = i / kVectors, c = (i % kVectors) * 4;
      if (tileColumn + c >= p.n)
        continue;
      const float4 v = sumOfWarpGroups<kWarpsK, kTile>(shared, t, c);
      writeOutput<T>(p, t, tileColumn + c, v,
                     kPrologue == 1 ? inverseRms(p, shared.squares[t]) : 1.f);
    }
    return;
  }
  // Each split stores its partials in a slice of its own; the last block
  // adds the splits' slices in split order, so the sum is the same bits at
  // every launch (fp32 atomics would add them in arrival order).
  float *sums = gemvSplitSums(p.workspace, p.n, blockIdx.y) + tileColumn * kGemvMaxRows;
  float *squares = gemvSplitSquares(p.workspace, p.n, gridDim.y, blockIdx.y) +
                   blockIdx.x * kGemvMaxRows; // [kGemvMaxRows]
  if (!emptySplit) {
    for (int i = threadIdx.x; i < total; i += kGemvThreads) {
      const int t = i / kVectors, c = (i % kVectors) * 4;
      if (tileColumn + c >= p.n)
        continue;
      __stcg(reinterpret_cast<float4 *>(sums + t * kTile + c),
             sumOfWarpGroups<kWarpsK, kTile>(shared, t, c));
    }
    if (kPrologue == 1 && threadIdx.x < rows)
      __stcg(squares + threadIdx.x, shared.squares[threadIdx.x]);
  }
  // Our slice is visible before the count says so; the last block's reads
  // come after it saw everyone's count.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0)
    *last = atomicAdd(p.counters + blockIdx.x, 1u) == gridDim.y - 1;
  __syncthreads();
  if (!*last)
    return;
  __threadfence();
  // The splits whose k range is not empty (blockKRange's gemvSplitChunk), in
  // 32-bit arithmetic: the call of a 64-bit division made the kernel spill
  // registers (k of a GEMM is far below 2^31).
  const unsigned splits = gridDim.y, k32 = unsigned(p.k);
  const unsigned chunk = ((k32 + splits - 1) / splits + kGemvSplitRows - 1) / kGemvSplitRows *
                         kGemvSplitRows;
  int filled = 1;
  while (unsigned(filled) < splits && filled * chunk < k32)
    ++filled;
  if constexpr (kPrologue == 1) {
    if (threadIdx.x < rows) {
      float sum = 0.f;
      for (int s = 0; s < filled; ++s)
        sum += __ldcg(gemvSplitSquares(p.workspace, p.n, gridDim.y, s) + blockIdx.x * kGemvMaxRows +
                      threadIdx.x);
      shared.squares[threadIdx.x] = sum;
    }
    __syncthreads();
  }
  for (int i = threadIdx.x; i < total; i += kGemvThreads) {
    const int t = i / kVectors, c = (i % kVectors) * 4;
    if (tileColumn + c >= p.n)
      continue;
    // Split 0's slot of this float4, then split s's s * stride floats on.
    const float *slot =
        gemvSplitSums(p.workspace, p.n, 0) + tileColumn * kGemvMaxRows + t * kTile + c;
    const long long stride = gemvSplitSumsFloats(p.n);
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    // Loads in groups of kGroup, issued together: the policy's launches
    // (gemvShape: at most 8 splits at the decode shapes) take one round trip.
    constexpr int kGroup = 8;
    for (int s = 0; s < filled; s += kGroup, slot += kGroup * stride) {
      float4 part[kGroup];
#pragma unroll
      for (int j = 0; j < kGroup; ++j)
        if (s + j < filled)
          part[j] = __ldcg(reinterpret_cast<const float4 *>(slot + j * stride));
#pragma unroll
      for (int j = 0; j < kGroup; ++j)
        if (s + j < filled)
          v.x += part[j].x, v.y += part[j].y, v.z += part[j].z, v.w += part[j].w;
    }
    writeOutput<T>(p, t, tileColumn + c, v,
                   kPrologue == 1 ? inverseRms(p, shared.squares[t]) : 1.f);
  }
  if (threadIdx.x == 0)
    p.counters[blockIdx.x] = 0u;
}

/// The k rows [begin, end) of split blockIdx.y (empty past the last split).
struct KRange {
  long long begin, end;
};
__device__ __forceinline__ KRange blockKRange(const GemvParams &p) {
  const long long chunk = gemvSplitChunk(p.k, gridDim.y);
  const long long begin = (long long)blockIdx.y * chunk;
  return KRange{begin, begin + chunk < p.k ? begin + chunk : p.k};
}

/// One block: tile blockIdx.x, split blockIdx.y.
template <typename T, int kTransposed, int kWarpsN, int kPrologue>
__device__ __forceinline__ void gemvBlock(const GemvParams &p, GemvShared &shared, int *last) {
  constexpr int kWarpColumns = kTransposed ? 32 : 64;
  constexpr int kTile = kWarpColumns * kWarpsN;
  constexpr int kWarpsK = kGemvWarps / kWarpsN;
  constexpr int kStep = sizeof(T) == 2 ? (kTransposed ? 64 : 32) : (kTransposed ? 32 : 16);
  const KRange range = blockKRange(p);
  const long long kBegin = range.begin, kEnd = range.end;
  const long long tileColumn = (long long)blockIdx.x * kTile;
  const int warp = threadIdx.x >> 5, wn = warp % kWarpsN, wk = warp / kWarpsN;
  WarpTask task;
  task.localColumn = wn * kWarpColumns;
  task.column = tileColumn + task.localColumn;
  task.partial = shared.partial + wk * kGemvMaxRows * kTile;
  task.kFirst = kBegin + (long long)wk * kStep;
  task.kStride = (long long)kWarpsK * kStep;
  task.kEnd = kEnd;
  task.squares = shared.warpSquares[warp];
  if constexpr (sizeof(T) == 2) {
    if constexpr (kTransposed)
      warpMmaNK<T, kTile>(p, task);
    else
      warpMmaKN<T, kTile, kPrologue>(p, task);
  } else {
    if constexpr (kTransposed)
      warpFmaNK<kTile>(p, task);
    else
      warpFmaKN<kTile, kPrologue>(p, task);
  }
  __syncthreads();
  finishTile<T, kWarpsN, kWarpsK, kTile, kPrologue>(p, shared, tileColumn, kBegin >= kEnd, last);
}

/// The kernel body with warpsN warps side by side along n (1, 2, 4 or 8;
/// from the grid in infer_gemv). The prologue is a template parameter so
/// that the plain GEMV keeps its registers; prologues take [k, n] weights.
template <typename T, int kPrologue>
__device__ __forceinline__ void gemv(const GemvParams &p, int warpsN) {
  __shared__ __align__(16) GemvShared shared;
  __shared__ int last;
  if (p.rows <= 0)
    return;
  if constexpr (kPrologue == 0) {
    if (p.transposed) {
      switch (warpsN) {
      case 1:
        gemvBlock<T, 1, 1, 0>(p, shared, &last);
        break;
      case 2:
        gemvBlock<T, 1, 2, 0>(p, shared, &last);
        break;
      case 4:
        gemvBlock<T, 1, 4, 0>(p, shared, &last);
        break;
      default:
        gemvBlock<T, 1, 8, 0>(p, shared, &last);
        break;
      }
      return;
    }
  }
  switch (warpsN) {
  case 1:
    gemvBlock<T, 0, 1, kPrologue>(p, shared, &last);
    break;
  case 2:
    gemvBlock<T, 0, 2, kPrologue>(p, shared, &last);
    break;
  case 4:
    gemvBlock<T, 0, 4, kPrologue>(p, shared, &last);
    break;
  default:
    gemvBlock<T, 0, 8, kPrologue>(p, shared, &last);
    break;
  }
}

/// The first statement of the GEMV kernels, in place of
/// waitForPreviousKernel (Common.cuh): the weights are no other kernel's
/// output, so under programmatic dependent launch a block first asks L2 for
/// the first p.prefetchBytes of its own weights, in the order its warps will
/// read them, while the previous kernel is still finishing; HBM would
/// otherwise idle across the kernel boundary. Prefetches are hints: no
/// register or shared memory waits on them.
template <typename T>
__device__ __forceinline__ void prefetchWeightsThenWaitForPreviousKernel(const GemvParams &p,
                                                                         int warpsN) {
  if (p.prefetchBytes > 0) {
    const long long tile = (long long)gemvWarpColumns(p.transposed) * warpsN;
    const KRange range = blockKRange(p);
    const long long kBegin = range.begin, kEnd = range.end;
    const long long column = (long long)blockIdx.x * tile;
    const long long columns = p.n - column < tile ? p.n - column : tile;
    // Contiguous runs of the block's weights. [k, n]: one per k row (the
    // warps go down k, so row-major order); [n, k]: one per output column,
    // each column's k range (the warps go along k for all columns at once,
    // so the first lines of every run come first).
    const bool rowRuns = p.transposed == 0;
    const long long runs = rowRuns ? kEnd - kBegin : columns;
    const long long runBytes = (rowRuns ? columns : kEnd - kBegin) * (long long)sizeof(T);
    const char *weights = static_cast<const char *>(p.weight);
    const char *firstRun =
        weights + (rowRuns ? kBegin * p.n + column : column * p.k + kBegin) * (long long)sizeof(T);
    const long long pitch = (rowRuns ? p.n : p.k) * (long long)sizeof(T);
    if (runs > 0 && runBytes > 0) {
      // One more line than the bytes need: a run need not start on a line.
      const long long linesPerRun = runBytes / 128 + 2;
      long long lines = runs * linesPerRun;
      if (lines > p.prefetchBytes / 128)
        lines = p.prefetchBytes / 128;
      for (long long i = threadIdx.x; i < lines; i += kGemvThreads) {
        const long long run = rowRuns ? i / linesPerRun : i % runs;
        const long long line = rowRuns ? i % linesPerRun : i / runs;
        long long offset = line * 128;
        if (offset >= runBytes)
          offset = runBytes - 1;
        // Generic addressing: the weights are global memory behind a generic pointer.
        asm volatile("prefetch.L2 [%0];" ::"l"(firstRun + run * pitch + offset));
      }
    }
  }
  waitForPreviousKernel();
}

} // namespace gemvimpl

/// grid = gemvGrid(k, n, transposed) (the kernel reads its tiling from it),
/// block = kGemvThreads, no dynamic shared memory; workspace/counters sized
/// by gemvWorkspaceFloats/gemvCounters; the counters zeroed once (each
/// launch leaves them zeroed), the workspace needs no initial values.
template <typename T> __global__ void __launch_bounds__(kGemvThreads) infer_gemv(GemvParams p) {
  gemvimpl::prefetchWeightsThenWaitForPreviousKernel<T>(
      p, gemvWarpsNOfGrid(p.n, p.transposed, gridDim.x));
  gemvimpl::gemv<T, 0>(p, gemvWarpsNOfGrid(p.n, p.transposed, gridDim.x));
}

/// The same with the launch before the GEMM folded in (kPrologue =
/// GemvParams::prologue, 1 or 2; [k, n] weights only). A kernel of its own so
/// that the plain GEMV keeps its registers (and its blocks per SM).
template <typename T, int kPrologue>
__global__ void __launch_bounds__(kGemvThreads) infer_gemv_fused(GemvParams p) {
  gemvimpl::prefetchWeightsThenWaitForPreviousKernel<T>(p, gemvWarpsNOfGrid(p.n, 0, gridDim.x));
  gemvimpl::gemv<T, kPrologue>(p, gemvWarpsNOfGrid(p.n, 0, gridDim.x));
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_GEMV_CUH
