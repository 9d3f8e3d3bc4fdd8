//===- GemvGeometry.h - launch geometry and workspace of infer_gemv -------===//
//
// The grid of infer_gemv<T> and the sizes of its split-k workspace, in one
// place for the kernel (NVRTC, nvcc) and the runtime (plain g++). No headers
// beyond KernelParams.h.
//
// Output columns are cut into tiles: one block per (tile, k split), grid =
// (tiles, splits, 1), kGemvThreads threads, chosen by gemvShape(). A block's
// 8 warps stand warpsN side by side along n (each warp owns 64 columns of a
// [k, n] weight or 32 rows of an [n, k] one) and 8 / warpsN deep along k,
// taking turns over the block's k range; their partial sums meet in static
// shared memory (16 KiB). The kernel recovers warpsN from grid.x
// (gemvWarpsNOfGrid) and its k range from grid.y (gemvSplitChunk).
//
//            n ->   tile 0            tile 1
//   k   split 0  | w0 w1 w2 w3 |  | w0 w1 w2 w3 |     warpsN = 4: warps 0-3
//   |            | w4 w5 w6 w7 |  | w4 w5 w6 w7 |     and 4-7 alternate over
//   v   split 1  | ...         |  | ...         |     32-row steps of the split
//
// With one split a block writes its tile of the output directly. With more,
// each block stores its partial sums in its split's slice of the workspace
// (kGemvMaxRows x tileColumns floats at column offset * kGemvMaxRows of the
// split's sums, gemvSplitSums), then counts itself done in counters[tile];
// the block that counts last adds the slices of the tile in split order,
// adds bias and residual, writes the output and zeroes the counter again.
// Under the rms_norm prologue (Gemv.cuh) the blocks store their rows' sums
// of squared inputs the same way, in kGemvMaxRows floats per tile and split
// after all the splits' sums (gemvSplitSquares), and the last block scales
// the output rows by 1 / rms. The grid never depends on rows. The order of
// every addition is fixed, so a launch gives the same bits at every run
// (fp32 atomics added the splits in arrival order before, and greedy ids of
// a random-weight model differed between runs: bench/results/
// llama3-8b-serving.md); the workspace needs no initial values, only the
// counters start at zero.
//
// No alignment is required of any pointer or of k and n: 16-byte accesses are
// used where pointers and row pitches allow, element accesses elsewhere. The
// workspace must be 16-byte aligned (cudaMalloc's is).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_ABI_GEMVGEOMETRY_H
#define INFER_RUNTIME_CUDA_ABI_GEMVGEOMETRY_H

#include "runtime/cuda/abi/KernelParams.h"

namespace infer {
namespace kernels {

/// Threads per block of infer_gemv (8 warps).
constexpr int kGemvThreads = 256;
constexpr int kGemvWarps = kGemvThreads / 32;

/// A split's k range is a multiple of this many rows (the last one ends at k).
constexpr int kGemvSplitRows = 64;

/// Blocks that run at once on the target: 132 multiprocessors of an H200,
/// 3 blocks of the 16-bit kernels on each (78 registers x 256 threads; the
/// f32 kernel fits 2). The split policy fills one such wave.
constexpr int kGemvMultiprocessors = 132;
constexpr int kGemvBlocksPerMultiprocessor = 3;
constexpr int kGemvResidentBlocks = kGemvMultiprocessors * kGemvBlocksPerMultiprocessor;

/// The widest tile (columns) any geometry uses; sizes the workspace.
constexpr int kGemvMaxTileColumns = 512;
/// The narrowest tile; sizes the counters.
constexpr int kGemvMinTileColumns = 32;

struct GemvGrid {
  unsigned x, y, z;
};

/// Output columns one warp owns: 64 of a [k, n] weight, 32 of an [n, k] one.
INFER_ABI_FN int gemvWarpColumns(int transposed) { return transposed ? 32 : 64; }

/// Tiles of n with warpsN warps side by side (at least one).
INFER_ABI_FN long long gemvTiles(long long n, int transposed, int warpsN) {
  const long long tile = (long long)gemvWarpColumns(transposed) * warpsN;
  return n > tile ? (n + tile - 1) / tile : 1;
}

/// Rows of k per split when the grid has `splits` of them: a multiple of
/// kGemvSplitRows (so a split's steps start 16-byte aligned).
INFER_ABI_FN long long gemvSplitChunk(long long k, long long splits) {
  long long chunk = splits > 0 ? (k + splits - 1) / splits : k;
  return (chunk + kGemvSplitRows - 1) / kGemvSplitRows * kGemvSplitRows;
}

/// The warps side by side along n that a grid of gridX tiles was made for:
/// the fewest whose tiles fit in gridX (what gemvGrid() chose). The kernel
/// reads its geometry from the grid this way, so the policy below is the
/// host's alone.
INFER_ABI_FN int gemvWarpsNOfGrid(long long n, int transposed, unsigned gridX) {
  int warps = 1;
  while (warps < kGemvWarps && gemvTiles(n, transposed, warps) > (long long)gridX)
    warps *= 2;
  return warps;
}

/// Tile width (warps along n: 1, 2, 4 or 8) and k splits of a launch.
struct GemvShape {
  int warpsN;
  long long splits;
};

/// The policy, measured on an H200 over the Llama decode shapes (gemv_test's
/// sweep): the best launches are one wave of kGemvResidentBlocks or a little
/// less; more, smaller blocks lose to their reductions and a second partial
/// wave loses most. So among the tilings and split counts (1, 2, 3, 4, 6, 8,
/// 12, ...; none leaving a split empty) that fit one wave, take those within
/// 85% of the fullest and of them the fewest splits, then the narrowest
/// tile. When even the widest tiles alone take more than a wave (huge n),
/// k is not split and the tiles are the widest of which there are at least
/// four waves (more waves, smaller tail), else 64 (32) columns.
/// `wave`: the blocks one launch may have at once (default: all that fit;
/// fewer leave room for the next kernel of a programmatic launch chain).
INFER_ABI_FN GemvShape gemvShape(long long k, long long n, int transposed,
                                 long long wave = kGemvResidentBlocks) {
  const long long most = k > kGemvSplitRows ? (k + kGemvSplitRows - 1) / kGemvSplitRows : 1;
  long long fullest = 0;
  for (int pass = 0; pass < 2; ++pass) {
    for (long long p = 1; p <= most; p *= 2) {
      for (int third = 0; third < 2; ++third) {
        const long long splits = third ? p + p / 2 : p;
        if ((third && p < 2) || splits > most)
          continue;
        if (splits > 1 && gemvSplitChunk(k, splits) * (splits - 1) >= k)
          continue; // the last split would be empty
        for (int warps = 1; warps <= kGemvWarps; warps *= 2) {
          const long long blocks = gemvTiles(n, transposed, warps) * splits;
          if (blocks > wave)
            continue;
          if (pass == 0 && blocks > fullest)
            fullest = blocks;
          if (pass == 1 && blocks * 20 >= fullest * 17) {
            GemvShape shape = {warps, splits};
            return shape;
          }
        }
      }
    }
    if (fullest == 0)
      break;
  }
  int warps = kGemvWarps;
  while (warps > 1 && gemvTiles(n, transposed, warps) < 4LL * wave)
    warps /= 2;
  GemvShape shape = {warps, 1};
  return shape;
}

/// The grid of infer_gemv<T> for any T and rows: (tiles, splits, 1); block =
/// kGemvThreads, no dynamic shared memory.
INFER_ABI_FN GemvGrid gemvGrid(long long k, long long n, int transposed,
                               long long wave = kGemvResidentBlocks) {
  const GemvShape shape = gemvShape(k, n, transposed, wave);
  GemvGrid grid = {unsigned(gemvTiles(n, transposed, shape.warpsN)), unsigned(shape.splits), 1u};
  return grid;
}

/// fp32 sums of one split: kGemvMaxRows rows of every tile's columns.
INFER_ABI_FN long long gemvSplitSumsFloats(long long n) {
  return (long long)kGemvMaxRows *
         ((n + kGemvMaxTileColumns - 1) / kGemvMaxTileColumns * kGemvMaxTileColumns);
}

/// fp32 squares of one split (rms_norm prologue): kGemvMaxRows per tile.
INFER_ABI_FN long long gemvSplitSquaresFloats(long long n) {
  return (long long)kGemvMaxRows * ((n + kGemvMinTileColumns - 1) / kGemvMinTileColumns);
}

/// Split `split`'s sums in the workspace: [tile][kGemvMaxRows][tileColumns].
INFER_ABI_FN float *gemvSplitSums(float *workspace, long long n, long long split) {
  return workspace + split * gemvSplitSumsFloats(n);
}

/// Split `split`'s squares, after all `splits` splits' sums: [tile][kGemvMaxRows].
INFER_ABI_FN float *gemvSplitSquares(float *workspace, long long n, long long splits,
                                     long long split) {
  return workspace + splits * gemvSplitSumsFloats(n) + split * gemvSplitSquaresFloats(n);
}

/// fp32 workspace for every launch with n <= maxN and at most maxSplits k
/// splits (no initial values needed).
INFER_ABI_FN long long gemvWorkspaceFloats(long long maxN, long long maxSplits) {
  return maxSplits * (gemvSplitSumsFloats(maxN) + gemvSplitSquaresFloats(maxN));
}

/// Counters (unsigned int, zeroed once by the runtime) for every launch with
/// n <= maxN: one per tile.
INFER_ABI_FN long long gemvCounters(long long maxN) {
  return (maxN + kGemvMinTileColumns - 1) / kGemvMinTileColumns;
}

/// infer_gemv_rows (GemvRows.cuh): the batch-1 GEMV over [n, k] weights, a
/// warp per output row, 8 warps per block, two blocks per multiprocessor.
constexpr int kGemvRowsThreads = 256;
constexpr int kGemvRowsBlocksPerMultiprocessor = 2;
/// infer_qkv_decode's grid (QkvDecode.cuh): one wave of the row GEMV's
/// blocks, the attention blocks among them.
constexpr int kQkvDecodeBlocks = kGemvMultiprocessors * kGemvRowsBlocksPerMultiprocessor;
/// The most input bytes a block stages in shared memory (two blocks per
/// multiprocessor must fit in its 228 KiB).
constexpr long long kGemvRowsMaxSharedBytes = 96 * 1024;

/// Whether infer_gemv_rows runs a GEMM: [n, k] weights of a 16-bit type,
/// rows of whole 16-byte loads, the input row within the staging limit.
INFER_ABI_FN bool gemvRowsSupported(long long k, long long n, int transposed, int elementBytes) {
  return transposed && elementBytes == 2 && k > 0 && n > 0 && k % 8 == 0 &&
         k * elementBytes <= kGemvRowsMaxSharedBytes;
}

/// Blocks of infer_gemv_rows: one wave of two per multiprocessor, fewer when
/// n has fewer rows than their warps.
INFER_ABI_FN unsigned gemvRowsGrid(long long n) {
  const long long warps = kGemvRowsThreads / 32;
  const long long blocks = (n + warps - 1) / warps;
  const long long wave = (long long)kGemvMultiprocessors * kGemvRowsBlocksPerMultiprocessor;
  return unsigned(blocks < wave ? blocks : wave);
}

/// Dynamic shared memory of infer_gemv_rows: the staged input rows.
INFER_ABI_FN long long gemvRowsSharedBytes(long long k, int elementBytes, int rows = 1) {
  return (long long)rows * k * elementBytes;
}

/// infer_qkv_decode's attention blocks' shared memory (QkvDecode.cuh's
/// PolledDecodeShared, which checks it), and the kernel's dynamic shared
/// memory: the GEMV blocks' staging or that, whichever is larger.
constexpr long long kQkvDecodeAttentionSharedBytes = 74576;
INFER_ABI_FN long long qkvDecodeSharedBytes(long long k, int elementBytes) {
  const long long staging = gemvRowsSharedBytes(k, elementBytes);
  return staging > kQkvDecodeAttentionSharedBytes ? staging : kQkvDecodeAttentionSharedBytes;
}

/// The most input rows of infer_gemv_rows' multi-row form
/// (CudaLaunch.gemv_multi_row; its staging is sized for them).
constexpr int kGemvRowsMultiRows = 4;

/// The decode steps the runtime runs on the multi-row form: T = 2; larger T
/// run infer_gemv. Each row adds an LDS, 8 conversions and 8 FMAs to every
/// 16-byte weight load, and at four rows the CUDA-core dot products, not
/// the weight stream, set the pace. Measured on the H200 (session 23, gemv_test
/// --chain-only, TinyLlama's four GEMVs of a layer, programmatic, floor 20.5
/// us): rows 1 27.7 us; rows 2 34.6 (infer_gemv 38.5); rows 4 48.8
/// (infer_gemv 39.2). End to end (bench, 128 in / 128 out): batch 2 1,534 ->
/// 1,588 tok/s, batch 4 2,991 -> 2,555 had it run T = 4 too.
constexpr int kGemvRowsMultiRowsRun = 2;

/// Whether the multi-row form runs a GEMM: as gemvRowsSupported, with all
/// kGemvRowsMultiRows input rows within the staging limit.
INFER_ABI_FN bool gemvMultiRowsSupported(long long k, long long n, int transposed,
                                         int elementBytes) {
  return gemvRowsSupported(k, n, transposed, elementBytes) &&
         gemvRowsSharedBytes(k, elementBytes, kGemvRowsMultiRows) <= kGemvRowsMaxSharedBytes;
}

/// infer_gemv_rows_mma (GemvRowsMma.cuh): decode of up to kGemvMmaRows
/// tokens over [n, k] weights on tensor cores, a block per tile of
/// kGemvMmaTileRows output rows whose k is split over its 8 warps.
constexpr int kGemvMmaRows = 8;
constexpr int kGemvMmaTileRows = 8;
/// The fewest tokens of a decode step that run infer_gemv_rows_mma by
/// default (--infer-select-kernels' mma-gemv-min-tokens): measured on the
/// H200 ahead of infer_gemv at 3, 4 and 8 tokens (bench/results/
/// tinyllama-1.1b-serving.md, session 25); two tokens keep the row GEMV,
/// whose output rows have the bits each request gets alone.
constexpr int kGemvMmaMinTokens = 3;

/// The fewest tokens of a step that run a gemv_mma record whose min_rows is
/// `recorded` (0 in artifacts from before min_rows: the default they all had).
INFER_ABI_FN int gemvMmaMinRows(unsigned recorded) {
  return recorded > 0 ? int(recorded) : kGemvMmaMinTokens;
}

/// 16-byte vectors between two staged input rows of infer_gemv_rows_mma:
/// the row's own, plus 64 bytes where that is a multiple of 128 bytes, so
/// that the 8 lanes of a quarter warp, which read 4 consecutive vectors of
/// two rows, hit 8 different 16-byte bank groups.
INFER_ABI_FN long long gemvMmaRowVectors(long long k, int elementBytes) {
  const long long vectors = k * elementBytes / 16;
  return vectors % 8 == 0 ? vectors + 4 : vectors;
}

/// Dynamic shared memory of infer_gemv_rows_mma staging `rows` input rows.
INFER_ABI_FN long long gemvMmaSharedBytes(long long k, int elementBytes, int rows) {
  return (long long)rows * gemvMmaRowVectors(k, elementBytes) * 16;
}

/// The most tokens infer_gemv_rows_mma runs a GEMM for: kGemvMmaRows, fewer
/// where their staged rows would pass kGemvRowsMaxSharedBytes (Llama-3-8B's
/// down projection, k = 14,336: 3); 0 where the kernel does not apply
/// ([k, n] weights, a 32-bit type, k not whole 16-byte vectors).
INFER_ABI_FN int gemvMmaMaxRows(long long k, long long n, int transposed, int elementBytes) {
  if (!transposed || elementBytes != 2 || k <= 0 || n <= 0 || k % 8 != 0)
    return 0;
  int rows = kGemvMmaRows;
  while (rows > 0 && gemvMmaSharedBytes(k, elementBytes, rows) > kGemvRowsMaxSharedBytes)
    --rows;
  return rows;
}

/// Warps of infer_gemv_rows_mma that share a tile's k (its kSplits): all 8
/// where the tiles are at most two a block, so that every warp has work;
/// else 1, each warp streaming whole tiles without waiting for the others
/// (GemvRowsMma.cuh).
INFER_ABI_FN int gemvMmaSplits(long long n) {
  const long long tiles = (n + kGemvMmaTileRows - 1) / kGemvMmaTileRows;
  const long long wave = (long long)kGemvMultiprocessors * kGemvRowsBlocksPerMultiprocessor;
  return tiles <= 2 * wave ? 8 : 1;
}

/// Blocks of infer_gemv_rows_mma: one per tile of kGemvMmaTileRows output
/// rows, at most two per multiprocessor (a block takes its next tile
/// gridDim.x on, or with gemvMmaSplits 1 each warp 8 * gridDim.x on).
INFER_ABI_FN unsigned gemvMmaGrid(long long n) {
  const long long tiles = (n + kGemvMmaTileRows - 1) / kGemvMmaTileRows;
  const long long wave = (long long)kGemvMultiprocessors * kGemvRowsBlocksPerMultiprocessor;
  return unsigned(tiles < wave ? tiles : wave);
}

} // namespace kernels
} // namespace infer

#endif // INFER_RUNTIME_CUDA_ABI_GEMVGEOMETRY_H
