//===- GemvRows.cuh - batch-1 GEMV over [n, k] weights, a warp per row ----===//
//
// infer_gemv_rows<T, kPrologue, kGatedPairs, kRows> (GemvParams; T bf16 or
// f16): out[t, j] = sum_k x[t, k] W[j, k] (+ bias[j]) (+ residual[t, j]) for
// up to kRows input rows (one: batch-1 decode; kGemvRowsMultiRows: the form
// the runtime runs at T = 2, GemvGeometry.h), W [n, k] (`transpose_weight`), k a multiple of
// 8 and W 16-byte aligned (codegen checks both: gemvRowsSupported,
// gemvMultiRowsSupported).
//
// Why a second GEMV: infer_gemv cuts [k, n] weights into column tiles and k
// splits, so a small matrix ends in a split-k reduction (atomics, a counter,
// the last block) after one load per warp, and each launch paid 4-5 us over
// its bytes. Over [n, k] weights an output is one contiguous row: a warp
// owns whole rows and reduces them with shuffles; nothing crosses blocks.
//
//   block (8 warps): stage x's rows (through the prologue) in shared memory once,
//   then warp w takes rows blockIdx.x * 8 + w, + gridDim.x * 8, ...; a row
//   is read in units of 8 x 16 bytes per lane (4 KiB per warp), the next
//   unit's loads in flight while the current one is multiplied.
//
// The grid is gemvRowsGrid(n) (GemvGeometry.h): two blocks per multiprocessor
// (the kernel's registers allow two), so under programmatic dependent launch
// a finishing block's place goes to the next kernel. The kernel lets the
// next one launch at its first statement and loads its first unit of weights
// (no other kernel's output) before it waits for the previous kernel: the
// weight stream runs on across kernel boundaries. Measured on an H200
// (bench/results/tinyllama-1.1b-serving.md, "Session 13"; gemv_test
// --chain-only): TinyLlama's four decode GEMVs of a layer with the prologues
// 45.9 us under infer_gemv, 33.7 here, 28.4 launched programmatically;
// Llama-3-8B's 132.3, 118.3, 112.2 us (floors 20.5 and 101.4 us).
//
// Prologues as infer_gemv_fused (KernelParams.h, GemvParams::prologue): the
// staged row is round_T(x * (normWeight + offset)) (rms_norm; 1 / rms from
// the staged raw inputs scales each output) or round_T(act(gate) * up).
// Epilogue kGatedPairs (the kernel's comment): the GEMV writes the gated
// activation of its packed [gate | up] output instead of the output itself.
//
// Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_GEMVROWS_CUH
#define INFER_CODEGEN_CUDA_KERNELS_GEMVROWS_CUH

#include "codegen/cuda/kernels/Gemv.cuh"

namespace infer {
namespace kernels {
namespace gemvrows {

/// 16-byte loads per lane in one unit of a row (8 x 16 B x 32 lanes = 4 KiB).
constexpr int kUnitLoads = 8;
constexpr int kWarps = kGemvRowsThreads / 32;
/// Elements of T in one 16-byte load.
template <typename T> constexpr int kPerLoad = int(16 / sizeof(T));

/// The two elements of a 32-bit word as floats.
template <typename T> struct WordPair;
template <> struct WordPair<__nv_bfloat16> {
  // A bf16 is the high half of its float: two bit operations, no converts.
  static __device__ __forceinline__ float2 of(unsigned w) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  }
};
template <> struct WordPair<__half> {
  static __device__ __forceinline__ float2 of(unsigned w) {
    return __half22float2(*reinterpret_cast<const __half2 *>(&w));
  }
};

/// s + the dot product of 16 bytes of weights and 16 bytes of input.
template <typename T> __device__ __forceinline__ float dot16(const uint4 &w, const uint4 &x, float s) {
  const unsigned ws[4] = {w.x, w.y, w.z, w.w}, xs[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float2 a = WordPair<T>::of(ws[i]), b = WordPair<T>::of(xs[i]);
    s = fmaf(a.x, b.x, s);
    s = fmaf(a.y, b.y, s);
  }
  return s;
}

/// Whether unit `unit` of a row of `vectors` 16-byte vectors is whole (all
/// but a row's last unit when the row is not a multiple of 4 KiB): its loads
/// and dot products then need no bounds checks (~10 instructions a load of
/// ~54; session 26, bench/results/tinyllama-1.1b-serving.md).
__device__ __forceinline__ bool wholeUnit(long long vectors, long long unit) {
  return (unit + 1) * kUnitLoads * 32 <= vectors;
}

/// The unit `unit` of row `row`: loads u < kUnitLoads at 16-byte index
/// (unit * kUnitLoads + u) * 32 + lane of the row, those before `vectors`
/// (kWhole: all of them, wholeUnit).
template <bool kWhole>
__device__ __forceinline__ void loadUnitOf(const uint4 *weight, long long vectors, long long row,
                                           long long unit, int lane, uint4 (&out)[kUnitLoads]) {
  const long long first = unit * kUnitLoads * 32 + lane;
  const uint4 *src = weight + row * vectors + first;
#pragma unroll
  for (int u = 0; u < kUnitLoads; ++u)
    if (kWhole || first + u * 32 < vectors)
      out[u] = gemvimpl::loadStream(src + u * 32);
}
template <typename T>
__device__ __forceinline__ void loadUnit(const uint4 *weight, long long vectors, long long row,
                                         long long unit, int lane, uint4 (&out)[kUnitLoads]) {
  if (wholeUnit(vectors, unit))
    loadUnitOf<true>(weight, vectors, row, unit, lane, out);
  else
    loadUnitOf<false>(weight, vectors, row, unit, lane, out);
}

/// sum[r] += the unit's weights `current` (loaded by loadUnit) times staged
/// input row r, for the staged rows r < rows (kWhole: every load of the unit
/// is in the row, wholeUnit).
template <typename T, int kRows, bool kWhole>
__device__ __forceinline__ void multiplyUnit(const uint4 (&current)[kUnitLoads],
                                             const uint4 *staged, long long vectors,
                                             long long unit, int lane, int rows,
                                             float (&sum)[kRows]) {
  const long long first = unit * kUnitLoads * 32 + lane;
#pragma unroll
  for (int u = 0; u < kUnitLoads; ++u)
    if (kWhole || first + u * 32 < vectors)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (kRows == 1 || r < rows)
          sum[r] = dot16<T>(current[u], staged[r * vectors + first + u * 32], sum[r]);
}

/// The output factor of staged row r under the rms_norm prologue, 1 / rms,
/// from the warps' sums of its squares (stageInput, after its barrier).
template <int kRows>
__device__ __forceinline__ float stagedRowScale(const GemvParams &p,
                                                const float (*warpSquares)[kRows], int r) {
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w)
    total += warpSquares[w][r];
  return gemvimpl::inverseRms(p, total);
}

/// Stages input rows 0 .. p.rows - 1 (at most kRows) through the prologue in
/// `staged` (row r at r * rowStride, vectors x 16 bytes each); under the
/// rms_norm prologue each warp's sums of the rows' squares go to warpSquares
/// (stagedRowScale turns them into a row's 1 / rms). Ends with a barrier.
template <typename T, int kPrologue, int kRows>
__device__ __forceinline__ void stageInput(const GemvParams &p, uint4 *staged, long long vectors,
                                           long long rowStride, float (*warpSquares)[kRows]) {
  constexpr int kN = kPerLoad<T>;
  const int rows = int(p.rows);
  float squares[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    squares[r] = 0.f;
  // Every row's loads before any store, so that the rows' round trips to
  // memory overlap (staged row by row, the first version was slower at T = 2
  // than infer_gemv: bench/results/tinyllama-1.1b-serving.md, "Session 23").
  if constexpr (kRows == 1 && kPrologue == 0) {
    // The plain one-row form (o, down): a thread's loads of kBatch vectors
    // before any store too, since a store waits for its load and loads
    // issued after it start a round trip of their own (TinyLlama's down
    // GEMV, k = 5,632, was staged in three). Not the prologue forms: their
    // operands would take them to 98 / 100 registers, past the 96 that let
    // an infer_kv_decode block sit beside two qkv GEMV blocks (session 29).
    constexpr int kBatch = 4;
    const T *input = static_cast<const T *>(p.input);
    for (long long first = threadIdx.x; first < vectors; first += kBatch * kGemvRowsThreads) {
      uint4 values[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const long long i = first + b * kGemvRowsThreads;
        if (i < vectors)
          values[b] = gemvimpl::loadChecked(input + i * kN, kN);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const long long i = first + b * kGemvRowsThreads;
        if (i < vectors)
          staged[i] = values[b];
      }
    }
  } else {
    for (long long i = threadIdx.x; i < vectors; i += kGemvRowsThreads) {
      uint4 values[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (kRows == 1 || r < rows)
          values[r] = gemvimpl::loadInput<T, kPrologue>(p, &squares[r], r, i * kN, kN);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        if (kRows == 1 || r < rows)
          staged[r * rowStride + i] = values[r];
    }
  }
  if constexpr (kPrologue == 1) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (kRows > 1 && r >= rows)
        break; // block-uniform
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        squares[r] += __shfl_xor_sync(0xffffffffu, squares[r], o);
      if ((threadIdx.x & 31) == 0)
        warpSquares[threadIdx.x >> 5][r] = squares[r];
    }
  }
  __syncthreads();
}

/// The rows (pairs of rows under kGatedPairs) the warps take in turn.
template <bool kGatedPairs> __device__ __forceinline__ long long rowsTaken(const GemvParams &p) {
  return kGatedPairs ? p.n / 2 : p.n;
}

/// The kernel's first statement, in place of waitForPreviousKernel
/// (Common.cuh): the warp's first unit of weights (no kernel's output) is
/// requested first, then the next kernel may launch (its blocks take the
/// places ours leave), then the wait for the previous kernel's output.
template <typename T, bool kGatedPairs>
__device__ __forceinline__ void loadFirstUnitThenWaitForPreviousKernel(const GemvParams &p,
                                                                       unsigned block,
                                                                       uint4 (&unit)[kUnitLoads]) {
  const long long row = (long long)block * kWarps + (threadIdx.x >> 5);
  if (row < rowsTaken<kGatedPairs>(p))
    loadUnit<T>(static_cast<const uint4 *>(p.weight), p.k / kPerLoad<T>, row, 0, threadIdx.x & 31,
                unit);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// gemvRows' exchange for infer_gemv_rows: nothing beyond the output.
struct NoExchange {
  template <typename T> __device__ __forceinline__ void put(long long, T) const {}
};

/// infer_gemv_rows' body as block `block` of `blocks` (infer_qkv_decode runs
/// it in part of its grid); exchange.put(row, value) also gets each output
/// of input row 0 (QkvDecode.cuh). It waits for the previous kernel once the
/// first weights are requested (loadFirstUnitThenWaitForPreviousKernel).
///
/// kArgmax (one row, plain rows only): also the largest argmaxCandidate of
/// the rounded outputs into *p.argmax when it is not null (GemvParams::argmax):
/// lane 0 keeps its warp's best, the block's best goes out in one atomicMax.
template <typename T, int kPrologue, bool kGatedPairs, int kRows, typename Exchange,
          bool kArgmax = false>
__device__ __forceinline__ void
rowsLoadingFirstUnitBeforeWaitForPreviousKernel(const GemvParams &p, unsigned block,
                                                unsigned blocks, const Exchange &exchange) {
  static_assert(!kArgmax || (kRows == 1 && !kGatedPairs), "the argmax of one plain output row");
  extern __shared__ uint4 staged[]; // kRows x k / kPerLoad<T>
  __shared__ float warpSquares[gemvrows::kWarps][kRows];
  uint4 current[gemvrows::kUnitLoads];
  gemvrows::loadFirstUnitThenWaitForPreviousKernel<T, kGatedPairs>(p, block, current);
  // Under kGatedPairs a warp's row is a pair: gate row j, then up row
  // j + half (`second`).
  const long long half = p.n / 2, taken = rowsTaken<kGatedPairs>(p);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int rows = int(p.rows);
  const long long vectors = p.k / kPerLoad<T>;
  const long long units = (vectors + kUnitLoads * 32 - 1) / (kUnitLoads * 32);
  const uint4 *weight = static_cast<const uint4 *>(p.weight);
  const long long rowStride = (long long)blocks * kWarps;
  const long long outStride = kGatedPairs ? half : p.n;
  long long row = (long long)block * kWarps + warp, unit = 0;
  bool second = false;
  INFER_KERNEL_STAMP_LATEST(210 + kPrologue); // the wait's release, last block (timing builds)
  stageInput<T, kPrologue, kRows>(p, staged, vectors, vectors, warpSquares);
  // Each staged row's output factor in every thread: 1 / rms under the
  // rms_norm prologue, else 1.
  float scale[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    scale[r] = kPrologue == 1 && (kRows == 1 || r < rows) ? stagedRowScale<kRows>(p, warpSquares, r)
                                                          : 1.f;
  const T *bias = static_cast<const T *>(p.bias);
  const T *residual = static_cast<const T *>(p.residual);
  T *out = static_cast<T *>(p.output);
  unsigned long long best = 0ull; // kArgmax: lane 0's largest candidate
  float sum[kRows], gate[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    sum[r] = gate[r] = 0.f;
  while (row < taken) {
    long long nextRow = row, nextUnit = unit + 1;
    bool nextSecond = second;
    if (nextUnit == units) {
      nextUnit = 0;
      if (kGatedPairs && !second) {
        nextSecond = true;
      } else {
        nextSecond = false;
        nextRow += rowStride;
      }
    }
    uint4 next[kUnitLoads];
    if (nextRow < taken)
      loadUnit<T>(weight, vectors, nextSecond ? nextRow + half : nextRow, nextUnit, lane, next);
    if (wholeUnit(vectors, unit))
      multiplyUnit<T, kRows, true>(current, staged, vectors, unit, lane, rows, sum);
    else
      multiplyUnit<T, kRows, false>(current, staged, vectors, unit, lane, rows, sum);
    if (nextUnit == 0) {
      const long long outputRow = second ? row + half : row;
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (kRows > 1 && r >= rows)
          break;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
          sum[r] += __shfl_xor_sync(0xffffffffu, sum[r], o);
        if (lane == 0) {
          float v = sum[r] * scale[r];
          if (bias)
            v += toFloat(bias[outputRow]);
          if (residual)
            v += toFloat(residual[r * p.n + outputRow]);
          if (!kGatedPairs) {
            out[r * outStride + row] = fromFloat<T>(v);
            if (r == 0)
              exchange.template put<T>(row, fromFloat<T>(v));
            if constexpr (kArgmax) {
              const unsigned long long c = argmaxCandidate(toFloat(fromFloat<T>(v)), unsigned(row));
              best = c > best ? c : best;
            }
          } else if (!second)
            gate[r] = toFloat(fromFloat<T>(v));
          else
            out[r * outStride + row] =
                fromFloat<T>(gatedValue<T>(p.activation, gate[r]) * toFloat(fromFloat<T>(v)));
        }
        sum[r] = 0.f;
      }
    }
    row = nextRow;
    unit = nextUnit;
    second = nextSecond;
#pragma unroll
    for (int u = 0; u < kUnitLoads; ++u)
      current[u] = next[u];
  }
  if constexpr (kArgmax) {
    __shared__ unsigned long long warpBest[kWarps];
    if (p.argmax) { // block-uniform
      if (lane == 0)
        warpBest[warp] = best;
      __syncthreads();
      if (threadIdx.x == 0) {
#pragma unroll
        for (int w = 1; w < kWarps; ++w)
          best = warpBest[w] > best ? warpBest[w] : best;
        atomicMax(p.argmax, best);
      }
    }
  }
  INFER_KERNEL_STAMP_LATEST(200 + kPrologue); // the grid's last block's end (timing builds)
}

} // namespace gemvrows

/// grid = gemvRowsGrid(n), block = kGemvRowsThreads, dynamic shared memory
/// gemvRowsSharedBytes(k, sizeof(T), kRows); p.transposed 1 and p.rows from 1
/// to kRows: kRows 1 is batch-1 decode, kGemvRowsMultiRows the form of
/// CudaLaunch.gemv_multi_row (run at 2 .. kGemvRowsMultiRowsRun tokens). Each
/// 16 bytes of weights are multiplied with every staged input row, so the
/// weights stream once whatever the rows, and output row t gets the bits the
/// one-row kernel gives input row t alone; input row t and output row t are
/// t * (k or p.inputRowStride) and t * n (t * n / 2 under kGatedPairs) apart.
///
/// kGatedPairs: the output rows are a packed [gate | up] (n even) that a
/// gated activation reads next (CudaLaunch.fuses_next): the warp takes row j
/// and then row j + n / 2 and writes round_T(act(round_T(gate_j)) *
/// round_T(up_j)) to out[j] (n / 2 outputs, p.activation), which is what
/// the GEMV and the activation compute apart. The down GEMV after it then
/// reads one plain row instead of computing the activation for the whole
/// row in each of its ~260 blocks (its gated prologue).
///
/// kArgmax: the LM head of a step sampled on the device (CudaLaunch.folds_argmax)
/// also folds the argmax of its row into *p.argmax (GemvParams::argmax), so
/// that infer_sample need not read the logits of a greedy row again.
template <typename T, int kPrologue, bool kGatedPairs = false, int kRows = 1, bool kArgmax = false>
__global__ void __launch_bounds__(kGemvRowsThreads, 2) infer_gemv_rows(GemvParams p) {
  gemvrows::rowsLoadingFirstUnitBeforeWaitForPreviousKernel<T, kPrologue, kGatedPairs, kRows,
                                                            gemvrows::NoExchange, kArgmax>(
      p, blockIdx.x, gridDim.x, gemvrows::NoExchange());
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_GEMVROWS_CUH
