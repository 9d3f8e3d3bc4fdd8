//===- KvAttention.cuh - paged attention over the KV cache ----------------===//
//
// The step program's exec.kv_attention on the cuda backend, with the
// semantics of runtime/cpu/KvAttentionKernel.cpp (KernelParams.h,
// KvAttentionParams) in fp32 math:
//
//   infer_kv_write<T>      grid.x = tokens: token t copies its K and V rows
//                          into the cache at slot slotIds[t] (negative: skip).
//   infer_kv_attention<T>  grid = (tokens, numKvHeads): block (t, g) computes
//                          the G = numHeads / numKvHeads query heads of kv
//                          head g for token t over cache positions 0 .. pos.
//
// Flash decoding inside one block. The head dimension is cut into chunks of
// 8 elements; a key is served by L lanes (L = the power of two >= chunks, so
// 8 lanes for D = 64, 16 for 128, 32 for 256), each holding one chunk of the
// key and of the value (the pass's query heads sit in shared memory). The
// block's 128 / L lane groups take keys round robin, Unroll keys per group per
// step (their K and V loads go out together, one step ahead of the compute,
// and the block-table entries two steps ahead), and each keeps a running max,
// sum and output chunk per query head (online softmax, log2 domain, fp32).
// Scores are summed over a group's lanes by xor shuffles. Each K/V row is loaded
// once per block and used for all the query heads of the pass (up to
// kHeadsPerPass; more heads take several passes). At the end every lane
// group publishes its partial state in shared memory, one warp per head
// merges the maxima and sums into a weight per group, and the block sums the
// weighted partial outputs.
//
//   lane group s of the block:  keys s, s + 128/L, s + 2*128/L, ...
//   lane c of a group:          elements 8c .. 8c + 7 of q, K, V, output
//
// K/V chunks move as 16-byte accesses when the head size is a multiple of 8
// and the cache is 16-byte aligned; otherwise element by element.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVATTENTION_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVATTENTION_CUH

#include "codegen/cuda/kernels/Common.cuh"

namespace infer {
namespace kernels {
namespace kvimpl {

constexpr int kThreads = kKvAttentionThreads;
constexpr int kChunk = 8;          // elements of the head dimension per lane
constexpr int kHeadsPerPass = 8;   // query heads held in registers at once
constexpr int kMaxGroups = kThreads; // lane groups (L = 1)
constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kFullMask = 0xffffffffu;

static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");

__device__ __forceinline__ float negativeInfinity() { return -__int_as_float(0x7f800000); }

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
  __device__ __forceinline__ void zero() {
#pragma unroll
    for (int j = 0; j < kPacks; ++j)
#pragma unroll
      for (int k = 0; k < Pack<X>::kSize; ++k)
        pack[j].e[k] = fromFloat<X>(0.f);
  }
  /// The first `count` elements of p, zero past them. Vec: p is 16-byte
  /// aligned and count is kChunk or 0.
  template <bool Vec> __device__ __forceinline__ void load(const X *p, int count) {
    if (Vec) {
      if (count > 0) {
#pragma unroll
        for (int j = 0; j < kPacks; ++j)
          pack[j] = reinterpret_cast<const Pack<X> *>(p)[j];
      } else {
        zero();
      }
    } else {
#pragma unroll
      for (int i = 0; i < kChunk; ++i)
        pack[i / Pack<X>::kSize].e[i % Pack<X>::kSize] = i < count ? p[i] : fromFloat<X>(0.f);
    }
  }
};

/// Keys per lane group and step: as many bytes in flight for f32 as for
/// 16-bit types, with fewer registers.
template <typename T> struct Unroll {
  static constexpr int value = sizeof(T) == 4 ? 2 : 4;
};

/// Where block (t, g) stands: its sequence's block table and last position.
struct Token {
  const long long *table;
  long long pos;
};

/// Shared memory of the merge, sized for the largest pass.
struct alignas(16) Shared {
  float acc[kHeadsPerPass][kThreads * kChunk]; // [head][group * L * 8 + d]
  float max[kHeadsPerPass][kMaxGroups];        // then the group's weight
  float sum[kHeadsPerPass][kMaxGroups];
};

/// One pass: query heads headBase .. headBase + heads - 1 (heads <= HP) of
/// token t, kv head g.
template <typename T, int HP, bool Vec>
__device__ __forceinline__ void attendPass(const KvAttentionParams &p, const Token &tok,
                                           long long t, long long g, int headBase, int heads,
                                           int lanesLog2, Shared &sm) {
  constexpr int U = Unroll<T>::value;
  const int L = 1 << lanesLog2;
  const int tid = threadIdx.x;
  const int c = tid & (L - 1);            // chunk of the head dimension
  const int group = tid >> lanesLog2;     // lane group
  const int groups = kThreads >> lanesLog2;
  const long long D = p.headDim;
  const int d0 = c * kChunk;
  const int count = D - d0 < kChunk ? (D - d0 > 0 ? int(D - d0) : 0) : kChunk;

  // The pass's query heads in shared memory (the merge area, free until the
  // keys are done), zero past the head size or the pass: row h holds the
  // L * 8 elements the lanes of a group read.
  const int width = L * kChunk;
  const long long firstHead = g * (p.numHeads / p.numKvHeads) + headBase;
  {
    const T *qRow = static_cast<const T *>(p.q) + t * p.qRowStride + firstHead * D;
    for (int i = tid; i < HP * width; i += kThreads) {
      const int h = i / width, d = i - h * width;
      sm.acc[h][d] = h < heads && d < D ? toFloat(qRow[h * D + d]) : 0.f;
    }
  }
  __syncthreads();

  const bool capped = p.softcap > 0.f;
  const float scaleLog2 = p.scale * kLog2e;
  const float scaleOverCap = capped ? p.scale / p.softcap : 0.f;
  const float capLog2 = p.softcap * kLog2e;

  float m[HP], l[HP], acc[HP][kChunk];
#pragma unroll
  for (int h = 0; h < HP; ++h) {
    m[h] = negativeInfinity();
    l[h] = 0.f;
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      acc[h][e] = 0.f;
  }

  const long long rowElems = p.numKvHeads * D;
  const long long halfElems = p.blockSize * rowElems;
  const T *cache = static_cast<const T *>(p.cache) + g * D + d0;
  const unsigned blockSize = unsigned(p.blockSize);
  const bool pow2 = (blockSize & (blockSize - 1)) == 0;
  const int blockShift = __ffs(int(blockSize)) - 1;
  const int pos = int(tok.pos);

  // Keys past pos load row pos again (cached) and are masked afterwards, so
  // the step's loads go out together without branches; the block numbers of
  // the next step are fetched while this one computes.
  const int stride = groups * U;
  long long blocks[U];
  unsigned offsets[U];
  auto locate = [&](int base) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int key = base + u * groups + group;
      key = key <= pos ? key : pos;
      unsigned blockIndex;
      if (pow2) {
        blockIndex = unsigned(key) >> blockShift;
        offsets[u] = unsigned(key) & (blockSize - 1);
      } else {
        blockIndex = unsigned(key) / blockSize;
        offsets[u] = unsigned(key) - blockIndex * blockSize;
      }
      blocks[u] = __ldg(tok.table + blockIndex);
    }
  };
  auto fetch = [&](Chunk<T> (&kc)[U], Chunk<T> (&vc)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const T *kp = cache + (blocks[u] * 2 * p.blockSize + offsets[u]) * rowElems;
      kc[u].template load<Vec>(kp, count);
      vc[u].template load<Vec>(kp + halfElems, count);
    }
  };
  Chunk<T> kc[U], vc[U];
  locate(0);
  fetch(kc, vc);
  if (stride <= pos)
    locate(stride);
  for (int base = 0; base <= pos; base += stride) {
    // Step base + stride's rows load while this step computes; the block
    // numbers run one step further ahead.
    Chunk<T> kn[U], vn[U];
    if (base + stride <= pos) {
      fetch(kn, vn);
      if (base + 2 * stride <= pos)
        locate(base + 2 * stride);
    }
    bool valid[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      valid[u] = base + u * groups + group <= pos;

    // Partial dots of this lane's chunk, summed over the group's L lanes.
    float s[HP][U];
#pragma unroll
    for (int h = 0; h < HP; ++h) {
      float q[kChunk];
      const float4 *qs = reinterpret_cast<const float4 *>(&sm.acc[h][d0]);
#pragma unroll
      for (int j = 0; j < kChunk / 4; ++j) {
        const float4 v = qs[j];
        q[4 * j] = v.x;
        q[4 * j + 1] = v.y;
        q[4 * j + 2] = v.z;
        q[4 * j + 3] = v.w;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float dot = 0.f;
#pragma unroll
        for (int e = 0; e < kChunk; ++e)
          dot = fmaf(q[e], kc[u].at(e), dot);
        s[h][u] = dot;
      }
    }
    for (int offset = 1; offset < L; offset <<= 1)
#pragma unroll
      for (int h = 0; h < HP; ++h)
#pragma unroll
        for (int u = 0; u < U; ++u)
          s[h][u] += __shfl_xor_sync(kFullMask, s[h][u], offset);

#pragma unroll
    for (int h = 0; h < HP; ++h) {
      float top = m[h];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float score = capped ? capLog2 * tanhf(s[h][u] * scaleOverCap) : s[h][u] * scaleLog2;
        s[h][u] = valid[u] ? score : negativeInfinity();
        top = fmaxf(top, s[h][u]);
      }
      // top is -inf only while the group has seen no key: keep all zero.
      const float ref = top == negativeInfinity() ? 0.f : top;
      const float alpha = exp2f(m[h] - ref);
      float weight[U], total = 0.f;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        weight[u] = exp2f(s[h][u] - ref);
        total += weight[u];
      }
      l[h] = l[h] * alpha + total;
      m[h] = top;
#pragma unroll
      for (int e = 0; e < kChunk; ++e) {
        float a = acc[h][e] * alpha;
#pragma unroll
        for (int u = 0; u < U; ++u)
          a = fmaf(weight[u], vc[u].at(e), a);
        acc[h][e] = a;
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      kc[u] = kn[u];
      vc[u] = vn[u];
    }
  }

  __syncthreads(); // every group is done with the queries
  // Publish the partial state: the group's lanes agree on m and l.
#pragma unroll
  for (int h = 0; h < HP; ++h) {
#pragma unroll
    for (int e = 0; e < kChunk; ++e)
      sm.acc[h][tid * kChunk + e] = acc[h][e];
    if (c == 0) {
      sm.max[h][group] = m[h];
      sm.sum[h][group] = l[h];
    }
  }
  __syncthreads();

  // One warp per head: weight of group s = exp2(m_s - M) / sum_s l_s exp2(m_s - M).
  const int lane = tid & 31, warp = tid >> 5;
  for (int h = warp; h < heads; h += kThreads / 32) {
    float top = negativeInfinity();
    for (int s = lane; s < groups; s += 32)
      top = fmaxf(top, sm.max[h][s]);
    top = warpMax(top);
    const float ref = top == negativeInfinity() ? 0.f : top;
    float total = 0.f;
    for (int s = lane; s < groups; s += 32) {
      float w = exp2f(sm.max[h][s] - ref);
      total += sm.sum[h][s] * w;
      sm.max[h][s] = w;
    }
    total = warpSum(total);
    const float inverse = total > 0.f ? 1.f / total : 0.f;
    for (int s = lane; s < groups; s += 32)
      sm.max[h][s] *= inverse;
  }
  __syncthreads();

  T *out = static_cast<T *>(p.output) + t * p.numHeads * D + firstHead * D;
  for (int i = tid; i < heads * int(D); i += kThreads) {
    const int h = i / int(D), d = i - h * int(D);
    float o = 0.f;
    for (int s = 0; s < groups; ++s)
      o = fmaf(sm.max[h][s], sm.acc[h][s * width + d], o);
    out[(long long)h * D + d] = fromFloat<T>(o);
  }
  __syncthreads(); // the next pass reuses the shared memory
}

template <typename T, bool Vec>
__device__ __forceinline__ void attend(const KvAttentionParams &p, const Token &tok, long long t,
                                       long long g, int lanesLog2, Shared &sm) {
  const int group = int(p.numHeads / p.numKvHeads);
  for (int headBase = 0; headBase < group; headBase += kHeadsPerPass) {
    const int heads = group - headBase < kHeadsPerPass ? group - headBase : kHeadsPerPass;
    if (heads > 4)
      attendPass<T, 8, Vec>(p, tok, t, g, headBase, heads, lanesLog2, sm);
    else if (heads > 2)
      attendPass<T, 4, Vec>(p, tok, t, g, headBase, heads, lanesLog2, sm);
    else if (heads > 1)
      attendPass<T, 2, Vec>(p, tok, t, g, headBase, heads, lanesLog2, sm);
    else
      attendPass<T, 1, Vec>(p, tok, t, g, headBase, heads, lanesLog2, sm);
  }
}

/// Copies n elements of T; 16-byte words when both ends are aligned.
template <typename T> __device__ __forceinline__ void copyRow(const T *src, T *dst, long long n) {
  long long start = 0;
  if (aligned16(src) && aligned16(dst)) {
    constexpr int kPer = Pack<T>::kSize;
    const long long packs = n / kPer;
    const Pack<T> *s = reinterpret_cast<const Pack<T> *>(src);
    Pack<T> *d = reinterpret_cast<Pack<T> *>(dst);
    for (long long i = threadIdx.x; i < packs; i += blockDim.x)
      d[i] = s[i];
    start = packs * kPer;
  }
  for (long long i = start + threadIdx.x; i < n; i += blockDim.x)
    dst[i] = src[i];
}

} // namespace kvimpl

/// Token blockIdx.x writes its K and V rows at slot slotIds[t] of the cache.
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads)
    infer_kv_write(KvAttentionParams p) {
  const long long t = blockIdx.x;
  if (t >= p.tokens)
    return;
  const long long slot = p.slotIds[t];
  if (slot < 0)
    return; // padding
  const long long block = slot / p.blockSize, offset = slot - block * p.blockSize;
  const long long rowElems = p.numKvHeads * p.headDim;
  T *kDst = static_cast<T *>(p.cache) + ((block * 2) * p.blockSize + offset) * rowElems;
  T *vDst = kDst + p.blockSize * rowElems;
  kvimpl::copyRow(static_cast<const T *>(p.k) + t * p.kRowStride, kDst, rowElems);
  kvimpl::copyRow(static_cast<const T *>(p.v) + t * p.vRowStride, vDst, rowElems);
}

/// Block (t, g): the query heads of kv head g for token t (see the top).
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads)
    infer_kv_attention(KvAttentionParams p) {
  __shared__ kvimpl::Shared sm;
  const long long t = blockIdx.x, g = blockIdx.y;
  if (t >= p.tokens || g >= p.numKvHeads || p.numSeqs <= 0)
    return;
  // The sequence of token t: the last i with seqStarts[i] <= t.
  if (t < p.seqStarts[0] || t >= p.seqStarts[p.numSeqs])
    return; // a padding row, in no sequence
  long long lo = 0, hi = p.numSeqs - 1;
  while (lo < hi) {
    const long long mid = (lo + hi + 1) >> 1;
    if (p.seqStarts[mid] <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  const long long begin = p.seqStarts[lo], n = p.seqStarts[lo + 1] - begin;
  kvimpl::Token tok;
  tok.table = p.blockTables + lo * p.maxBlocksPerSeq;
  tok.pos = p.contextLens[lo] - n + (t - begin);
  const long long last = p.maxBlocksPerSeq * p.blockSize - 1;
  if (tok.pos > last)
    tok.pos = last; // invalid metadata (the cpu backend rejects it): stay in the table
  if (tok.pos < 0)
    return;

  const long long chunks = (p.headDim + kvimpl::kChunk - 1) / kvimpl::kChunk;
  int lanesLog2 = 0;
  while ((1ll << lanesLog2) < chunks && lanesLog2 < 5)
    ++lanesLog2;
  const bool vec = p.headDim % kvimpl::kChunk == 0 && kvimpl::aligned16(p.cache);
  if (vec)
    kvimpl::attend<T, true>(p, tok, t, g, lanesLog2, sm);
  else
    kvimpl::attend<T, false>(p, tok, t, g, lanesLog2, sm);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVATTENTION_CUH
