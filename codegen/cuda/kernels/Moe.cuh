//===- Moe.cuh - a mixture-of-experts MLP (exec.moe) ----------------------===//
//
// Five kernels per exec.moe launch (MoeParams in KernelParams.h, geometry in
// MoeGeometry.h), the math of runtime/base/ReferenceMoe.h in fp32:
//   route     each token's router logits, its top_k experts (ties: the lower
//             expert) and their softmax or sigmoid weights (renormalized when
//             asked; chosen by score + bias among the best groups when given);
//   sort      the (token, slot) pairs grouped by expert;
//   gate_up   per (expert, tile of rows): the tile's gate and up rows staged
//             in shared memory, then silu(gate . x) * (up . x) for every pair
//             routed to the expert;
//   down      likewise down . act, times the pair's routing weight;
//   combine   each token's pairs summed in slot order, rounded to T once.
// An expert's weights are read once a step however many tokens chose it; an
// expert no token chose costs one early return per block. No atomics touch
// the results (the sort's order within an expert only decides which warp
// computes a pair), so outputs are deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_MOE_CUH
#define INFER_CODEGEN_CUDA_KERNELS_MOE_CUH

#include "codegen/cuda/kernels/Common.cuh"
#include "runtime/cuda/abi/MoeGeometry.h"

namespace infer {
namespace kernels {

/// scoreBias[e] as float (element types as art::ElementType: 1 f32, 2 f16, 3 bf16).
__device__ __forceinline__ float moeScoreBias(const MoeParams &p, long long e) {
  switch (p.scoreBiasType) {
  case 1:
    return static_cast<const float *>(p.scoreBias)[e];
  case 2:
    return toFloat(static_cast<const __half *>(p.scoreBias)[e]);
  case 3:
    return toFloat(static_cast<const __nv_bfloat16 *>(p.scoreBias)[e]);
  default:
    return 0.f;
  }
}

/// The warp's best (largest, NaN lowest, then lowest index) of values[i] for
/// i < count with taken[i] false, or -1 when none is left.
__device__ __forceinline__ int moeWarpArgmax(const float *values, const bool *taken,
                                             long long count, int lane) {
  unsigned long long best = 0;
  for (long long i = lane; i < count; i += 32)
    if (!taken[i]) {
      unsigned long long candidate = argmaxCandidate(values[i], unsigned(i));
      best = candidate > best ? candidate : best;
    }
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    unsigned long long other = __shfl_xor_sync(0xffffffffu, best, offset);
    best = other > best ? other : best;
  }
  return best == 0 ? -1 : int(0xffffffffu - unsigned(best & 0xffffffffull));
}

template <typename T, typename W> __global__ void infer_moe_route(MoeParams p) {
  __shared__ float scores[kMoeMaxExperts]; // the logits, then the scores
  __shared__ float choice[kMoeMaxExperts]; // score + bias: what the experts are chosen by
  __shared__ bool taken[kMoeMaxExperts];
  __shared__ float groupScores[kMoeMaxExperts];
  __shared__ bool groupTaken[kMoeMaxExperts];
  __shared__ float chosen[kMoeMaxTopK];
  waitForPreviousKernel();
  const long long t = blockIdx.x;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const T *x = static_cast<const T *>(p.input) + t * p.hidden;
  const W *router = static_cast<const W *>(p.router);
  for (long long e = warp; e < p.experts; e += warps) {
    const W *row = router + e * p.hidden;
    float dot = 0.f;
    for (long long h = lane; h < p.hidden; h += 32)
      dot += toFloat(row[h]) * toFloat(x[h]);
    dot = warpSum(dot);
    if (lane == 0) {
      scores[e] = dot;
      taken[e] = false;
    }
  }
  __syncthreads();
  if (warp != 0)
    return;
  if (p.sigmoid) {
    for (long long e = lane; e < p.experts; e += 32)
      scores[e] = 1.f / (1.f + expf(-scores[e]));
  } else {
    float largest = -__int_as_float(0x7f800000);
    for (long long e = lane; e < p.experts; e += 32)
      largest = fmaxf(largest, scores[e]);
    largest = warpMax(largest);
    float total = 0.f;
    for (long long e = lane; e < p.experts; e += 32)
      total += expf(scores[e] - largest);
    total = warpSum(total);
    __syncwarp();
    for (long long e = lane; e < p.experts; e += 32)
      scores[e] = expf(scores[e] - largest) / total;
  }
  for (long long e = lane; e < p.experts; e += 32)
    choice[e] = scores[e] + moeScoreBias(p, e);
  __syncwarp();
  if (p.groups > 1) {
    // A group's score: the sum of its two best choices; the experts outside
    // the topkGroups best groups are taken (not eligible).
    const long long size = p.experts / p.groups;
    for (long long g = lane; g < p.groups; g += 32) {
      float first = -__int_as_float(0x7f800000), second = first;
      for (long long e = g * size; e < (g + 1) * size; ++e) {
        float v = choice[e];
        if (v > first) {
          second = first;
          first = v;
        } else if (v > second) {
          second = v;
        }
      }
      groupScores[g] = size > 1 ? first + second : first;
      groupTaken[g] = false;
    }
    __syncwarp();
    for (int i = 0; i < p.topkGroups; ++i) {
      const int group = moeWarpArgmax(groupScores, groupTaken, p.groups, lane);
      __syncwarp(); // every lane's reads of groupTaken before lane 0 writes it
      if (lane == 0 && group >= 0)
        groupTaken[group] = true;
      __syncwarp();
    }
    // groupTaken now marks the eligible groups.
    for (long long e = lane; e < p.experts; e += 32)
      taken[e] = !groupTaken[e / size];
    __syncwarp();
  }
  // top_k rounds of a warp argmax over the eligible experts not yet taken:
  // the largest choice (NaN lowest), then the lowest expert.
  float picked = 0.f;
  for (long long s = 0; s < p.topK; ++s) {
    const int expert = moeWarpArgmax(choice, taken, p.experts, lane);
    const float weight = expert >= 0 ? scores[expert] : 0.f;
    picked += weight;
    __syncwarp(); // every lane's reads of taken before lane 0 writes it (racecheck)
    if (lane == 0) {
      if (expert >= 0)
        taken[expert] = true;
      chosen[s] = weight;
      p.expertIds[t * p.topK + s] = expert >= 0 ? expert : 0;
    }
    __syncwarp();
  }
  for (long long s = lane; s < p.topK; s += 32)
    p.pairWeights[t * p.topK + s] = (p.normalize ? chosen[s] / picked : chosen[s]) * p.scale;
}

__global__ void infer_moe_sort(MoeParams p) {
  __shared__ int counts[kMoeMaxExperts];
  waitForPreviousKernel();
  const long long pairs = p.tokens * p.topK;
  for (long long e = threadIdx.x; e < p.experts; e += blockDim.x)
    counts[e] = 0;
  __syncthreads();
  for (long long q = threadIdx.x; q < pairs; q += blockDim.x)
    atomicAdd(&counts[p.expertIds[q]], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    int run = 0;
    for (long long e = 0; e < p.experts; ++e) {
      int count = counts[e];
      p.expertStarts[e] = run;
      counts[e] = run; // from here on: the expert's next free entry
      run += count;
    }
    p.expertStarts[p.experts] = run;
  }
  __syncthreads();
  for (long long q = threadIdx.x; q < pairs; q += blockDim.x)
    p.pairsByExpert[atomicAdd(&counts[p.expertIds[q]], 1)] = int(q);
}

/// Copies `rows` rows of `length` W elements, `stride` elements apart from
/// `source`, to consecutive rows of `staged`: 16 bytes a thread where rows
/// and `source` allow it.
template <typename W>
__device__ __forceinline__ void stageRows(W *staged, const W *source, long long stride,
                                          long long length, int rows) {
  const long long rowBytes = length * (long long)sizeof(W);
  const bool vector = rowBytes % 16 == 0 && (stride * (long long)sizeof(W)) % 16 == 0 &&
                      reinterpret_cast<unsigned long long>(source) % 16 == 0;
  if (vector) {
    const long long perRow = rowBytes / 16;
    for (long long i = threadIdx.x; i < rows * perRow; i += blockDim.x) {
      const long long r = i / perRow, c = i % perRow;
      reinterpret_cast<uint4 *>(staged + r * length)[c] =
          reinterpret_cast<const uint4 *>(source + r * stride)[c];
    }
  } else {
    for (long long i = threadIdx.x; i < rows * length; i += blockDim.x) {
      const long long r = i / length, c = i % length;
      staged[r * length + c] = source[r * stride + c];
    }
  }
}

/// The block's expert (blockIdx.y), its entries [begin, end) of
/// pairsByExpert, and its tile of `rows` (<= R) of the `length` output rows.
struct ExpertTile {
  long long expert, row0;
  int begin, end, rows;
};
template <int R>
__device__ __forceinline__ ExpertTile expertTile(const MoeParams &p, long long length) {
  ExpertTile tile;
  tile.expert = blockIdx.y;
  tile.begin = p.expertStarts[tile.expert];
  tile.end = p.expertStarts[tile.expert + 1];
  tile.row0 = (long long)blockIdx.x * R;
  tile.rows = int(length - tile.row0 < R ? length - tile.row0 : R);
  return tile;
}

template <typename T, typename W, int R> __global__ void infer_moe_gate_up(MoeParams p) {
  extern __shared__ uint4 moeStage[];
  waitForPreviousKernel();
  const ExpertTile tile = expertTile<R>(p, p.inter);
  if (tile.begin == tile.end)
    return;
  const long long e = tile.expert, row0 = tile.row0;
  const int begin = tile.begin, end = tile.end, rows = tile.rows;
  W *gate = reinterpret_cast<W *>(moeStage), *up = gate + R * p.hidden;
  const W *expert = static_cast<const W *>(p.gateUp) + e * 2 * p.inter * p.hidden;
  stageRows(gate, expert + row0 * p.hidden, p.hidden, p.hidden, rows);
  stageRows(up, expert + (p.inter + row0) * p.hidden, p.hidden, p.hidden, rows);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int q = begin + warp; q < end; q += warps) {
    const long long pair = p.pairsByExpert[q];
    const T *x = static_cast<const T *>(p.input) + (pair / p.topK) * p.hidden;
    float g[R], u[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      g[r] = u[r] = 0.f;
    for (long long h = lane; h < p.hidden; h += 32) {
      const float xv = toFloat(x[h]);
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < rows) {
          g[r] += toFloat(gate[r * p.hidden + h]) * xv;
          u[r] += toFloat(up[r * p.hidden + h]) * xv;
        }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float gr = warpSum(g[r]), ur = warpSum(u[r]);
      if (lane == r && r < rows)
        p.activations[pair * p.inter + row0 + r] = activate<0>(gr) * ur;
    }
  }
}

template <typename T, typename W, int R> __global__ void infer_moe_down(MoeParams p) {
  extern __shared__ uint4 moeStage[];
  waitForPreviousKernel();
  const ExpertTile tile = expertTile<R>(p, p.hidden);
  if (tile.begin == tile.end)
    return;
  const long long e = tile.expert, row0 = tile.row0;
  const int begin = tile.begin, end = tile.end, rows = tile.rows;
  W *down = reinterpret_cast<W *>(moeStage);
  const W *expert = static_cast<const W *>(p.down) + e * p.hidden * p.inter;
  stageRows(down, expert + row0 * p.inter, p.inter, p.inter, rows);
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (int q = begin + warp; q < end; q += warps) {
    const long long pair = p.pairsByExpert[q];
    const float *act = p.activations + pair * p.inter;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r)
      acc[r] = 0.f;
    for (long long i = lane; i < p.inter; i += 32) {
      const float a = act[i];
#pragma unroll
      for (int r = 0; r < R; ++r)
        if (r < rows)
          acc[r] += toFloat(down[r * p.inter + i]) * a;
    }
    const float weight = p.pairWeights[pair];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float sum = warpSum(acc[r]);
      if (lane == r && r < rows)
        p.expertOutputs[pair * p.hidden + row0 + r] = weight * sum;
    }
  }
}

template <typename T> __global__ void infer_moe_combine(MoeParams p) {
  waitForPreviousKernel();
  const long long t = blockIdx.x;
  const float *outputs = p.expertOutputs + t * p.topK * p.hidden;
  T *out = static_cast<T *>(p.output) + t * p.hidden;
  for (long long j = threadIdx.x; j < p.hidden; j += blockDim.x) {
    float sum = 0.f;
    for (long long s = 0; s < p.topK; ++s)
      sum += outputs[s * p.hidden + j];
    out[j] = fromFloat<T>(sum);
  }
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_MOE_CUH
