//===- KvAttentionCommon.cuh - paged attention's shared pieces ------------===//
//
// What both paths of infer_kv_attention (KvAttention.cuh, whose comment
// describes them) share: the block shape, the exp2 / alignment helpers, the
// 16-byte packs, and the lookup of a token's sequence, position and block
// table. Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONCOMMON_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONCOMMON_CUH

#include "codegen/cuda/kernels/Common.cuh"
#include "runtime/cuda/abi/KvDecodeGeometry.h"

namespace infer {
namespace kernels {
namespace kvimpl {

constexpr int kThreads = kKvAttentionThreads;
constexpr int kWarps = kThreads / 32;
constexpr int kChunk = 8;            // elements of the head dimension per lane
constexpr int kHeadsPerPass = 4;     // general path: query heads in registers at once
constexpr int kMaxGroups = kThreads; // lane groups (L = 1)
constexpr int kUnroll = 2;           // general path: keys per lane group and step
constexpr int kMinBlocks = 4;        // resident blocks per SM: <= 128 registers
constexpr int kFastHeads = kKvDecodeHeadsPerBlock;
constexpr int kFastMaxDim = 128;
constexpr int kMinStepsPerSplit = 2 * kWarps; // fast path: fewer splits for short contexts
// 64-wide heads (32-key steps) in steps of at most kGemvMaxRows tokens (the
// batch-1 .. 8 decode steps) whose context needs more than one split of
// kMinStepsPerSplit steps anyway: one step per warp, so the splits' chains of
// dependent loads are short. Measured on the H200 (bench/results/tinyllama-
// 1.1b-serving.md, session 15): kv_attention_test's decode timing at 1 x
// 512 .. 4,000 positions 14.7-14.9 -> 12.1-13.8 us; TinyLlama batch 1 with
// 400-token prompts TPOT 1.070 -> 0.985 ms, 1,800-token 1.103 -> 1.059 ms.
// Applied to every context, 128-token prompts lost 2% (0.964 -> 0.984 ms):
// at 129 .. 256 positions two short splits and their merge cost more than
// one split of two steps a warp.
constexpr int kMinStepsPerSplitSmallStep = kWarps;
// The same for 128-wide heads (16-key steps), and the most splits a unit
// uses. Measured on the H200 at batch 1 (bench/results/tinyllama-1.1b-
// serving.md, session 11): 4 steps and at most 16 splits gain ~1.3 us a layer
// at 200-256 positions (0.2-0.8 us at 512-1,000) but lose 2.4 us at <= 128
// positions, where one split (no merge) beats any split; kept as is until a
// rule is measured end to end.
constexpr int kMinStepsPerSplitWide = 2 * kWarps;
constexpr int kMaxUsedSplitsWide = kKvDecodeMaxSplits;
// The general path's shortest slice of keys per split. Its blocks take 8 to
// 256 keys a step (4 to 128 lane groups, 2 keys each), no tensor cores, so a
// slice pays for its merge sooner than the fast path's; gemma2-2b's 256-wide
// heads at batch 1 had 4 blocks a layer without splits (74 ms a token at
// 6,144 positions, bench/results/families/2026-12-06-real-shape-h100.md).
constexpr int kMinKeysPerSplitGeneral = 64;
constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kFullMask = 0xffffffffu;

static_assert(kThreads == 128, "infer_kv_attention's and infer_kv_decode's blocks are 4 warps");
static_assert(kFastMaxDim <= kThreads, "infer_kv_decode stages a head with one element per thread");
static_assert(kFastHeads == 8, "the fast path holds 8 heads in one mma n-tile");

/// INFER_KERNEL_STAMP (Common.cuh) for infer_kv_decode's blocks of token 0,
/// split 0: slot blockIdx.y * 16 + point (kv_attention_test --stamps names
/// the points).
#define INFER_DECODE_STAMP(point) INFER_DECODE_STAMP_AT(blockIdx.x, blockIdx.y, blockIdx.z, point)
/// The same for the block of (token, y, z); fastAttend passes its grid's
/// (FastGrid).
#define INFER_DECODE_STAMP_AT(token, y, z, point)                                                 \
  do {                                                                                            \
    if ((token) == 0 && (z) == 0 && (y) < 8)                                                      \
      INFER_KERNEL_STAMP((y) * 16 + (point));                                                     \
  } while (0)

__device__ __forceinline__ float negativeInfinity() { return -__int_as_float(0x7f800000); }

/// 2^x; 0 for -inf.
__device__ __forceinline__ float exp2Approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ bool aligned16(const void *p) {
  return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

/// 16 bytes of X (element access keeps the type punning legal).
template <typename X> struct alignas(16) Pack {
  static constexpr int kSize = int(16 / sizeof(X));
  X e[kSize];
};

/// kChunk elements of X as raw storage: 16 or 32 bytes.
template <typename X> struct Chunk {
  static constexpr int kPacks = kChunk / Pack<X>::kSize;
  Pack<X> pack[kPacks];
  __device__ __forceinline__ float at(int i) const {
    return toFloat(pack[i / Pack<X>::kSize].e[i % Pack<X>::kSize]);
  }
  /// The first `count` elements of p, zero past them. vec: p is 16-byte
  /// aligned and count is kChunk or 0.
  __device__ __forceinline__ void load(const X *p, int count, bool vec) {
    if (vec && count > 0) {
#pragma unroll
      for (int j = 0; j < kPacks; ++j)
        pack[j] = reinterpret_cast<const Pack<X> *>(p)[j];
    } else {
#pragma unroll
      for (int i = 0; i < kChunk; ++i)
        pack[i / Pack<X>::kSize].e[i % Pack<X>::kSize] = i < count ? p[i] : fromFloat<X>(0.f);
    }
  }
};

/// kChunk E4M3 elements of an FP8 KV cache: 8 bytes, one 8-byte load (vec:
/// p is 8-byte aligned, as every chunk of a cache whose head size is a
/// multiple of 8 is).
template <> struct Chunk<E4M3> {
  uint2 raw;
  __device__ __forceinline__ float at(int i) const {
    return e4m3ToFloat(((i < 4 ? raw.x : raw.y) >> (8 * (i & 3))) & 0xffu);
  }
  __device__ __forceinline__ void load(const E4M3 *p, int count, bool vec) {
    if (vec && count > 0) {
      raw = *reinterpret_cast<const uint2 *>(p);
      return;
    }
    raw = make_uint2(0u, 0u);
#pragma unroll
    for (int i = 0; i < kChunk; ++i)
      if (i < count)
        (i < 4 ? raw.x : raw.y) |= unsigned(p[i].bits) << (8 * (i & 3));
  }
};

/// The scale of a cache element type's values: an FP8 cache holds x / scale.
template <typename C> __device__ __forceinline__ float cacheScale(float scale) { return 1.f; }
template <> __device__ __forceinline__ float cacheScale<E4M3>(float scale) { return scale; }

/// Where token t stands: its sequence's block table and last visible position.
struct Token {
  const long long *table;
  int pos;
};

/// Finds token t's sequence; false for a row in no sequence or with nothing
/// visible.
__device__ __forceinline__ bool findToken(const KvAttentionParams &p, long long t, Token &tok) {
  long long seq = -1, begin = t, n = 1, context = 0;
  if (t < p.numSeqs) {
    // Decode batches: sequence t holds token t alone (one round trip: its
    // context length loads with the check).
    const long long a = p.seqStarts[t], b = p.seqStarts[t + 1];
    context = p.contextLens[t];
    if (a == t && b == t + 1)
      seq = t;
  }
  if (seq < 0) {
    // The last i with seqStarts[i] <= t.
    if (t < p.seqStarts[0] || t >= p.seqStarts[p.numSeqs])
      return false; // a padding row, in no sequence
    long long lo = 0, hi = p.numSeqs - 1;
    while (lo < hi) {
      const long long mid = (lo + hi + 1) >> 1;
      if (p.seqStarts[mid] <= t)
        lo = mid;
      else
        hi = mid - 1;
    }
    seq = lo;
    begin = p.seqStarts[lo];
    n = p.seqStarts[lo + 1] - begin;
    context = p.contextLens[lo];
  }
  long long pos = context - n + (t - begin);
  const long long last = p.maxBlocksPerSeq * p.blockSize - 1;
  if (pos > last)
    pos = last; // invalid metadata (the cpu backend rejects it): stay in the table
  if (pos < 0)
    return false;
  tok.table = p.blockTables + seq * p.maxBlocksPerSeq;
  tok.pos = int(pos);
  return true;
}

} // namespace kvimpl
} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONCOMMON_CUH
