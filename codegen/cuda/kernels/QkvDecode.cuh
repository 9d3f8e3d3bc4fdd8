//===- QkvDecode.cuh - batch-1 qkv GEMV and decode attention, one grid ----===//
//
// infer_qkv_decode<T, C, kMaxDim> (QkvDecodeParams): a batch-1 decode
// layer's rms_norm + qkv GEMV (infer_gemv_rows<T, 1>) and its rotary, KV
// write and attention (infer_kv_decode<T, C, kMaxDim>) in one launch.
//
// Why: as two kernels, the attention's blocks could only start once every
// GEMV block had started (programmatic launch), ~1.3 us before the GEMV's
// end, so their work that needs no GEMV output (the token's lookup, the
// cached keys' loads, the rotary's cos / sin) ended ~2.3 us after it, and
// then the attention read q / k / v back in a round trip of its own after
// the wait (bench/results/tinyllama-1.1b-serving.md, sessions 15-30).
//
//   grid kQkvDecodeBlocks = A + G blocks of 256 threads (A = attentionY x
//   attentionZ; GemvGeometry.h); dynamic shared memory
//   qkvDecodeSharedBytes(k, sizeof(T)) (the GEMV's staging or the attention's):
//   blocks 0 .. A-1   infer_kv_decode's blocks (y = b % attentionY: kv head
//                     x head group; z = b / attentionY: split) with all 8
//                     warps, a key step each where infer_kv_decode's 4 take
//                     two (the same results up to the order of the softmax's
//                     fp32 sums). First in the grid, so
//                     they are placed first and start with the GEMV; they do
//                     the work before the wait as infer_kv_decode does, then
//                     poll `exchange` until every q / k / v element they need
//                     carries the tag: the poll's load is the staging's load.
//   blocks A ..       the GEMV's blocks (block b - A of G), as
//                     infer_gemv_rows; each output also goes to `exchange`
//                     tagged with this launch's tag (below).
//
// The exchange holds one 32-bit word per qkv output: (tag << 16) | the T
// bits. An aligned 32-bit store and load are single-copy atomic, so a reader
// that sees the tag sees the value. tag = (serial byte << 8) | layer byte,
// *stepSerial being the step's serial (the host's, in the step's staging
// area, so a captured graph reads each replay's) and `layer` the launch's
// number in the step. The exchange holds the words of at most the last two
// launches before a poller's own (each launch writes all of them, and the
// GEMV blocks of a launch wait for the one before the previous to finish),
// whose tags differ from its own; the runtime keeps the serial byte of a
// step apart from the last one that ran this kernel
// (CudaBackend::advanceStepSerial). A poll that finds no tag for seconds
// (a broken exchange) reports the words it waits for and traps rather than
// hang the GPU.
//
// Batch-1 decode only (one token), 16-bit T, and
// the conditions of infer_kv_decode's fast path.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_QKVDECODE_CUH
#define INFER_CODEGEN_CUDA_KERNELS_QKVDECODE_CUH

#include "codegen/cuda/kernels/GemvRows.cuh"
#include "codegen/cuda/kernels/KvAttention.cuh"

namespace infer {
namespace kernels {

namespace qkvdecode {

__device__ __forceinline__ unsigned tagOf(const QkvDecodeParams &p) {
  return unsigned((*p.stepSerial << 8) | (p.layer & 255u)) << 16;
}

template <typename T> __device__ __forceinline__ unsigned short bitsOf(T x) {
  return *reinterpret_cast<unsigned short *>(&x);
}
template <typename T> __device__ __forceinline__ T fromBits(unsigned word) {
  const unsigned short b = (unsigned short)(word & 0xffffu);
  return *reinterpret_cast<const T *>(&b);
}

/// The GEMV's exchange: output `row` of input row 0 with the launch's tag.
struct TaggedExchange {
  unsigned *entries;
  unsigned tag;
  template <typename T> __device__ __forceinline__ void put(long long row, T value) const {
    const unsigned word = tag | bitsOf(value);
    asm volatile("st.relaxed.gpu.global.b32 [%0], %1;" ::"l"(entries + row), "r"(word) : "memory");
  }
};

__device__ __forceinline__ unsigned loadTagged(const unsigned *address) {
  unsigned word;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(word) : "l"(address) : "memory");
  return word;
}

} // namespace qkvdecode

namespace kvimpl {

/// fastAttend's mode for infer_qkv_decode's attention blocks: DecodeStep,
/// except that there is no previous kernel to wait for (the GEMV blocks of
/// the grid wait) and the staging polls the exchange for q / k / v.
template <typename C> struct PolledDecodeStep : DecodeStep<C> {
  /// The first key step waits in shared memory: in registers, with the
  /// poll's, they spilled (the 128-register cap of two 256-thread blocks a
  /// multiprocessor).
  static constexpr bool kFirstStepShared = true;
  /// All 8 warps of the grid's 256-thread blocks attend, a key step each at
  /// the contexts this kernel serves (kQkvDecodeMaxContext: 8 steps of 32
  /// keys), so no warp has a second step to copy or to run after its first.
  static constexpr int kBlockWarps = kGemvRowsThreads / 32;
  static constexpr bool kCopiesSecondStep = false;
  const unsigned *exchange;
  unsigned tag;
  unsigned y, gridY_, z, gridZ_; // the block in infer_kv_decode's grid
  bool lateTrigger;

  __device__ __forceinline__ unsigned tokenRows() const { return 1; }
  __device__ __forceinline__ unsigned blockY() const { return y; }
  __device__ __forceinline__ unsigned gridY() const { return gridY_; }
  __device__ __forceinline__ unsigned blockZ() const { return z; }
  __device__ __forceinline__ unsigned gridZ() const { return gridZ_; }

  /// Lets the next kernel (the o GEMV) launch once the blocks' work before
  /// the "wait" is issued, as infer_kv_decode does after its wait.
  __device__ __forceinline__ void waitForPreviousKernel() const {
    if (!lateTrigger)
      launchDependents();
  }
  __device__ __forceinline__ static void launchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  }

  /// DecodeStep::stage with q / k / v from the exchange. Each thread polls
  /// its own elements (q: kPer of them, all at dim threadIdx.x % DT; k and
  /// v: dim threadIdx.x) until all of the block's carry the tag, parking
  /// their raw values in shared memory (q at its place in sm.q, k and v in
  /// sm.newKeyWords / newValueWords), which holds fewer registers through
  /// the poll than keeping them; then the rotation reads each element's
  /// partner from there. Everything the rotation needs but the values —
  /// the dim's partner, its cos / sin's place, the shared-memory slots —
  /// is worked out before the poll: the code after it is short (its
  /// instruction fetch, not its arithmetic, was what took the time there:
  /// bench/results/tinyllama-1.1b-serving.md, sessions 32 and 36).
  template <typename T, int DT, typename Shared>
  __device__ __forceinline__ void stage(const KvAttentionParams &p, long long t, long long g,
                                        int firstHead, int heads, bool writesCache,
                                        Shared &sm) const {
    constexpr int KC = DT / 4;
    constexpr int kLaneElems = kFastMaxDim / 4;
    constexpr int kBlockThreads = 32 * kBlockWarps;
    constexpr int kPer = kFastHeads * DT / kBlockThreads;
    static_assert(kBlockThreads % DT == 0, "a thread's q elements share one dim");
    constexpr int kHeadStride = kBlockThreads / DT; // heads between a thread's q elements
    constexpr int kSlotStride = 4 * kHeadStride * kLaneElems; // their distance in sm.q
    const RotaryParams &rp = *this->rotary;
    const int D = int(p.headDim);
    const T *base = static_cast<const T *>(rp.output);
    const unsigned *x = exchange + t * rp.numHeads * rp.headDim;
    const int qHead = int((static_cast<const T *>(p.q) - base) / D) + firstHead;
    const int kHead = int((static_cast<const T *>(p.k) - base) / D + g);
    const int vHead = int((static_cast<const T *>(p.v) - base) / D + g);
    T *q = reinterpret_cast<T *>(&sm.q[0][0]);
    // The raw k and v wait where keepNewKeyValue puts the rotated ones.
    T *newKey = reinterpret_cast<T *>(sm.newKeyWords);
    T *newValue = reinterpret_cast<T *>(sm.newValueWords);
    auto qSlot = [&](int r, int dq) { return (4 * r + dq / KC) * kLaneElems + dq % KC; };
    // This thread's q elements are rows r0 + e * kHeadStride at dim dq; its
    // k and v (d < D <= DT) are at dim d == dq.
    const int d = threadIdx.x, dq = d % DT, r0 = d / DT;
    const typename DecodeStep<C>::Rotation rotation = this->rotationOfDim(dq);
    const int valueSlot = qSlot(r0, dq), partnerSlot = qSlot(r0, rotation.partnerDim);
    const unsigned *qWords = x + (qHead + r0) * D + dq;
    auto live = [&](int e) { return r0 + e * kHeadStride < heads && dq < D; };
    const T zero = fromFloat<T>(0.f);
    // Step metadata (no kernel's output): loaded before the poll, its round
    // trip is not one more after it, nor the cache row's arithmetic.
    const auto cacheRows = this->template cacheRowsOf<T>(p, g, writesCache ? p.slotIds[t] : -1);
    bool ready;
    unsigned polls = 0;
    do {
      unsigned word[kPer + 2];
#pragma unroll
      for (int e = 0; e < kPer; ++e)
        word[e] = live(e) ? qkvdecode::loadTagged(qWords + e * kHeadStride * D) : tag;
      word[kPer] = d < D ? qkvdecode::loadTagged(x + kHead * D + d) : tag;
      word[kPer + 1] = d < D ? qkvdecode::loadTagged(x + vHead * D + d) : tag;
      ready = true;
#pragma unroll
      for (int e = 0; e < kPer + 2; ++e)
        ready = ready && (word[e] & 0xffff0000u) == tag;
      if (++polls == (1u << 22)) { // seconds without the tag: say what is missing
#pragma unroll
        for (int e = 0; e < kPer + 2; ++e)
          if ((word[e] & 0xffff0000u) != tag && threadIdx.x % 16 == 0)
            printf("infer_qkv_decode stuck: block (%d %d %d) thread %d word %d = %08x, tag %08x\n",
                   blockIdx.x, blockIdx.y, blockIdx.z, threadIdx.x, e, word[e], tag);
        __trap();
      }
      if (ready) {
#pragma unroll
        for (int e = 0; e < kPer; ++e)
          q[valueSlot + e * kSlotStride] = live(e) ? qkvdecode::fromBits<T>(word[e]) : zero;
        if (d < D) {
          newKey[d] = qkvdecode::fromBits<T>(word[kPer]);
          newValue[d] = qkvdecode::fromBits<T>(word[kPer + 1]);
        }
      }
    } while (!__syncthreads_and(ready)); // also orders sm.rotaryTable
    if (lateTrigger)
      launchDependents();
    // Rotated values of this thread's elements, from their raw partners
    // (every slot read is in sm.q or the new words: rows < kFastHeads, dims
    // < DT).
    const float2 cs = sm.rotaryTable[rotation.tableIndex];
    T rotatedQ[kPer];
#pragma unroll
    for (int e = 0; e < kPer; ++e) {
      const int slot = e * kSlotStride;
      const float rotated = this->rotate(
          toFloat(q[valueSlot + slot]), toFloat(q[partnerSlot + slot]), cs, rotation.first,
          rotation.rotates && this->rotatesHead(qHead + r0 + e * kHeadStride));
      rotatedQ[e] = live(e) ? fromFloat<T>(rotated) : zero;
    }
    T k = zero, v = zero;
    if (d < D) {
      const int other = rotation.partnerDim;
      k = fromFloat<T>(this->rotate(toFloat(newKey[d]), toFloat(newKey[other]), cs, rotation.first,
                                    rotation.rotates && this->rotatesHead(kHead)));
      v = fromFloat<T>(this->rotate(toFloat(newValue[d]), toFloat(newValue[other]), cs,
                                    rotation.first, rotation.rotates && this->rotatesHead(vHead)));
    }
    __syncthreads(); // every partner is read
#pragma unroll
    for (int e = 0; e < kPer; ++e)
      q[valueSlot + e * kSlotStride] = rotatedQ[e];
    if (d < DT)
      this->keepNewKeyValue(cacheRows, d, D, k, v, sm);
  }
};

/// infer_qkv_decode's attention blocks' shared memory: fastAttend's, with
/// a key step for each of 8 warps (PolledDecodeStep::kFirstStepShared).
/// Dynamic, as the GEMV's staging is: over the 48 KiB of static shared
/// memory.
using PolledDecodeShared = FastSharedOf<kStepWords, PolledDecodeStep<float>::kBlockWarps>;
static_assert(sizeof(PolledDecodeShared) <= kQkvDecodeAttentionSharedBytes,
              "qkvDecodeSharedBytes (GemvGeometry.h) sizes the launch");

/// infer_qkv_decode's attention blocks (8 warps).
template <typename T, typename C, int kMaxDim>
__device__ __forceinline__ void polledDecode(const QkvDecodeParams &qp, unsigned tag) {
  extern __shared__ uint4 qkvDecodeShared[];
  PolledDecodeShared &sm = *reinterpret_cast<PolledDecodeShared *>(qkvDecodeShared);
  const RotaryKvWriteParams &p = qp.decode;
  PolledDecodeStep<C> decode;
  decode.rotary = &p.rotary;
  decode.exchange = qp.exchange;
  decode.tag = tag;
  decode.y = blockIdx.x % qp.attentionY;
  decode.gridY_ = qp.attentionY;
  decode.z = blockIdx.x / qp.attentionY;
  decode.gridZ_ = qp.attentionZ;
  decode.lateTrigger = qp.lateTrigger != 0;
  INFER_DECODE_STAMP_AT(0, decode.y, decode.z, 0);
  const HeadGroup hg = headGroupOf(p.kv, 0, decode.y, decode.gridY_);
  const long long D = p.kv.headDim;
  if (hg.heads <= 0 || D % 8 != 0 || D > kMaxDim || (kMaxDim == 128 && D <= 64) ||
      hg.heads > kFastHeads || !aligned16(p.kv.cache)) {
    decode.waitForPreviousKernel();
    return;
  }
  fastAttend<T, kMaxDim>(p.kv, 0, hg.g, int(hg.headBase), hg.heads, sm, decode);
}

} // namespace kvimpl

namespace qkvdecode {

/// infer_qkv_decode's body (the module comment): the GEMV blocks wait for
/// the previous kernel after their first weights' loads; the attention
/// blocks never read its output (they poll the GEMV blocks').
template <typename T, typename C, int kMaxDim>
__device__ __forceinline__ void loadingBeforeWaitForPreviousKernel(const QkvDecodeParams &p) {
  const unsigned tag = tagOf(p);
  const unsigned attention = p.attentionY * p.attentionZ;
  if (blockIdx.x >= attention) {
    gemvrows::rowsLoadingFirstUnitBeforeWaitForPreviousKernel<T, 1, false, 1>(
        p.gemv, blockIdx.x - attention, gridDim.x - attention, TaggedExchange{p.exchange, tag});
    return;
  }
  kvimpl::polledDecode<T, C, kMaxDim>(p, tag);
}

} // namespace qkvdecode

template <typename T, typename C, int kMaxDim>
__global__ void __launch_bounds__(kGemvRowsThreads, 2) infer_qkv_decode(QkvDecodeParams p) {
  qkvdecode::loadingBeforeWaitForPreviousKernel<T, C, kMaxDim>(p);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_QKVDECODE_CUH
