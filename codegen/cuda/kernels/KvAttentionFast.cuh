//===- KvAttentionFast.cuh - paged attention on tensor cores --------------===//
//
// infer_kv_attention's fast path (fastAttend; KvAttention.cuh's comment
// describes it) and infer_kv_decode's fused rotary, KV write and staging
// (DecodeStep). Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONFAST_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONFAST_CUH

#include "codegen/cuda/kernels/KvAttentionCommon.cuh"
#include "codegen/cuda/kernels/RowKernels.cuh"

namespace infer {
namespace kernels {
namespace kvimpl {

//===----------------------------------------------------------------------===//
// Fast path
//===----------------------------------------------------------------------===//

/// 16-byte words of K and V one lane of fastAttend holds per warp step (for
/// DT = 64 and 128 alike: NT * 2 * KL of K, NT * 4 * VL of V).
constexpr int kStepWords = 16;

/// One warp's part of the fast path's shared memory: infer_kv_decode copies
/// the K and V words of the warp's second step here before the wait
/// ([word][lane]: each lane reads back only its own; kWords = kStepWords),
/// and after the keys the warp's partial output takes the same bytes.
/// infer_kv_attention copies nothing (kWords = 1: no larger than `out`).
template <int kWords> union alignas(16) FastWarpShared {
  uint4 step[kWords][32];
  float out[kFastHeads][kFastMaxDim + 4]; // [head][d]
};

/// Shared memory of the fast path (blocks of kBlockWarps warps): the Q
/// fragments and the merges.
template <int kWords, int kBlockWarps = kWarps> struct alignas(16) FastSharedOf {
  uint4 q[32][kFastMaxDim / 32]; // [lane][16-byte words]
  FastWarpShared<kWords> warp[kBlockWarps];
  float max[kBlockWarps][kFastHeads], sum[kBlockWarps][kFastHeads];
  float weight[kBlockWarps][kFastHeads]; // exp2(warp max - block max)
  float top[kFastHeads], total[kFastHeads];
  float recordWeight[kFastHeads][kKvDecodeMaxSplits]; // record max, then its weight
  float recordSum[kFastHeads][kKvDecodeMaxSplits];
  // infer_kv_decode: this step's key and value (rotated, rounded to T; zero
  // past headDim) as 16-byte words of 8 elements, which take the place of
  // key pos in its warp step (substituteNewKey); infer_qkv_decode first
  // parks the raw (unrotated) values there.
  uint4 newKeyWords[kFastMaxDim / 8], newValueWords[kFastMaxDim / 8];
  float2 rotaryTable[kFastMaxDim / 2]; // cos, sin of the token's rotated pairs
  // infer_kv_decode: each warp's copy of the first 32 block-table entries.
  unsigned table[kBlockWarps][32];
  int last;
};
using FastShared = FastSharedOf<1>; // infer_kv_attention (25 KB)
/// infer_kv_decode<T, C, kMaxDim>'s: 41 KB with the copy area (64), else 25 KB.
template <int kMaxDim> using FastDecodeShared = FastSharedOf<kMaxDim == 64 ? kStepWords : 1>;

/// D = A B + D, mma.sync m16n8k16 with fp32 accumulators (PTX ISA "Matrix
/// Fragments for mma.m16n8k16"; g = lane / 4, t = lane % 4): a0 = [g][2t..],
/// a1 = [g+8][2t..], a2 = [g][2t+8..], a3 = [g+8][2t+8..]; b0 = k 2t.. x
/// column g, b1 = k 2t+8.. x column g; d[0..1] = [g][2t, 2t+1], d[2..3] =
/// [g+8][2t, 2t+1].
template <typename T>
__device__ __forceinline__ void mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                    unsigned a3, unsigned b0, unsigned b1);
template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&d)[4], unsigned a0, unsigned a1,
                                                   unsigned a2, unsigned a3, unsigned b0,
                                                   unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma<__half>(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                            unsigned a3, unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
               "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

/// The 8 x 8 b16 matrix whose row lane / 4, columns 2 (lane % 4) + {0, 1} this
/// lane holds, transposed into the same layout.
__device__ __forceinline__ unsigned transpose8x8(unsigned x) {
  unsigned y;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;\n" : "=r"(y) : "r"(x));
  return y;
}

/// 16 bytes of shared memory at a shared-space address; volatile, so that it
/// is read where it is used rather than held in registers.
__device__ __forceinline__ uint4 loadShared16(unsigned address) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(address));
  return v;
}

/// 32-bit word w (a constant after unrolling) of N 16-byte words.
template <int N> __device__ __forceinline__ unsigned word(const uint4 (&v)[N], int w) {
  const uint4 &x = v[w >> 2];
  return (w & 3) == 0 ? x.x : (w & 3) == 1 ? x.y : (w & 3) == 2 ? x.z : x.w;
}

/// Eight elements at p (16-byte aligned when vec) as 16 bytes.
template <typename T> __device__ __forceinline__ uint4 load8(const T *p, bool vec) {
  if (vec)
    return *reinterpret_cast<const uint4 *>(p);
  uint4 v;
  unsigned w[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const unsigned short lo = __ldg(reinterpret_cast<const unsigned short *>(p) + 2 * i);
    const unsigned short hi = __ldg(reinterpret_cast<const unsigned short *>(p) + 2 * i + 1);
    w[i] = unsigned(lo) | (unsigned(hi) << 16);
  }
  v.x = w[0];
  v.y = w[1];
  v.z = w[2];
  v.w = w[3];
  return v;
}

/// Calls useKey(address, u, n, i) and useValue(address, u, j, i) for every
/// 16-byte word of K and V that this lane of fastAttend<T, DT> reads in the
/// step whose cache rows `rows` holds (lane j: key j); address is null for
/// dims past headDim D.
template <typename T, int DT, typename UseKey, typename UseValue>
__device__ __forceinline__ void forEachKvWord(const T *kBase, const T *vBase, unsigned rows,
                                              long long rowElems, int D, UseKey &&useKey,
                                              UseValue &&useValue) {
  constexpr int NT = 128 / DT, KC = DT / 4, VC = DT / 8, KL = KC / 8, VL = VC / 8;
  const int lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
#pragma unroll
  for (int u = 0; u < NT; ++u) {
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const T *src =
          kBase + (unsigned long long)__shfl_sync(kFullMask, rows, 16 * u + 8 * n + r) * rowElems;
#pragma unroll
      for (int i = 0; i < KL; ++i)
        useKey(c * KC + 8 * i < D ? reinterpret_cast<const uint4 *>(src + 8 * i) : nullptr, u, n, i);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int key = 16 * u + 2 * c + (j & 1) + 8 * (j >> 1);
      const T *src = vBase + (unsigned long long)__shfl_sync(kFullMask, rows, key) * rowElems;
#pragma unroll
      for (int i = 0; i < VL; ++i)
        useValue(r * VC + 8 * i < D ? reinterpret_cast<const uint4 *>(src + 8 * i) : nullptr, u, j,
                 i);
    }
  }
}

/// infer_kv_decode: replaces the K and V words of the keys >= `first` of
/// the warp step in kr / vr (fastAttend's registers; key `first` is this
/// step's token, the ones after it are masked out) with the new key and
/// value, so that the token's key is scored and weighted as the cached ones
/// are, on the tensor cores, with no pass of its own.
template <int DT, int NT, int KL, int VL, typename Shared>
__device__ __forceinline__ void substituteNewKey(uint4 (&kr)[NT][2][KL], uint4 (&vr)[NT][4][VL],
                                                 int first, const Shared &sm) {
  constexpr int KC = DT / 4, VC = DT / 8;
  const int lane = threadIdx.x & 31, r = lane >> 2, c = lane & 3;
  uint4 key[KL], value[VL];
#pragma unroll
  for (int i = 0; i < KL; ++i)
    key[i] = sm.newKeyWords[c * KC / 8 + i];
#pragma unroll
  for (int i = 0; i < VL; ++i)
    value[i] = sm.newValueWords[r * VC / 8 + i];
#pragma unroll
  for (int u = 0; u < NT; ++u) {
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int i = 0; i < KL; ++i)
        if (16 * u + 8 * n + r >= first)
          kr[u][n][i] = key[i];
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int i = 0; i < VL; ++i)
        if (16 * u + 2 * c + (j & 1) + 8 * (j >> 1) >= first)
          vr[u][j][i] = value[i];
  }
}

/// Asks L2 for the 16 bytes at address (none when null).
__device__ __forceinline__ void prefetchL2(const uint4 *address, int, int, int) {
  if (address)
    asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
}

/// Copies the 16 bytes at address (zeros when null) to shared memory at
/// `shared` without registers (cp.async; completes at waitForCopies).
__device__ __forceinline__ void copyToShared(unsigned shared, const uint4 *address,
                                             const void *anyGlobal) {
  const void *src = address ? static_cast<const void *>(address) : anyGlobal;
  const unsigned bytes = address ? 16u : 0u;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared), "l"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void waitForCopies() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

/// fastAttend's plain mode (infer_kv_attention): q and every key come from
/// the step's q rows and the cache, after the kernel's first-statement wait.
/// fastAttend's block in its grid (y: kv head x head group, z: split; the
/// number of token rows): the launch's own, except in infer_qkv_decode
/// (QkvDecode.cuh), whose attention blocks are part of a larger grid.
struct FastGrid {
  __device__ __forceinline__ unsigned tokenRows() const { return gridDim.x; }
  __device__ __forceinline__ unsigned blockY() const { return blockIdx.y; }
  __device__ __forceinline__ unsigned gridY() const { return gridDim.y; }
  __device__ __forceinline__ unsigned blockZ() const { return blockIdx.z; }
  __device__ __forceinline__ unsigned gridZ() const { return gridDim.z; }
};

struct NoDecode : FastGrid {
  static constexpr bool kFused = false;
  static constexpr bool kFirstStepShared = false;
  static constexpr bool kCopiesSecondStep = false;
  static constexpr int kBlockWarps = kWarps;
  struct CosSin {};
  __device__ __forceinline__ void waitForPreviousKernel() const {}
};

/// fastAttend's mode for infer_kv_decode: a decode step (one new token per
/// sequence, at position pos) whose rotary and KV write run in the attention
/// kernel. The cached keys 0 .. pos - 1 are no kernel's output of this step,
/// so their loads are issued before the wait for the previous kernel (the
/// qkv GEMV), with the token's cos / sin; after it, each block rotates its
/// query heads and the kv head's new key from the raw qkv row (the bits
/// infer_rotary writes: rowimpl::rotatePair), one block per (token, kv head)
/// writes the new K and V to the cache, and the warp whose step holds key
/// pos takes the new key and value from shared memory in place of the
/// cache's (substituteNewKey). Nothing else reads the rotary's output
/// (codegen checks), so it is not written.
template <typename C> struct DecodeStep : FastGrid {
  static constexpr bool kFused = true;
  /// Whether the first key step waits in shared memory rather than in
  /// registers (fastAttend; its Shared has room for two steps a warp).
  static constexpr bool kFirstStepShared = false;
  /// Whether each warp copies its second key step into shared memory
  /// before the wait (64-wide heads; fastAttend).
  static constexpr bool kCopiesSecondStep = true;
  static constexpr int kBlockWarps = kWarps; // the block's warps
  const RotaryParams *rotary; // p.q, p.k, p.v point into rotary->output

  __device__ __forceinline__ void waitForPreviousKernel() const {
    ::infer::kernels::waitForPreviousKernel();
  }

  /// Before the wait (positions and the rotary's tables are no kernel's
  /// output), token t's cos / sin of every rotated pair go to
  /// sm.rotaryTable: loadCosSin issues the loads of pair threadIdx.x (one
  /// a thread: rotaryDim <= headDim <= 128) before the cached keys',
  /// storeCosSin stores them after. The table row is guessed from the
  /// token's position in its sequence (findToken), so its loads need not
  /// wait for the rotary's position; storeCosSin reloads the row the
  /// position gives where the guess was wrong. Issued after the keys' 32-64
  /// KB, as before, the tables' loads came back behind them while the qkv
  /// GEMV streamed.
  struct CosSin {
    float2 loaded; // cos, sin; or the inverse frequency in .x
    long long position;
    long long guessedRow;
  };
  __device__ __forceinline__ CosSin loadCosSin(long long t, int tokenPos) const {
    const RotaryParams &rp = *rotary;
    const long long half = rp.rotaryDim / 2, i = threadIdx.x;
    CosSin out{make_float2(0.f, 0.f), 0, 0};
    if (i >= half)
      return out;
    const long long seq = rp.seq > 0 ? rp.seq : 1;
    const long long b = t / seq, s = t - b * seq;
    out.position = rp.positions ? rp.positions[(rp.positionBatch > 1 ? b : 0) * seq + s] : s;
    if (rp.invFreq) {
      out.loaded.x = loadFloat<C>(rp.invFreq, i);
      return out;
    }
    out.guessedRow = rp.perTokenCacheBatch > 0 ? (rp.perTokenCacheBatch > 1 ? b : 0) * seq + s
                                               : cacheRowOf(rp, tokenPos);
    const long long k = out.guessedRow * half + i;
    out.loaded = make_float2(loadFloat<C>(rp.cosCache, k), loadFloat<C>(rp.sinCache, k));
    return out;
  }
  template <typename Shared>
  __device__ __forceinline__ void storeCosSin(CosSin cs, Shared &sm) const {
    const RotaryParams &rp = *rotary;
    const long long half = rp.rotaryDim / 2, i = threadIdx.x;
    if (i >= half)
      return;
    float2 table = cs.loaded;
    if (rp.invFreq) {
      float sine, cosine; // rowimpl::rotaryCosSin's angle from the loaded frequency
      sincosf(float(cs.position) * cs.loaded.x, &sine, &cosine);
      table = make_float2(cosine, sine);
    } else if (rp.perTokenCacheBatch <= 0 && cacheRowOf(rp, cs.position) != cs.guessedRow) {
      table = rowimpl::rotaryCosSin<C>(rp, 0.f, cacheRowOf(rp, cs.position), half, i);
    }
    sm.rotaryTable[i] = table;
  }
  /// rowimpl::rotaryAngle's cache row of a position (the host checks
  /// positions against the caches; clamped to stay in bounds).
  __device__ __forceinline__ static long long cacheRowOf(const RotaryParams &rp,
                                                          long long position) {
    return position < 0 ? 0 : (position >= rp.cacheRows ? rp.cacheRows - 1 : position);
  }

  /// Element d of a rotary row's head: whether the rotary turns it (else it
  /// copies it), whether it is its pair's first, its partner's dim and its
  /// cos / sin's place in sm.rotaryTable (rotatePair's pairs). Every dim
  /// and index is in bounds either way (d itself and 0 where d is copied).
  struct Rotation {
    bool rotates, first;
    int partnerDim, tableIndex;
  };
  /// Dim d's rotation in a head the rotary turns (rotatesHead).
  __device__ __forceinline__ Rotation rotationOfDim(int d) const {
    const RotaryParams &rp = *rotary;
    const int rotaryDim = int(rp.rotaryDim), half = rotaryDim / 2;
    Rotation r;
    r.rotates = d < rotaryDim;
    r.first = rp.interleaved ? (d & 1) == 0 : d < half;
    r.partnerDim = !r.rotates ? d : rp.interleaved ? d ^ 1 : (r.first ? d + half : d - half);
    r.tableIndex = !r.rotates ? 0 : rp.interleaved ? d >> 1 : (r.first ? d : d - half);
    return r;
  }
  __device__ __forceinline__ bool rotatesHead(int h) const {
    return h < int(rotary->rotatedHeads); // a head count
  }
  __device__ __forceinline__ Rotation rotationOf(int h, int d) const {
    Rotation r = rotationOfDim(d);
    r.rotates = r.rotates && rotatesHead(h);
    return r;
  }
  /// The element at partner(h, d) goes with element d in its rotation.
  __device__ __forceinline__ int partner(int h, int d) const { return rotationOf(h, d).partnerDim; }
  /// `value` rotated with `other` (the element at its partner) by cos / sin
  /// `cs` as infer_rotary does — rotatePair's operations, value cos - other
  /// sin for the pair's first, value cos + other sin for its second (the
  /// negation is exact) — or `value` where the rotary copies. Without
  /// branches: the result is selected.
  __device__ __forceinline__ static float rotate(float value, float other, float2 cs, bool first,
                                                 bool rotates) {
    const float sine = first ? -cs.y : cs.y;
    const float rotatedValue = __fadd_rn(__fmul_rn(value, cs.x), __fmul_rn(other, sine));
    return rotates ? rotatedValue : value;
  }
  template <typename Shared>
  __device__ __forceinline__ float rotated(float value, float other, int h, int d,
                                           const Shared &sm) const {
    const Rotation r = rotationOf(h, d);
    return rotate(value, other, sm.rotaryTable[r.tableIndex], r.first, r.rotates);
  }

  /// After the wait: sm.q, the rotated query heads firstHead .. + heads - 1
  /// (zero rows and dims past them); sm.newKeyWords / newValueWords: kv head
  /// g's new K (rotated) and V rounded to T; the cache slot of token t gets
  /// them when writesCache. Every load is issued before the first use.
  template <typename T, int DT, typename Shared>
  __device__ __forceinline__ void stage(const KvAttentionParams &p, long long t, long long g,
                                        int firstHead, int heads, bool writesCache,
                                        Shared &sm) const {
    constexpr int KC = DT / 4; // lane 4r + c holds row r, dims c*KC .. (fastAttend)
    constexpr int kLaneElems = kFastMaxDim / 4;
    constexpr int kPer = kFastHeads * DT / kThreads; // q elements per thread
    __syncthreads(); // sm.rotaryTable
    const RotaryParams &rp = *rotary;
    const int D = int(p.headDim);
    const T *base = static_cast<const T *>(rp.output);
    const T *x = static_cast<const T *>(rp.input) + t * rp.numHeads * rp.headDim;
    // Heads of the rotary row (q, k, v start at whole heads: the host checks).
    const int qHead = int((static_cast<const T *>(p.q) - base) / D) + firstHead;
    const int kHead = int((static_cast<const T *>(p.k) - base) / D + g);
    const int vHead = int((static_cast<const T *>(p.v) - base) / D + g);
    const T zero = fromFloat<T>(0.f);
    T value[kPer], other[kPer];
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const int i = threadIdx.x + e * kThreads, r = i / DT, d = i % DT;
      const bool live = r < heads && d < D;
      value[e] = live ? x[(qHead + r) * D + d] : zero;
      other[e] = live ? x[(qHead + r) * D + partner(qHead + r, d)] : zero;
    }
    const int d = threadIdx.x;
    T key = zero, keyOther = zero, val = zero, valOther = zero;
    if (d < D) {
      key = x[kHead * D + d];
      keyOther = x[kHead * D + partner(kHead, d)];
      val = x[vHead * D + d];
      valOther = x[vHead * D + partner(vHead, d)];
    }
    const long long slot = writesCache ? p.slotIds[t] : -1;
    T *q = reinterpret_cast<T *>(&sm.q[0][0]);
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const int i = threadIdx.x + e * kThreads, r = i / DT, dq = i % DT;
      q[(4 * r + dq / KC) * kLaneElems + dq % KC] =
          fromFloat<T>(rotated(toFloat(value[e]), toFloat(other[e]), qHead + r, dq, sm));
    }
    T k = zero, v = zero;
    if (d < D) {
      k = fromFloat<T>(rotated(toFloat(key), toFloat(keyOther), kHead, d, sm));
      v = fromFloat<T>(rotated(toFloat(val), toFloat(valOther), vHead, d, sm));
    }
    if (d < DT)
      keepNewKeyValue(cacheRowsOf<T>(p, g, slot), d, D, k, v, sm);
  }

  /// Kv head g's K and V rows of cache slot `slot` (the V row p.blockSize
  /// rows after the K row), or nulls when slot < 0.
  template <typename T> struct CacheRows {
    T *key, *value;
  };
  template <typename T>
  __device__ __forceinline__ static CacheRows<T> cacheRowsOf(const KvAttentionParams &p,
                                                             long long g, long long slot) {
    if (slot < 0)
      return {nullptr, nullptr};
    const long long block = slot / p.blockSize, offset = slot - block * p.blockSize;
    T *key = static_cast<T *>(p.cache) +
             ((block * 2) * p.blockSize + offset) * p.numKvHeads * p.headDim + g * p.headDim;
    return {key, key + p.blockSize * p.numKvHeads * p.headDim};
  }

  /// Element d (< DT) of the new key and value (rotated, rounded to T; zero
  /// for d >= D = p.headDim) into sm.newKeyWords / newValueWords, and for d <
  /// D into the cache rows (cacheRowsOf; none when null).
  template <typename T, typename Shared>
  __device__ __forceinline__ static void keepNewKeyValue(CacheRows<T> rows, int d, int D, T k,
                                                         T v, Shared &sm) {
    reinterpret_cast<T *>(sm.newKeyWords)[d] = k;
    reinterpret_cast<T *>(sm.newValueWords)[d] = v;
    if (rows.key && d < D) {
      rows.key[d] = k;
      rows.value[d] = v;
    }
  }
};

/// Block (t, y, z) on tensor cores: query heads headBase .. headBase + heads
/// - 1 (heads <= 8) of kv head g, positions of split z; DT = 64 or 128 >=
/// headDim (dims past headDim load as zero).
template <typename T, int DT, typename Decode = NoDecode, typename Shared = FastShared>
__device__ __forceinline__ void fastAttend(const KvAttentionParams &p, long long t, long long g,
                                           int headBase, int heads, Shared &sm,
                                           const Decode &decode = Decode()) {
  constexpr bool kDecode = Decode::kFused;
  constexpr int NT = 128 / DT; // 16-key tiles per warp step
  constexpr int KW = 16 * NT;  // keys per warp step
  constexpr int KC = DT / 4;   // K (and Q) elements per lane and row
  constexpr int VC = DT / 8;   // V elements per lane and row
  constexpr int KS = DT / 16;  // k-steps of S, m-tiles of O^T
  constexpr int KL = KC / 8;   // 16-byte loads per K row and lane
  constexpr int VL = VC / 8;   // 16-byte loads per V row and lane
  static_assert(NT * 2 * KL + NT * 4 * VL == kStepWords, "a warp step's words per lane");
  constexpr int kBlockWarps = Decode::kBlockWarps;
  constexpr int kBlockThreads = 32 * kBlockWarps;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int r = lane >> 2, c = lane & 3;
  const int D = int(p.headDim);
  const long long firstHead = g * (p.numHeads / p.numKvHeads) + headBase;

  // Q row r (zero past the heads), dims c*KC .. as the B operand of S^T:
  // k-step s uses words 2s, 2s + 1. Kept in shared memory (the same for every
  // warp) and read back per step, which saves registers.
  // Warp 0 loads it while the sequence lookup's loads are in flight.
  uint4 qLoaded[KL];
  if (!kDecode && warp == 0) {
    const T *qRow = static_cast<const T *>(p.q) + t * p.qRowStride + (firstHead + r) * D + c * KC;
    const bool vec = aligned16(p.q) && p.qRowStride % 8 == 0;
#pragma unroll
    for (int i = 0; i < KL; ++i)
      qLoaded[i] =
          r < heads && c * KC + 8 * i < D ? load8(qRow + 8 * i, vec) : make_uint4(0, 0, 0, 0);
  }

  // infer_kv_decode, 64-wide heads: before the wait each warp also copies
  // its second step's K and V into shared memory (cp.async; below). Their
  // cache rows would cost a dependent load of the block table, and while
  // the qkv GEMV streams a round trip takes ~2.5 us; so the first 32 entries
  // of sequence t's table (one per lane) load with findToken's, and rowOf
  // takes them from shared memory when token t is alone in sequence t (a
  // decode batch). Measured on the H200 (bench/results/tinyllama-1.1b-
  // serving.md, session 16): TinyLlama batch 1, 128 in / 128 out, 1,029.0
  // -> 1,044.0 tok/s (means of six runs); 400-1,800-token prompts within
  // +-1.7% (one step per warp there: nothing to copy).
  constexpr bool kGuessTable = kDecode && DT == 64;
  constexpr bool kCopySecondStep = kGuessTable && Decode::kCopiesSecondStep;
  unsigned tableGuess = 0;
  const bool guessed = kGuessTable && t < p.numSeqs;
  if (guessed && lane < p.maxBlocksPerSeq)
    tableGuess = unsigned(__ldg(p.blockTables + t * p.maxBlocksPerSeq + lane));
  Token tok;
  if (!findToken(p, t, tok)) {
    decode.waitForPreviousKernel();
    return;
  }
  const bool useGuess = guessed && tok.table == p.blockTables + t * p.maxBlocksPerSeq;
  if constexpr (kDecode)
    INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 1);
  if constexpr (kGuessTable) {
    // Arrived with findToken's loads; shared memory frees the register.
    sm.table[warp][lane] = tableGuess;
    __syncwarp();
  }
  // Split z takes steps [z * per, (z + 1) * per): at least 2 per warp (1 per
  // warp past one such split in small decode steps), so short contexts are
  // not cut into slices whose merge costs more than they save. The loop
  // attends to keys 0 .. last = pos; infer_kv_decode reads keys 0 .. pos - 1
  // from the cache and brings key pos (this step's) from shared memory.
  const int pos = tok.pos;
  const int last = pos;
  const int lastCached = kDecode ? (pos > 0 ? pos - 1 : 0) : pos; // the rows read (clamped)
  const int steps = last >= 0 ? last / KW + 1 : 0;
  const bool split = p.workspace != nullptr && p.counters != nullptr && decode.gridZ() > 1;
  const int splits = split ? (decode.gridZ() < kKvDecodeMaxSplits ? int(decode.gridZ()) : kKvDecodeMaxSplits)
                           : 1;
  const bool smallStep = decode.tokenRows() <= unsigned(kGemvMaxRows) && steps > kMinStepsPerSplit;
  const int minSteps = DT == 128 ? kMinStepsPerSplitWide
                       : smallStep ? kMinStepsPerSplitSmallStep
                                   : kMinStepsPerSplit;
  constexpr int kMaxUsed = DT == 128 ? kMaxUsedSplitsWide : kKvDecodeMaxSplits;
  const int perForSplits = (steps + splits - 1) / splits;
  const int perForMaxUsed = (steps + kMaxUsed - 1) / kMaxUsed;
  const int per = max(max(perForSplits, perForMaxUsed), minSteps);
  const int used = steps > 0 ? (steps + per - 1) / per : 1;
  const int z = int(decode.blockZ());
  if (z >= used) {
    decode.waitForPreviousKernel();
    return;
  }
  const int stepEnd = (z + 1) * per < steps ? (z + 1) * per : steps;
  const int newKeyStep = kDecode ? pos / KW : -1; // the warp step that holds key pos
  const bool capped = p.softcap > 0.f;
  const float scaleLog2 = p.scale * kLog2e;
  const float scaleOverCap = capped ? p.scale / p.softcap : 0.f;
  const float capLog2 = p.softcap * kLog2e;

  const long long rowElems = p.numKvHeads * D;
  const T *kBase = static_cast<const T *>(p.cache) + g * D + c * KC; // this lane's K dims
  const T *vBase = static_cast<const T *>(p.cache) + p.blockSize * rowElems + g * D + r * VC;
  const unsigned blockSize = unsigned(p.blockSize);
  const bool pow2 = (blockSize & (blockSize - 1)) == 0;
  const int blockShift = __ffs(int(blockSize)) - 1;
  // Cache row (block * 2 * blockSize + offset) of the K row of key step * KW
  // + lane % KW, clamped to lastCached (infer_kv_decode, pos == 0: the
  // token's own row, whose words substituteNewKey replaces). 32 bits: a
  // cache of 2^32 rows of at least 16 bytes (headDim % 8 == 0 here) would
  // exceed any GPU's memory.
  auto rowOf = [&](int step) -> unsigned {
    int key = step * KW + (lane & (KW - 1));
    key = key <= lastCached ? key : lastCached;
    unsigned block, offset;
    if (pow2) {
      block = unsigned(key) >> blockShift;
      offset = unsigned(key) & (blockSize - 1);
    } else {
      block = unsigned(key) / blockSize;
      offset = unsigned(key) - block * blockSize;
    }
    const unsigned entry = useGuess && block < 32 ? sm.table[warp][block]
                                                  : unsigned(__ldg(tok.table + block));
    return entry * (2 * blockSize) + offset;
  };

  float mA = negativeInfinity(), mB = negativeInfinity(), lA = 0.f, lB = 0.f; // heads 2c, 2c + 1
  float o[KS][4];                        // O^T: [mt][dims r*VC + 2mt (+1)][heads 2c, 2c+1]
#pragma unroll
  for (int mt = 0; mt < KS; ++mt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      o[mt][e] = 0.f;

  int step = z * per + warp;
  unsigned row = step < stepEnd ? rowOf(step) : 0;
  uint4 kr[NT][2][KL], vr[NT][4][VL]; // K keys 16u + {r, 8 + r}; V keys 16u + {2c, 2c+1, 2c+8, 2c+9}
  // The K and V of the step whose table rows `row` holds.
  auto loadStep = [&]() {
    forEachKvWord<T, DT>(
        kBase, vBase, row, rowElems, D,
        [&](const uint4 *address, int u, int n, int i) {
          kr[u][n][i] = address ? __ldg(address) : make_uint4(0, 0, 0, 0);
        },
        [&](const uint4 *address, int u, int j, int i) {
          vr[u][j][i] = address ? __ldg(address) : make_uint4(0, 0, 0, 0);
        });
  };
  // infer_kv_decode: the first step's cached keys are in flight while the
  // kernel before finishes; then its output (this step's q, k, v) may be read.
  if constexpr (!kDecode) {
    if (warp == 0)
#pragma unroll
      for (int i = 0; i < KL; ++i)
        sm.q[lane][i] = qLoaded[i];
  }
  typename Decode::CosSin cosSin{};
  if constexpr (kDecode)
    cosSin = decode.loadCosSin(t, pos);
  // Where this lane's copy of kr[u][n][i] and vr[u][j][i] lies: the second
  // step's at word 0 of the warp's area, the first's (kFirstStepShared)
  // after it (at word 0 when no step is copied).
  const unsigned stepShared = unsigned(__cvta_generic_to_shared(&sm.warp[warp].step[0][lane]));
  constexpr unsigned kFirstStepArea = kCopySecondStep ? kStepWords * 32 * 16 : 0;
  auto keyWord = [&](int u, int n, int i) { return stepShared + ((u * 2 + n) * KL + i) * 32 * 16; };
  auto valueWord = [&](int u, int j, int i) {
    return stepShared + (NT * 2 * KL + (u * 4 + j) * VL + i) * 32 * 16;
  };
  // The K and V of the step whose table rows `rows` holds, into the area at
  // keyWord / valueWord + area (cp.async; read back by loadCopiedStep).
  static_assert(!Decode::kFirstStepShared ||
                    sizeof(sm.warp[0].step) >= (kCopySecondStep ? 2 : 1) * kStepWords * 32 * 16,
                "kFirstStepShared needs a step's words a warp, two with the copied step");
  auto copyStep = [&](unsigned rows, unsigned area) {
    forEachKvWord<T, DT>(
        kBase, vBase, rows, rowElems, D,
        [&](const uint4 *address, int u, int n, int i) {
          copyToShared(keyWord(u, n, i) + area, address, kBase);
        },
        [&](const uint4 *address, int u, int j, int i) {
          copyToShared(valueWord(u, j, i) + area, address, kBase);
        });
  };
  auto loadCopiedStep = [&](unsigned area) {
    waitForCopies();
#pragma unroll
    for (int u = 0; u < NT; ++u) {
#pragma unroll
      for (int w = 0; w < 2 * KL; ++w)
        kr[u][w / KL][w % KL] = loadShared16(keyWord(u, w / KL, w % KL) + area);
#pragma unroll
      for (int w = 0; w < 4 * VL; ++w)
        vr[u][w / VL][w % VL] = loadShared16(valueWord(u, w / VL, w % VL) + area);
    }
  };
  // The first step's keys: into registers, or (kFirstStepShared: the
  // registers are then free while the block waits) into shared memory.
  bool loaded = kDecode && step < stepEnd;
  if (loaded) {
    if constexpr (Decode::kFirstStepShared)
      copyStep(row, kFirstStepArea);
    else
      loadStep();
  }
  // infer_kv_decode: the warp's second step into shared memory (64-wide
  // heads), the later ones into L2, and the token's rotary cos / sin.
  const int copiedStep = step + kBlockWarps;
  const bool copied = kCopySecondStep && copiedStep < stepEnd;
  if constexpr (kDecode) {
    if (copied)
      copyStep(rowOf(copiedStep), 0);
    for (int later = copied ? copiedStep + kBlockWarps : copiedStep; later < stepEnd;
         later += kBlockWarps)
      forEachKvWord<T, DT>(kBase, vBase, rowOf(later), rowElems, D, prefetchL2, prefetchL2);
    decode.storeCosSin(cosSin, sm);
    INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 2);
  }
  decode.waitForPreviousKernel();
  if constexpr (kDecode) {
    INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 3);
    decode.template stage<T, DT>(p, t, g, int(firstHead), heads, z == 0 && headBase == 0, sm);
  }
  __syncthreads();
  if constexpr (kDecode)
    INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 4);
  const unsigned qShared = unsigned(__cvta_generic_to_shared(&sm.q[lane][0]));
  // Stamps 9-11: the first step's keys in registers, scored, done.
  const int firstStep = step;

  for (; step < stepEnd; step += kBlockWarps) {
    if (!loaded) {
      if (copied && step == copiedStep)
        loadCopiedStep(0);
      else
        loadStep();
    } else if constexpr (Decode::kFirstStepShared) {
      loadCopiedStep(kFirstStepArea);
    }
    loaded = false;
    if constexpr (kDecode)
      if (step == newKeyStep)
        substituteNewKey<DT>(kr, vr, pos - step * KW, sm);
    if constexpr (kDecode)
      if (step == firstStep)
        INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 9);
    if (step + kBlockWarps < stepEnd && !(copied && step + kBlockWarps == copiedStep))
      row = rowOf(step + kBlockWarps); // the next step's table entries, during this one

    // S^T = K Q^T per tile u: lane holds keys 16u + r, 16u + 8 + r x heads 2c, 2c + 1.
    float s[NT][4];
#pragma unroll
    for (int u = 0; u < NT; ++u) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
        s[u][e] = 0.f;
#pragma unroll
      for (int i = 0; i < KL; ++i) {
        const uint4 q = loadShared16(qShared + 16 * i); // k-steps 2i, 2i + 1
        mma<T>(s[u], kr[u][0][i].x, kr[u][1][i].x, kr[u][0][i].y, kr[u][1][i].y, q.x, q.y);
        mma<T>(s[u], kr[u][0][i].z, kr[u][1][i].z, kr[u][0][i].w, kr[u][1][i].w, q.z, q.w);
      }
    }

    // Online softmax of heads 2c (A) and 2c + 1 (B); the 8 lanes of one c
    // hold all the step's keys.
    const int keyBase = step * KW + r;
    // One branch for the softcap, not one a score (each a jump in code
    // that is fetched cold once a layer at batch 1).
    if (capped) {
#pragma unroll
      for (int u = 0; u < NT; ++u)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[u][e] = capLog2 * tanhf(s[u][e] * scaleOverCap);
    } else {
#pragma unroll
      for (int u = 0; u < NT; ++u)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          s[u][e] *= scaleLog2;
    }
    float topA = negativeInfinity(), topB = negativeInfinity();
#pragma unroll
    for (int u = 0; u < NT; ++u)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[u][e] = keyBase + 16 * u + 8 * (e >> 1) <= last ? s[u][e] : negativeInfinity();
        if (e & 1)
          topB = fmaxf(topB, s[u][e]);
        else
          topA = fmaxf(topA, s[u][e]);
      }
#pragma unroll
    for (int offset = 4; offset < 32; offset <<= 1) {
      topA = fmaxf(topA, __shfl_xor_sync(kFullMask, topA, offset));
      topB = fmaxf(topB, __shfl_xor_sync(kFullMask, topB, offset));
    }
    if constexpr (kDecode)
      if (step == firstStep)
        INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 10);
    const float newA = fmaxf(mA, topA), newB = fmaxf(mB, topB);
    const float refA = newA == negativeInfinity() ? 0.f : newA;
    const float refB = newB == negativeInfinity() ? 0.f : newB;
    const float alphaA = exp2Approx(mA - refA), alphaB = exp2Approx(mB - refB);
    mA = newA;
    mB = newB;
    // P^T as the B operand of V^T P^T: the 8 x 8 (key, head) blocks of
    // keys 0..7 and 8..15, transposed to (head r, keys 2c, 2c + 1).
    unsigned pk[NT][2];
    float sumA = 0.f, sumB = 0.f;
#pragma unroll
    for (int u = 0; u < NT; ++u)
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        const float pa = exp2Approx(s[u][2 * n] - refA), pb = exp2Approx(s[u][2 * n + 1] - refB);
        sumA += pa;
        sumB += pb;
        pk[u][n] = transpose8x8(packPair<T>(pa, pb));
      }
    lA = lA * alphaA + sumA;
    lB = lB * alphaB + sumB;

    // O^T += V^T P^T: lane's accumulators are heads 2c and 2c + 1.
#pragma unroll
    for (int mt = 0; mt < KS; ++mt) {
      o[mt][0] *= alphaA;
      o[mt][1] *= alphaB;
      o[mt][2] *= alphaA;
      o[mt][3] *= alphaB;
    }
#pragma unroll
    for (int u = 0; u < NT; ++u)
#pragma unroll
      for (int mt = 0; mt < KS; ++mt) {
        // Keys 2c, 2c + 1 (and + 8) of dims r*VC + 2mt (row r) and + 1 (row r + 8).
        const unsigned v0 = word(vr[u][0], mt), v1 = word(vr[u][1], mt);
        const unsigned v2 = word(vr[u][2], mt), v3 = word(vr[u][3], mt);
        mma<T>(o[mt], __byte_perm(v0, v1, 0x5410), __byte_perm(v0, v1, 0x7632),
               __byte_perm(v2, v3, 0x5410), __byte_perm(v2, v3, 0x7632), pk[u][0], pk[u][1]);
      }
    if constexpr (kDecode)
      if (step == firstStep)
        INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 11);
  }

  if constexpr (kDecode)
    INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 5);
  __syncwarp(); // the warp's copied step is read: its out may take the bytes
  // Merge the warps: the 8 lanes of one c share mA, mB; sum their partial l.
#pragma unroll
  for (int offset = 4; offset < 32; offset <<= 1) {
    lA += __shfl_xor_sync(kFullMask, lA, offset);
    lB += __shfl_xor_sync(kFullMask, lB, offset);
  }
  if (r == 0) {
    sm.max[warp][2 * c] = mA;
    sm.max[warp][2 * c + 1] = mB;
    sm.sum[warp][2 * c] = lA;
    sm.sum[warp][2 * c + 1] = lB;
  }
#pragma unroll
  for (int mt = 0; mt < KS; ++mt) {
    const int d = r * VC + 2 * mt;
    sm.warp[warp].out[2 * c][d] = o[mt][0];
    sm.warp[warp].out[2 * c][d + 1] = o[mt][2];
    sm.warp[warp].out[2 * c + 1][d] = o[mt][1];
    sm.warp[warp].out[2 * c + 1][d + 1] = o[mt][3];
  }
  __syncthreads();
  // Head h's largest score over the warps (`top`), each warp's weight
  // exp2(its max - top) and the weighted sum of their softmax sums.
  auto mergeHead = [&](int h, float (&weight)[kBlockWarps], float &top, float &total) {
    top = negativeInfinity();
#pragma unroll
    for (int w = 0; w < kBlockWarps; ++w)
      top = fmaxf(top, sm.max[w][h]);
    const float ref = top == negativeInfinity() ? 0.f : top;
    total = 0.f;
#pragma unroll
    for (int w = 0; w < kBlockWarps; ++w) {
      weight[w] = exp2Approx(sm.max[w][h] - ref);
      total += sm.sum[w][h] * weight[w];
    }
  };

  const int items = heads * D;
  T *out = static_cast<T *>(p.output) + (t * p.numHeads + firstHead) * D;
  if (used == 1) {
    if constexpr (kDecode)
      INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 6);
    // Four dims a thread (D % 8 == 0 here): TinyLlama's 8 heads x 64 dims
    // are one pass of the block, its shortest path to the output. Threads
    // map to (head, quad) of the largest heads (DT wide; no division), and
    // those past `heads` or D idle. Each merges its head's warps itself:
    // no barrier between the warps' partial results and the output.
    constexpr int kQuads = DT / 4;
    constexpr int kPasses = (kFastHeads * kQuads + kBlockThreads - 1) / kBlockThreads;
    const bool pairs = (reinterpret_cast<unsigned long long>(out) & 7) == 0;
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const unsigned i = unsigned(tid + pass * kBlockThreads);
      const int h = int(i / kQuads), d = int(4 * (i % kQuads));
      if (h >= heads || d >= D)
        continue;
      float weight[kBlockWarps], top, total; // top: the split path's record
      mergeHead(h, weight, top, total);
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int w = 0; w < kBlockWarps; ++w) {
        const float4 x = *reinterpret_cast<const float4 *>(&sm.warp[w].out[h][d]);
        v = make_float4(fmaf(weight[w], x.x, v.x), fmaf(weight[w], x.y, v.y),
                        fmaf(weight[w], x.z, v.z), fmaf(weight[w], x.w, v.w));
      }
      const float inverse = total > 0.f ? 1.f / total : 0.f;
      T *dst = out + h * D + d;
      if (pairs) {
        *reinterpret_cast<uint2 *>(dst) =
            make_uint2(packPair<T>(v.x * inverse, v.y * inverse),
                       packPair<T>(v.z * inverse, v.w * inverse));
      } else {
        dst[0] = fromFloat<T>(v.x * inverse);
        dst[1] = fromFloat<T>(v.y * inverse);
        dst[2] = fromFloat<T>(v.z * inverse);
        dst[3] = fromFloat<T>(v.w * inverse);
      }
    }
    if constexpr (kDecode)
      INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 7);
    return;
  }
  if (tid < kFastHeads) {
    float weight[kBlockWarps], top, total;
    mergeHead(tid, weight, top, total);
#pragma unroll
    for (int w = 0; w < kBlockWarps; ++w)
      sm.weight[w][tid] = weight[w];
    sm.top[tid] = top;
    sm.total[tid] = total;
  }
  __syncthreads();
  if constexpr (kDecode)
    INFER_DECODE_STAMP_AT(t, decode.blockY(), decode.blockZ(), 6);

  // Record of this split; the unit's last block combines them all.
  const long long recordFloats = kvDecodeRecordFloats(p.headDim);
  const long long unit = t * decode.gridY() + decode.blockY();
  float *records = p.workspace + unit * decode.gridZ() * recordFloats;
  float *record = records + z * recordFloats;
  if (tid < heads) {
    record[tid] = sm.top[tid];
    record[kFastHeads + tid] = sm.total[tid];
  }
  for (int i = tid; i < items; i += kBlockThreads) {
    const int h = i / D, d = i - h * D;
    float v = 0.f;
#pragma unroll
    for (int w = 0; w < kBlockWarps; ++w)
      v = fmaf(sm.weight[w][h], sm.warp[w].out[h][d], v);
    record[2 * kFastHeads + i] = v;
  }
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

  for (int i = tid; i < heads * used; i += kBlockThreads) {
    const int j = i / heads, h = i - j * heads;
    sm.recordWeight[h][j] = __ldcg(records + j * recordFloats + h);
    sm.recordSum[h][j] = __ldcg(records + j * recordFloats + kFastHeads + h);
  }
  __syncthreads();
  for (int h = warp; h < heads; h += kBlockWarps) {
    float top = negativeInfinity();
    for (int j = lane; j < used; j += 32)
      top = fmaxf(top, sm.recordWeight[h][j]);
    top = warpMax(top);
    const float ref = top == negativeInfinity() ? 0.f : top;
    float total = 0.f;
    for (int j = lane; j < used; j += 32) {
      const float e = exp2Approx(sm.recordWeight[h][j] - ref);
      sm.recordWeight[h][j] = e;
      total += sm.recordSum[h][j] * e;
    }
    total = warpSum(total);
    const float inverse = total > 0.f ? 1.f / total : 0.f;
    for (int j = lane; j < used; j += 32)
      sm.recordWeight[h][j] *= inverse;
  }
  __syncthreads();
  for (int i = tid; i < items; i += kBlockThreads) {
    const int h = i / D;
    const float *src = records + 2 * kFastHeads + i;
    float v = 0.f;
    for (int j = 0; j < used; ++j)
      v = fmaf(sm.recordWeight[h][j], __ldcg(src + j * recordFloats), v);
    out[i] = fromFloat<T>(v);
  }
}

} // namespace kvimpl
} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVATTENTIONFAST_CUH
