//===- Sampling.cuh - device token sampling: greedy, top-k, top-p ---------===//
//
// infer_sample<T> (KernelParams.h, SampleParams): one block of kSampleThreads
// per logit row, with the semantics of runtime/sampling/Sampler.cpp except
// that the draw walks the kept ids in id order (Sampler.cpp walks them most
// likely first when top-k or top-p cut: the same distribution, another id for
// a given uniform) and that ids of probability below 2^-41 are never drawn.
// Nothing is sorted; the kept set is described by a threshold key and found
// by radix selects:
//
//   key(x)      the float's bits mapped to an unsigned order (NaN lowest,
//               -0 == +0), so "more likely" is "larger key".
//   weight(x)   the probability exp((x - max) / temperature) in fixed point,
//               round(p * 2^40) (u64). Integer sums are exact and independent
//               of the summation order, so every pass agrees on every mass
//               and the kernel is deterministic.
//   kept set    { key > tau } + the first m ids (in id order) with key == tau:
//               exactly the host's prefix of the order (probability
//               descending, ties by id), so ties at the threshold go the same
//               way.
//
//   1. One pass: the largest key, lowest id on ties (the argmax; NaN never
//      wins). Greedy rows (temperature 0, also any temperature not > 0 or so
//      small that 1 / temperature overflows), topK 1 and rows whose maximum
//      is not finite (the host finds no positive finite mass) stop here.
//   2. top-k: a radix select (3 levels of 11/11/10 key bits, MSB first, one
//      histogram pass over the row each) for the k-th largest key, counting
//      only ids of nonzero weight (the rest can never be drawn, so top-k
//      ignores them; when fewer than k have weight top-k keeps them all).
//   3. top-p: the same select over the weights of the top-k set (ids with key
//      equal to the top-k threshold enter as one extra weight): the largest
//      tau whose mass of keys >= tau reaches ceil(topP * mass), then m =
//      ceil(rest / weight(tau)) ids of key tau.
//   4. When only some of the ids with key tau are kept, a prefix count finds
//      the m-th of them (id order). Then the draw: a prefix sum of the kept
//      weights in id order and the first id whose running sum exceeds
//      floor(uniform * kept mass).
//
// Histograms live in shared memory as two 32-bit words per bin (32-bit
// shared atomics are native; the low word's wrap is detected from atomicAdd's
// old value and carried into the high word). When many lanes of a warp hit
// one bin (rows of equal logits), the warp adds them as one.
//
// Prefix searches (step 4) give each warp a contiguous slice of the row; the
// warp sums its slice, the warps' sums are scanned, and the one warp whose
// slice holds the answer walks it again with warp scans.
//
// Rows are read as units of 8 elements: an unaligned head, 16-byte aligned
// chunks, a tail. Compiled by NVRTC: CUDA headers only, no standard library.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_KERNELS_SAMPLING_CUH
#define INFER_CODEGEN_CUDA_KERNELS_SAMPLING_CUH

#include "codegen/cuda/kernels/Common.cuh"

namespace infer {
namespace kernels {
namespace sampleimpl {

using U64 = unsigned long long;

constexpr int kThreads = kSampleThreads;
constexpr int kWarps = kThreads / 32;
constexpr int kChunk = 8;          // elements per unit of a row
constexpr int kBins = 2048;        // histogram bins (11-bit digits)
constexpr int kAggregateLanes = 8; // lanes sharing a bin worth one warp add
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kFixedOne = 1099511627776.f; // 2^40: the weight of probability 1

static_assert(kThreads % 32 == 0 && kWarps <= 32, "whole warps, one warp scans their sums");
static_assert(kBins % kThreads == 0 && 1024 % kThreads == 0, "bins split evenly over threads");

struct Pick {
  unsigned bin;
  U64 above, atBin; // weight of the bins above the picked one, and of it
};

struct Shared {
  unsigned lo[kBins], hi[kBins]; // histogram: weight = hi * 2^32 + lo
  U64 warpValue[kWarps];
  Pick pick;
  long long found[2];
};

// ---- Keys and weights --------------------------------------------------------

// orderKey and argmaxCandidate: Common.cuh.

/// The float of a key (NaN for key 0).
__device__ __forceinline__ float keyValue(unsigned key) {
  return __uint_as_float((key & 0x80000000u) ? (key & 0x7fffffffu) : ~key);
}

/// exp((x - max) / temperature) in fixed point; 0 for NaN and for
/// probabilities below 2^-41. The same function in every pass, so equal
/// logits always get equal weights.
struct Softmax {
  float maxLogit, scale; // scale = log2(e) / temperature
  __device__ __forceinline__ U64 weight(float x) const {
    float p = exp2f(__fmul_rn(__fsub_rn(x, maxLogit), scale));
    return p > 0.f ? __float2ull_rn(__fmul_rn(p, kFixedOne)) : 0ull;
  }
};

// ---- Warp and block collectives --------------------------------------------

__device__ __forceinline__ U64 warpSum64(U64 v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

__device__ __forceinline__ U64 warpMax64(U64 v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    U64 other = __shfl_xor_sync(kFullMask, v, offset);
    v = other > v ? other : v;
  }
  return v;
}

__device__ __forceinline__ U64 warpInclusiveSum64(U64 v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int offset = 1; offset < 32; offset <<= 1) {
    U64 other = __shfl_up_sync(kFullMask, v, offset);
    if (lane >= offset)
      v += other;
  }
  return v;
}

/// Maximum over the block; every thread gets it. Ends with a barrier, so
/// warpValue is free again.
__device__ __forceinline__ U64 blockMax64(U64 v, Shared &s) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  v = warpMax64(v);
  if (lane == 0)
    s.warpValue[warp] = v;
  __syncthreads();
  v = warpMax64(lane < kWarps ? s.warpValue[lane] : 0ull);
  __syncthreads();
  return v;
}

// ---- Rows as units of 8 elements ------------------------------------------

/// 16 bytes of X (element access keeps the type punning legal).
template <typename X> struct alignas(16) Pack {
  static constexpr int kSize = int(16 / sizeof(X));
  X e[kSize];
};

/// Unit 0: elements [0, head) (up to the first 16-byte boundary); units
/// 1..chunks: aligned chunks of 8; unit chunks + 1: the tail.
template <typename T> struct Row {
  const T *x;
  long long n, head, chunks;
  __device__ __forceinline__ long long units() const { return chunks + 2; }
};

template <typename T> __device__ __forceinline__ Row<T> makeRow(const T *x, long long n) {
  Row<T> row;
  row.x = x;
  row.n = n;
  const unsigned long long misalign = reinterpret_cast<unsigned long long>(x) & 15ull;
  long long head = misalign ? (long long)((16ull - misalign) / sizeof(T)) : 0;
  row.head = head < n ? head : n;
  row.chunks = (n - row.head) / kChunk;
  return row;
}

/// Loads unit u as floats (v[j] is element first + j); returns how many of
/// the 8 are elements (0 past the last unit).
template <typename T>
__device__ __forceinline__ int loadUnit(const Row<T> &row, long long u, float (&v)[kChunk],
                                        long long &first) {
  if (u > 0 && u <= row.chunks) {
    first = row.head + (u - 1) * kChunk;
    using P = Pack<T>;
    const P *src = reinterpret_cast<const P *>(row.x + first);
#pragma unroll
    for (int j = 0; j < kChunk / P::kSize; ++j) {
      P pack = src[j];
#pragma unroll
      for (int k = 0; k < P::kSize; ++k)
        v[j * P::kSize + k] = toFloat(pack.e[k]);
    }
    return kChunk;
  }
  first = u == 0 ? 0 : row.head + row.chunks * kChunk;
  const int count = int(u == 0 ? row.head : (u == row.chunks + 1 ? row.n - first : 0));
#pragma unroll
  for (int j = 0; j < kChunk; ++j)
    v[j] = j < count ? toFloat(row.x[first + j]) : 0.f;
  return count;
}

/// Sum of weight(id, x) over unit u.
template <typename T, typename Weight>
__device__ __forceinline__ U64 unitWeight(const Row<T> &row, long long u, const Weight &weight) {
  float v[kChunk];
  long long first;
  const int count = loadUnit(row, u, v, first);
  U64 sum = 0;
#pragma unroll
  for (int j = 0; j < kChunk; ++j)
    if (j < count)
      sum += weight(first + j, v[j]);
  return sum;
}

// ---- Radix select ----------------------------------------------------------

__device__ __forceinline__ void histAdd(Shared &s, unsigned bin, U64 w) {
  const unsigned low = unsigned(w);
  unsigned high = unsigned(w >> 32);
  if (low) {
    const unsigned old = atomicAdd(&s.lo[bin], low);
    if (old + low < old)
      ++high; // the low word wrapped
  }
  if (high)
    atomicAdd(&s.hi[bin], high);
}

/// Adds each lane's weight w (0: nothing) to its bin; the whole warp calls
/// it. When enough lanes share the first active lane's bin, that bin gets
/// one add. Counting: every nonzero weight is 1.
template <bool Counting>
__device__ __forceinline__ void warpHistAdd(Shared &s, unsigned bin, U64 w) {
  const int lane = threadIdx.x & 31;
  const unsigned active = __ballot_sync(kFullMask, w != 0);
  if (active == 0)
    return;
  const int leader = __ffs(active) - 1;
  const unsigned leaderBin = __shfl_sync(kFullMask, bin, leader);
  const bool shared = w != 0 && bin == leaderBin;
  const unsigned sharing = __ballot_sync(kFullMask, shared);
  if (__popc(sharing) >= kAggregateLanes) {
    const U64 sum = Counting ? U64(__popc(sharing)) : warpSum64(shared ? w : 0ull);
    if (lane == leader)
      histAdd(s, leaderBin, sum);
    if (w != 0 && !shared)
      histAdd(s, bin, w);
  } else if (w != 0) {
    histAdd(s, bin, w);
  }
}

/// One level of a radix select: histograms bits [Shift, Shift + Bits) of the
/// keys that agree with `prefix` on the bits under HighMask, weighted by
/// weight(key, x), plus `extraWeight` at `extraKey`. Ends with a barrier.
template <bool Counting, int Shift, int Bits, unsigned HighMask, typename T, typename Weight>
__device__ __forceinline__ void histogramLevel(const Row<T> &row, Shared &s, unsigned prefix,
                                               const Weight &weight, unsigned extraKey,
                                               U64 extraWeight) {
  constexpr unsigned kDigitMask = (1u << Bits) - 1u;
  const long long units = row.units();
  const int lane = threadIdx.x & 31;
  // Warp-uniform trip count: the collectives in warpHistAdd need every lane.
  for (long long base = threadIdx.x - lane; base < units; base += kThreads) {
    float v[kChunk];
    long long first;
    const int count = loadUnit(row, base + lane, v, first);
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      const unsigned key = orderKey(v[j]);
      U64 w = 0;
      if (j < count && ((key ^ prefix) & HighMask) == 0u)
        w = weight(key, v[j]);
      warpHistAdd<Counting>(s, (key >> Shift) & kDigitMask, w);
    }
  }
  if (threadIdx.x == 0 && extraWeight != 0 && ((extraKey ^ prefix) & HighMask) == 0u)
    histAdd(s, (extraKey >> Shift) & kDigitMask, extraWeight);
  __syncthreads();
}

/// Scans the histogram's Bins bins from the highest down and picks the one
/// where `above` plus the running weight first reaches target(total), total
/// being the histogram's sum. Clears the bins it reads. `target` is set to
/// the target used; returns false (on every thread) when the histogram does
/// not reach it.
template <int Bins, typename Target>
__device__ __forceinline__ bool pickBin(Shared &s, U64 above, const Target &targetOf, U64 &target,
                                        U64 &total, Pick &pick) {
  constexpr int kPer = Bins / kThreads;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  U64 w[kPer];
  U64 local = 0;
#pragma unroll
  for (int j = 0; j < kPer; ++j) {
    const int bin = Bins - 1 - (int(threadIdx.x) * kPer + j); // thread 0: the highest
    w[j] = (U64(s.hi[bin]) << 32) + s.lo[bin];
    s.hi[bin] = 0u;
    s.lo[bin] = 0u;
    local += w[j];
  }
  const U64 inclusive = warpInclusiveSum64(local);
  if (lane == 31)
    s.warpValue[warp] = inclusive;
  __syncthreads();
  const U64 warps = warpInclusiveSum64(lane < kWarps ? s.warpValue[lane] : 0ull);
  total = __shfl_sync(kFullMask, warps, 31);
  U64 warpBefore = __shfl_sync(kFullMask, warps, (warp + 31) & 31);
  if (warp == 0)
    warpBefore = 0;
  target = targetOf(total);
  const bool found = target > above && target - above <= total;
  U64 run = above + warpBefore + (inclusive - local); // weight of the bins above mine
  if (found && run < target && target - run <= local) {
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      if (run + w[j] >= target) {
        s.pick.bin = unsigned(Bins - 1 - (int(threadIdx.x) * kPer + j));
        s.pick.above = run;
        s.pick.atBin = w[j];
        break;
      }
      run += w[j];
    }
  }
  __syncthreads();
  pick = s.pick;
  return found;
}

/// Result of a radix select: W(k) = the total weight of key k.
struct Threshold {
  bool found;       // false: the total weight does not reach the target
  unsigned key;     // tau: W(> tau) < target <= W(>= tau)
  U64 above, atKey; // W(> tau), W(tau)
  U64 target, total;
};

/// Three histogram passes over the row (key bits 31..21, 20..10, 9..0).
template <bool Counting, typename T, typename Weight, typename Target>
__device__ __forceinline__ Threshold radixSelect(const Row<T> &row, Shared &s, const Weight &weight,
                                                 unsigned extraKey, U64 extraWeight,
                                                 const Target &targetOf) {
  Threshold t;
  Pick pick;
  U64 total;
  histogramLevel<Counting, 21, 11, 0u>(row, s, 0u, weight, extraKey, extraWeight);
  t.found = pickBin<kBins>(s, 0ull, targetOf, t.target, t.total, pick);
  if (!t.found)
    return t;
  const U64 target = t.target;
  auto fixed = [target](U64) { return target; };
  unsigned prefix = pick.bin << 21;
  histogramLevel<Counting, 10, 11, 0xffe00000u>(row, s, prefix, weight, extraKey, extraWeight);
  U64 ignored;
  t.found = pickBin<kBins>(s, pick.above, fixed, ignored, total, pick);
  if (!t.found)
    return t;
  prefix |= pick.bin << 10;
  histogramLevel<Counting, 0, 10, 0xfffffc00u>(row, s, prefix, weight, extraKey, extraWeight);
  t.found = pickBin<1024>(s, pick.above, fixed, ignored, total, pick);
  t.key = prefix | pick.bin;
  t.above = pick.above;
  t.atKey = pick.atBin;
  return t;
}

// ---- Prefix search in id order -------------------------------------------

/// The first id whose running sum of weight(id, x) (in id order) exceeds
/// thresholdOf(total), total being the row's sum; -1 when the total does not
/// exceed it. `slot` (0 or 1) is this call's result word, each used once.
template <typename T, typename Weight, typename ThresholdFn>
__device__ __forceinline__ long long findPrefix(const Row<T> &row, Shared &s, int slot,
                                                const Weight &weight,
                                                const ThresholdFn &thresholdOf) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long long units = row.units(), per = (units + kWarps - 1) / kWarps;
  const long long begin = warp * per;
  const long long end = begin + per < units ? begin + per : units;
  U64 mine = 0;
  for (long long u = begin + lane; u < end; u += 32)
    mine += unitWeight(row, u, weight);
  mine = warpSum64(mine);
  if (lane == 0)
    s.warpValue[warp] = mine;
  if (threadIdx.x == 0)
    s.found[slot] = -1;
  __syncthreads();
  const U64 warps = warpInclusiveSum64(lane < kWarps ? s.warpValue[lane] : 0ull);
  const U64 total = __shfl_sync(kFullMask, warps, 31);
  U64 before = __shfl_sync(kFullMask, warps, (warp + 31) & 31);
  if (warp == 0)
    before = 0;
  const U64 slice = __shfl_sync(kFullMask, warps, warp) - before;
  const U64 threshold = thresholdOf(total);
  const bool any = total > threshold;
  if (any && before <= threshold && threshold - before < slice) {
    // This warp's slice holds the answer: walk it 32 units at a time.
    U64 run = before;
    for (long long base = begin; base < end; base += 32) {
      const long long u = base + lane;
      const U64 w = u < end ? unitWeight(row, u, weight) : 0ull;
      const U64 inclusive = warpInclusiveSum64(w);
      const unsigned hit = __ballot_sync(kFullMask, run + inclusive > threshold);
      if (hit) {
        if (lane == __ffs(hit) - 1) {
          float v[kChunk];
          long long first;
          const int count = loadUnit(row, u, v, first);
          U64 c = run + inclusive - w;
          long long id = -1;
#pragma unroll
          for (int j = 0; j < kChunk; ++j) {
            if (j < count && id < 0) {
              c += weight(first + j, v[j]);
              if (c > threshold)
                id = first + j;
            }
          }
          s.found[slot] = id;
        }
        break;
      }
      run += __shfl_sync(kFullMask, inclusive, 31);
    }
  }
  __syncthreads();
  return any ? s.found[slot] : -1;
}

} // namespace sampleimpl

namespace sampleimpl {

struct RowParams {
  float temperature, topP;
  int topK;
};

/// Row blockIdx.x's sampling parameters, then the wait for the logits. The
/// parameters come from the step's upload, which precedes every kernel of
/// the step, so they are read while the LM head still runs.
__device__ __forceinline__ void loadRowParamsThenWaitForPreviousKernel(const SampleParams &p,
                                                                      RowParams &row) {
  row = RowParams{0.f, 1.f, 0};
  if (blockIdx.x < p.rows) {
    row.temperature = p.temperature[blockIdx.x];
    row.topP = p.topP[blockIdx.x];
    row.topK = p.topK[blockIdx.x];
  }
  waitForPreviousKernel();
}

/// Row r's token, to the device's result and the host's (when mapped).
__device__ __forceinline__ void writeToken(const SampleParams &p, long long r, int token) {
  p.tokens[r] = token;
  if (p.hostTokens)
    p.hostTokens[r] = token;
}

} // namespace sampleimpl

/// One token per row (KernelParams.h, SampleParams; the algorithm at the top).
template <typename T>
__global__ void __launch_bounds__(kSampleThreads) infer_sample(SampleParams p) {
  sampleimpl::RowParams params;
  sampleimpl::loadRowParamsThenWaitForPreviousKernel(p, params);
  using namespace sampleimpl;
  __shared__ Shared s;
  const long long r = blockIdx.x;
  if (r >= p.rows)
    return;
  const float temperature = params.temperature, topP = params.topP;
  const int topK = params.topK;
  const long long vocab = p.vocab;
  // Rows whose token is the argmax whatever the logits (the softmax's
  // checks below add the rows whose maximum is not finite).
  const bool greedy = !(temperature > 0.f) || vocab <= 1 || topK == 1;
  if (vocab <= 0) {
    if (threadIdx.x == 0)
      writeToken(p, r, 0);
    return;
  }
  // 1. The argmax: the largest (key, ~id), folded into the LM head when
  // p.argmax is given (GemvParams::argmax): greedy rows need nothing else.
  U64 best = 0;
  if (p.argmax) {
    best = p.argmax[r];
    if (greedy) {
      if (threadIdx.x == 0) {
        p.argmax[r] = 0ull; // the next LM head's start
        writeToken(p, r, int(0xffffffffu - unsigned(best)));
      }
      return;
    }
  }
  const Row<T> row = makeRow(static_cast<const T *>(p.logits) + r * vocab, vocab);
  for (int i = threadIdx.x; i < kBins; i += kThreads) {
    s.lo[i] = 0u;
    s.hi[i] = 0u;
  }
  for (long long u = threadIdx.x; !p.argmax && u < row.units(); u += kThreads) {
    float v[kChunk];
    long long first;
    const int count = loadUnit(row, u, v, first);
#pragma unroll
    for (int j = 0; j < kChunk; ++j) {
      if (j < count) {
        const U64 c = argmaxCandidate(v[j], unsigned(first + j));
        best = c > best ? c : best;
      }
    }
  }
  best = blockMax64(best, s); // also orders the histogram's zeroing
  if (p.argmax && threadIdx.x == 0)
    p.argmax[r] = 0ull; // every thread read it before blockMax64's barrier
  const unsigned maxKey = unsigned(best >> 32);
  const int top = int(0xffffffffu - unsigned(best));
  const Softmax softmax{keyValue(maxKey), kLog2e / temperature};
  const float infinity = __int_as_float(0x7f800000);
  if (greedy || !(fabsf(softmax.maxLogit) < infinity) || !(softmax.scale < infinity)) {
    if (threadIdx.x == 0)
      writeToken(p, r, top);
    return;
  }

  // Kept: key > tau, plus the first m ids with key == tau (of count such ids).
  unsigned tau = 0;
  U64 m = 1, count = 1;

  // 2. top-k over the ids of nonzero weight.
  bool useTopK = topK > 0 && topK < vocab;
  unsigned tauK = 0;
  U64 keptAtTauK = 0, countAtTauK = 0;
  if (useTopK) {
    auto positive = [&](unsigned, float x) -> U64 { return softmax.weight(x) != 0 ? 1 : 0; };
    auto k = [topK](U64) -> U64 { return U64(topK); };
    const Threshold t = radixSelect<true>(row, s, positive, 0u, 0ull, k);
    useTopK = t.found; // else fewer than k ids have weight: keep them all
    if (useTopK) {
      tauK = t.key;
      keptAtTauK = U64(topK) - t.above;
      countAtTauK = t.atKey;
      tau = tauK;
      m = keptAtTauK;
      count = countAtTauK;
    }
  }

  // 3. top-p over the top-k set.
  if (topP < 1.f) {
    const U64 extra = useTopK ? keptAtTauK * softmax.weight(keyValue(tauK)) : 0ull;
    auto eligible = [&](unsigned key, float x) -> U64 {
      return !useTopK || key > tauK ? softmax.weight(x) : 0ull;
    };
    auto nucleus = [topP](U64 total) -> U64 {
      const double want = double(topP) * double(total);
      U64 target = want > 1.0 ? __double2ull_ru(want) : 1ull;
      return target < total ? target : total;
    };
    const Threshold t = radixSelect<false>(row, s, eligible, tauK, extra, nucleus);
    if (t.found) { // always, with a finite maximum (its weight is 2^40)
      const U64 atTau = softmax.weight(keyValue(t.key));
      tau = t.key;
      m = atTau ? (t.target - t.above + atTau - 1) / atTau : 1;
      count = useTopK && t.key == tauK ? countAtTauK : (atTau ? t.atKey / atTau : 1);
    }
  }

  // 4. The last kept id of key tau, then the draw.
  long long last = 0x7fffffffffffffffll;
  if (m < count) {
    auto atTau = [tau](long long, float x) -> U64 { return orderKey(x) == tau ? 1 : 0; };
    auto mth = [m](U64) -> U64 { return m - 1; };
    const long long id = findPrefix(row, s, 0, atTau, mth);
    if (id >= 0)
      last = id;
  }
  auto kept = [&](long long id, float x) -> U64 {
    const unsigned key = orderKey(x);
    return key > tau || (key == tau && id <= last) ? softmax.weight(x) : 0ull;
  };
  float uniform = p.uniform[r];
  if (!(uniform > 0.f))
    uniform = 0.f;
  auto draw = [uniform](U64 total) -> U64 {
    const U64 threshold = __double2ull_rd(double(uniform) * double(total));
    return threshold < total ? threshold : total - 1; // total 0: no draw
  };
  long long token = findPrefix(row, s, 1, kept, draw);
  if (token < 0)
    token = top; // nothing positive and finite, as the host
  if (threadIdx.x == 0)
    writeToken(p, r, int(token));
}

} // namespace kernels
} // namespace infer

#endif // INFER_CODEGEN_CUDA_KERNELS_SAMPLING_CUH
