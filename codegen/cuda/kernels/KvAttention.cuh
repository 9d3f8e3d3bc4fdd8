//===- KvAttention.cuh - paged attention over the KV cache ----------------===//
//
// The step program's exec.kv_attention on the cuda backend, with the
// semantics of runtime/cpu/KvAttentionKernel.cpp (KernelParams.h,
// KvAttentionParams) in fp32 math:
//
//   infer_kv_write<T>      grid.x = tokens: token t copies its K and V rows
//                          into the cache at slot slotIds[t] (negative: skip).
//   infer_kv_attention<T>  grid = (tokens, kv heads x head groups, splits),
//                          KvDecodeGeometry.h: block (t, y, z) computes up to
//                          8 query heads of one kv head for token t over
//                          slice z of the cache positions 0 .. pos.
//   infer_kv_decode<T, C>  a decode step's rotary (RotaryParams), KV write and
//                          infer_kv_attention's fast path in one kernel, the
//                          cached keys loaded before it waits for the qkv
//                          GEMV (DecodeStep in KvAttentionFast.cuh;
//                          docs/kv-cache.md).
//
// Fast path (16-bit T, headDim % 8 == 0 and <= 128, 16-byte aligned cache):
// tensor cores on each warp's keys, split-KV across blocks. The block's
// slice of positions is cut into steps of 16 NT keys (NT = 2 for headDim
// <= 64, else 1), which its 4 warps take round robin. A step is NT tiles of
// 16 keys; per tile (mma.sync m16n8k16, fp32 accumulators; r = lane / 4,
// c = lane % 4, DT = 64 or 128 the padded head size, 8 query heads):
//
//   S^T [16 keys x 8 heads]  = K [16 keys x DT] . Q^T
//   O^T [DT x 8 heads]      += V^T [DT x 16 keys] . P^T   (P = exp2 weights)
//
// The reduction axes may be permuted freely, so K and V come straight from
// 16-byte global loads into registers: for S^T, lane (r, c) holds dims
// c*DT/4 .. +DT/4 of K rows r and 8 + r (and of Q row r, kept in shared
// memory); for O^T, dims r*DT/8 .. +DT/8 of V rows 2c, 2c+1, 2c+8, 2c+9,
// interleaved into pairs of keys by byte permutes. A lane's S^T accumulators
// are keys r, 8 + r x heads 2c, 2c + 1, the same heads as its O^T
// accumulators (dims r*DT/8 ..), so the online softmax (exp2 domain, one
// max per head over the 8 lanes of one c) rescales them in place; P^T's
// operand is the two 8 x 8 (key, head) blocks of S^T rounded to T and
// transposed by movmatrix. The block-table rows of a step are looked up one
// step ahead (lane j: key j) and shuffled to the lanes that load them. At
// the end the warps merge through shared memory; with one split the block
// writes the output, otherwise it writes a (max, sum, output) record to the
// workspace and the last block of the unit (atomic counter) combines them.
//
// General path (everything else: f32, other head sizes, an unaligned cache,
// more than 8 heads per block, windows, ALiBi, an FP8 cache): flash decoding
// inside the block, split-KV across blocks as the fast path (slices of at
// least kMinKeysPerSplitGeneral keys; one block per (token, y) with more than
// 8 heads a block or no workspace). The head dimension is cut into chunks of 8 elements; a
// key is served by L lanes (L = the power of two >= chunks, so 8 lanes for
// D = 64, 16 for 128, 32 for 256), each holding one chunk of the key and of
// the value (the pass's query heads sit in shared memory). The block's 128 /
// L lane groups take keys round robin, two keys per group and step (loads
// one step ahead of the compute), and each keeps a running max, sum and
// output chunk per query head (up to 4 heads per pass). Scores are summed
// over a group's lanes by xor shuffles; lane groups merge in shared memory.
//
//   lane group s of the block:  keys s, s + 128/L, s + 2*128/L, ...
//   lane c of a group:          elements 8c .. 8c + 7 of q, K, V, output
//
// The kernels are here; the fast path (and infer_kv_decode's DecodeStep) is
// in KvAttentionFast.cuh, the general path in KvAttentionGeneral.cuh, what
// both use in KvAttentionCommon.cuh.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVATTENTION_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVATTENTION_CUH

#include "codegen/cuda/kernels/KvAttentionFast.cuh"
#include "codegen/cuda/kernels/KvAttentionGeneral.cuh"
#include "codegen/cuda/kernels/RowKernels.cuh"

namespace infer {
namespace kernels {
namespace kvimpl {

union SharedAll {
  Shared general;
  FastShared fast;
};

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

namespace kvimpl {

/// n elements of T as E4M3 of x / scale (quant::roundThroughE4M3's bytes).
template <typename T>
__device__ __forceinline__ void encodeRow(const T *src, E4M3 *dst, long long n, float scale) {
  for (long long i = threadIdx.x; i < n; i += blockDim.x)
    dst[i] = fromFloat<E4M3>(__fdiv_rn(toFloat(src[i]), scale));
}

/// Token t's K and V rows to slot slotIds[t] of a cache of C (T, or E4M3:
/// divided by k_cache_scale / v_cache_scale and rounded), none for padding
/// (slot < 0), with the block's threads.
template <typename T, typename C = T>
__device__ __forceinline__ void writeTokenKv(const KvAttentionParams &p, long long t) {
  const long long slot = p.slotIds[t];
  if (slot < 0)
    return; // padding
  const long long block = slot / p.blockSize, offset = slot - block * p.blockSize;
  const long long rowElems = p.numKvHeads * p.headDim;
  C *kDst = static_cast<C *>(p.cache) + ((block * 2) * p.blockSize + offset) * rowElems;
  C *vDst = kDst + p.blockSize * rowElems;
  const T *k = static_cast<const T *>(p.k) + t * p.kRowStride;
  const T *v = static_cast<const T *>(p.v) + t * p.vRowStride;
  if constexpr (sizeof(C) == 1) {
    encodeRow(k, kDst, rowElems, p.kCacheScale);
    encodeRow(v, vDst, rowElems, p.vCacheScale);
  } else {
    copyRow(k, kDst, rowElems);
    copyRow(v, vDst, rowElems);
  }
}

} // namespace kvimpl

/// Token blockIdx.x writes its K and V rows at slot slotIds[t] of the cache.
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads)
    infer_kv_write(KvAttentionParams p) {
  waitForPreviousKernel();
  const long long t = blockIdx.x;
  if (t < p.tokens)
    kvimpl::writeTokenKv<T>(p, t);
}

/// infer_kv_write for an FP8 cache (--kv-cache-dtype fp8): E4M3 bytes of K /
/// k_cache_scale and V / v_cache_scale.
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads)
    infer_kv_write_fp8(KvAttentionParams p) {
  waitForPreviousKernel();
  const long long t = blockIdx.x;
  if (t < p.tokens)
    kvimpl::writeTokenKv<T, E4M3>(p, t);
}

/// The rotary launch before a KV_ATTENTION and its KV write in one kernel
/// (CudaLaunch.fused_prologue): token blockIdx.x's rotary row as
/// infer_rotary writes it (the whole output row, so every later reader finds
/// it as before), then, once the block's writes are visible to the block, its
/// K and V rows from that output into the cache as infer_kv_write. One launch
/// per layer fewer in every step.
template <typename T, typename C> __global__ void __launch_bounds__(kKvAttentionThreads)
    infer_rotary_kv_write(RotaryKvWriteParams p) {
  waitForPreviousKernel();
  __shared__ float2 table[rowimpl::kRotaryTable];
  const long long t = blockIdx.x;
  if (t >= p.rotary.tokens || t >= p.kv.tokens)
    return;
  rowimpl::rotaryToken<T, C>(p.rotary, t, table);
  __syncthreads();
  kvimpl::writeTokenKv<T>(p.kv, t);
}

namespace kvimpl {

/// infer_kv_attention's body (also wrapped by the tests with other launch
/// bounds).
/// Block (t, y)'s kv head g and query heads headBase .. + heads - 1 of its
/// group; heads <= 0 when it has none.
struct HeadGroup {
  long long g, headBase, group; // group: query heads per kv head
  int heads;
};
__device__ __forceinline__ HeadGroup headGroupOf(const KvAttentionParams &p, long long t,
                                                 unsigned y, unsigned gridY) {
  HeadGroup out{0, 0, 0, 0};
  if (t >= p.tokens || p.numSeqs <= 0 || p.numKvHeads <= 0)
    return out;
  // grid.y = numKvHeads x head groups (numKvHeads alone: one group).
  const long long groupsPerKv = gridY >= p.numKvHeads ? gridY / p.numKvHeads : 1;
  out.g = y / groupsPerKv;
  const long long part = y - out.g * groupsPerKv;
  if (out.g >= p.numKvHeads)
    return out;
  out.group = p.numHeads / p.numKvHeads;
  const long long perBlock = (out.group + groupsPerKv - 1) / groupsPerKv;
  out.headBase = part * perBlock;
  out.heads = int(out.group - out.headBase < perBlock ? out.group - out.headBase : perBlock);
  return out;
}
__device__ __forceinline__ HeadGroup headGroupOf(const KvAttentionParams &p) {
  return headGroupOf(p, blockIdx.x, blockIdx.y, gridDim.y);
}

template <typename T> __device__ __forceinline__ void kvAttention(const KvAttentionParams &p) {
  __shared__ SharedAll sm;
  const long long t = blockIdx.x;
  const HeadGroup hg = headGroupOf(p);
  if (hg.heads <= 0)
    return;
  const long long g = hg.g, headBase = hg.headBase;
  const int heads = hg.heads;

  if constexpr (sizeof(T) == 2) {
    const long long D = p.headDim;
    if (D % 8 == 0 && D > 0 && D <= kFastMaxDim && heads <= kFastHeads && aligned16(p.cache) &&
        p.window == 0 && p.alibi == 0.f) { // sliding windows and ALiBi take the general path
      if (D <= 64)
        fastAttend<T, 64>(p, t, g, int(headBase), heads, sm.fast);
      else
        fastAttend<T, 128>(p, t, g, int(headBase), heads, sm.fast);
      return;
    }
  }
  Token tok;
  if (!findToken(p, t, tok))
    return;
  attend<T>(p, tok, t, g, g * hg.group + headBase, heads, sm.general);
}

/// infer_kv_decode's body: it waits for the previous kernel inside
/// fastAttend, once the cached keys' loads are in flight (DecodeStep). Heads
/// of up to kMaxDim (64 or 128) elements, more than 64 for kMaxDim 128; only
/// the 64-wide kernel copies a second key step before the wait, so only it
/// has the copy area (41 against 25 KB of shared memory: the 128-wide
/// kernel's blocks fit beside more of the GEMV's under programmatic launch).
template <typename T, typename C, int kMaxDim>
__device__ __forceinline__ void decodeLoadingCacheBeforeWaitForPreviousKernel(
    const RotaryKvWriteParams &p) {
  static_assert(kMaxDim == 64 || kMaxDim == 128, "64- or 128-wide heads");
  __shared__ FastDecodeShared<kMaxDim> sm;
  INFER_DECODE_STAMP(0);
  const DecodeStep<C> decode{{}, &p.rotary};
  const HeadGroup hg = headGroupOf(p.kv);
  const long long D = p.kv.headDim;
  if (hg.heads <= 0 || D % 8 != 0 || D > kMaxDim || (kMaxDim == 128 && D <= 64) ||
      hg.heads > kFastHeads || !aligned16(p.kv.cache)) {
    // Codegen and the runtime run this kernel only where all of these hold.
    decode.waitForPreviousKernel();
    return;
  }
  fastAttend<T, kMaxDim>(p.kv, blockIdx.x, hg.g, int(hg.headBase), hg.heads, sm, decode);
}

} // namespace kvimpl

/// Block (t, y, z): a head group of one kv head for token t, split z (see
/// the top and KvDecodeGeometry.h).
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads, kvimpl::kMinBlocks)
    infer_kv_attention(KvAttentionParams p) {
  waitForPreviousKernel();
  kvimpl::kvAttention<T>(p);
}

namespace kvimpl {
/// infer_kv_attention_fp8's body: the general path over E4M3 keys and values.
template <typename T> __device__ __forceinline__ void kvAttentionFp8(const KvAttentionParams &p) {
  __shared__ Shared sm;
  const HeadGroup hg = headGroupOf(p);
  if (hg.heads <= 0)
    return;
  Token tok;
  if (!findToken(p, blockIdx.x, tok))
    return;
  attend<T, E4M3>(p, tok, blockIdx.x, hg.g, hg.g * hg.group + hg.headBase, hg.heads, sm);
}
} // namespace kvimpl

/// infer_kv_attention over an FP8 cache (--kv-cache-dtype fp8): the general
/// path, prefill and decode tokens alike.
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads, kvimpl::kMinBlocks)
    infer_kv_attention_fp8(KvAttentionParams p) {
  waitForPreviousKernel();
  kvimpl::kvAttentionFp8<T>(p);
}

/// The forward program's exec.attention with FP8 cache scales (CudaLaunch.prologue):
/// blocks (x, b) round rows (b, x + i gridDim.x) of K and V in place through
/// E4M3 at k_cache_scale / v_cache_scale, so infer_attention reads them as
/// the step program's cache holds them (codegen checks that nothing after
/// the attention reads K and V).
template <typename T> __global__ void __launch_bounds__(kKvAttentionThreads)
    infer_attention_round_kv(AttentionParams p) {
  waitForPreviousKernel();
  const long long b = blockIdx.y, n = p.numKvHeads * p.headDim;
  if (b >= p.batch || !(p.kCacheScale > 0.f) || !(p.vCacheScale > 0.f))
    return;
  for (long long s = blockIdx.x; s < p.kvSeq; s += gridDim.x) {
    T *k = static_cast<T *>(const_cast<void *>(p.k)) + (b * p.kvSeq + s) * p.kRowStride;
    T *v = static_cast<T *>(const_cast<void *>(p.v)) + (b * p.kvSeq + s) * p.vRowStride;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
      k[i] = fromFloat<T>(roundThroughE4M3(toFloat(k[i]), p.kCacheScale));
      v[i] = fromFloat<T>(roundThroughE4M3(toFloat(v[i]), p.vCacheScale));
    }
  }
}

/// A decode step's rotary, KV write and attention in one kernel
/// (CudaLaunch.decode, DecodeStep in KvAttentionFast.cuh):
/// infer_kv_attention's grid and workspace; 16-bit T, headDim % 8 == 0 and
/// <= 128, a 16-byte aligned cache; every sequence of the step has one new
/// token. kMaxDim: 64 for heads of up to 64 elements, 128 for 65 .. 128
/// (kvDecodeMaxDim, KvDecodeGeometry.h).
///
/// Registers: 64-wide heads are held to 112 a thread (instead of launch
/// bounds' 128; 48 / 52 bytes of spills), meant to fit more of its blocks
/// beside the qkv GEMV's. Why it helps is not settled: the grid starts no
/// earlier (kernel traces), the kernel ends sooner (14.34 -> 14.05 us in the
/// step, 12.13 -> 10.85 in --layer-timings at 128 positions). H200, session
/// 19: TinyLlama batch 1, 128 in / 128 out, step span 905.1 -> 898.0 us
/// (bench/kernel-trace.sh), 1,075.9 / 1,079.2 -> 1,082.6 / 1,084.6 tok/s
/// (two runs, alternating); kv_attention_test --layer-timings said more
/// (38.95 -> 37.50-37.75 us a layer at 200 positions; 120 and 104
/// registers: 38.0). 128-wide heads stay at 128: capped, a Llama-3-8B layer
/// was slower (126.97 -> 127.6 us at 120, 128.7 at 112).
template <typename T, typename C, int kMaxDim>
__global__ void __maxnreg__(kMaxDim == 64 ? 112 : 128)
    infer_kv_decode(RotaryKvWriteParams p) {
  kvimpl::decodeLoadingCacheBeforeWaitForPreviousKernel<T, C, kMaxDim>(p);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVATTENTION_CUH
