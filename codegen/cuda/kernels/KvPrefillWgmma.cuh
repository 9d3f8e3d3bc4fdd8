//===- KvPrefillWgmma.cuh - Hopper prefill attention on wgmma -------------===//
//
// infer_kv_prefill_attention_wgmma<T>: the same blocks, parameters and
// results as infer_kv_prefill_attention (KvPrefillAttention.cuh), with the
// two matrix products of a key tile on sm_90a's warpgroup MMA (Wgmma.cuh)
// instead of mma.sync. The mma.sync kernel is bound by shared-memory reads
// (ldmatrix of every K and V fragment per warp, 81% of the L1/shared pipe)
// and by its 128-register cap; wgmma reads K and V from shared memory
// itself, once per warpgroup of 64 rows, and its accumulators need no
// fragments of the operands in registers.
//
//   block: 128 new tokens of one (sequence, query head), two MMA warpgroups
//   of 64 rows and a producer warpgroup; key tiles of 128 positions through
//   the block table:
//
//   shared: Q [2 halves of 64 columns][128 rows]  | stage 0: K, V | stage 1 ...
//           (128-byte swizzled rows, Wgmma.cuh)
//
//   per key tile and warpgroup:  S (64 x 128) = Q K^T     wgmma, A and B in shared
//                                online softmax of S       registers (RowPairSoftmax)
//                                O (64 x D) += P V         wgmma, P in registers
//
// Per key tile j and MMA warpgroup, S of tile j + 1 and P V of tile j go to
// the tensor cores together and the softmax of tile j + 1 runs while P V
// does; warpgroup 1 issues after warpgroup 0 (ping-pong). Warpgroup 2 only
// copies (FlashAttention-3's warp specialization): Q, then K and V (cp.async)
// through three stages each, with an mbarrier per stage that says it is full
// (every producer thread's copies landed) and one that says it is free (every
// MMA thread's MMAs reading it are done): no block-wide barrier a tile. It
// keeps 72 registers a thread and gives the rest to the MMA warpgroups (216).
//
// H200, 2,048-token prefill, 32 heads / 8 KV heads (kv_attention_test
// --prefill-timings): 416 TFLOP/s against the mma.sync kernel's 183-185.
// Session 27 had the MMA warpgroups copy for themselves, behind the softmax:
// 342. Session 28's producer first ran at 303 (its copies were ~26
// instructions each, the MMA warpgroups waited for V) and at 377 / 416 with
// shuffled row addresses and 56 / 72 of its registers (fewer, with the same
// instructions, was slower: it issues its copies further apart). The session
// 27 design at head size 64 ran at 172 against 181, so 64 keeps mma.sync.
//
// Head size 128 without softcap, 16-byte aligned rows, compiled for sm_90a
// (kvPrefillWgmmaSupported; at 64 the mma.sync kernel is faster): anything
// else, and any GPU code built for another architecture, runs
// infer_kv_prefill_attention's path in the same launch.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_KVPREFILLWGMMA_CUH
#define INFER_CODEGEN_CUDA_KERNELS_KVPREFILLWGMMA_CUH

#include "codegen/cuda/kernels/KvPrefillAttention.cuh"
#include "codegen/cuda/kernels/Wgmma.cuh"

namespace infer {
namespace kernels {
namespace kv_wgmma_detail {

using attention_detail::HeadOperands;

constexpr int kThreadsPerWarpgroup = 128;
constexpr int kRowsPerWarpgroup = 64;
static_assert(kKvPrefillBlockQ == kKvPrefillWgmmaKeys &&
                  kKvPrefillThreads == 2 * kThreadsPerWarpgroup &&
                  kKvPrefillBlockQ == 2 * kRowsPerWarpgroup,
              "two warpgroups of 64 query rows; Q and K/V tiles of the same 128 rows");

/// mbarrier objects (8 bytes of shared memory each, sm_80+ PTX) at shared
/// address `bar`: a phase completes when `count` arrivals came; waits name
/// the phase by its parity.
__device__ __forceinline__ void barrierInit(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/// Arrives on `bar` once this thread's cp.async copies so far have landed
/// (the arrival is one of the phase's count).
__device__ __forceinline__ void barrierArriveOnCopies(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void barrierArrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/// Waits until the phase of `bar` with this parity has completed.
__device__ __forceinline__ void barrierWait(unsigned bar, unsigned parity) {
  asm volatile("{\n"
               ".reg .pred ready;\n"
               "WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 ready, [%0], %1;\n"
               "@!ready bra WAIT;\n"
               "}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
}

/// Where the K/V stages and their mbarriers are (head size 128): stage s
/// holds K at kvTiles + 2 s kTileBytes and V after it; after the last stage
/// the mbarriers full K, full V, empty K, empty V, kStages each. The tile in a
/// stage changes every kStages tiles, so the phase of tile j's fill (and
/// release) is j / kStages.
struct KvStages {
  static constexpr unsigned kTileBytes = kKvPrefillWgmmaKeys * 128 * 2;
  static constexpr int kStages = kKvPrefillWgmmaStages;
  unsigned kvTiles;
  __device__ __forceinline__ unsigned barriers() const {
    return kvTiles + 2 * kStages * kTileBytes;
  }
  __device__ __forceinline__ unsigned tile(bool values, int tile) const {
    return kvTiles + unsigned(tile % kStages) * 2 * kTileBytes + (values ? kTileBytes : 0u);
  }
  __device__ __forceinline__ unsigned full(bool values, int tile) const {
    return barriers() + unsigned((values ? kStages : 0) + tile % kStages) * 8u;
  }
  __device__ __forceinline__ unsigned empty(bool values, int tile) const {
    return barriers() + unsigned(2 * kStages + (values ? kStages : 0) + tile % kStages) * 8u;
  }
  __device__ __forceinline__ unsigned parityOf(int tile) const {
    return unsigned(tile / kStages) & 1u;
  }
};

/// Registers per thread of a warpgroup from here on (setmaxnreg, sm_90a; a
/// multiple of 8 in [24, 256]; the block starts with 168 a thread): the
/// producer gives registers to the two MMA warpgroups, which hold S, O and P.
/// 72 / 216 measured best (416 TFLOP/s; 56 / 224: 377, 40 / 232: 357, 24 /
/// 240 spills the producer: 316).
template <int kRegisters> __device__ __forceinline__ void shrinkRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters> __device__ __forceinline__ void growRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
constexpr int kProducerRegisters = 72;
constexpr int kConsumerRegisters = 216;
/// What each thread of the block gets at launch (__launch_bounds__(kKvPrefillWgmmaThreads, 1):
/// the SM's 65,536 registers in multiples of 8 a thread, 168).
constexpr int kLaunchRegisters = (65536 / kKvPrefillWgmmaThreads) & ~7;
static_assert(kConsumerRegisters * kKvPrefillThreads + kProducerRegisters * kThreadsPerWarpgroup <=
                  kLaunchRegisters * kKvPrefillWgmmaThreads,
              "the MMA warpgroups take no more registers than the producer gives");

/// Copies the 128 rows [row0, row0 + 128) of one head into the swizzled tile
/// at `tile` (Wgmma.cuh: [column half][row][64]), head size 128: producer warp
/// w copies rows 32 w .. 32 w + 31, two a copy instruction (lanes 0-15 the
/// 16-byte columns of the first, lanes 16-31 those of the second). `laneRow`
/// is this lane's address of row row0 + 32 w + lane (any valid row when that
/// one does not exist), so a row's address costs two shuffles instead of a
/// block-table read and 64-bit address arithmetic per copy; rows at or past
/// `rowsLeft` (counted from 32 w) are zero-filled by the copy's source size.
__device__ __forceinline__ void copyTileByWarp(unsigned tile, const char *laneRow, int rowsLeft) {
  const int lane = int(threadIdx.x) & 31, warp = (int(threadIdx.x) >> 5) & 3;
  const int chunk = lane & 15, second = lane >> 4;
  // Row 32 w + 2 i + second: its 128-byte swizzle phase is (2 i) % 8 ^ second.
  const unsigned rowBase = tile + unsigned(chunk >> 3) * (kKvPrefillWgmmaKeys * 128) +
                           unsigned(warp * 32 + second) * 128;
  const unsigned phase = unsigned((chunk & 7) ^ second);
  const unsigned long long lanePointer = reinterpret_cast<unsigned long long>(laneRow);
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const int row = 2 * i + second;
    const char *source =
        reinterpret_cast<const char *>(__shfl_sync(0xffffffffu, lanePointer, row));
    const unsigned destination =
        rowBase + unsigned(i) * 256 + ((phase ^ unsigned((2 * i) & 7)) << 4);
    attention_detail::copyAsync16OrZero(destination, source + chunk * 16,
                                        row < rowsLeft ? 16u : 0u);
  }
}

/// The producer warpgroup (FlashAttention-3's warp specialization): copies Q
/// and every K and V tile into the stages, each as soon as the MMA
/// warpgroups have released the tile kStages before it there, so that the
/// MMA warpgroups issue no copy and wait only for data. Each lane reads one
/// block-table entry a key tile, a tile ahead; position r's V row is as far
/// from op.v.base as its K row from op.k.base (PagedRows).
template <typename T>
__device__ __forceinline__ void produceTiles(
    const HeadOperands<T, kv_prefill_detail::PagedRows<T>> &op, unsigned qTile,
    const KvStages &stage, int q0, int tiles) {
  const int lane = int(threadIdx.x) & 31, firstRow = ((int(threadIdx.x) >> 5) & 3) * 32;
  const int kvSeq = op.kvSeq;
  // Row row0 + 32 w + lane of K (the last row for rows past the end).
  auto keyRow = [&](int row0) {
    return reinterpret_cast<const char *>(op.k(min(row0 + firstRow + lane, kvSeq - 1)));
  };
  const long long valueOffset =
      reinterpret_cast<const char *>(op.v.base) - reinterpret_cast<const char *>(op.k.base);
  const T *queryRow = op.q(min(q0 + firstRow + lane, op.seq - 1));
  copyTileByWarp(qTile, reinterpret_cast<const char *>(queryRow), op.seq - q0 - firstRow);
  // K or V of `tile` from this lane's row address; the stage's full barrier
  // counts this thread's copies (and Q's, for K of tile 0).
  auto copyRows = [&](bool values, int tile, const char *laneRow) {
    if (tile >= kKvPrefillWgmmaStages)
      barrierWait(stage.empty(values, tile), stage.parityOf(tile - kKvPrefillWgmmaStages));
    copyTileByWarp(stage.tile(values, tile), laneRow,
                   kvSeq - tile * kKvPrefillWgmmaKeys - firstRow);
    barrierArriveOnCopies(stage.full(values, tile));
  };
  // In the order the MMA warpgroups read them: K of tile 0, then K of tile
  // j + 1 with V of tile j (S of tile j + 1 and P V of tile j go together).
  const char *keys = keyRow(0), *nextKeys = keyRow(kKvPrefillWgmmaKeys);
  if (tiles > 0)
    copyRows(false, 0, keys);
  for (int tile = 0; tile < tiles; ++tile) {
    const char *values = keys + valueOffset;
    keys = nextKeys;
    if (tile + 2 < tiles)
      nextKeys = keyRow((tile + 2) * kKvPrefillWgmmaKeys);
    if (tile + 1 < tiles)
      copyRows(false, tile + 1, keys);
    copyRows(true, tile, values);
  }
  // Every copy has landed before the block's shared memory goes.
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

/// One block on wgmma: warpgroups 0 and 1 do the MMAs and the softmax,
/// warpgroup w of them owns query rows q0 + 64 w .. q0 + 64 w + 63, warp w' of
/// it rows 16 w' .. 16 w' + 15 of those (RowPairSoftmax layout); warpgroup 2
/// copies (produceTiles). Requires !ScoreMap(scale, softcap).prescale and
/// op.aligned.
///
/// No block-wide barrier a tile: each K and V stage has a `full` mbarrier
/// (every producer thread arrives when its copies into the stage have landed)
/// and an `empty` one (every MMA thread arrives when its warpgroup's MMAs
/// reading the stage are done), so a warpgroup waits for the data it reads and
/// a copy for the stage it overwrites, not for the other warpgroup's softmax
/// (session 27: 331 -> 342 TFLOP/s against one __syncthreads a tile).
template <typename T, int kD, typename KeyRows>
__device__ __forceinline__ void wgmmaAttention(const HeadOperands<T, KeyRows> &op,
                                               unsigned char *smem, int q0) {
  constexpr int kKeys = kKvPrefillWgmmaKeys;
  constexpr int kStages = kKvPrefillWgmmaStages;
  constexpr int kOutTiles = kD / 8;
  constexpr unsigned kHalfBytes = kKeys * 128; // one 64-column half of a 128-row tile
  constexpr unsigned kTileBytes = kHalfBytes * (kD / 64);
  const unsigned qTile = (attention_detail::sharedAddress(smem) + 1023u) & ~1023u;
  const unsigned kvTiles = qTile + kTileBytes;
  static_assert(kTileBytes == KvStages::kTileBytes, "head size 128");
  const KvStages stage{kvTiles};

  const int seq = op.seq, kvSeq = op.kvSeq, causal = op.causal;
  // Through a shuffle, so that the compiler sees the warpgroup (and every
  // branch on it) as uniform: wgmma on a path it thinks divergent is
  // serialized (ptxas C7520).
  const int warpgroup = __shfl_sync(0xffffffffu, int(threadIdx.x) / kThreadsPerWarpgroup, 0);
  const int warp = (int(threadIdx.x) >> 5) & 3, lane = int(threadIdx.x) & 31;

  // Full barriers count the producer's 128 threads, empty ones the 256 MMA threads.
  if (threadIdx.x == 0)
    for (int b = 0; b < 4 * kStages; ++b)
      barrierInit(stage.barriers() + unsigned(b) * 8u,
                  b < 2 * kStages ? kThreadsPerWarpgroup : kKvPrefillThreads);
  __syncthreads();

  const int tiles =
      (attention_detail::blockKeyEnd(q0, kKvPrefillBlockQ, seq, kvSeq, causal) + kKeys - 1) /
      kKeys;
  if (warpgroup == 2) {
    shrinkRegisters<kProducerRegisters>();
    produceTiles<T>(op, qTile, stage, q0, tiles);
    return;
  }
  growRegisters<kConsumerRegisters>();

  // Every MMA thread releases every tile once, whether its warpgroup read it or not.
  auto release = [&](bool values, int tile) {
    if (tile < tiles)
      barrierArrive(stage.empty(values, tile));
  };
  auto waitFull = [&](bool values, int tile) {
    barrierWait(stage.full(values, tile), stage.parityOf(tile));
  };

  const int groupFirst = q0 + warpgroup * kRowsPerWarpgroup;
  const bool groupActive = groupFirst < seq;
  const int groupLastKey = attention_detail::lastVisibleKey(
      min(groupFirst + kRowsPerWarpgroup - 1, seq - 1), seq, kvSeq, causal);
  // Keys [0, groupFullKey] are visible to all 64 rows (-1: some row is padding).
  const int groupFullKey = groupFirst + kRowsPerWarpgroup - 1 < seq
                               ? attention_detail::lastVisibleKey(groupFirst, seq, kvSeq, causal)
                               : -1;
  const int rowA = groupFirst + 16 * warp + (lane >> 2), t = lane & 3;
  attention_detail::RowPairSoftmax rows(op.scale, op.softcap);
  rows.lastKeyA = attention_detail::lastVisibleKey(rowA, seq, kvSeq, causal) - 2 * t;
  rows.lastKeyB = attention_detail::lastVisibleKey(rowA + 8, seq, kvSeq, causal) - 2 * t;
  rows.resetRows();
  float out[kOutTiles][4];
#pragma unroll
  for (int j = 0; j < kOutTiles; ++j)
    out[j][0] = out[j][1] = out[j][2] = out[j][3] = 0.f;
  // This warpgroup's Q rows as the A operand (K-major, 8-row groups 1,024 bytes apart).
  const unsigned qRows = qTile + unsigned(warpgroup * kRowsPerWarpgroup * 128);
  // Tiles [0, groupTiles) have keys some row of this warpgroup sees.
  const int groupTiles = groupActive ? min(tiles, groupLastKey / kKeys + 1) : 0;
  // S = Q K^T of `tile` into s, issued (not waited for) as one wgmma group.
  float s[kKeys / 8][4];
  auto issueScores = [&](int tile) {
    const unsigned k = stage.tile(false, tile);
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      const unsigned offset = unsigned(ks >> 2) * kHalfBytes + unsigned(ks & 3) * 32;
      wgmma::mmaSharedA128<T>(s, wgmma::descriptor(qRows + offset, 16, 1024),
                              wgmma::descriptor(k + offset, 16, 1024), ks > 0);
    }
    wgmma::commit();
  };
  // Softmax weights of s (keys of `tile`); O's rescale factors.
  auto weigh = [&](int tile) {
    const int key0 = tile * kKeys;
    return key0 + kKeys - 1 <= groupFullKey ? rows.template weigh<false, false>(s, key0)
                                            : rows.template weigh<true, false>(s, key0);
  };
  // P of the tile whose O += P V is next, as register A operands.
  unsigned weights[kKeys / 16][4];
  auto packWeights = [&] {
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk)
      attention_detail::weightsAsOperandA<T>(weights[kk], s, kk);
  };
  // O += P V of `tile` (its weights in `weights`), issued as one wgmma group.
  auto issueValues = [&](int tile) {
    // V (keys x D) as the transposed B: 16 keys per step (2,048 bytes), the
    // second 64-column half kHalfBytes further.
    const unsigned v = stage.tile(true, tile);
#pragma unroll
    for (int kk = 0; kk < kKeys / 16; ++kk)
      wgmma::mmaRegisterA<T, kD>(out, weights[kk],
                                 wgmma::descriptor(v + unsigned(kk) * 2048, kHalfBytes, 1024), 1);
    wgmma::commit();
  };
  // Ping-pong, as FlashAttention-3: warpgroup 1 issues a tile's MMAs after
  // warpgroup 0 has issued its own (named barrier 1), so that the tensor cores
  // take them in that order and each warpgroup's softmax runs while they do
  // the other's; warpgroup 0 issues tile j after warpgroup 1 issued tile j - 1
  // (barrier 2), so that neither barrier sees two tiles' arrivals at once.
  auto waitTurn = [&](int tile) {
    if (warpgroup == 1)
      asm volatile("bar.sync 1, %0;\n" ::"n"(kKvPrefillThreads) : "memory");
    else if (tile > 0)
      asm volatile("bar.sync 2, %0;\n" ::"n"(kKvPrefillThreads) : "memory");
  };
  auto passTurn = [&](int tile) {
    if (warpgroup == 0)
      asm volatile("bar.arrive 1, %0;\n" ::"n"(kKvPrefillThreads) : "memory");
    else if (tile + 1 < tiles)
      asm volatile("bar.arrive 2, %0;\n" ::"n"(kKvPrefillThreads) : "memory");
  };

  // Tile 0's scores before the loop (Q came with K of tile 0); then per tile
  // j: S of tile j + 1 and O += P V of tile j are issued together, and the
  // softmax of tile j + 1 runs on the CUDA cores while the tensor cores do P V
  // (wgmma groups complete in order: waiting for all but the newest leaves P
  // V running).
  // (No key at all, tiles 0, only under metadata the host rejects: then no
  // copy arrives on the barrier, and waiting would hang the block.)
  if (tiles > 0)
    waitFull(false, 0);
  wgmma::fenceSharedForAsyncProxy();
  if (groupTiles > 0) {
    wgmma::fence();
    issueScores(0);
    wgmma::wait<0>();
    wgmma::pin(s);
    weigh(0); // O is still zero: nothing to rescale
    packWeights();
  }
  release(false, 0);
  for (int tile = 0; tile < tiles; ++tile) {
    if (tile + 1 < groupTiles)
      waitFull(false, tile + 1);
    if (tile < groupTiles)
      waitFull(true, tile);
    // cp.async writes through the generic proxy, wgmma reads through the async one.
    wgmma::fenceSharedForAsyncProxy();
    waitTurn(tile);
    // Each branch waits for what it issued (ptxas serializes wgmma whose
    // issue and wait it cannot pair up).
    if (tile + 1 < groupTiles) {
      wgmma::fence();
      issueScores(tile + 1);
      issueValues(tile);
      passTurn(tile);
      wgmma::wait<1>(); // S done, P V may still run
      wgmma::pin(s);
      release(false, tile + 1);
      const attention_detail::RowPairSoftmax::Rescale factors = weigh(tile + 1);
      wgmma::wait<0>();
      wgmma::pin(out);
      release(true, tile);
      attention_detail::RowPairSoftmax::rescale(out, factors);
      packWeights();
    } else if (tile < groupTiles) {
      wgmma::fence();
      issueValues(tile);
      passTurn(tile);
      release(false, tile + 1);
      wgmma::wait<0>();
      wgmma::pin(out);
      release(true, tile);
    } else {
      passTurn(tile);
      release(false, tile + 1);
      release(true, tile);
    }
  }
  if (groupActive)
    rows.store(out, op.out + 2 * t, op.outStride, rowA, seq, kOutTiles, true);
}

} // namespace kv_wgmma_detail

/// Paged causal attention of the step's new tokens: infer_kv_prefill_attention
/// (same grid, block and parameters) with dynamic shared memory
/// kvPrefillWgmmaSharedBytes(headDim, sizeof(T)) and kKvPrefillWgmmaThreads
/// threads, on wgmma where the head allows it (see the top). One block per
/// SM: 168 registers a thread at launch, moved to the MMA warpgroups.
/// kHeadClass: attentionHeadClass(p.headDim), for the mma.sync fallback.
template <typename T, int kHeadClass>
__global__ void __launch_bounds__(kKvPrefillWgmmaThreads, 1)
    infer_kv_prefill_attention_wgmma(KvAttentionParams p) {
  waitForPreviousKernel();
  extern __shared__ __align__(1024) unsigned char kvPrefillWgmmaShared[];
  attention_detail::HeadOperands<T, kv_prefill_detail::PagedRows<T>> op;
  int q0;
  if (!kv_prefill_detail::blockOperands<T>(p, op, q0))
    return;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (attention_detail::HasTensorCores<T>::value) {
    if (op.aligned && !attention_detail::ScoreMap(op.scale, op.softcap).prescale) {
      // A launch without the producer warpgroup (a record written for
      // another block size) would wait forever for its copies: it takes the
      // fallback instead.
      if (kvPrefillWgmmaSupported(op.headDim, int(sizeof(T))) &&
          blockDim.x == kKvPrefillWgmmaThreads) {
        kv_wgmma_detail::wgmmaAttention<T, 128>(op, kvPrefillWgmmaShared, q0);
        return;
      }
    }
  }
#endif
  // The fallback's blocks are kKvPrefillThreads; the producer warpgroup has
  // nothing to do there (exited threads do not hold up its barriers).
  if (threadIdx.x >= kKvPrefillThreads)
    return;
  attention_detail::runTensorCorePath<kHeadClass>(op, kvPrefillWgmmaShared, q0);
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_KVPREFILLWGMMA_CUH
