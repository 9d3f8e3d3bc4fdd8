//===- KvAttentionGeneral.cuh - paged attention, any type -----------------===//
//
// infer_kv_attention's general path (attend; KvAttention.cuh's comment
// describes it): f32, other head sizes, unaligned caches, more than 8 heads a
// block, and the FP8 cache (C = E4M3: scores times k_cache_scale, outputs
// times v_cache_scale). Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONGENERAL_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONGENERAL_CUH

#include "codegen/cuda/kernels/KvAttentionCommon.cuh"

namespace infer {
namespace kernels {
namespace kvimpl {

//===----------------------------------------------------------------------===//
// General path
//===----------------------------------------------------------------------===//

/// Shared memory of the general path's merge, sized for the largest pass.
struct alignas(16) Shared {
  float acc[kHeadsPerPass][kThreads * kChunk]; // [head][group * L * 8 + d]
  float max[kHeadsPerPass][kMaxGroups];        // then the group's weight
  float sum[kHeadsPerPass][kMaxGroups];
  int last; // split-KV: this block combines the unit's records
};
static_assert(kHeadsPerPass * kThreads * kChunk >= 2 * kKvDecodeHeadsPerBlock * kKvDecodeMaxSplits,
              "mergeSplits keeps the records' weights and sums in Shared::acc");

/// Where a pass's result goes: the output rows, or (split-KV) heads
/// recordHead .. of the block's partial record (KvDecodeGeometry.h).
struct PassResult {
  float *record; // null: write the output
  int recordHead;
};

/// One pass: query heads firstHead .. firstHead + heads - 1 (heads <= HP) of
/// token t, kv head g, keys first .. last, over a cache of C (T, or E4M3).
template <typename T, typename C, int HP>
__device__ __forceinline__ void attendPass(const KvAttentionParams &p, const Token &tok,
                                           long long t, long long g, long long firstHead,
                                           int heads, int first, int last, PassResult result,
                                           int lanesLog2, bool vec, Shared &sm) {
  constexpr int U = kUnroll;
  const int L = 1 << lanesLog2;
  const int tid = threadIdx.x;
  const int c = tid & (L - 1);        // chunk of the head dimension
  const int group = tid >> lanesLog2; // lane group
  const int groups = kThreads >> lanesLog2;
  const long long D = p.headDim;
  const int d0 = c * kChunk;
  const int count = D - d0 < kChunk ? (D - d0 > 0 ? int(D - d0) : 0) : kChunk;

  // The pass's query heads in shared memory (the merge area, free until the
  // keys are done), zero past the head size or the pass: row h holds the
  // L * 8 elements the lanes of a group read.
  const int width = L * kChunk;
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
  const C *cache = static_cast<const C *>(p.cache) + g * D + d0;
  const float kScale = cacheScale<C>(p.kCacheScale), vScale = cacheScale<C>(p.vCacheScale);
  const unsigned blockSize = unsigned(p.blockSize);
  const bool pow2 = (blockSize & (blockSize - 1)) == 0;
  const int blockShift = __ffs(int(blockSize)) - 1;
  const int pos = tok.pos;

  // Keys past last load row last again (cached) and are masked afterwards,
  // so the step's loads go out together without branches; the block numbers
  // of the next step are fetched while this one computes. Steps start at a
  // multiple of the stride at or before first.
  const int stride = groups * U;
  long long blocks[U];
  unsigned offsets[U];
  auto locate = [&](int base) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int key = base + u * groups + group;
      key = key <= last ? key : last;
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
  auto fetch = [&](Chunk<C> (&kc)[U], Chunk<C> (&vc)[U]) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const C *kp = cache + (blocks[u] * 2 * p.blockSize + offsets[u]) * rowElems;
      kc[u].load(kp, count, vec);
      vc[u].load(kp + halfElems, count, vec);
    }
  };
  Chunk<C> kc[U], vc[U];
  const int start = first / stride * stride;
  locate(start);
  fetch(kc, vc);
  if (start + stride <= last)
    locate(start + stride);
  for (int base = start; base <= last; base += stride) {
    // Step base + stride's rows load while this step computes; the block
    // numbers run one step further ahead.
    Chunk<C> kn[U], vn[U];
    if (base + stride <= last) {
      fetch(kn, vn);
      if (base + 2 * stride <= last)
        locate(base + 2 * stride);
    }
    bool valid[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int key = base + u * groups + group;
      valid[u] = key <= last && key >= first;
    }

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
    if (kScale != 1.f)
#pragma unroll
      for (int h = 0; h < HP; ++h)
#pragma unroll
        for (int u = 0; u < U; ++u)
          s[h][u] *= kScale;

#pragma unroll
    for (int h = 0; h < HP; ++h) {
      float top = m[h];
      const float alibiLog2 = p.alibi * alibiSlope(firstHead + h, p.numHeads) * kLog2e;
#pragma unroll
      for (int u = 0; u < U; ++u) {
        float score = capped ? capLog2 * tanhf(s[h][u] * scaleOverCap) : s[h][u] * scaleLog2;
        score += alibiLog2 * float(base + u * groups + group - pos);
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

  // One warp per head: weight of group s = exp2(m_s - M) / sum_s l_s exp2(m_s - M);
  // a record keeps M, the sum and the unnormalized output instead.
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
    if (result.record) {
      if (lane == 0) {
        result.record[result.recordHead + h] = ref;
        result.record[kKvDecodeHeadsPerBlock + result.recordHead + h] = total;
      }
      continue;
    }
    const float inverse = total > 0.f ? 1.f / total : 0.f;
    for (int s = lane; s < groups; s += 32)
      sm.max[h][s] *= inverse;
  }
  __syncthreads();

  T *out = static_cast<T *>(p.output) + t * p.numHeads * D + firstHead * D;
  float *recordOut = result.record ? result.record + 2 * kKvDecodeHeadsPerBlock +
                                         (long long)result.recordHead * D
                                   : nullptr;
  for (int i = tid; i < heads * int(D); i += kThreads) {
    const int h = i / int(D), d = i - h * int(D);
    float o = 0.f;
    for (int s = 0; s < groups; ++s)
      o = fmaf(sm.max[h][s], sm.acc[h][s * width + d], o);
    if (recordOut)
      recordOut[i] = o;
    else
      out[(long long)h * D + d] = fromFloat<T>(o * vScale);
  }
  __syncthreads(); // the next pass reuses the shared memory
}

/// Split-KV: counts the block's record in and, in the unit's last block,
/// combines the `used` records into heads firstHead .. + heads - 1 of token
/// t's output (times the V scale), as the fast path does.
template <typename T, typename C>
__device__ __forceinline__ void mergeSplits(const KvAttentionParams &p, long long t,
                                            long long firstHead, int heads, int used,
                                            long long unit, const float *records, Shared &sm) {
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  // The block's records happen before the count (bar.sync, then a gpu-scope
  // release by the counting thread); the last block acquires them all.
  __syncthreads();
  if (tid == 0) {
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
    const unsigned done = atomicAdd(p.counters + unit, 1u);
    asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
    sm.last = done == unsigned(used - 1);
    if (sm.last)
      p.counters[unit] = 0; // ready for the next launch
  }
  __syncthreads();
  if (!sm.last)
    return;
  const long long D = p.headDim, recordFloats = kvDecodeRecordFloats(D);
  float *weight = sm.acc[0], *sum = sm.acc[1]; // [head * kKvDecodeMaxSplits + split]
  for (int i = tid; i < heads * used; i += kThreads) {
    const int j = i / heads, h = i - j * heads;
    weight[h * kKvDecodeMaxSplits + j] = __ldcg(records + j * recordFloats + h);
    sum[h * kKvDecodeMaxSplits + j] = __ldcg(records + j * recordFloats + kKvDecodeHeadsPerBlock + h);
  }
  __syncthreads();
  for (int h = warp; h < heads; h += kWarps) {
    float *w = weight + h * kKvDecodeMaxSplits;
    float top = negativeInfinity();
    for (int j = lane; j < used; j += 32)
      top = fmaxf(top, w[j]);
    top = warpMax(top);
    float total = 0.f;
    for (int j = lane; j < used; j += 32) {
      const float e = exp2f(w[j] - top); // records' maxima are finite
      w[j] = e;
      total += sum[h * kKvDecodeMaxSplits + j] * e;
    }
    total = warpSum(total);
    const float inverse = total > 0.f ? 1.f / total : 0.f;
    for (int j = lane; j < used; j += 32)
      w[j] *= inverse;
  }
  __syncthreads();
  const float vScale = cacheScale<C>(p.vCacheScale);
  T *out = static_cast<T *>(p.output) + t * p.numHeads * D + firstHead * D;
  for (int i = tid; i < heads * int(D); i += kThreads) {
    const int h = i / int(D);
    const float *src = records + 2 * kKvDecodeHeadsPerBlock + i;
    float v = 0.f;
    for (int j = 0; j < used; ++j)
      v = fmaf(weight[h * kKvDecodeMaxSplits + j], __ldcg(src + j * recordFloats), v);
    out[i] = fromFloat<T>(v * vScale);
  }
}

/// Query heads firstHead .. firstHead + heads - 1 of kv head g, in passes of
/// up to kHeadsPerPass, over a cache of C: the block (t, blockIdx.y, split
/// blockIdx.z) of KvDecodeGeometry.h's grid. The visible keys (a sliding
/// window's last `window` positions, else 0 .. pos) are cut into slices of at
/// least kMinKeysPerSplitGeneral for the splits the grid has (with a
/// workspace and at most 8 heads a block, the record's); blocks past the
/// slices used return at once.
template <typename T, typename C = T>
__device__ __forceinline__ void attend(const KvAttentionParams &p, const Token &tok, long long t,
                                       long long g, long long firstHead, int heads, Shared &sm) {
  const long long chunks = (p.headDim + kChunk - 1) / kChunk;
  int lanesLog2 = 0;
  while ((1ll << lanesLog2) < chunks && lanesLog2 < 5)
    ++lanesLog2;
  const bool vec = p.headDim % kChunk == 0 && aligned16(p.cache);
  const int pos = tok.pos;
  const int first = p.window > 0 && pos + 1 > p.window ? pos + 1 - int(p.window) : 0;
  const bool canSplit = p.workspace != nullptr && p.counters != nullptr && gridDim.z > 1 &&
                        heads <= kKvDecodeHeadsPerBlock;
  const int splits = !canSplit ? 1 : gridDim.z < kKvDecodeMaxSplits ? int(gridDim.z)
                                                                     : kKvDecodeMaxSplits;
  const int keys = pos - first + 1;
  const int per = max((keys + splits - 1) / splits, kMinKeysPerSplitGeneral);
  const int used = (keys + per - 1) / per;
  const int z = int(blockIdx.z);
  if (z >= used)
    return;
  const int sliceFirst = first + z * per;
  const int sliceLast = sliceFirst + per - 1 < pos ? sliceFirst + per - 1 : pos;
  const long long unit = t * gridDim.y + blockIdx.y;
  float *records = used > 1 ? p.workspace + unit * gridDim.z * kvDecodeRecordFloats(p.headDim)
                            : nullptr;
  for (int done = 0; done < heads; done += kHeadsPerPass) {
    const int pass = heads - done < kHeadsPerPass ? heads - done : kHeadsPerPass;
    const PassResult result{records ? records + z * kvDecodeRecordFloats(p.headDim) : nullptr,
                            done};
    if (pass > 1)
      attendPass<T, C, kHeadsPerPass>(p, tok, t, g, firstHead + done, pass, sliceFirst, sliceLast,
                                      result, lanesLog2, vec, sm);
    else
      attendPass<T, C, 1>(p, tok, t, g, firstHead + done, pass, sliceFirst, sliceLast, result,
                          lanesLog2, vec, sm);
  }
  if (records)
    mergeSplits<T, C>(p, t, firstHead, heads, used, unit, records, sm);
}

} // namespace kvimpl
} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONGENERAL_CUH
