//===- Attention.cuh - flash attention over whole sequences ---------------===//
//
// infer_attention<T>: one block owns kAttentionBlockQ queries of one
// (batch, head), 16 per warp, and walks the key tiles they can see once,
// keeping a running max and sum per query in fp32 (FlashAttention-2).
// bf16/half with headDim % 16 == 0 (<= 256) run on tensor cores (mma.sync
// m16n8k16, fp32 accumulators, operands from shared memory by ldmatrix);
// everything else runs on CUDA cores with the same structure, 64 queries per
// group of 128 threads. Shared memory: AttentionGeometry.h.
//
//              key tile 0   key tile 1   ...  key tile n-1   (64 keys; 128 if D <= 64)
//   warp 0   [ S = Q K^T  | S          |     | masked       ]  q0 +  0 .. 15
//   warp 1   [            |            |     |   \ partial  ]  q0 + 16 .. 31
//   ...      [            |            |     |     \        ]
//   warp w   [            |            |     |       \      ]  q0 + 16w .. 16w + 15
//
// Causal: query i sees keys j <= i + kvSeq - seq, so tiles past the block's
// last query are never loaded and 16-key groups past a warp's last query are
// skipped; the rest is masked per element, and only steps that cross a row's
// last key (or the end of the keys) pay for the mask. Blocks are taken
// longest first over the whole grid: the linear block index walks every
// (head, batch) of the last query tile, then of the one before, and so on,
// so short blocks fill the tail.
//
// Tensor cores, per softmax step (64 keys; 32 if D > 64) and warp: S (16 x
// step) = Q K^T stays in the mma accumulators; the four lanes of a quad share
// a row (PTX fragment layout), so max and sum need two shuffles; the scale
// (times log2 e) is folded into the exponent, P = exp2(scale S - scale max)
// is repacked as T into the A operand of O += P V without going through
// shared memory; O (16 x C) lives in registers and is rescaled by
// exp2(oldMax - newMax) per row. The next K/V tile is copied (cp.async) while
// this one is computed; one barrier per tile both publishes the tile and
// frees the stage the next copy overwrites.
//
// The tensor-core path sees one block's work as HeadOperands: the head's
// query and output rows, and a row source that says where key row r of K
// and V is (a fixed stride here; the block table of the paged cache in
// infer_kv_prefill_attention, KvPrefillAttention.cuh, which runs these same
// blocks).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_ATTENTION_CUH
#define INFER_CODEGEN_CUDA_KERNELS_ATTENTION_CUH

#include "codegen/cuda/kernels/Common.cuh"
#include "runtime/cuda/abi/AttentionGeometry.h"

namespace infer {
namespace kernels {
namespace attention_detail {

constexpr int kWarps = kAttentionThreads / 32;
// 16 query rows per warp; K/V tiles of 64 (or 128) keys, walked in 64- or
// 32-key softmax steps; groups of 128 threads on the CUDA-core path.
static_assert(kAttentionBlockQ == 16 * kWarps && kAttentionBlockK == 64 &&
                  kAttentionSmallHeadBlockK % 64 == 0 &&
                  kAttentionThreads % kAttentionSimtThreads == 0 &&
                  kAttentionThreads <= 2 * kAttentionSimtThreads &&
                  kAttentionBlockQ % kAttentionSimtRows == 0,
              "the attention kernels assume 16 query rows per warp and 64-key tiles");

constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float negativeInfinity() { return -__int_as_float(0x7f800000); }

/// Score of a dot product in the log2 domain (log2(e) * score), so that exp2
/// gives the softmax weights: dot * scale, or softcap * tanh(dot * scale / softcap).
/// The tensor-core path keeps raw dots and folds `factor` into the exponent
/// unless `prescale` (softcap, or a scale that does not preserve order).
struct ScoreMap {
  float scaleLog2, scaleOverCap, capLog2, factor;
  int capped, prescale;

  __device__ __forceinline__ ScoreMap(float scale, float softcap)
      : scaleLog2(scale * kLog2e), scaleOverCap(softcap > 0.f ? scale / softcap : 0.f),
        capLog2(softcap * kLog2e), factor(1.f), capped(softcap > 0.f), prescale(1) {
    prescale = capped || !(scaleLog2 > 0.f);
    factor = prescale ? 1.f : scaleLog2;
  }

  __device__ __forceinline__ float operator()(float dot) const {
    return capped ? capLog2 * tanhf(dot * scaleOverCap) : dot * scaleLog2;
  }
};

/// Queries [q0, q0 + kAttentionBlockQ) of one (batch, head). The linear block
/// index runs over (head, batch) fastest and over query tiles from the last
/// (longest under a causal mask) to the first.
struct BlockTask {
  int q0;
  long long head, batch;
};

__device__ __forceinline__ BlockTask blockTask() {
  const unsigned lanes = gridDim.y * gridDim.z;
  const unsigned linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned step = linear / lanes, rest = linear - step * lanes;
  const unsigned batch = rest / gridDim.y;
  BlockTask task;
  task.q0 = int(gridDim.x - 1 - step) * kAttentionBlockQ;
  task.batch = batch;
  task.head = rest - batch * gridDim.y;
  return task;
}

/// Last key query `query` may see (keys [0, result]); -1 when none, or when
/// the query is past the sequence (padding rows of the last tile).
__device__ __forceinline__ int lastVisibleKey(int query, int seq, int kvSeq, int causal) {
  if (query >= seq)
    return -1;
  if (!causal)
    return kvSeq - 1;
  int last = query + (kvSeq - seq);
  return last < kvSeq - 1 ? last : kvSeq - 1;
}

/// Keys [0, result) that any query of [q0, q0 + rows) may see.
__device__ __forceinline__ int blockKeyEnd(int q0, int rows, int seq, int kvSeq, int causal) {
  int lastQuery = min(q0 + rows, seq) - 1;
  int end = causal ? min(kvSeq, lastQuery + (kvSeq - seq) + 1) : kvSeq;
  return end > 0 ? end : 0;
}

__device__ __forceinline__ unsigned sharedAddress(const void *pointer) {
  unsigned address;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }"
      : "=r"(address)
      : "l"(pointer));
  return address;
}

/// 16-byte global -> shared copy that does not go through registers (sm_80+).
__device__ __forceinline__ void copyAsync16(unsigned sharedDst, const void *globalSrc) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sharedDst), "l"(globalSrc)
               : "memory");
}

/// copyAsync16 of `bytes` (16 or 0) bytes of globalSrc, the rest of the 16
/// zero-filled: with 0 nothing is read.
__device__ __forceinline__ void copyAsync16OrZero(unsigned sharedDst, const void *globalSrc,
                                                  unsigned bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sharedDst), "l"(globalSrc),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void storeShared16(unsigned sharedDst, unsigned x, unsigned y,
                                              unsigned z, unsigned w) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(sharedDst), "r"(x), "r"(y),
               "r"(z), "r"(w)
               : "memory");
}

__device__ __forceinline__ void commitAsync() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

/// Waits until at most `pending` of this thread's committed copy groups are in flight.
template <int pending> __device__ __forceinline__ void waitAsync() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
}

__device__ __forceinline__ unsigned short bitsOf(__nv_bfloat16 x) {
  return __bfloat16_as_ushort(x);
}
__device__ __forceinline__ unsigned short bitsOf(__half x) { return __half_as_ushort(x); }

/// Stores two consecutive elements; `paired`: dst is 4-byte aligned.
template <typename T>
__device__ __forceinline__ void storePair(T *dst, float x, float y, bool paired) {
  if (paired) {
    *reinterpret_cast<unsigned *>(dst) = packPair<T>(x, y);
  } else {
    dst[0] = fromFloat<T>(x);
    dst[1] = fromFloat<T>(y);
  }
}

/// This thread's 16-byte pieces of a tile of `cols` (multiple of 8) 16-bit
/// columns: pieces threadIdx.x, + kAttentionThreads, ... in row-major order,
/// walked without divisions.
struct TileWalk {
  int pieces, row, piece, rowStep, pieceStep;
  __device__ __forceinline__ explicit TileWalk(int cols)
      : pieces(cols >> 3), row(int(threadIdx.x) / pieces), piece(int(threadIdx.x) - row * pieces),
        rowStep(kAttentionThreads / pieces), pieceStep(kAttentionThreads - rowStep * pieces) {}
};

/// Rows of one head with a fixed stride: element (r, c) at base[r * stride + c]
/// (queries and outputs of both kernels, keys and values of infer_attention).
/// Row sources of loadTile map a row index to the row's first element.
template <typename T> struct StridedRows {
  static constexpr bool kDecodes = false; // 16-bit rows, copied as they are
  const T *base;
  long long stride;
  __device__ __forceinline__ const T *operator()(int row) const { return base + row * stride; }
};

/// Copies rows [row0, row0 + kRows) x columns [col0, col0 + cols) of one head
/// (row r's first element at rows(r), 16-bit elements) into the shared tile
/// at address `tile` with rows of rowBytes. Rows at or past rowEnd become
/// zero (and rows() is not asked for them): their weight is zero, and zero
/// times uninitialized memory could be NaN. `async` requires 16-byte aligned
/// rows. A row source with kDecodes (an FP8 cache's rows) gives each 16-byte
/// piece itself (rows.decode8), loaded and decoded synchronously.
template <int kRows, typename Rows>
__device__ __forceinline__ void loadTile(unsigned tile, int rowBytes, const Rows &rows, int row0,
                                         int rowEnd, int col0, const TileWalk &walk, bool async) {
  int r = walk.row, piece = walk.piece;
  while (r < kRows) {
    unsigned dst = tile + unsigned(r * rowBytes + piece * 16);
    int row = row0 + r;
    if (row >= rowEnd) {
      storeShared16(dst, 0u, 0u, 0u, 0u);
    } else if constexpr (Rows::kDecodes) {
      const uint4 bits = rows.decode8(row, col0 + piece * 8);
      storeShared16(dst, bits.x, bits.y, bits.z, bits.w);
    } else {
      const auto *from = rows(row) + col0 + piece * 8;
      if (async) {
        copyAsync16(dst, from);
      } else {
        const unsigned short *bits = reinterpret_cast<const unsigned short *>(from);
        storeShared16(dst, unsigned(bits[0]) | (unsigned(bits[1]) << 16),
                      unsigned(bits[2]) | (unsigned(bits[3]) << 16),
                      unsigned(bits[4]) | (unsigned(bits[5]) << 16),
                      unsigned(bits[6]) | (unsigned(bits[7]) << 16));
      }
    }
    r += walk.rowStep;
    piece += walk.pieceStep;
    if (piece >= walk.pieces) {
      piece -= walk.pieces;
      ++r;
    }
  }
}

/// D = A B + D for one m16n8k16 tile (PTX ISA "Matrix Fragments for
/// mma.m16n8k16"; g = lane / 4, t = lane % 4): a = rows {g, g + 8} x columns
/// {2t, 2t + 1, 2t + 8, 2t + 9} as [g][2t..], [g+8][2t..], [g][2t+8..],
/// [g+8][2t+8..]; b = k {2t, 2t + 1}, {2t + 8, 2t + 9} x column g; d[0..1] =
/// row g, columns 2t, 2t + 1, d[2..3] = row g + 8.
template <typename T>
__device__ __forceinline__ void mma16816(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                         unsigned b1);
template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float (&d)[4], const unsigned (&a)[4],
                                                        unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma16816<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                                 unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Four 8x8 b16 matrices from shared memory; lanes 8i .. 8i + 7 give the row addresses of matrix
/// i, and r[i] holds row lane / 4, columns 2 (lane % 4) + {0, 1} of it (with
/// `trans`: rows 2 (lane % 4) + {0, 1}, column lane / 4).
__device__ __forceinline__ void loadMatrices(unsigned (&r)[4], unsigned row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}
__device__ __forceinline__ void loadMatricesTransposed(unsigned (&r)[4], unsigned row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(row));
}

/// The A operand (16 rows x 16 keys, mma fragment layout) of keys 16kk ..
/// 16kk + 15 from the softmax weights in 8-key accumulator tiles 2kk, 2kk + 1.
template <typename T, int kTiles>
__device__ __forceinline__ void weightsAsOperandA(unsigned (&a)[4], const float (&s)[kTiles][4],
                                                  int kk) {
  a[0] = packPair<T>(s[2 * kk][0], s[2 * kk][1]);
  a[1] = packPair<T>(s[2 * kk][2], s[2 * kk][3]);
  a[2] = packPair<T>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
  a[3] = packPair<T>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
}

/// 2^x; 0 for -inf, results below 2^-126 flushed to 0 (weights that small do
/// not matter).
__device__ __forceinline__ float fastExp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// Balanced-tree max and sum of two arrays at once (kCount a power of two),
/// into element 0. The strides are template arguments, so every index is a
/// constant and the arrays stay in registers (a halving loop left them in
/// local memory).
template <int kCount, int kStride = kCount / 2> struct PairTree {
  __device__ __forceinline__ static void max(float (&a)[kCount], float (&b)[kCount]) {
#pragma unroll
    for (int n = 0; n < kStride; ++n) {
      a[n] = fmaxf(a[n], a[n + kStride]);
      b[n] = fmaxf(b[n], b[n + kStride]);
    }
    PairTree<kCount, kStride / 2>::max(a, b);
  }
  __device__ __forceinline__ static void sum(float (&a)[kCount], float (&b)[kCount]) {
#pragma unroll
    for (int n = 0; n < kStride; ++n) {
      a[n] += a[n + kStride];
      b[n] += b[n + kStride];
    }
    PairTree<kCount, kStride / 2>::sum(a, b);
  }
};
template <int kCount> struct PairTree<kCount, 0> {
  __device__ __forceinline__ static void max(float (&)[kCount], float (&)[kCount]) {}
  __device__ __forceinline__ static void sum(float (&)[kCount], float (&)[kCount]) {}
};

/// Online softmax (FlashAttention-2) of the two query rows a lane holds in
/// the mma fragment layouts (mma.sync m16n8 and wgmma accumulators alike):
/// rows A = g and B = g + 8 of 16, the lane's columns 2t, 2t + 1 of every 8
/// (g = lane / 4, t = lane % 4), so a quad of lanes shares a row.
struct RowPairSoftmax {
  ScoreMap scoreOf;
  float factor;
  // Last key rows A and B see, minus 2t (the lane's first column).
  int lastKeyA, lastKeyB;
  // Running max (raw dot units) of rows A and B, and this lane's share of
  // their sums (its columns only; the quad adds them up at the end).
  float maxA, maxB, sumA, sumB;

  __device__ __forceinline__ RowPairSoftmax(float scale, float softcap) : scoreOf(scale, softcap) {
    factor = scoreOf.factor;
  }

  __device__ __forceinline__ void resetRows() {
    maxA = maxB = negativeInfinity();
    sumA = sumB = 0.f;
  }

  /// Writes rows A and B of `out` (the lane's 8-column tiles j < tiles)
  /// divided by their sums and times `outScale`: row r of this head at head +
  /// r * stride, from the lane's first column (`head` includes 2t). Rows at
  /// or past `seq` are not written. `paired`: 4-byte aligned pairs.
  template <typename T, int kOutTiles>
  __device__ __forceinline__ void store(const float (&out)[kOutTiles][4], T *head, long long stride,
                                        int rowA, int seq, int tiles, bool paired,
                                        float outScale = 1.f) const {
    float totalA = sumA, totalB = sumB;
#pragma unroll
    for (int mask = 1; mask <= 2; mask <<= 1) {
      totalA += __shfl_xor_sync(kFullMask, totalA, mask);
      totalB += __shfl_xor_sync(kFullMask, totalB, mask);
    }
    const float inverseA = totalA > 0.f ? outScale / totalA : 0.f;
    const float inverseB = totalB > 0.f ? outScale / totalB : 0.f;
    const int rowB = rowA + 8;
    T *dstA = head + rowA * stride, *dstB = head + rowB * stride;
#pragma unroll
    for (int j = 0; j < kOutTiles; ++j) {
      if (j < tiles) {
        if (rowA < seq)
          storePair<T>(dstA + 8 * j, out[j][0] * inverseA, out[j][1] * inverseA, paired);
        if (rowB < seq)
          storePair<T>(dstB + 8 * j, out[j][2] * inverseB, out[j][3] * inverseB, paired);
      }
    }
  }

  /// The factors rows A and B of O are rescaled by when the running max moves.
  struct Rescale {
    float a, b;
  };

  /// s = exp2(factor s - base) in place for the 8-key score tiles s[n],
  /// keys key0 + 8n; the running max and sums move on and `out` is rescaled.
  /// kEdge: mask keys past lastKeyA / lastKeyB. kMayPrescale: see ScoreMap.
  template <bool kEdge, bool kMayPrescale, int kStepTiles, int kOutTiles>
  __device__ __forceinline__ void update(float (&s)[kStepTiles][4], float (&out)[kOutTiles][4],
                                         int key0) {
    rescale(out, weigh<kEdge, kMayPrescale>(s, key0));
  }

  template <int kOutTiles>
  __device__ __forceinline__ static void rescale(float (&out)[kOutTiles][4], Rescale factors) {
#pragma unroll
    for (int j = 0; j < kOutTiles; ++j) {
      out[j][0] *= factors.a;
      out[j][1] *= factors.a;
      out[j][2] *= factors.b;
      out[j][3] *= factors.b;
    }
  }

  /// update() without touching O (wgmma may still be accumulating into it):
  /// returns the factors to rescale it by.
  template <bool kEdge, bool kMayPrescale, int kStepTiles>
  __device__ __forceinline__ Rescale weigh(float (&s)[kStepTiles][4], int key0) {
    // Scores: raw dots (exponent scaled by `factor`), or log2-domain scores
    // already (prescale, factor 1); -inf where masked.
    if (kMayPrescale && scoreOf.prescale) {
#pragma unroll
      for (int n = 0; n < kStepTiles; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i)
          s[n][i] = scoreOf(s[n][i]);
    }
    if (kEdge) {
#pragma unroll
      for (int n = 0; n < kStepTiles; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (key0 + 8 * n + (i & 1) > (i < 2 ? lastKeyA : lastKeyB))
            s[n][i] = negativeInfinity();
    }

    // Online softmax over rows A and B (a quad of lanes shares a row); max
    // and sum reduce as trees.
    float mA[kStepTiles], mB[kStepTiles];
#pragma unroll
    for (int n = 0; n < kStepTiles; ++n) {
      mA[n] = fmaxf(s[n][0], s[n][1]);
      mB[n] = fmaxf(s[n][2], s[n][3]);
    }
    PairTree<kStepTiles>::max(mA, mB);
    float stepMaxA = mA[0], stepMaxB = mB[0];
#pragma unroll
    for (int mask = 1; mask <= 2; mask <<= 1) {
      stepMaxA = fmaxf(stepMaxA, __shfl_xor_sync(kFullMask, stepMaxA, mask));
      stepMaxB = fmaxf(stepMaxB, __shfl_xor_sync(kFullMask, stepMaxB, mask));
    }
    const float newMaxA = fmaxf(maxA, stepMaxA), newMaxB = fmaxf(maxB, stepMaxB);
    // A row that has seen no key yet keeps O = 0, sum = 0 (no inf - inf).
    const float baseA = newMaxA == negativeInfinity() ? 0.f : newMaxA * factor;
    const float baseB = newMaxB == negativeInfinity() ? 0.f : newMaxB * factor;
    const float alphaA = fastExp2(fmaf(maxA, factor, -baseA));
    const float alphaB = fastExp2(fmaf(maxB, factor, -baseB));
    maxA = newMaxA;
    maxB = newMaxB;
#pragma unroll
    for (int n = 0; n < kStepTiles; ++n) {
      s[n][0] = fastExp2(fmaf(s[n][0], factor, -baseA));
      s[n][1] = fastExp2(fmaf(s[n][1], factor, -baseA));
      s[n][2] = fastExp2(fmaf(s[n][2], factor, -baseB));
      s[n][3] = fastExp2(fmaf(s[n][3], factor, -baseB));
      mA[n] = s[n][0] + s[n][1];
      mB[n] = s[n][2] + s[n][3];
    }
    PairTree<kStepTiles>::sum(mA, mB);
    sumA = fmaf(sumA, alphaA, mA[0]);
    sumB = fmaf(sumB, alphaB, mB[0]);
    return Rescale{alphaA, alphaB};
  }
};

/// The 16 query rows of one warp on the tensor-core path: lane holds rows
/// A = g and B = g + 8 of them. kOutTiles: 8-column output tiles per lane
/// (8: D <= 64, Q kept in registers, 64-key softmax steps; 16: 128 columns
/// per pass, Q read from shared memory, 32-key steps to bound registers).
/// kFixedD: the head size when known at compile time (0: p.headDim).
/// kMayPrescale: false when the caller checked that scores need no prescale
/// (ScoreMap), so that the hot loop has no branch on it.
///
/// A softmax step covers the 8-key score tiles s[n], keys key0 + 8n (rows
/// step + 8n of the shared K/V tile). kEdge: some key of the step is masked
/// for some row of the warp (past a row's last key or past the keys), so
/// 16-key groups are skipped where the whole warp is past them and elements
/// are masked.
template <typename T, int kOutTiles, int kFixedD, bool kMayPrescale>
struct WarpRows : RowPairSoftmax {
  static constexpr bool kQInRegisters = kOutTiles == 8;
  static constexpr int kStepKeys = kOutTiles == 8 ? 64 : 32;
  static constexpr int kStepTiles = kStepKeys / 8; // 8-key score tiles per step

  int kRowBytes, vRowBytes, featureSteps, outTiles, warpLastKey;
  unsigned qLane;          // ldmatrix address of this lane's Q row
  unsigned qFrag[4][4];    // Q as A operands (kQInRegisters)
  float out[kOutTiles][4]; // O, unnormalized

  __device__ __forceinline__ WarpRows(float scale, float softcap)
      : RowPairSoftmax(scale, softcap) {}

  __device__ __forceinline__ void reset() {
#pragma unroll
    for (int j = 0; j < kOutTiles; ++j)
      out[j][0] = out[j][1] = out[j][2] = out[j][3] = 0.f;
    resetRows();
  }

  /// S = Q K^T; kTile: this lane's ldmatrix address in the K tile.
  template <bool kEdge>
  __device__ __forceinline__ void scores(float (&s)[kStepTiles][4], unsigned kTile, int step,
                                         int key0) const {
#pragma unroll
    for (int n = 0; n < kStepTiles; ++n)
      s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.f;
    auto scoreStep = [&](const unsigned(&a)[4], int ks) {
#pragma unroll
      for (int n = 0; n < kStepTiles; n += 2) {
        if (!kEdge || key0 + 8 * n <= warpLastKey) {
          unsigned b[4];
          loadMatrices(b, kTile + unsigned((step + 8 * n) * kRowBytes + ks * 32));
          mma16816<T>(s[n], a, b[0], b[1]);
          mma16816<T>(s[n + 1], a, b[2], b[3]);
        }
      }
    };
    if (kQInRegisters) {
#pragma unroll
      for (int ks = 0; ks < 4; ++ks)
        if (ks < featureSteps)
          scoreStep(qFrag[ks], ks);
    } else if (kFixedD) {
#pragma unroll
      for (int ks = 0; ks < (kFixedD >> 4); ++ks) {
        unsigned a[4];
        loadMatrices(a, qLane + unsigned(ks * 32));
        scoreStep(a, ks);
      }
    } else {
      for (int ks = 0; ks < featureSteps; ++ks) {
        unsigned a[4];
        loadMatrices(a, qLane + unsigned(ks * 32));
        scoreStep(a, ks);
      }
    }
  }

  /// s = exp2(factor s - base) in place; the running max and sums move on
  /// and O is rescaled (RowPairSoftmax).
  template <bool kEdge>
  __device__ __forceinline__ void softmax(float (&s)[kStepTiles][4], int key0) {
    this->template update<kEdge, kMayPrescale>(s, out, key0);
  }

  /// O += P V: the score tiles 2kk, 2kk + 1 are the A operand for keys
  /// key0 + 16kk .. + 15; vTile: this lane's ldmatrix address in the V tile.
  template <bool kEdge>
  __device__ __forceinline__ void accumulate(const float (&s)[kStepTiles][4], unsigned vTile,
                                             int step, int key0) {
#pragma unroll
    for (int kk = 0; kk < kStepTiles / 2; ++kk) {
      if (!kEdge || key0 + 16 * kk <= warpLastKey) {
        unsigned a[4];
        weightsAsOperandA<T>(a, s, kk);
        const unsigned vRows = vTile + unsigned((step + 16 * kk) * vRowBytes);
#pragma unroll
        for (int j = 0; j < kOutTiles; j += 2) {
          if (j < outTiles) {
            unsigned b[4];
            loadMatricesTransposed(b, vRows + unsigned(j * 16));
            mma16816<T>(out[j], a, b[0], b[1]);
            mma16816<T>(out[j + 1], a, b[2], b[3]);
          }
        }
      }
    }
  }

  template <bool kEdge>
  __device__ __forceinline__ void step(unsigned kTile, unsigned vTile, int step, int key0) {
    float s[kStepTiles][4];
    scores<kEdge>(s, kTile, step, key0);
    softmax<kEdge>(s, key0);
    accumulate<kEdge>(s, vTile, step, key0);
  }
};

/// What the tensor-core path of one block reads and writes: the queries
/// [0, seq) of one head (rows q, outputs out + row * outStride) against keys
/// [0, kvSeq) of its kv head, K and V row r at k(r) and v(r). KeyRows is a
/// row source of loadTile: StridedRows for infer_attention, the paged cache
/// for infer_kv_prefill_attention (KvPrefillAttention.cuh). Causal: query i
/// sees keys j <= i + kvSeq - seq. `aligned`: every row of q, k, v and out
/// starts 16-byte aligned (asynchronous copies, paired stores). `outScale`
/// multiplies the outputs (an FP8 cache's V scale, else 1).
template <typename T, typename KeyRows> struct HeadOperands {
  StridedRows<T> q;
  KeyRows k, v;
  T *out;
  long long outStride;
  int headDim, seq, kvSeq, causal;
  bool aligned;
  float scale, softcap, outScale;
};

/// Tensor-core path (mma.sync m16n8k16, fp32 accumulators). Warp w owns query
/// rows q0 + 16w .. q0 + 16w + 15 (WarpRows).
template <typename T, int kOutTiles, int kFixedD, bool kMayPrescale, typename KeyRows>
__device__ __forceinline__ void tensorCoreAttention(const HeadOperands<T, KeyRows> &op,
                                                    unsigned char *smem, int q0) {
  typedef WarpRows<T, kOutTiles, kFixedD, kMayPrescale> Rows;
  constexpr int kStepKeys = Rows::kStepKeys;
  // Keys per tile (attentionTileKeys).
  constexpr int kTileKeys = kOutTiles == 8 ? kAttentionSmallHeadBlockK : kAttentionBlockK;

  const int D = kFixedD ? kFixedD : op.headDim;
  const int seq = op.seq, kvSeq = op.kvSeq, causal = op.causal;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const bool aligned = op.aligned;

  Rows rows(op.scale, op.softcap);
  // Shared memory by 32-bit address, rows in bytes.
  const int kRowBytes = attentionKStride(D) * 2, vRowBytes = attentionVStride(D) * 2;
  rows.kRowBytes = kRowBytes;
  rows.vRowBytes = vRowBytes;
  const int stages = attentionStages(D);
  const unsigned stageBytes = attentionStageBytes(D);
  const unsigned kvBase = sharedAddress(smem);
  const unsigned qBase = kvBase + unsigned(stages) * stageBytes;
  const unsigned vOffset = unsigned(kTileKeys * kRowBytes); // V after K in a stage
  // ldmatrix row addresses of this lane: Q as A (16 rows x 16 features), K as
  // B (16 keys x 16 features: matrices keys 0-7 | 8-15 x features 0-7 | 8-15),
  // V as B transposed (16 keys x 16 features: keys 0-7 | 8-15 x features 0-7,
  // then features 8-15).
  rows.qLane = qBase + unsigned((warp * 16 + (lane & 15)) * kRowBytes + (lane >> 4) * 16);
  const unsigned kLane =
      unsigned((((lane >> 4) << 3) + (lane & 7)) * kRowBytes + ((lane >> 3) & 1) * 16);
  const unsigned vLane =
      vOffset + unsigned(((((lane >> 3) & 1) << 3) + (lane & 7)) * vRowBytes + (lane >> 4) * 16);

  const int tiles =
      (blockKeyEnd(q0, kAttentionBlockQ, seq, kvSeq, causal) + kTileKeys - 1) / kTileKeys;
  const int warpFirst = q0 + warp * 16;
  const bool warpActive = warpFirst < seq;
  // Last key any row of this warp sees; 16-key groups past it are skipped
  // (their keys are masked for every row anyway).
  const int warpLastKey = lastVisibleKey(min(warpFirst + 15, seq - 1), seq, kvSeq, causal);
  rows.warpLastKey = warpLastKey;
  // Keys [0, warpFullKey] are visible to all 16 rows (-1: some row is padding).
  const int warpFullKey = warpFirst + 15 < seq ? lastVisibleKey(warpFirst, seq, kvSeq, causal) : -1;
  const int rowA = warpFirst + g, rowB = rowA + 8;
  rows.lastKeyA = lastVisibleKey(rowA, seq, kvSeq, causal) - 2 * t;
  rows.lastKeyB = lastVisibleKey(rowB, seq, kvSeq, causal) - 2 * t;
  rows.featureSteps = D >> 4;

  const TileWalk kWalk(D);
  loadTile<kAttentionBlockQ>(qBase, kRowBytes, op.q, q0, seq, 0, kWalk, aligned);
  commitAsync();

  for (int col0 = 0; col0 < D; col0 += kAttentionMaxPassColumns) {
    rows.outTiles = min(D - col0, kAttentionMaxPassColumns) >> 3;
    const TileWalk vWalk(rows.outTiles * 8);
    // Copies key tile `tile` (if there is one) into `stage` as one copy
    // group; a group is committed either way, so that the groups in flight
    // always count stages - 1 tiles.
    auto issueTile = [&](int tile, int stage) {
      if (tile < tiles) {
        unsigned kTile = kvBase + unsigned(stage) * stageBytes;
        int key0 = tile * kTileKeys;
        loadTile<kTileKeys>(kTile, kRowBytes, op.k, key0, kvSeq, 0, kWalk, aligned);
        loadTile<kTileKeys>(kTile + vOffset, vRowBytes, op.v, key0, kvSeq, col0, vWalk, aligned);
      }
      commitAsync();
    };
    if (col0 > 0)
      __syncthreads(); // every warp is done with the last tile of the previous pass
    // Tiles 0 .. stages - 2 in flight before the loop (tile 0 with one stage).
    for (int tile = 0; tile < (stages > 1 ? stages - 1 : 1); ++tile)
      issueTile(tile, tile);
    rows.reset();

    for (int tile = 0, stage = 0; tile < tiles; ++tile) {
      if (stages == 3)
        waitAsync<1>(); // the copy of tile + 1 may still run
      else
        waitAsync<0>();
      // Tile `tile` (and Q) are in shared memory for every thread, and every
      // warp is done with tile - 1, whose stage the next copy reuses.
      __syncthreads();
      if (stages > 1)
        issueTile(tile + stages - 1, stage == 0 ? stages - 1 : stage - 1);
      if (Rows::kQInRegisters && tile == 0) {
#pragma unroll
        for (int ks = 0; ks < 4; ++ks)
          if (ks < rows.featureSteps)
            loadMatrices(rows.qFrag[ks], rows.qLane + ks * 32);
      }

      const unsigned kTile = kvBase + unsigned(stage) * stageBytes + kLane;
      const unsigned vTile = kvBase + unsigned(stage) * stageBytes + vLane;
      if (tiles == 1) {
        // One key tile (a short prompt): every step on the masking path, in
        // a loop that is not unrolled, so that a warp runs one step's code
        // again instead of a copy per step and edge. The code runs once per
        // SM and layer, fetched cold: with a copy per step, instruction
        // fetch was 44% of the stalls at 128 tokens (Nsight Compute).
#pragma unroll 1
        for (int step = 0; step < kTileKeys; step += kStepKeys) {
          if (!warpActive || step > warpLastKey)
            break;
          rows.template step<true>(kTile, vTile, step, step);
        }
      } else {
#pragma unroll
        for (int step = 0; step < kTileKeys; step += kStepKeys) {
          const int key0 = tile * kTileKeys + step;
          if (!warpActive || key0 > warpLastKey)
            break;
          if (key0 + kStepKeys - 1 <= warpFullKey)
            rows.template step<false>(kTile, vTile, step, key0);
          else
            rows.template step<true>(kTile, vTile, step, key0);
        }
      }
      if (stages == 1 && tile + 1 < tiles) {
        __syncthreads(); // every warp is done with the only stage
        issueTile(tile + 1, 0);
      }
      stage = stage + 1 == stages ? 0 : stage + 1;
    }

    if (warpActive)
      rows.store(rows.out, op.out + col0 + 2 * t, op.outStride, rowA, seq, rows.outTiles, aligned,
                 op.outScale);
  }
  waitAsync<0>(); // Q's copy when no key tile was loaded
}

/// Tensor cores exist for the 16-bit types only.
template <typename T> struct HasTensorCores {
  static constexpr bool value = false;
};
template <> struct HasTensorCores<__nv_bfloat16> {
  static constexpr bool value = true;
};
template <> struct HasTensorCores<__half> {
  static constexpr bool value = true;
};

/// Runs the block on tensor cores when T and the head size allow it
/// (attentionUsesTensorCores) and the head size is of kHeadClass
/// (attentionHeadClass: only that class's loops are compiled); says whether
/// it ran.
template <int kHeadClass, typename T, typename KeyRows>
__device__ __forceinline__ bool runTensorCorePath(const HeadOperands<T, KeyRows> &op,
                                                  unsigned char *smem, int q0) {
  static_assert(kHeadClass == 64 || kHeadClass == 256, "attentionHeadClass gives 64 or 256");
  if constexpr (!HasTensorCores<T>::value) {
    return false;
  } else {
    if (!attentionUsesTensorCores(op.headDim, 2) || attentionHeadClass(op.headDim) != kHeadClass)
      return false;
    // The common head sizes without softcap get loops specialized on both.
    const bool prescale = ScoreMap(op.scale, op.softcap).prescale;
    if constexpr (kHeadClass == 64) {
      if (op.headDim == 64 && !prescale)
        tensorCoreAttention<T, 8, 64, false>(op, smem, q0);
      else
        tensorCoreAttention<T, 8, 0, true>(op, smem, q0);
    } else {
      if (op.headDim == 128 && !prescale)
        tensorCoreAttention<T, 16, 128, false>(op, smem, q0);
      else
        tensorCoreAttention<T, 16, 0, true>(op, smem, q0);
    }
    return true;
  }
}

/// infer_attention's operands for one block: (batch, head) of AttentionParams.
template <typename T>
__device__ __forceinline__ HeadOperands<T, StridedRows<T>> denseOperands(const AttentionParams &p,
                                                                         const BlockTask &task) {
  const long long D = p.headDim, kvHead = task.head / (p.numHeads / p.numKvHeads);
  HeadOperands<T, StridedRows<T>> op;
  op.q.base = static_cast<const T *>(p.q) + task.batch * p.seq * p.qRowStride + task.head * D;
  op.q.stride = p.qRowStride;
  op.k.base = static_cast<const T *>(p.k) + task.batch * p.kvSeq * p.kRowStride + kvHead * D;
  op.k.stride = p.kRowStride;
  op.v.base = static_cast<const T *>(p.v) + task.batch * p.kvSeq * p.vRowStride + kvHead * D;
  op.v.stride = p.vRowStride;
  op.outStride = p.numHeads * D;
  op.out = static_cast<T *>(p.output) + task.batch * p.seq * op.outStride + task.head * D;
  op.headDim = int(D);
  op.seq = int(p.seq);
  op.kvSeq = int(p.kvSeq);
  op.causal = p.causal;
  // D % 16 == 0 on the tensor-core path covers the head and column offsets.
  op.aligned =
      ((reinterpret_cast<unsigned long long>(p.q) | reinterpret_cast<unsigned long long>(p.k) |
        reinterpret_cast<unsigned long long>(p.v) |
        reinterpret_cast<unsigned long long>(p.output)) &
       15) == 0 &&
      ((p.qRowStride | p.kRowStride | p.vRowStride) & 7) == 0;
  op.scale = p.scale;
  op.softcap = p.softcap;
  op.outScale = 1.f;
  return op;
}

/// Barrier of one group of kAttentionSimtThreads threads (the whole block
/// when it is one group).
__device__ __forceinline__ void simtSync(int group) {
  if (kAttentionThreads == kAttentionSimtThreads)
    __syncthreads();
  else if (group == 0)
    asm volatile("bar.sync 1, %0;" ::"n"(kAttentionSimtThreads) : "memory");
  else
    asm volatile("bar.sync 2, %0;" ::"n"(kAttentionSimtThreads) : "memory");
}

/// CUDA-core path for one group of 128 threads and queries [q0, q0 + 64):
/// any T and head size, fp32 tiles, 16 keys per tile. `smem`: this group's
/// tiles.
template <typename T>
__device__ __forceinline__ void simtAttention(const AttentionParams &p, unsigned char *smem,
                                              int q0, long long head, long long batch, int tid,
                                              int group) {
  constexpr int kBK = kAttentionSimtBlockK, kSS = kAttentionSimtBlockK + 1;
  constexpr int kRows = kAttentionSimtRows;
  const int D = int(p.headDim), seq = int(p.seq), kvSeq = int(p.kvSeq), causal = p.causal;
  const int warp = tid >> 5, lane = tid & 31;
  const long long kvHead = head / (p.numHeads / p.numKvHeads);
  const long long qBase = batch * p.seq * p.qRowStride + head * D;
  const long long kBase = batch * p.kvSeq * p.kRowStride + kvHead * D;
  const long long vBase = batch * p.kvSeq * p.vRowStride + kvHead * D;
  const long long outStride = p.numHeads * p.headDim;
  const long long outBase = batch * p.seq * outStride + head * D;
  const ScoreMap scoreOf(p.scale, p.softcap);
  const float alibiLog2 = p.alibi * alibiSlope(head, p.numHeads) * kLog2e;

  const int ld = attentionSimtStride(D);
  float *qTile = reinterpret_cast<float *>(smem); // 64 x ld
  float *outTile = qTile + kRows * ld;            // 64 x ld
  float *kvTile = outTile + kRows * ld;           // kBK x ld: K, then V
  float *scores = kvTile + kBK * ld;              // 64 x kSS
  float *rowFactor = scores + kRows * kSS;        // 64

  for (int i = tid; i < kRows * D; i += kAttentionSimtThreads) {
    int r = i / D, d = i - r * D, query = q0 + r;
    qTile[r * ld + d] = query < seq ? loadFloat<T>(p.q, qBase + query * p.qRowStride + d) : 0.f;
    outTile[r * ld + d] = 0.f;
  }

  const int tiles = (blockKeyEnd(q0, kRows, seq, kvSeq, causal) + kBK - 1) / kBK;
  // Scores: thread computes keys {kc, kc + 8} x rows {rg + 16 i}.
  const int kc = tid & 7, rg = tid >> 3;
  // Softmax: threads 2r, 2r + 1 share row r, 8 keys each.
  const int row = tid >> 1, half = tid & 1;
  float rowMax = negativeInfinity(), rowSum = 0.f;

  for (int tile = 0; tile < tiles; ++tile) {
    const int key0 = tile * kBK;
    simtSync(group); // the previous tile's V and P are consumed
    for (int i = tid; i < kBK * D; i += kAttentionSimtThreads) {
      int r = i / D, d = i - r * D, key = key0 + r;
      kvTile[r * ld + d] = key < kvSeq ? loadFloat<T>(p.k, kBase + key * p.kRowStride + d) : 0.f;
    }
    simtSync(group);

    float acc[4][2];
#pragma unroll
    for (int i = 0; i < 4; ++i)
      acc[i][0] = acc[i][1] = 0.f;
    const float *k0 = kvTile + kc * ld, *k1 = k0 + 8 * ld, *qRows = qTile + rg * ld;
    for (int d = 0; d < D; ++d) {
      float a = k0[d], b = k1[d];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float q = qRows[16 * i * ld + d];
        acc[i][0] = fmaf(q, a, acc[i][0]);
        acc[i][1] = fmaf(q, b, acc[i][1]);
      }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int r = rg + 16 * i;
      int last = lastVisibleKey(q0 + r, seq, kvSeq, causal);
      // A sliding window's first key; ALiBi's bias slope * (key - position).
      int first = p.window > 0 ? last - p.window + 1 : 0;
      const int position = q0 + r + (kvSeq - seq);
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        int key = key0 + kc + 8 * u;
        scores[r * kSS + kc + 8 * u] = key <= last && key >= first
                                           ? scoreOf(acc[i][u]) + alibiLog2 * float(key - position)
                                           : negativeInfinity();
      }
    }
    simtSync(group); // K is consumed; V replaces it while the softmax runs

    for (int i = tid; i < kBK * D; i += kAttentionSimtThreads) {
      int r = i / D, d = i - r * D, key = key0 + r;
      kvTile[r * ld + d] = key < kvSeq ? loadFloat<T>(p.v, vBase + key * p.vRowStride + d) : 0.f;
    }
    float *scoreRow = scores + row * kSS + 8 * half;
    float s[8];
    float tileMax = negativeInfinity();
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      s[c] = scoreRow[c];
      tileMax = fmaxf(tileMax, s[c]);
    }
    tileMax = fmaxf(tileMax, __shfl_xor_sync(kFullMask, tileMax, 1));
    const float newMax = fmaxf(rowMax, tileMax);
    const float base = newMax == negativeInfinity() ? 0.f : newMax;
    const float alpha = exp2f(rowMax - base);
    float tileSum = 0.f;
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      float e = exp2f(s[c] - base);
      scoreRow[c] = e;
      tileSum += e;
    }
    tileSum += __shfl_xor_sync(kFullMask, tileSum, 1);
    rowSum = rowSum * alpha + tileSum;
    rowMax = newMax;
    if (half == 0)
      rowFactor[row] = alpha;
    simtSync(group);

    // O = O * alpha + P V: warp w owns rows 16w .. 16w + 15, lanes columns.
    const float *probs = scores + warp * 16 * kSS;
    for (int d = lane; d < D; d += 32) {
      float o[16];
#pragma unroll
      for (int r = 0; r < 16; ++r)
        o[r] = outTile[(warp * 16 + r) * ld + d] * rowFactor[warp * 16 + r];
      for (int j = 0; j < kBK; ++j) {
        float v = kvTile[j * ld + d];
#pragma unroll
        for (int r = 0; r < 16; ++r)
          o[r] = fmaf(probs[r * kSS + j], v, o[r]);
      }
#pragma unroll
      for (int r = 0; r < 16; ++r)
        outTile[(warp * 16 + r) * ld + d] = o[r];
    }
  }
  simtSync(group);
  if (half == 0)
    rowFactor[row] = rowSum > 0.f ? 1.f / rowSum : 0.f;
  simtSync(group);
  for (int i = tid; i < kRows * D; i += kAttentionSimtThreads) {
    int r = i / D, d = i - r * D, query = q0 + r;
    if (query < seq)
      storeFloat<T>(p.output, outBase + query * outStride + d, outTile[r * ld + d] * rowFactor[r]);
  }
}

/// The block's queries on CUDA cores: groups of 128 threads take 64-query
/// slices, side by side when their tiles fit (attentionSimtGroups), else one
/// after another.
template <typename T>
__device__ __forceinline__ void simtBlock(const AttentionParams &p, unsigned char *smem,
                                          const BlockTask &task) {
  const int groups = attentionSimtGroups(p.headDim);
  const int group = int(threadIdx.x) / kAttentionSimtThreads;
  const int tid = int(threadIdx.x) - group * kAttentionSimtThreads;
  if (group >= groups)
    return; // threads past the groups take no part in any barrier
  unsigned char *tiles = smem + unsigned(group) * attentionSimtGroupBytes(p.headDim);
  for (int slice = group; slice < kAttentionBlockQ / kAttentionSimtRows; slice += groups) {
    if (slice != group)
      simtSync(group); // the previous slice's output is written
    simtAttention<T>(p, tiles, task.q0 + slice * kAttentionSimtRows, task.head, task.batch, tid,
                     group);
  }
}

} // namespace attention_detail

/// Attention over whole sequences; see AttentionParams. grid = (ceil(seq /
/// kAttentionBlockQ), numHeads, batch), block = kAttentionThreads, dynamic
/// shared memory attentionSharedBytes(headDim, sizeof(T)). Requires sm_80+.
/// At most 128 registers per thread, so that 512 threads (two blocks of 256
/// threads and 90 KiB shared memory at headDim 64) share an SM.
/// kHeadClass: attentionHeadClass(p.headDim) (another head size takes the
/// CUDA-core path).
template <typename T, int kHeadClass>
__global__ void __launch_bounds__(kAttentionThreads, 512 / kAttentionThreads)
    infer_attention(AttentionParams p) {
  waitForPreviousKernel();
  extern __shared__ __align__(128) unsigned char attentionShared[];
  if (p.numKvHeads <= 0 || p.numHeads % p.numKvHeads != 0 || p.headDim <= 0)
    return;
  const attention_detail::BlockTask task = attention_detail::blockTask();
  // Sliding windows and ALiBi are on the CUDA-core path only.
  if (p.window > 0 || p.alibi != 0.f ||
      !attention_detail::runTensorCorePath<kHeadClass>(attention_detail::denseOperands<T>(p, task),
                                                       attentionShared, task.q0))
    attention_detail::simtBlock<T>(p, attentionShared, task);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_ATTENTION_CUH
