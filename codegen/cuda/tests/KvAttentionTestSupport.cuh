//===- KvAttentionTestSupport.cuh - kv_attention_test's steps, launchers --===//
//
// For kv_attention_test.cu (one translation unit): the test's types (cases,
// sequences, element tolerances), a step's host metadata and its device
// copy, and the launchers of the KV write, the decode attention (split-KV
// workspace, plain grid) and the two prefill kernels.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_TESTS_KVATTENTIONTESTSUPPORT_CUH
#define INFER_CODEGEN_CUDA_TESTS_KVATTENTIONTESTSUPPORT_CUH

#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "codegen/cuda/kernels/KvAttention.cuh"
#include "codegen/cuda/kernels/KvPrefillAttention.cuh"
#include "codegen/cuda/kernels/KvPrefillWgmma.cuh"
#include "codegen/cuda/kernels/GemvRows.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

namespace {

using infer::kernels::AttentionParams;
using infer::kernels::kAttentionBlockQ;
using infer::kernels::kAttentionThreads;
using infer::kernels::kKvAttentionThreads;
using infer::kernels::kKvPrefillBlockQ;
using infer::kernels::kKvPrefillThreads;
using infer::kernels::KvAttentionParams;
using infer::kerneltest::timeMs;
using infer::kerneltest::DeviceBuffer;

template <typename T> struct TypeInfo : infer::kerneltest::Element<T> {
  static constexpr double tolerance = infer::kerneltest::pickTolerance<T>(2e-5, 2e-2, 5e-3);
};

/// The largest error of an attention output element against the same
/// attention summed in another order, over max(1, |reference|): within
/// TypeInfo<T>::tolerance when only the order of fp32 sums differs
/// (infinite for a non-finite output or a size mismatch).
template <typename T>
double worstOrderError(const std::vector<T> &got, const std::vector<T> &want) {
  if (got.size() != want.size())
    return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = TypeInfo<T>::value(want[i]), b = TypeInfo<T>::value(got[i]);
    const double error =
        std::isfinite(b) ? std::fabs(a - b) / std::max(1.0, std::fabs(a)) : INFINITY;
    worst = std::max(worst, error);
  }
  return worst;
}

struct Seq {
  long long context, n;
};

struct Case {
  int heads, kvHeads, headDim, blockSize;
  bool packed, misaligned;
  float softcap;
  int window = 0; // sliding window (keys); general path only
};

/// infer_kv_decode for heads of D elements (kvDecodeMaxDim: 64 or 128).
template <typename T> auto decodeKernel(long long D) {
  return infer::kernels::kvDecodeMaxDim(D) == 64 ? infer::kernels::infer_kv_decode<T, float, 64>
                                                 : infer::kernels::infer_kv_decode<T, float, 128>;
}

template <typename T> void randomFill(std::vector<T> &host, std::mt19937 &rng) {
  host = infer::kerneltest::randomElements<T>(host.size(), rng);
}

template <typename T> void upload(T *device, const std::vector<T> &host) {
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

/// One step's metadata over a shuffled pool (block 0 is never used, as on the
/// cpu backend).
struct Step {
  std::vector<long long> seqStarts, contextLens, blockTables, slotIds;
  long long tokens = 0, realTokens = 0, numSeqs = 0, maxBlocks = 0, numBlocks = 0;

  Step(const std::vector<Seq> &seqs, long long blockSize, int padding, std::mt19937 &rng) {
    numSeqs = (long long)seqs.size();
    long long needed = 0;
    for (const Seq &s : seqs) {
      long long blocks = (s.context + blockSize - 1) / blockSize;
      needed += blocks;
      maxBlocks = std::max(maxBlocks, blocks + 1);
    }
    numBlocks = 1 + needed + 5;
    std::vector<long long> pool(size_t(numBlocks - 1));
    std::iota(pool.begin(), pool.end(), 1);
    std::shuffle(pool.begin(), pool.end(), rng);
    blockTables.assign(size_t(numSeqs * maxBlocks), 0);
    size_t next = 0;
    seqStarts.push_back(0);
    for (long long i = 0; i < numSeqs; ++i) {
      const Seq &s = seqs[size_t(i)];
      long long blocks = (s.context + blockSize - 1) / blockSize;
      for (long long b = 0; b < blocks; ++b)
        blockTables[size_t(i * maxBlocks + b)] = pool[next++];
      contextLens.push_back(s.context);
      for (long long j = 0; j < s.n; ++j) {
        long long position = s.context - s.n + j;
        long long block = blockTables[size_t(i * maxBlocks + position / blockSize)];
        slotIds.push_back(block * blockSize + position % blockSize);
      }
      seqStarts.push_back(seqStarts.back() + s.n);
    }
    realTokens = seqStarts.back();
    for (int i = 0; i < padding; ++i)
      slotIds.push_back(-1);
    tokens = realTokens + padding;
  }
};

/// Device copies of one step's metadata.
struct DeviceStep {
  DeviceBuffer<long long> starts, lens, tables, slots;
  long long maxNewTokens = 0;

  explicit DeviceStep(const Step &step)
      : starts(step.seqStarts.size()), lens(step.contextLens.size()),
        tables(step.blockTables.size()), slots(step.slotIds.size()) {
    upload(starts.ptr, step.seqStarts);
    upload(lens.ptr, step.contextLens);
    upload(tables.ptr, step.blockTables);
    upload(slots.ptr, step.slotIds);
    for (size_t i = 0; i + 1 < step.seqStarts.size(); ++i)
      maxNewTokens = std::max(maxNewTokens, step.seqStarts[i + 1] - step.seqStarts[i]);
  }

  /// Sets the metadata fields of p.
  void fill(KvAttentionParams &p, const Step &step, long long blockSize) const {
    p.seqStarts = starts.ptr;
    p.contextLens = lens.ptr;
    p.blockTables = tables.ptr;
    p.slotIds = slots.ptr;
    p.tokens = step.tokens;
    p.numSeqs = step.numSeqs;
    p.maxBlocksPerSeq = step.maxBlocks;
    p.blockSize = blockSize;
  }
};

template <typename T> void launchWrite(const KvAttentionParams &p) {
  infer::kernels::infer_kv_write<T><<<unsigned(p.tokens), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// infer_kv_attention's workspace and counters, as the runtime keeps them:
/// zeroed once, grown (zeroed again) when a launch needs more.
struct DecodeWorkspace {
  float *workspace = nullptr;
  unsigned *counters = nullptr;
  long long floats = 0, counterCount = 0;

  void reserve(long long tokens, long long H, long long KV, long long D) {
    growZeroed(workspace, floats, infer::kernels::kvDecodeWorkspaceFloats(tokens, H, KV, D));
    growZeroed(counters, counterCount, infer::kernels::kvDecodeCounterCount(tokens, H, KV));
  }

  /// Reallocates `buffer` (of `count` elements) zeroed when `need` is more.
  template <typename E> static void growZeroed(E *&buffer, long long &count, long long need) {
    if (need <= count)
      return;
    if (buffer)
      CUDA_CHECK(cudaFree(buffer));
    CUDA_CHECK(cudaMalloc(&buffer, size_t(need) * sizeof(E)));
    CUDA_CHECK(cudaMemset(buffer, 0, size_t(need) * sizeof(E)));
    count = need;
  }

  /// True when every counter is back to zero.
  bool countersZero() const {
    std::vector<unsigned> host(static_cast<size_t>(counterCount));
    if (!host.empty())
      CUDA_CHECK(cudaMemcpy(host.data(), counters, host.size() * sizeof(unsigned),
                            cudaMemcpyDeviceToHost));
    return std::all_of(host.begin(), host.end(), [](unsigned x) { return x == 0; });
  }
};

DecodeWorkspace &decodeWorkspace() {
  static DecodeWorkspace workspace; // lives until exit, as the runtime's
  return workspace;
}

/// The split-KV launch of KvDecodeGeometry.h (splits: grid.z, 0 for
/// kvDecodeSplits).
template <typename T> void launchDecode(KvAttentionParams p, int splits = 0) {
  DecodeWorkspace &w = decodeWorkspace();
  w.reserve(p.tokens, p.numHeads, p.numKvHeads, p.headDim);
  p.workspace = w.workspace;
  p.counters = w.counters;
  const unsigned y = unsigned(infer::kernels::kvDecodeGridY(p.numHeads, p.numKvHeads));
  const unsigned z =
      unsigned(splits > 0 ? splits : infer::kernels::kvDecodeSplits(p.tokens, p.numHeads,
                                                                    p.numKvHeads));
  infer::kernels::infer_kv_attention<T><<<dim3(unsigned(p.tokens), y, z), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// The plain grid (tokens, numKvHeads) without workspace: one block per kv
/// head does all of its query heads and positions.
template <typename T> void launchDecodePlain(KvAttentionParams p) {
  p.workspace = nullptr;
  p.counters = nullptr;
  infer::kernels::infer_kv_attention<T>
      <<<dim3(unsigned(p.tokens), unsigned(p.numKvHeads)), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// The prefill kernels (kvPrefillSupported must hold). WgmmaNarrow: the
/// wgmma kernel in a block without its producer warpgroup (a launch record
/// for another block size), which must take the fallback path, not hang.
enum class Prefill { MmaSync, Wgmma, WgmmaNarrow };
const char *prefillName(Prefill kernel) {
  return kernel == Prefill::Wgmma         ? "kv_prefill_wgmma"
         : kernel == Prefill::WgmmaNarrow ? "kv_prefill_wgmma/256"
                                          : "kv_prefill";
}

/// The tensor-core prefill: infer_kv_prefill_attention, or
/// infer_kv_prefill_attention_wgmma (which falls back to the former's path
/// where wgmma does not apply, so it runs every case).
template <typename T>
void launchPrefill(const KvAttentionParams &p, long long maxNewTokens,
                   Prefill kernel = Prefill::MmaSync) {
  const bool wgmma = kernel != Prefill::MmaSync;
  const int shared =
      wgmma ? std::max(infer::kernels::kvPrefillWgmmaSharedBytes(p.headDim, int(sizeof(T))),
                       infer::kernels::kvPrefillSharedBytes(p.headDim, int(sizeof(T))))
            : infer::kernels::kvPrefillSharedBytes(p.headDim, int(sizeof(T)));
  // The instantiation codegen names for this head size.
  const bool small = infer::kernels::attentionHeadClass(p.headDim) == 64;
  auto *function = wgmma ? (small ? infer::kernels::infer_kv_prefill_attention_wgmma<T, 64>
                                  : infer::kernels::infer_kv_prefill_attention_wgmma<T, 256>)
                         : (small ? infer::kernels::infer_kv_prefill_attention<T, 64>
                                  : infer::kernels::infer_kv_prefill_attention<T, 256>);
  // Per T, kernel and class: the default limit until raised.
  static int allowed[2][2] = {{48 * 1024, 48 * 1024}, {48 * 1024, 48 * 1024}};
  if (shared > allowed[wgmma][small]) {
    CUDA_CHECK(cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    allowed[wgmma][small] = shared;
  }
  if (maxNewTokens <= 0)
    return;
  const dim3 grid(unsigned((maxNewTokens + kKvPrefillBlockQ - 1) / kKvPrefillBlockQ),
                  unsigned(p.numHeads), unsigned(p.numSeqs));
  const int threads =
      kernel == Prefill::Wgmma ? infer::kernels::kKvPrefillWgmmaThreads : kKvPrefillThreads;
  function<<<grid, threads, shared>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// A packed-qkv rotary (rows of H + 2 KV heads of D, the first H + KV
/// rotated over rotaryDim, positions per token) writing rotaryOut, and the
/// q / k / v views of a paged attention over that output.
template <typename T>
infer::kernels::RotaryKvWriteParams packedRotaryKv(const T *input, T *rotaryOut,
                                                   const float *invFreq,
                                                   const long long *positions, long long tokens,
                                                   long long H, long long KV, long long D,
                                                   long long rotaryDim, int interleaved) {
  infer::kernels::RotaryKvWriteParams p;
  std::memset(&p, 0, sizeof(p));
  p.rotary.input = input;
  p.rotary.output = rotaryOut;
  p.rotary.invFreq = invFreq;
  p.rotary.positions = positions;
  p.rotary.tokens = tokens;
  p.rotary.seq = tokens;
  p.rotary.numHeads = H + 2 * KV;
  p.rotary.rotatedHeads = H + KV;
  p.rotary.headDim = D;
  p.rotary.rotaryDim = rotaryDim;
  p.rotary.positionBatch = 1;
  p.rotary.interleaved = interleaved;
  p.kv.q = rotaryOut;
  p.kv.k = rotaryOut + H * D;
  p.kv.v = rotaryOut + (H + KV) * D;
  p.kv.qRowStride = p.kv.kRowStride = p.kv.vRowStride = (H + 2 * KV) * D;
  p.kv.tokens = tokens;
  p.kv.numHeads = H;
  p.kv.numKvHeads = KV;
  p.kv.headDim = D;
  return p;
}

/// count elements of T from the device.

} // namespace

#endif // INFER_CODEGEN_CUDA_TESTS_KVATTENTIONTESTSUPPORT_CUH
