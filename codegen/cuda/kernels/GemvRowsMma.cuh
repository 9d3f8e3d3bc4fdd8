//===- GemvRowsMma.cuh - decode GEMV of up to 8 tokens on tensor cores ----===//
//
// infer_gemv_rows_mma<T, kPrologue, kSplits> (GemvParams; T bf16 or f16): out[t, j] =
// sum_k x[t, k] W[j, k] (+ bias[j]) (+ residual[t, j]) for t < p.rows <=
// gemvMmaMaxRows(k, n) (at most kGemvMmaRows = 8), W [n, k]
// (`transpose_weight`), k a multiple of 8 and W 16-byte aligned.
//
// Why a third GEMV: decode steps of 3-8 tokens ran infer_gemv, whose column
// tiles end in a split-k reduction across blocks (a workspace, a counter, the
// last block); the row kernel over several rows (infer_gemv_rows<.., kRows>)
// does 8 conversions and 8 FMAs per row for each 16 bytes of weights, and at
// four rows those set its pace. Here the tokens are the M of an
// mma.m16n8k16 (rows 8-15 zero) and 8 output rows its N, so one instruction
// multiplies 256 bytes of weights with every token, and nothing crosses
// blocks:
//
//   block (8 warps): stage x's rows (through the rms_norm prologue) in
//   shared memory once; then for each tile of 8 output rows (blockIdx.x,
//   + gridDim.x, ...) warp w takes the w-th eighth of k, lane (g, q) =
//   (lane / 4, lane % 4) loads the tile's row g at 16-byte vector 4s + q of
//   step s (32 k: 64 contiguous bytes of each row per load instruction), and
//   the warps' accumulators meet in shared memory, added in warp order (the
//   same bits whatever the timing).
//
// That is kSplits = 8. Where the tiles are more than two a block
// (gemvMmaSplits: gate/up, the LM head), kSplits = 1: each warp takes whole
// tiles of its own (tile blockIdx.x + gridDim.x * warp, then 8 * gridDim.x
// on) and writes them, with no barrier or shared-memory reduction a tile.
// gemv_test --mma-splits (session 26, H200, 4 tokens, in one run): gate/up
// 19.4 -> 19.0 us, the LM head 52.1 -> 48.8 (Llama-3-8B's 370.7 -> 364.2);
// the shorter shapes run slower that way (qkv 5.9 -> 9.3), as with k split
// over 2 or 4 warps. Neither a deeper pipeline of units (2-8 in flight, in
// rotating or unrolled registers) nor loads of whole 128-byte lines (moved
// to their lanes by shuffles) streamed faster. What cost was instructions:
// per-step bounds checks made ~58 a warp-wide load (ncu), so whole units
// (wholeUnit) load and multiply without them: 5.2 -> 2.8 M instructions on
// gate/up, the layer chain at 4 tokens 44.0 -> 41.6 us; the long shapes are
// still at ~60% of HBM, their warps now waiting on loads
// (bench/results/tinyllama-1.1b-serving.md, session 26).
//
// A lane's 8 elements of a vector are K {2q, 2q+1, 2q+8, 2q+9} of two mmas
// (elements 0-3, then 4-7), the same permutation for the weights (B: column
// g, the loaded words as they are) and for x (A: staged row g's same vector,
// zeros for g >= p.rows).
//
// Measured on the H200 (session 25; bench/results/tinyllama-1.1b-serving.md):
// gemv_test's TinyLlama layer chain of four GEMVs at 4 tokens 41.1-41.7 us
// (44.4-44.8 with the rms_norms folded) against infer_gemv's 45.5 (whose
// rms_norms run as their own launches); tinyllama-1.1b decode TPOT at batch
// 3 / 4 / 8 1.295 / 1.287 / 1.383 -> 1.231 / 1.223 / 1.360 ms.
//
// As infer_gemv_rows: a unit of weights (kUnitSteps = 8 steps, a 16-byte
// load a step and lane: 4 KB a warp) is in flight while the previous one is
// multiplied, the first before the kernel
// waits for the previous one (programmatic dependent launch), and the
// rms_norm prologue stages round_T(x * (normWeight + offset)) and scales
// each output by 1 / rms.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_GEMVROWSMMA_CUH
#define INFER_CODEGEN_CUDA_KERNELS_GEMVROWSMMA_CUH

#include "codegen/cuda/kernels/GemvRows.cuh"

namespace infer {
namespace kernels {
namespace gemvrowsmma {

using gemvimpl::U32;
using gemvrows::kWarps;

/// Steps (32 k of the tile's 8 rows each) in a unit of weights: a 16-byte
/// load a step and lane.
constexpr int kUnitSteps = 8;

/// Where a warp's loads go: its share of k as steps [stepBegin, stepEnd) of
/// the rows, in units of kUnitSteps.
struct WarpRange {
  long long vectors, stepBegin, stepEnd, units;
};

__device__ __forceinline__ WarpRange warpRange(const GemvParams &p, int elementBytes, int member,
                                               int splits) {
  WarpRange r;
  r.vectors = p.k * elementBytes / 16;
  const long long steps = (r.vectors + 3) / 4;
  r.stepBegin = steps * member / splits;
  r.stepEnd = steps * (member + 1) / splits;
  r.units = (r.stepEnd - r.stepBegin + kUnitSteps - 1) / kUnitSteps;
  return r;
}

/// Whether the unit from step firstStep on lies wholly in the warp's range
/// and in the rows (every unit but a range's last, in the models' shapes).
__device__ __forceinline__ bool wholeUnit(const WarpRange &r, long long firstStep) {
  return firstStep + kUnitSteps <= r.stepEnd && (firstStep + kUnitSteps) * 4 <= r.vectors;
}

/// The unit `unit` of the warp's range in tile `tile`: for each step, the
/// tile's row g at vector 4s + q (zeros past n or past the row).
__device__ __forceinline__ void loadUnit(const uint4 *weight, long long n, const WarpRange &r,
                                         long long tile, long long unit, int g, int q,
                                         uint4 (&out)[kUnitSteps]) {
  const long long row = tile * kGemvMmaTileRows + g;
  const long long firstStep = r.stepBegin + unit * kUnitSteps;
  if (wholeUnit(r, firstStep) && (tile + 1) * kGemvMmaTileRows <= n) {
    // Every load in range: 8 loads at fixed offsets from one address (the
    // checks below cost ~25 instructions a step; session 26).
    const uint4 *from = weight + row * r.vectors + firstStep * 4 + q;
#pragma unroll
    for (int s = 0; s < kUnitSteps; ++s)
      out[s] = gemvimpl::loadStream(from + s * 4);
    return;
  }
#pragma unroll
  for (int s = 0; s < kUnitSteps; ++s) {
    const long long vector = (firstStep + s) * 4 + q;
    out[s] = firstStep + s < r.stepEnd && vector < r.vectors && row < n
                 ? gemvimpl::loadStream(weight + row * r.vectors + vector)
                 : make_uint4(0u, 0u, 0u, 0u);
  }
}

/// The first tile of the warp's group (kWarps / kSplits groups a block; tile
/// blockIdx.x + gridDim.x * group, then kWarps / kSplits * gridDim.x on).
template <int kSplits> __device__ __forceinline__ long long firstTile() {
  return blockIdx.x + (long long)gridDim.x * ((threadIdx.x >> 5) / kSplits);
}

/// The kernel's first statement (check_kernel_entries.py): the warp's range
/// of k and the first unit of its first tile's weights (no kernel's output)
/// are requested, then the next kernel may launch, then the wait for the
/// previous kernel's output (as infer_gemv_rows).
template <int kSplits>
__device__ __forceinline__ void loadFirstUnitThenWaitForPreviousKernel(const GemvParams &p,
                                                                       int elementBytes,
                                                                       WarpRange &range,
                                                                       uint4 (&unit)[kUnitSteps]) {
  const int lane = threadIdx.x & 31;
  range = warpRange(p, elementBytes, (threadIdx.x >> 5) % kSplits, kSplits);
  const long long tile = firstTile<kSplits>();
  if (range.units > 0 && tile * kGemvMmaTileRows < p.n)
    loadUnit(static_cast<const uint4 *>(p.weight), p.n, range, tile, 0, lane >> 2, lane & 3, unit);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// acc (each step's first 16 k) and acc2 (its second) += the staged rows
/// (A rows g < rows; A rows 8-15 are zeros) times the unit's weights (B).
template <typename T>
__device__ __forceinline__ void multiplyUnit(const uint4 (&w)[kUnitSteps], const uint4 *staged,
                                             long long rowVectors, const WarpRange &r,
                                             long long unit, int g, int q, int rows,
                                             float (&acc)[4], float (&acc2)[4]) {
  const long long firstStep = r.stepBegin + unit * kUnitSteps;
  if (wholeUnit(r, firstStep)) {
    // A rows g >= rows multiply row rows - 1 (finite values, in the staged
    // rows): they give only outputs of tokens past p.rows, which are not
    // written, so no zeros need selecting.
    const uint4 *x = staged + (g < rows ? g : rows - 1) * rowVectors + firstStep * 4 + q;
#pragma unroll
    for (int s = 0; s < kUnitSteps; ++s) {
      const uint4 v = x[s * 4];
      gemvimpl::mma<T>(acc, v.x, 0u, v.y, 0u, w[s].x, w[s].y);
      gemvimpl::mma<T>(acc2, v.z, 0u, v.w, 0u, w[s].z, w[s].w);
    }
    return;
  }
#pragma unroll
  for (int s = 0; s < kUnitSteps; ++s) {
    const long long vector = (firstStep + s) * 4 + q;
    if (firstStep + s >= r.stepEnd)
      break; // warp-uniform
    const uint4 x = g < rows && vector < r.vectors ? staged[g * rowVectors + vector]
                                                   : make_uint4(0u, 0u, 0u, 0u);
    gemvimpl::mma<T>(acc, x.x, 0u, x.y, 0u, w[s].x, w[s].y);
    gemvimpl::mma<T>(acc2, x.z, 0u, x.w, 0u, w[s].z, w[s].w);
  }
}

/// out[t, row] = sum * scale[t] (+ bias[row]) (+ residual[t, row]).
template <typename T>
__device__ __forceinline__ void writeOutput(const GemvParams &p, const float *rowScale, int t,
                                            long long row, float sum) {
  const T *bias = static_cast<const T *>(p.bias);
  const T *residual = static_cast<const T *>(p.residual);
  float v = sum * rowScale[t];
  if (bias)
    v += toFloat(bias[row]);
  if (residual)
    v += toFloat(residual[t * p.n + row]);
  static_cast<T *>(p.output)[t * p.n + row] = fromFloat<T>(v);
}

/// Writes tile `tile`'s outputs from the accumulators: acc[0], acc[1] are
/// (token g, the tile's rows 2q and 2q + 1) of the warp's share of k
/// (acc[2], acc[3] belong to the zero A rows 8-15). A warp with the whole k
/// (kSplits 1) writes its own; else the 8 warps' shares meet in
/// `partials[buffer]` and the first 64 threads add them in warp order (the
/// same bits whatever the timing).
template <typename T, int kSplits>
__device__ __forceinline__ void finishTile(const GemvParams &p, const float (&acc)[4],
                                           const float (&acc2)[4], long long tile,
                                           float2 (*partials)[kWarps][32], int buffer,
                                           const float *rowScale, int rows) {
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  if (kSplits == 1) {
    const long long row = tile * kGemvMmaTileRows + 2 * q;
    if (g < rows) {
      if (row < p.n)
        writeOutput<T>(p, rowScale, g, row, 0.f + (acc[0] + acc2[0]));
      if (row + 1 < p.n)
        writeOutput<T>(p, rowScale, g, row + 1, 0.f + (acc[1] + acc2[1]));
    }
    return;
  }
  partials[buffer][threadIdx.x >> 5][lane] = make_float2(acc[0] + acc2[0], acc[1] + acc2[1]);
  __syncthreads(); // also orders rowScale's and staged's writes before any use
  if (threadIdx.x < kGemvMmaTileRows * kGemvMmaRows) {
    const int m = threadIdx.x >> 3, t = threadIdx.x & 7;
    const long long row = tile * kGemvMmaTileRows + m;
    if (t < rows && row < p.n) {
      const int from = t * 4 + (m >> 1);
      float sum = 0.f;
#pragma unroll
      for (int w = 0; w < kWarps; ++w)
        sum += (m & 1) ? partials[buffer][w][from].y : partials[buffer][w][from].x;
      writeOutput<T>(p, rowScale, t, row, sum);
    }
  }
}

} // namespace gemvrowsmma

/// grid = gemvMmaGrid(n), block = kGemvRowsThreads, dynamic shared memory
/// gemvMmaSharedBytes(k, sizeof(T), rows) for the most rows it will run;
/// p.transposed 1, 1 <= p.rows <= gemvMmaMaxRows(k, n, ..). kPrologue 0 or 1
/// (rms_norm). kSplits = gemvMmaSplits(n): 8, the block's warps share a
/// tile's k; 1, each warp takes whole tiles of its own. Input row t and
/// output row t are t * (k or p.inputRowStride) and t * n apart.
template <typename T, int kPrologue, int kSplits>
__global__ void __launch_bounds__(kGemvRowsThreads, 2) infer_gemv_rows_mma(GemvParams p) {
  extern __shared__ uint4 staged[]; // rows x gemvMmaRowVectors(k)
  // The warps' accumulators of two tiles in turn (a warp may write the next
  // tile's while the first two warps still add this one's).
  __shared__ float2 partials[2][gemvrows::kWarps][32];
  __shared__ float warpSquares[gemvrows::kWarps][kGemvMmaRows];
  __shared__ float rowScale[kGemvMmaRows];
  gemvrowsmma::WarpRange range;
  uint4 current[gemvrowsmma::kUnitSteps];
  gemvrowsmma::loadFirstUnitThenWaitForPreviousKernel<kSplits>(p, int(sizeof(T)), range, current);
  static_assert(kPrologue == 0 || kPrologue == 1, "rms_norm is the one prologue");
  static_assert(kSplits == 1 || kSplits == gemvrows::kWarps,
                "a tile's k is split over every warp of the block or none");
  using namespace gemvrowsmma;
  constexpr int kGroups = kWarps / kSplits;
  const int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
  const long long tiles = (p.n + kGemvMmaTileRows - 1) / kGemvMmaTileRows;
  const uint4 *weight = static_cast<const uint4 *>(p.weight);
  long long tile = firstTile<kSplits>();
  const long long tileStride = (long long)gridDim.x * kGroups;
  const long long rowVectors = gemvMmaRowVectors(p.k, int(sizeof(T)));
  gemvrows::stageInput<T, kPrologue, kGemvMmaRows>(p, staged, range.vectors, rowVectors,
                                                   warpSquares);
  const int rows = int(p.rows);
  // One thread a staged row computes its output factor (read after the
  // first tile's barrier, or this one where warps take tiles of their own):
  // each costs an IEEE division and square root, and every thread computing
  // all 8 made a chain 3 us slower (session 24).
  if (threadIdx.x < rows)
    rowScale[threadIdx.x] =
        kPrologue == 1 ? gemvrows::stagedRowScale<kGemvMmaRows>(p, warpSquares, threadIdx.x) : 1.f;
  if (kSplits < kWarps)
    __syncthreads();
  int buffer = 0;
  for (; tile < tiles; tile += tileStride, buffer ^= 1) {
    // Two chains of mmas (a step's first and second 16 k), added at the end.
    float acc[4] = {0.f, 0.f, 0.f, 0.f}, acc2[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 1
    for (long long unit = 0; unit < range.units; ++unit) {
      long long nextTile = tile, nextUnit = unit + 1;
      if (nextUnit == range.units)
        nextTile += tileStride, nextUnit = 0;
      uint4 next[kUnitSteps];
      if (nextTile < tiles)
        loadUnit(weight, p.n, range, nextTile, nextUnit, g, q, next);
      multiplyUnit<T>(current, staged, rowVectors, range, unit, g, q, rows, acc, acc2);
#pragma unroll
      for (int u = 0; u < kUnitSteps; ++u)
        current[u] = next[u];
    }
    finishTile<T, kSplits>(p, acc, acc2, tile, partials, buffer, rowScale, rows);
  }
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_GEMVROWSMMA_CUH
