//===- KvPrefillAttention.cuh - tensor-core prefill over the paged cache --===//
//
// infer_kv_prefill_attention<T>: the step program's paged attention
// (KvAttentionParams, same results as infer_kv_attention) for prefill chunks,
// run after infer_kv_write so that every position of every sequence, the new
// tokens included, is in the cache. Block (tile, head, sequence) takes new
// tokens [128 tile, 128 tile + 128) of the sequence for one query head and
// runs infer_attention's tensor-core path (Attention.cuh: mma.sync, ldmatrix,
// cp.async, online softmax in fp32) with seq = n new tokens and kvSeq = the
// context length, so the causal offset kvSeq - seq puts new token i at
// position context - n + i. Only the key addressing differs: each K/V row
// of a tile comes from the cache block its position falls in, so a tile may
// span several cache blocks of any size:
//
//   key tile (64 or 128 positions)     cache blocks (blockSize positions each)
//   position r  ──>  blockTables[seq][r / blockSize]  ──>  [block][K | V][r % blockSize][kvHead][:]
//
// Rows are headDim contiguous elements (16-byte copies when the cache, q and
// the output are 16-byte aligned). Blocks whose tile starts past their
// sequence's new tokens return at once; geometry in KvPrefillGeometry.h.
//
// infer_kv_prefill_attention_fp8<T> does the same over an FP8 cache
// (--kv-cache-dtype fp8: E4M3 bytes of K / kCacheScale and V / vCacheScale):
// each 8 bytes of a K or V row become 8 T values as they are stored to
// shared memory (exact: every E4M3 value is a bf16 and an f16), the K scale
// joins the score scale and the V scale the output's, so the tensor-core
// loop is infer_kv_prefill_attention's.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVPREFILLATTENTION_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVPREFILLATTENTION_CUH

#include "codegen/cuda/kernels/Attention.cuh"
#include "runtime/cuda/abi/KvPrefillGeometry.h"

namespace infer {
namespace kernels {
namespace kv_prefill_detail {

static_assert(kKvPrefillBlockQ == kAttentionBlockQ && kKvPrefillThreads == kAttentionThreads,
              "the prefill kernel runs infer_attention's blocks");

/// Row source (attention_detail::loadTile) of one kv head's K or V rows of
/// one sequence: position r at
///   base + table[r / blockSize] * blockStride + (r % blockSize) * rowElems,
/// base = cache + kvHead * headDim (+ blockSize * rowElems for V).
template <typename T> struct PagedRows {
  using Element = T;
  static constexpr bool kDecodes = false; // 16-bit rows, copied as they are
  const T *base;
  const long long *table;
  // Elements per cache block and per position (a block stays far below 2^32
  // elements; block ids are 64-bit).
  unsigned blockStride, rowElems, blockSize;
  int blockShift; // log2(blockSize), or -1 when it is not a power of two

  /// Row `row`, with blockShift >= 0 known (kPowerOfTwo) or not.
  template <bool kPowerOfTwo> __device__ __forceinline__ const T *at(int row) const {
    unsigned block, offset;
    if (kPowerOfTwo) {
      block = unsigned(row) >> blockShift;
      offset = unsigned(row) - (block << blockShift);
    } else {
      block = unsigned(row) / blockSize;
      offset = unsigned(row) - block * blockSize;
    }
    return base + __ldg(table + block) * (long long)blockStride + offset * rowElems;
  }
  __device__ __forceinline__ const T *operator()(int row) const {
    return blockShift >= 0 ? at<true>(row) : at<false>(row);
  }
};

/// An FP8 cache's rows: E4M3 bytes, addressed as PagedRows, each 16-byte
/// piece of T decoded from 8 of them (loadTile's kDecodes).
template <typename T> struct PagedE4M3Rows : PagedRows<unsigned char> {
  static constexpr bool kDecodes = true;

  /// Elements [col, col + 8) of row `row` as T bits (col % 8 == 0: the 8
  /// bytes are 8-byte aligned, headDim % 16 == 0 as kvPrefillSupported).
  __device__ __forceinline__ uint4 decode8(int row, int col) const {
    const uint2 bytes = __ldg(reinterpret_cast<const uint2 *>((*this)(row) + col));
    auto pair = [](unsigned word, int shift) {
      return packPair<T>(e4m3ToFloat((word >> shift) & 0xffu),
                         e4m3ToFloat((word >> (shift + 8)) & 0xffu));
    };
    return make_uint4(pair(bytes.x, 0), pair(bytes.x, 16), pair(bytes.y, 0), pair(bytes.y, 16));
  }
};

/// The operands of query head `head` of sequence `seq` (new tokens
/// [begin, begin + n) of the packed rows); Rows: PagedRows<T> or
/// PagedE4M3Rows<T>, whose scales join the score and output scales.
template <typename T, typename Rows>
__device__ __forceinline__ attention_detail::HeadOperands<T, Rows>
pagedOperands(const KvAttentionParams &p, long long seq, long long head, long long begin,
              long long n) {
  const long long D = p.headDim, kvHead = head / (p.numHeads / p.numKvHeads);
  const long long rowElems = p.numKvHeads * D;
  attention_detail::HeadOperands<T, Rows> op;
  op.q.base = static_cast<const T *>(p.q) + begin * p.qRowStride + head * D;
  op.q.stride = p.qRowStride;
  op.k.base = static_cast<const typename Rows::Element *>(p.cache) + kvHead * D;
  op.k.table = p.blockTables + seq * p.maxBlocksPerSeq;
  op.k.blockStride = unsigned(2 * p.blockSize * rowElems);
  op.k.rowElems = unsigned(rowElems);
  op.k.blockSize = unsigned(p.blockSize);
  op.k.blockShift = (p.blockSize & (p.blockSize - 1)) == 0 ? __ffsll(p.blockSize) - 1 : -1;
  op.v = op.k;
  op.v.base = op.k.base + p.blockSize * rowElems;
  op.outStride = p.numHeads * D;
  op.out = static_cast<T *>(p.output) + begin * op.outStride + head * D;
  op.headDim = int(D);
  op.seq = int(n);
  // Positions past the block table (invalid metadata, which the cpu backend
  // rejects) are never read.
  const long long capacity = p.maxBlocksPerSeq * p.blockSize, context = p.contextLens[seq];
  op.kvSeq = int(context < capacity ? context : capacity);
  op.causal = 1;
  // headDim % 16 == 0 (kvPrefillSupported) keeps every cache row, head and
  // column offset 16-byte aligned.
  op.aligned =
      ((reinterpret_cast<unsigned long long>(p.q) | reinterpret_cast<unsigned long long>(p.cache) |
        reinterpret_cast<unsigned long long>(p.output)) &
       15) == 0 &&
      (p.qRowStride & 7) == 0;
  if constexpr (Rows::kDecodes) {
    op.scale = p.scale * p.kCacheScale;
    op.outScale = p.vCacheScale;
  } else {
    op.scale = p.scale;
    op.outScale = 1.f;
  }
  op.softcap = p.softcap;
  return op;
}

/// This block's query tile of one (sequence, head) of the step, as operands
/// and the tile's first new token; false when the block has nothing to do
/// (parameters the kernels do not handle, a sequence past the step's, a tile
/// past the sequence's new tokens). Tiles are taken longest first, as in
/// infer_attention (`batch` is the sequence).
template <typename T, typename Rows>
__device__ __forceinline__ bool
blockOperands(const KvAttentionParams &p, attention_detail::HeadOperands<T, Rows> &op, int &q0) {
  if (!kvPrefillSupported(p.headDim, int(sizeof(T))) || p.numKvHeads <= 0 ||
      p.numHeads % p.numKvHeads != 0 || p.blockSize <= 0)
    return false;
  const attention_detail::BlockTask task = attention_detail::blockTask();
  if (task.batch >= p.numSeqs)
    return false;
  const long long begin = p.seqStarts[task.batch], n = p.seqStarts[task.batch + 1] - begin;
  if (task.q0 >= n)
    return false;
  op = pagedOperands<T, Rows>(p, task.batch, task.head, begin, n);
  q0 = task.q0;
  return true;
}

/// One block of either prefill kernel over a cache of Rows (after the wait
/// for the previous kernel).
template <typename T, int kHeadClass, typename Rows>
__device__ __forceinline__ void prefillBlock(const KvAttentionParams &p) {
  extern __shared__ __align__(128) unsigned char kvPrefillShared[];
  attention_detail::HeadOperands<T, Rows> op;
  int q0;
  if (blockOperands<T>(p, op, q0))
    attention_detail::runTensorCorePath<kHeadClass>(op, kvPrefillShared, q0);
}

} // namespace kv_prefill_detail

/// Paged causal attention of the step's new tokens (see the top and
/// KvAttentionParams). grid = (ceil(max new tokens / kKvPrefillBlockQ),
/// numHeads, numSeqs), block = kKvPrefillThreads, dynamic shared memory
/// kvPrefillSharedBytes(headDim, sizeof(T)). Requires sm_80+ and
/// kvPrefillSupported(headDim, sizeof(T)) (else it writes nothing). At most
/// 128 registers per thread, as infer_attention. kHeadClass:
/// attentionHeadClass(p.headDim) (else it writes nothing).
template <typename T, int kHeadClass>
__global__ void __launch_bounds__(kKvPrefillThreads, 512 / kKvPrefillThreads)
    infer_kv_prefill_attention(KvAttentionParams p) {
  waitForPreviousKernel();
  kv_prefill_detail::prefillBlock<T, kHeadClass, kv_prefill_detail::PagedRows<T>>(p);
}

/// infer_kv_prefill_attention over an FP8 cache (see the top): the same
/// grid, block, shared memory and requirements; kCacheScale and vCacheScale
/// > 0.
template <typename T, int kHeadClass>
__global__ void __launch_bounds__(kKvPrefillThreads, 512 / kKvPrefillThreads)
    infer_kv_prefill_attention_fp8(KvAttentionParams p) {
  waitForPreviousKernel();
  kv_prefill_detail::prefillBlock<T, kHeadClass, kv_prefill_detail::PagedE4M3Rows<T>>(p);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVPREFILLATTENTION_CUH
