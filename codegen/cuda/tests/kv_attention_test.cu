//===- kv_attention_test.cu - paged attention kernels vs double -----------===//
//
// Runs infer_kv_write<T> then infer_kv_attention<T> for f32, bf16 and f16 on
// a paged cache with random, non-contiguous block tables over a pool: one step
// of sequences with context lengths 1, 5, 16, 17, 100 and 1000 mixing
// prefill chunks (n > 1, also continuing an existing context), decodes
// (n = 1), an empty sequence and a padding token (slot -1). Block sizes 16, 4
// and 6; GQA 32/4, 8/2, 4/4 and groups of 3, 12 and 16; head sizes 64, 128,
// 16, 40, 80, 256 and 3; packed qkv and separate q/k/v (also one element off
// 16-byte alignment, cache included); softcap 0 and 30. The written cache
// must match exactly; outputs are compared with a reference in double that
// follows runtime/cpu/KvAttentionKernel.cpp over the same rounded inputs.
// Where kvPrefillSupported (16-bit types, head sizes 16, 64, 80, 128, 256),
// infer_kv_write then infer_kv_prefill_attention<T> runs the same case
// against the same reference, and so does infer_kv_prefill_attention_wgmma<T>
// (wgmma at head size 128 without softcap on aligned rows, the former's path
// otherwise); bf16 and f16 also run long prefill chunks (300
// new tokens over 200 cached, a 1000-token prompt; block sizes 16 and 6)
// through all three kernels. infer_kv_attention runs with the split-KV grid of
// KvDecodeGeometry.h (workspace and counters; the counters must be left
// zero) and again with the plain (tokens, kv heads) grid and no workspace.
// Decode cases (16-bit types, also f32 on the general path) cover the fast
// path: batch 1 at 2,000+ positions (many splits), 64 sequences x 1024, GQA
// 8 and 4 at head size 128, head groups split over blocks (16 and 12 query
// heads per kv head), head size 96, block sizes 16, 6 and 4, softcap. Then
// times bf16 decode steps (1 x 200, 1 x 2000, 64 x 1024, 512 x 192 at 32/4/64
// and 32/8/128: microseconds and GB/s of K/V read; also rotary + KV write +
// attention against infer_kv_decode), and a 2048-token bf16
// prefill through both prefill kernels, infer_attention and infer_kv_attention
// (not asserted; the prefills must agree with infer_attention). Also
// infer_rotary_kv_write against infer_rotary then infer_kv_write (equal bytes),
// and (16-bit types) infer_kv_decode against infer_rotary, infer_kv_write and
// infer_kv_attention (same cache bytes, outputs within the tolerance).
//
// `--layer-timings` instead times whole batch-1 decode layers as the step
// runs them (rms_norm + qkv GEMV, infer_kv_decode, o GEMV + residual,
// rms_norm + gate/up GEMV, gated down GEMV + residual; programmatic, 16
// layers in a CUDA graph, each layer its own weights so that they stream
// from HBM) at TinyLlama's and Llama-3-8B's shapes, with the gated
// activation written by the gate/up GEMV (as the step runs it) and, for
// comparison, in the down GEMV's prologue: a kernel experiment's effect on a
// layer without exporting a model.
//
// Built with -DINFER_KERNEL_STAMPS (bench/decode-stamps.sh), `--stamps`
// instead times one decode layer's attention from the inside: the qkv GEMV,
// infer_kv_decode and the o_proj GEMV launched programmatically in a CUDA
// graph, with %globaltimer stamps at the decode blocks' stages (Common.cuh,
// INFER_KERNEL_STAMP).
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
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


template <typename T> struct TypeInfo : infer::kerneltest::Element<T> {
  static constexpr double tolerance = infer::kerneltest::pickTolerance<T>(2e-5, 2e-2, 5e-3);
};

struct Seq {
  long long context, n;
};

struct Case {
  int heads, kvHeads, headDim, blockSize;
  bool packed, misaligned;
  float softcap;
};

template <typename T> struct DeviceBuffer {
  T *ptr = nullptr;
  explicit DeviceBuffer(size_t count) {
    CUDA_CHECK(cudaMalloc(&ptr, std::max<size_t>(count, 1) * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr)
      (void)cudaFree(ptr); // nothing to do about a failed free in a test
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
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
    const long long needFloats = infer::kernels::kvDecodeWorkspaceFloats(tokens, H, KV, D);
    const long long needCounters = infer::kernels::kvDecodeCounterCount(tokens, H, KV);
    if (needFloats > floats) {
      if (workspace)
        CUDA_CHECK(cudaFree(workspace));
      CUDA_CHECK(cudaMalloc(&workspace, size_t(needFloats) * sizeof(float)));
      CUDA_CHECK(cudaMemset(workspace, 0, size_t(needFloats) * sizeof(float)));
      floats = needFloats;
    }
    if (needCounters > counterCount) {
      if (counters)
        CUDA_CHECK(cudaFree(counters));
      CUDA_CHECK(cudaMalloc(&counters, size_t(needCounters) * sizeof(unsigned)));
      CUDA_CHECK(cudaMemset(counters, 0, size_t(needCounters) * sizeof(unsigned)));
      counterCount = needCounters;
    }
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

/// The prefill kernels (kvPrefillSupported must hold).
enum class Prefill { MmaSync, Wgmma };
const char *prefillName(Prefill kernel) {
  return kernel == Prefill::Wgmma ? "kv_prefill_wgmma" : "kv_prefill";
}

/// The tensor-core prefill: infer_kv_prefill_attention, or
/// infer_kv_prefill_attention_wgmma (which falls back to the former's path
/// where wgmma does not apply, so it runs every case).
template <typename T>
void launchPrefill(const KvAttentionParams &p, long long maxNewTokens,
                   Prefill kernel = Prefill::MmaSync) {
  const bool wgmma = kernel == Prefill::Wgmma;
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
  function<<<grid, kKvPrefillThreads, shared>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// Outputs in double of every real token (packed rows of [H * D]), as
/// runtime/cpu/KvAttentionKernel.cpp, over the cache after the step's writes.
template <typename T>
std::vector<double> reference(const Case &c, const Step &step, const T *cache, const T *qBase,
                              long long qStride, double scale) {
  const long long H = c.heads, KV = c.kvHeads, D = c.headDim, bs = c.blockSize;
  const long long rowElems = KV * D, group = H / KV;
  const double softcap = double(c.softcap);
  std::vector<double> want(size_t(step.realTokens * H * D), 0.0);
  std::vector<double> keys, values, scores, query(static_cast<size_t>(D));
  for (long long s = 0; s < step.numSeqs; ++s) {
    const long long begin = step.seqStarts[size_t(s)], end = step.seqStarts[size_t(s + 1)];
    const long long context = step.contextLens[size_t(s)], n = end - begin;
    const long long *table = step.blockTables.data() + s * step.maxBlocks;
    // The sequence's K and V rows in position order, as doubles.
    keys.resize(size_t(context * rowElems));
    values.resize(size_t(context * rowElems));
    for (long long pos = 0; pos < context; ++pos) {
      const T *row = cache + (table[pos / bs] * 2 * bs + pos % bs) * rowElems;
      for (long long e = 0; e < rowElems; ++e) {
        keys[size_t(pos * rowElems + e)] = double(TypeInfo<T>::value(row[e]));
        values[size_t(pos * rowElems + e)] = double(TypeInfo<T>::value(row[bs * rowElems + e]));
      }
    }
    scores.resize(size_t(context));
    for (long long j = 0; j < n; ++j) {
      const long long row = begin + j, visible = context - n + j + 1;
      for (long long h = 0; h < H; ++h) {
        const T *qRow = qBase + row * qStride + h * D;
        for (long long d = 0; d < D; ++d)
          query[size_t(d)] = double(TypeInfo<T>::value(qRow[d]));
        const long long kvOffset = (h / group) * D;
        double maximum = -INFINITY;
        for (long long pos = 0; pos < visible; ++pos) {
          const double *k = &keys[size_t(pos * rowElems + kvOffset)];
          double dot = 0;
          for (long long d = 0; d < D; ++d)
            dot += query[size_t(d)] * k[d];
          double score = dot * scale;
          if (softcap > 0)
            score = softcap * std::tanh(score / softcap);
          scores[size_t(pos)] = score;
          maximum = std::max(maximum, score);
        }
        double sum = 0;
        for (long long pos = 0; pos < visible; ++pos) {
          scores[size_t(pos)] = std::exp(scores[size_t(pos)] - maximum);
          sum += scores[size_t(pos)];
        }
        double *out = &want[size_t((row * H + h) * D)];
        for (long long pos = 0; pos < visible; ++pos) {
          const double weight = scores[size_t(pos)] / sum;
          const double *v = &values[size_t(pos * rowElems + kvOffset)];
          for (long long d = 0; d < D; ++d)
            out[d] += weight * v[d];
        }
      }
    }
  }
  return want;
}

/// Compares the device output (pad elements, the rows, a guard) with the
/// reference; prints a line and returns whether it passed.
template <typename T>
bool check(const char *kernel, const Case &c, long long tokens, const T *outDevice,
           long long outTotal, long long pad, const std::vector<double> &want, bool cacheOk) {
  std::vector<T> out(static_cast<size_t>(outTotal));
  CUDA_CHECK(cudaMemcpy(out.data(), outDevice, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  // Rows outside every sequence (padding) and the guards stay untouched.
  bool untouched = true;
  double maxError = 0;
  for (long long i = 0; i < outTotal; ++i) {
    if (i >= pad && i < pad + (long long)want.size()) {
      double error = std::fabs(double(TypeInfo<T>::value(out[size_t(i)])) - want[size_t(i - pad)]);
      maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
      continue;
    }
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &out[size_t(i)], sizeof(T));
    for (unsigned char byte : bytes)
      untouched = untouched && byte == 0xff;
  }
  bool ok = cacheOk && untouched && maxError <= TypeInfo<T>::tolerance;
  std::printf("%-12s %-4s heads=%2d/%d D=%-3d block=%-2d %s%s softcap=%-2g tokens=%lld: max error "
              "%.3g (tolerance %.0e)%s%s %s\n",
              kernel, TypeInfo<T>::name, c.heads, c.kvHeads, c.headDim, c.blockSize,
              c.packed ? "packed  " : "separate", c.misaligned ? " misaligned" : "",
              double(c.softcap), tokens, maxError, TypeInfo<T>::tolerance,
              cacheOk ? "" : " CACHE MISMATCH", untouched ? "" : " WROTE OUTSIDE THE ROWS",
              ok ? "ok" : "FAIL");
  return ok;
}

/// Runs one case through infer_kv_write + infer_kv_attention and, where
/// kvPrefillSupported, infer_kv_write + infer_kv_prefill_attention; returns
/// the number of failures.
template <typename T> int runCase(const Case &c, const std::vector<Seq> &seqs, std::mt19937 &rng) {
  const long long H = c.heads, KV = c.kvHeads, D = c.headDim, bs = c.blockSize;
  Step step(seqs, bs, /*padding=*/1, rng);
  const long long tokens = step.tokens;
  const long long pad = c.misaligned ? 1 : 0;

  // Inputs.
  long long qStride, kvStride;
  std::vector<T> qkvHost, qHost, kHost, vHost;
  const T *qBase, *kBase, *vBase; // host views of the rounded inputs
  if (c.packed) {
    qStride = kvStride = (H + 2 * KV) * D;
    qkvHost.resize(size_t(pad + tokens * qStride));
    randomFill(qkvHost, rng);
    qBase = qkvHost.data() + pad;
    kBase = qBase + H * D;
    vBase = qBase + (H + KV) * D;
  } else {
    qStride = H * D + pad;
    kvStride = KV * D + pad;
    qHost.resize(size_t(pad + tokens * qStride));
    kHost.resize(size_t(pad + tokens * kvStride));
    vHost.resize(size_t(pad + tokens * kvStride));
    randomFill(qHost, rng);
    randomFill(kHost, rng);
    randomFill(vHost, rng);
    qBase = qHost.data() + pad;
    kBase = kHost.data() + pad;
    vBase = vHost.data() + pad;
  }

  // The cache: random contents (earlier steps), then this step's rows.
  const long long rowElems = KV * D, halfElems = bs * rowElems;
  const long long cacheElems = step.numBlocks * 2 * halfElems;
  std::vector<T> cacheHost(size_t(pad + cacheElems));
  randomFill(cacheHost, rng);
  std::vector<T> expectedCache = cacheHost;
  T *expected = expectedCache.data() + pad;
  for (long long t = 0; t < tokens; ++t) {
    long long slot = step.slotIds[size_t(t)];
    if (slot < 0)
      continue;
    long long block = slot / bs, offset = slot % bs;
    std::memcpy(expected + ((block * 2 + 0) * bs + offset) * rowElems, kBase + t * kvStride,
                sizeof(T) * size_t(rowElems));
    std::memcpy(expected + ((block * 2 + 1) * bs + offset) * rowElems, vBase + t * kvStride,
                sizeof(T) * size_t(rowElems));
  }

  // Device copies.
  DeviceBuffer<T> qkvDev(qkvHost.size()), qDev(qHost.size()), kDev(kHost.size()),
      vDev(vHost.size()), cacheDev(cacheHost.size());
  KvAttentionParams p;
  std::memset(&p, 0, sizeof(p));
  if (c.packed) {
    upload(qkvDev.ptr, qkvHost);
    p.q = qkvDev.ptr + pad;
    p.k = qkvDev.ptr + pad + H * D;
    p.v = qkvDev.ptr + pad + (H + KV) * D;
  } else {
    upload(qDev.ptr, qHost);
    upload(kDev.ptr, kHost);
    upload(vDev.ptr, vHost);
    p.q = qDev.ptr + pad;
    p.k = kDev.ptr + pad;
    p.v = vDev.ptr + pad;
  }
  upload(cacheDev.ptr, cacheHost);
  p.cache = cacheDev.ptr + pad;
  const DeviceStep deviceStep(step);
  deviceStep.fill(p, step, bs);

  const long long outElements = tokens * H * D, guard = 64;
  const long long outTotal = pad + outElements + guard;
  DeviceBuffer<T> outDev{size_t(outTotal)};
  p.output = outDev.ptr + pad;
  p.qRowStride = qStride;
  p.kRowStride = p.vRowStride = kvStride;
  p.numHeads = H;
  p.numKvHeads = KV;
  p.headDim = D;
  p.scale = float(1.0 / std::sqrt(double(D)));
  p.softcap = c.softcap;

  const std::vector<double> want = reference(c, step, expected, qBase, qStride, double(p.scale));
  auto cacheMatches = [&] {
    std::vector<T> cacheResult(cacheHost.size());
    CUDA_CHECK(cudaMemcpy(cacheResult.data(), cacheDev.ptr, cacheResult.size() * sizeof(T),
                          cudaMemcpyDeviceToHost));
    return std::memcmp(cacheResult.data(), expectedCache.data(),
                       cacheResult.size() * sizeof(T)) == 0;
  };

  int failures = 0;
  CUDA_CHECK(cudaMemset(outDev.ptr, 0xff, size_t(outTotal) * sizeof(T))); // NaN in every type
  launchWrite<T>(p);
  launchDecode<T>(p);
  CUDA_CHECK(cudaDeviceSynchronize());
  const bool countersZero = decodeWorkspace().countersZero();
  if (!countersZero)
    std::printf("kv_attention left a split counter nonzero\n");
  failures += check("kv_attention", c, tokens, outDev.ptr, outTotal, pad, want, cacheMatches()) &&
                      countersZero
                  ? 0
                  : 1;
  // The plain grid, over the cache as the step left it.
  CUDA_CHECK(cudaMemset(outDev.ptr, 0xff, size_t(outTotal) * sizeof(T)));
  launchDecodePlain<T>(p);
  CUDA_CHECK(cudaDeviceSynchronize());
  failures += check("kv_attn/1", c, tokens, outDev.ptr, outTotal, pad, want, cacheMatches())
                  ? 0
                  : 1;

  if (infer::kernels::kvPrefillSupported(D, int(sizeof(T)))) {
    for (Prefill kernel : {Prefill::MmaSync, Prefill::Wgmma}) {
      // From the cache as it was before the step, so that the write runs again.
      upload(cacheDev.ptr, cacheHost);
      CUDA_CHECK(cudaMemset(outDev.ptr, 0xff, size_t(outTotal) * sizeof(T)));
      launchWrite<T>(p);
      launchPrefill<T>(p, deviceStep.maxNewTokens, kernel);
      CUDA_CHECK(cudaDeviceSynchronize());
      failures += check(prefillName(kernel), c, tokens, outDev.ptr, outTotal, pad, want,
                        cacheMatches())
                      ? 0
                      : 1;
    }
  }
  return failures;
}

std::vector<Case> cases() {
  // heads, kvHeads, headDim, blockSize, packed, misaligned, softcap
  return {
      {32, 4, 64, 16, true, false, 0.f},   {32, 4, 64, 4, false, false, 30.f},
      {8, 2, 128, 4, false, false, 30.f},  {8, 2, 128, 16, true, false, 0.f},
      {4, 4, 16, 16, false, false, 0.f},   {4, 4, 16, 4, true, false, 30.f},
      {8, 2, 40, 4, true, false, 30.f},    {8, 2, 40, 16, false, false, 0.f},
      {16, 1, 64, 16, true, false, 0.f},   {6, 2, 256, 16, false, false, 0.f},
      {12, 1, 80, 4, false, false, 30.f},  {2, 1, 3, 6, false, false, 0.f},
      {32, 4, 64, 16, false, true, 0.f},   {8, 2, 128, 6, false, true, 30.f},
  };
}

/// Long prefill chunks (16-bit types): several query tiles per sequence, key
/// tiles straddling cache blocks of 16 and 6 positions.
std::vector<Case> longCases() {
  return {{8, 2, 128, 16, true, false, 0.f},
          {16, 4, 64, 6, false, false, 30.f},
          {16, 4, 64, 6, false, false, 0.f}};
}

/// Decode-heavy steps for the fast path: long contexts, many splits, head
/// groups split over blocks, head size 96, block sizes 16, 6 and 4.
struct DecodeCase {
  Case c;
  std::vector<Seq> seqs;
};

std::vector<DecodeCase> decodeCases() {
  // heads, kvHeads, headDim, blockSize, packed, misaligned, softcap
  return {
      {{32, 4, 64, 16, true, false, 0.f}, {{2500, 1}}},            // batch 1, many splits
      {{32, 8, 128, 16, true, false, 0.f}, {{2000, 1}}},           // batch 1, GQA 4 at 128
      {{32, 4, 64, 16, true, false, 0.f}, std::vector<Seq>(64, Seq{1024, 1})},
      {{32, 8, 128, 16, false, false, 0.f}, std::vector<Seq>(64, Seq{1024, 1})},
      {{8, 2, 128, 6, false, false, 30.f}, {{3000, 1}, {37, 1}, {700, 3}, {2, 1}}},
      {{16, 1, 64, 4, true, false, 0.f}, {{2049, 1}, {1, 1}, {100, 1}}}, // 2 head groups
      {{24, 2, 96, 16, false, false, 0.f}, {{1500, 1}, {64, 1}, {65, 1}}}, // 12 per kv head
  };
}

template <typename T> int runDecodeCases(std::mt19937 &rng) {
  int failures = 0;
  for (const DecodeCase &d : decodeCases())
    failures += runCase<T>(d.c, d.seqs, rng);
  return failures;
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
template <typename T> std::vector<T> download(const T *device, size_t count) {
  std::vector<T> host(count);
  CUDA_CHECK(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

/// infer_rotary_kv_write<T, float> against infer_rotary then infer_kv_write
/// on the same packed qkv (GQA 8/2, 37 tokens at random positions, one of
/// them padding, slots spread over a pool of blocks of 16): the rotary
/// output rows and the whole cache must be identical bytes. Head sizes 64 and
/// 128, full and half rotary, half-split and interleaved pairs.
template <typename T> int testRotaryKvWrite(std::mt19937 &rng) {
  const long long H = 8, KV = 2, tokens = 37, blockSize = 16, numBlocks = 16;
  int failures = 0;
  for (long long D : {64LL, 128LL})
    for (long long rotaryDim : {D, D / 2})
      for (int interleaved : {0, 1}) {
        const long long features = (H + 2 * KV) * D, cacheElems = numBlocks * 2 * blockSize * KV * D;
        std::vector<T> qkv(size_t(tokens * features));
        randomFill(qkv, rng);
        std::vector<float> invFreq(size_t(rotaryDim / 2));
        for (size_t i = 0; i < invFreq.size(); ++i)
          invFreq[i] = float(std::pow(10000.0, -2.0 * double(i) / double(rotaryDim)));
        std::vector<long long> positions(static_cast<size_t>(tokens)),
            slots(static_cast<size_t>(numBlocks * blockSize));
        std::iota(slots.begin(), slots.end(), 0LL);
        std::shuffle(slots.begin(), slots.end(), rng);
        slots.resize(size_t(tokens));
        slots[5] = -1; // padding
        for (long long &position : positions)
          position = std::uniform_int_distribution<long long>(0, 4000)(rng);
        DeviceBuffer<T> input(qkv.size()), outSeparate(qkv.size()), outFused(qkv.size());
        DeviceBuffer<T> cacheSeparate(static_cast<size_t>(cacheElems)),
            cacheFused(static_cast<size_t>(cacheElems));
        DeviceBuffer<float> freq(invFreq.size());
        DeviceBuffer<long long> pos(positions.size()), slotIds(slots.size());
        upload(input.ptr, qkv);
        upload(freq.ptr, invFreq);
        upload(pos.ptr, positions);
        upload(slotIds.ptr, slots);
        CUDA_CHECK(cudaMemset(cacheSeparate.ptr, 0x3c, size_t(cacheElems) * sizeof(T)));
        CUDA_CHECK(cudaMemset(cacheFused.ptr, 0x3c, size_t(cacheElems) * sizeof(T)));
        auto params = [&](T *out, T *cache) {
          infer::kernels::RotaryKvWriteParams p = packedRotaryKv<T>(
              input.ptr, out, freq.ptr, pos.ptr, tokens, H, KV, D, rotaryDim, interleaved);
          p.kv.cache = cache;
          p.kv.slotIds = slotIds.ptr;
          p.kv.blockSize = blockSize;
          return p;
        };
        const infer::kernels::RotaryKvWriteParams separate = params(outSeparate.ptr, cacheSeparate.ptr),
                                                  fused = params(outFused.ptr, cacheFused.ptr);
        infer::kernels::infer_rotary<T, float><<<unsigned(tokens), 256>>>(separate.rotary);
        CUDA_CHECK(cudaGetLastError());
        launchWrite<T>(separate.kv);
        infer::kernels::infer_rotary_kv_write<T, float><<<unsigned(tokens), kKvAttentionThreads>>>(fused);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
        const bool sameRows = std::memcmp(download(outSeparate.ptr, qkv.size()).data(),
                                          download(outFused.ptr, qkv.size()).data(),
                                          qkv.size() * sizeof(T)) == 0;
        const bool sameCache = std::memcmp(download(cacheSeparate.ptr, size_t(cacheElems)).data(),
                                           download(cacheFused.ptr, size_t(cacheElems)).data(),
                                           size_t(cacheElems) * sizeof(T)) == 0;
        if (!sameRows || !sameCache) {
          std::printf("FAIL %s rotary + kv write fused, D=%lld rotary_dim=%lld interleaved=%d:%s%s\n",
                      TypeInfo<T>::name, D, rotaryDim, interleaved,
                      sameRows ? "" : " rotary rows differ", sameCache ? "" : " cache differs");
          ++failures;
        }
      }
  std::printf("%s %s infer_rotary_kv_write = infer_rotary + infer_kv_write (8 cases)\n",
              failures ? "FAIL" : "PASS", TypeInfo<T>::name);
  return failures;
}

/// infer_kv_decode<T, float, 64 or 128> (rotary, KV write and attention of a decode step
/// in one kernel) against infer_rotary, infer_kv_write and infer_kv_attention
/// on the same packed qkv rows and cache: decode steps of sequences at
/// contexts 1 (nothing cached), 2, 17, 100, 300 and 2,100 (many splits) plus a
/// padding token; GQA 32/4 x 64, 8/2 x 128 and 16/1 x 64 (two head groups);
/// block sizes 16 and 6; full and half rotary, half-split and interleaved;
/// softcap 0 and 30. The cache must come out identical (same bytes), the
/// outputs within TypeInfo<T>::tolerance x max(1, |reference|) (only the
/// order of fp32 sums differs), the split counters zero. The fused kernel's
/// view of the rotary output (q, k, v pointers) is a buffer of NaNs that it
/// must not read.
template <typename T> int testKvDecode(std::mt19937 &rng) {
  struct DecodeShape {
    long long H, KV, D, blockSize, rotaryDim;
    int interleaved;
    float softcap;
  };
  const std::vector<DecodeShape> shapes = {{32, 4, 64, 16, 64, 0, 0.f}, {8, 2, 128, 6, 64, 1, 0.f},
                                           {16, 1, 64, 16, 32, 0, 30.f}, {32, 4, 64, 6, 64, 1, 0.f}};
  const std::vector<Seq> seqs = {{1, 1}, {2, 1}, {17, 1}, {100, 1}, {300, 1}, {2100, 1}};
  int failures = 0, cases = 0;
  for (const DecodeShape &shape : shapes) {
    const long long H = shape.H, KV = shape.KV, D = shape.D, bs = shape.blockSize;
    const Step step(seqs, bs, 1, rng);
    const DeviceStep meta(step);
    const long long tokens = step.tokens, features = (H + 2 * KV) * D;
    const long long cacheElems = step.numBlocks * 2 * bs * KV * D;
    std::vector<T> qkv(size_t(tokens * features)), cacheHost{std::vector<T>(size_t(cacheElems))};
    randomFill(qkv, rng);
    randomFill(cacheHost, rng);
    std::vector<float> invFreq(size_t(shape.rotaryDim / 2));
    for (size_t i = 0; i < invFreq.size(); ++i)
      invFreq[i] = float(std::pow(10000.0, -2.0 * double(i) / double(shape.rotaryDim)));
    std::vector<long long> positions;
    for (const Seq &seq : seqs)
      positions.push_back(seq.context - 1);
    positions.push_back(0); // padding
    DeviceBuffer<T> input(qkv.size()), rotated(qkv.size()), unread(qkv.size());
    DeviceBuffer<T> cacheSeparate{size_t(cacheElems)}, cacheFused{size_t(cacheElems)};
    DeviceBuffer<T> outSeparate{size_t(tokens * H * D)}, outFused{size_t(tokens * H * D)};
    DeviceBuffer<float> freq(invFreq.size());
    DeviceBuffer<long long> pos(positions.size());
    upload(input.ptr, qkv);
    upload(cacheSeparate.ptr, cacheHost);
    upload(cacheFused.ptr, cacheHost);
    upload(freq.ptr, invFreq);
    upload(pos.ptr, positions);
    CUDA_CHECK(cudaMemset(unread.ptr, 0xff, qkv.size() * sizeof(T)));
    CUDA_CHECK(cudaMemset(outFused.ptr, 0xff, size_t(tokens * H * D) * sizeof(T)));
    DecodeWorkspace &w = decodeWorkspace();
    w.reserve(tokens, H, KV, D);
    auto params = [&](T *rotaryOut, T *cache, T *out) {
      infer::kernels::RotaryKvWriteParams p =
          packedRotaryKv<T>(input.ptr, rotaryOut, freq.ptr, pos.ptr, tokens, H, KV, D,
                            shape.rotaryDim, shape.interleaved);
      p.kv.output = out;
      p.kv.cache = cache;
      meta.fill(p.kv, step, bs);
      p.kv.scale = float(1.0 / std::sqrt(double(D)));
      p.kv.softcap = shape.softcap;
      p.kv.workspace = w.workspace;
      p.kv.counters = w.counters;
      return p;
    };
    const infer::kernels::RotaryKvWriteParams separate =
        params(rotated.ptr, cacheSeparate.ptr, outSeparate.ptr);
    const infer::kernels::RotaryKvWriteParams fused =
        params(unread.ptr, cacheFused.ptr, outFused.ptr);
    infer::kernels::infer_rotary<T, float><<<unsigned(tokens), 256>>>(separate.rotary);
    CUDA_CHECK(cudaGetLastError());
    launchWrite<T>(separate.kv);
    launchDecode<T>(separate.kv);
    const dim3 grid(unsigned(tokens), unsigned(infer::kernels::kvDecodeGridY(H, KV)),
                    unsigned(infer::kernels::kvDecodeSplits(tokens, H, KV)));
    decodeKernel<T>(D)<<<grid, kKvAttentionThreads>>>(fused);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    const bool sameCache = std::memcmp(download(cacheSeparate.ptr, size_t(cacheElems)).data(),
                                       download(cacheFused.ptr, size_t(cacheElems)).data(),
                                       size_t(cacheElems) * sizeof(T)) == 0;
    const std::vector<T> want = download(outSeparate.ptr, size_t(step.realTokens * H * D));
    const std::vector<T> got = download(outFused.ptr, size_t(step.realTokens * H * D));
    double worst = 0.0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double a = TypeInfo<T>::value(want[i]), b = TypeInfo<T>::value(got[i]);
      const double error = std::isfinite(b) ? std::fabs(a - b) / std::max(1.0, std::fabs(a))
                                            : INFINITY;
      worst = std::max(worst, error);
    }
    const bool countersZero = w.countersZero();
    ++cases;
    if (!sameCache || !(worst <= TypeInfo<T>::tolerance) || !countersZero) {
      std::printf("FAIL %s kv_decode H=%lld KV=%lld D=%lld bs=%lld rotary_dim=%lld "
                  "interleaved=%d softcap=%g: %s worst error %.3g (tolerance %.3g)%s\n",
                  TypeInfo<T>::name, H, KV, D, bs, shape.rotaryDim, shape.interleaved,
                  double(shape.softcap), sameCache ? "cache same," : "cache differs,", worst,
                  TypeInfo<T>::tolerance, countersZero ? "" : ", a split counter left nonzero");
      ++failures;
    }
  }
  std::printf("%s %s infer_kv_decode = infer_rotary + infer_kv_write + infer_kv_attention "
              "(%d decode steps)\n",
              failures ? "FAIL" : "PASS", TypeInfo<T>::name, cases);
  return failures;
}

template <typename T> int runAll() {
  std::mt19937 rng(1234);
  // context, new tokens: prefill from empty, decodes, chunks continuing a context.
  const std::vector<Seq> seqs = {{1, 1},   {5, 5},     {16, 1},   {17, 3},  {8, 0},
                                 {100, 1}, {1000, 7},  {1000, 1}, {17, 17}, {5, 2}};
  // 300 new tokens over a 200-token prefix, a 1000-token fresh prompt, 130
  // over 201 (a 2-row last tile), a decode.
  const std::vector<Seq> longSeqs = {{500, 300}, {1000, 1000}, {331, 130}, {40, 1}};
  int failures = 0;
  for (const Case &c : cases())
    failures += runCase<T>(c, seqs, rng);
  if (infer::kernels::kvPrefillSupported(64, int(sizeof(T))))
    for (const Case &c : longCases())
      failures += runCase<T>(c, longSeqs, rng);
  failures += runDecodeCases<T>(rng);
  failures += testRotaryKvWrite<T>(rng);
  if constexpr (sizeof(T) == 2)
    failures += testKvDecode<T>(rng);
  return failures;
}

/// One step over fresh random q/k/v (packed) and a cache of one repeated
/// value (the timings do not depend on it), for the timings.
struct TimingStep {
  using T = __nv_bfloat16;
  Step step;
  DeviceBuffer<T> qkv, cache, out;
  DeviceStep meta;
  KvAttentionParams p;
  DeviceBuffer<float> invFreq;
  DeviceBuffer<long long> positions;
  /// infer_kv_decode's (and, in place, infer_rotary's) parameters over qkv.
  infer::kernels::RotaryKvWriteParams rotaryKv;

  TimingStep(const std::vector<Seq> &seqs, long long H, long long KV, long long D, long long bs,
             std::mt19937 &rng)
      : step(seqs, bs, 0, rng), qkv(size_t(step.tokens * (H + 2 * KV) * D)),
        cache(size_t(step.numBlocks * 2 * bs * KV * D)), out(size_t(step.tokens * H * D)),
        meta(step), invFreq(size_t(D / 2)), positions(size_t(step.tokens)) {
    std::vector<T> host(size_t(step.tokens * (H + 2 * KV) * D));
    randomFill(host, rng);
    upload(qkv.ptr, host);
    CUDA_CHECK(cudaMemset(cache.ptr, 0x3c, size_t(step.numBlocks * 2 * bs * KV * D) * sizeof(T)));
    std::memset(&p, 0, sizeof(p));
    p.q = qkv.ptr;
    p.k = qkv.ptr + H * D;
    p.v = qkv.ptr + (H + KV) * D;
    p.output = out.ptr;
    p.cache = cache.ptr;
    meta.fill(p, step, bs);
    p.qRowStride = p.kRowStride = p.vRowStride = (H + 2 * KV) * D;
    p.numHeads = H;
    p.numKvHeads = KV;
    p.headDim = D;
    p.scale = float(1.0 / std::sqrt(double(D)));
    p.softcap = 0.f;
    launchWrite<T>(p);
    std::vector<float> freq(size_t(D / 2));
    for (size_t i = 0; i < freq.size(); ++i)
      freq[i] = float(std::pow(10000.0, -2.0 * double(i) / double(D)));
    upload(invFreq.ptr, freq);
    std::vector<long long> pos;
    for (const Seq &s : seqs)
      for (long long j = 0; j < s.n; ++j)
        pos.push_back(s.context - s.n + j);
    upload(positions.ptr, pos);
    rotaryKv = packedRotaryKv<T>(qkv.ptr, qkv.ptr, invFreq.ptr, positions.ptr, step.tokens, H, KV,
                                 D, D, 0);
    rotaryKv.kv = p;
  }
};

/// Microseconds per launch of `launch(i)` (i = 0 .. perGraph - 1) replayed
/// as a CUDA graph of perGraph launches, as decode steps run.
template <typename Launch> double graphMicros(Launch launch, int perGraph, int reps) {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < perGraph; ++i)
    launch(i, stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  double ms = timeMs([&] { CUDA_CHECK(cudaGraphLaunch(exec, stream)); }, reps, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return ms * 1e3 / perGraph;
}

/// bf16 decode: seqsCount sequences x 1 new token at `context` positions,
/// block size 16. Times infer_kv_attention alone in CUDA graphs (not
/// asserted), over enough copies of the cache that they do not fit in L2,
/// with the split-KV grid and with the plain (tokens, kv heads) grid.
void timeDecode(long long seqsCount, long long context, long long H, long long KV, long long D) {
  using T = __nv_bfloat16;
  const long long bs = 16;
  const double bytes = double(seqsCount) * context * 2 * KV * D * sizeof(T);
  const int copies = int(std::min(8.0, std::max(1.0, std::ceil(256e6 / bytes))));
  std::mt19937 rng(7);
  std::vector<std::unique_ptr<TimingStep>> steps;
  for (int i = 0; i < copies; ++i)
    steps.push_back(std::make_unique<TimingStep>(
        std::vector<Seq>(size_t(seqsCount), Seq{context, 1}), H, KV, D, bs, rng));
  decodeWorkspace().reserve(seqsCount, H, KV, D);
  DecodeWorkspace &w = decodeWorkspace();
  const unsigned y = unsigned(infer::kernels::kvDecodeGridY(H, KV));
  const unsigned z = unsigned(infer::kernels::kvDecodeSplits(seqsCount, H, KV));
  auto split = [&](int i, cudaStream_t stream) {
    KvAttentionParams p = steps[size_t(i % copies)]->p;
    p.workspace = w.workspace;
    p.counters = w.counters;
    infer::kernels::infer_kv_attention<T>
        <<<dim3(unsigned(seqsCount), y, z), kKvAttentionThreads, 0, stream>>>(p);
  };
  auto plain = [&](int i, cudaStream_t stream) {
    infer::kernels::infer_kv_attention<T>
        <<<dim3(unsigned(seqsCount), unsigned(KV)), kKvAttentionThreads, 0, stream>>>(
            steps[size_t(i % copies)]->p);
  };
  // A decode step's rotary, KV write and attention: three kernels, and
  // infer_kv_decode (the rotary runs in place; the timings do not depend on
  // the values).
  auto three = [&](int i, cudaStream_t stream) {
    infer::kernels::RotaryKvWriteParams r = steps[size_t(i % copies)]->rotaryKv;
    r.kv.workspace = w.workspace;
    r.kv.counters = w.counters;
    infer::kernels::infer_rotary<T, float><<<unsigned(seqsCount), 256, 0, stream>>>(r.rotary);
    infer::kernels::infer_kv_write<T><<<unsigned(seqsCount), kKvAttentionThreads, 0, stream>>>(r.kv);
    infer::kernels::infer_kv_attention<T>
        <<<dim3(unsigned(seqsCount), y, z), kKvAttentionThreads, 0, stream>>>(r.kv);
  };
  auto fused = [&](int i, cudaStream_t stream) {
    infer::kernels::RotaryKvWriteParams r = steps[size_t(i % copies)]->rotaryKv;
    r.kv.workspace = w.workspace;
    r.kv.counters = w.counters;
    decodeKernel<T>(D)<<<dim3(unsigned(seqsCount), y, z), kKvAttentionThreads, 0, stream>>>(r);
  };
  const double us = graphMicros(split, 16, 20), usPlain = graphMicros(plain, 16, 10);
  const double usThree = graphMicros(three, 16, 10), usFused = graphMicros(fused, 16, 10);
  CUDA_CHECK(cudaGetLastError());
  const double gbs = bytes / (us * 1e-6) / 1e9, gbsPlain = bytes / (usPlain * 1e-6) / 1e9;
  std::printf("timing bf16 decode %3lld seqs x context %4lld, heads %lld/%lld x %3lld: %8.2f us, "
              "%6.1f GB/s of K/V (%4.1f%% of 4.3 TB/s), grid z %u; plain grid %8.2f us, %6.1f "
              "GB/s; rotary + KV write + attention %8.2f us, infer_kv_decode %8.2f us\n",
              seqsCount, context, H, KV, D, us, gbs, gbs / 4300.0 * 100.0, z, usPlain, gbsPlain,
              usThree, usFused);
}

/// bf16 fresh prefill of one sequence (block size 16): infer_kv_prefill_attention,
/// infer_attention on the same q/k/v rows and infer_kv_attention (timed, not
/// asserted); the prefill must agree with infer_attention within tolerance.
bool timePrefill(long long seq, long long H, long long KV, long long D) {
  using T = __nv_bfloat16;
  std::mt19937 rng(11);
  TimingStep ts({Seq{seq, seq}}, H, KV, D, /*bs=*/16, rng);
  const double flops = 4.0 * double(seq) * double(seq) / 2 * double(H * D);
  auto report = [&](const char *kernel, double ms) {
    std::printf("timing bf16 prefill seq=%lld heads=%lld/%lld D=%lld %-12s %.4f ms, %.1f TFLOP/s\n",
                seq, H, KV, D, kernel, ms, flops / (ms * 1e-3) / 1e12);
  };
  const size_t outElements = size_t(seq * H * D);
  std::vector<T> paged(outElements), dense(outElements);

  // The step's KV write before the attention: K and V rows of every token
  // into the paged cache (bytes read + written / 4.3 TB/s).
  const double kvWriteMs = timeMs(
      [&] { infer::kernels::infer_kv_write<T><<<unsigned(seq), kKvAttentionThreads>>>(ts.p); }, 20);
  const double kvBytes = 4.0 * double(seq * KV * D) * double(sizeof(T));
  std::printf("timing bf16 prefill seq=%lld heads=%lld/%lld D=%lld kv_write     %.4f ms, %.0f GB/s "
              "(floor %.4f ms)\n",
              seq, H, KV, D, kvWriteMs, kvBytes / (kvWriteMs * 1e-3) * 1e-9, kvBytes / 4.3e12 * 1e3);
  report("kv_prefill", timeMs([&] { launchPrefill<T>(ts.p, seq); }, 20));
  CUDA_CHECK(cudaMemcpy(paged.data(), ts.out.ptr, outElements * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<T> pagedWgmma(outElements);
  // Where the head size has no wgmma tiles the kernel runs its mma.sync path
  // (under its one-block-per-SM launch bounds): say so in the label.
  const char *wgmmaLabel = infer::kernels::kvPrefillWgmmaSupported(D, int(sizeof(T)))
                               ? "kv_prefill_wgmma"
                               : "kv_prefill_wgmma/fallback";
  report(wgmmaLabel, timeMs([&] { launchPrefill<T>(ts.p, seq, Prefill::Wgmma); }, 20));
  CUDA_CHECK(cudaMemcpy(pagedWgmma.data(), ts.out.ptr, outElements * sizeof(T),
                        cudaMemcpyDeviceToHost));

  AttentionParams a;
  std::memset(&a, 0, sizeof(a));
  a.q = ts.p.q;
  a.k = ts.p.k;
  a.v = ts.p.v;
  a.output = ts.out.ptr;
  a.qRowStride = a.kRowStride = a.vRowStride = ts.p.qRowStride;
  a.batch = 1;
  a.seq = a.kvSeq = seq;
  a.numHeads = H;
  a.numKvHeads = KV;
  a.headDim = D;
  a.scale = ts.p.scale;
  a.causal = 1;
  const unsigned shared = infer::kernels::attentionSharedBytes(D, int(sizeof(T)));
  auto *attention = infer::kernels::attentionHeadClass(D) == 64
                       ? infer::kernels::infer_attention<T, 64>
                       : infer::kernels::infer_attention<T, 256>;
  CUDA_CHECK(
      cudaFuncSetAttribute(attention, cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
  const dim3 grid(unsigned((seq + kAttentionBlockQ - 1) / kAttentionBlockQ), unsigned(H), 1u);
  report("attention", timeMs(
                          [&] {
                            attention<<<grid, kAttentionThreads, shared>>>(a);
                          },
                          20));
  CUDA_CHECK(cudaMemcpy(dense.data(), ts.out.ptr, outElements * sizeof(T), cudaMemcpyDeviceToHost));

  report("kv_attention", timeMs([&] { launchDecode<T>(ts.p); }, 3));

  bool ok = true;
  for (const auto *kernel : {&paged, &pagedWgmma}) {
    double maxDiff = 0;
    for (size_t i = 0; i < outElements; ++i) {
      double diff =
          std::fabs(double(TypeInfo<T>::value((*kernel)[i])) - TypeInfo<T>::value(dense[i]));
      maxDiff = std::isnan(diff) ? INFINITY : std::max(maxDiff, diff);
    }
    const bool same = maxDiff <= TypeInfo<T>::tolerance;
    std::printf("%s vs infer_attention seq=%lld heads=%lld/%lld D=%lld: max difference %.3g %s\n",
                kernel == &paged ? "kv_prefill" : wgmmaLabel, seq, H, KV, D, maxDiff,
                same ? "ok" : "FAIL");
    ok = ok && same;
  }
  return ok;
}

/// infer_kv_decode's launch over ts's one decode token: its parameters with
/// the split workspace, and grid y and z (splits 0: kvDecodeSplits').
struct DecodeLaunch {
  infer::kernels::RotaryKvWriteParams params;
  unsigned y, z;
};
DecodeLaunch decodeLaunchFor(const TimingStep &ts, long long H, long long KV, long long D,
                             unsigned splits = 0) {
  decodeWorkspace().reserve(1, H, KV, D);
  DecodeLaunch launch{ts.rotaryKv, unsigned(infer::kernels::kvDecodeGridY(H, KV)),
                      splits ? splits : unsigned(infer::kernels::kvDecodeSplits(1, H, KV))};
  launch.params.kv.workspace = decodeWorkspace().workspace;
  launch.params.kv.counters = decodeWorkspace().counters;
  return launch;
}

/// A batch-1 row GEMV's parameters (infer_gemv_rows): one input row of k
/// against [n, k] weights.
infer::kernels::GemvParams rowGemvParams(const void *input, const void *weight, void *output,
                                         long long k, long long n) {
  infer::kernels::GemvParams g{};
  g.input = input, g.weight = weight, g.output = output, g.rows = 1;
  g.k = k, g.n = n, g.transposed = 1, g.inputRowStride = k;
  return g;
}

/// --layer-timings: microseconds per batch-1 decode layer (module comment),
/// one sequence at `context` positions, H / KV heads of D, an MLP of
/// `intermediate`, against the layer's weight bytes at 4.3 TB/s. The
/// stamps' layer (below) reuses one qkv and one o weight for every layer
/// (TinyLlama's 18.9 MB stay in L2) and has no MLP, so a change that helps
/// it may still slow the step; this one is closer (TinyLlama: 40.8 us a
/// layer in the step's kernel trace, bench/results/tinyllama-1.1b-serving.md).
/// gatedPairs: the gate/up GEMV writes act(gate) * up itself (gated pairs,
/// as the step runs it since session 20) and the down GEMV reads one plain
/// row; else the down GEMV computes it in its prologue (as before).
void timeDecodeLayers(long long context, long long H, long long KV, long long D,
                      long long intermediate, bool gatedPairs) {
  using T = __nv_bfloat16;
  constexpr int kLayers = 16;
  std::mt19937 rng(5);
  TimingStep ts({Seq{context, 1}}, H, KV, D, /*bs=*/16, rng);
  const DecodeLaunch decode = decodeLaunchFor(ts, H, KV, D);
  const long long hidden = H * D, qkvWidth = (H + 2 * KV) * D;
  // Per layer: qkv [qkvWidth, hidden], o [hidden, hidden], gate/up
  // [2 * intermediate, hidden], down [hidden, intermediate].
  const long long qkvElems = qkvWidth * hidden, oElems = hidden * hidden,
                  gateUpElems = 2 * intermediate * hidden, downElems = hidden * intermediate;
  const long long layerElems = qkvElems + oElems + gateUpElems + downElems;
  DeviceBuffer<T> weights{size_t(kLayers * layerElems)}, h{size_t(hidden)}, h2{size_t(hidden)},
      norm{size_t(hidden)}, gateUp{size_t(2 * intermediate)};
  CUDA_CHECK(cudaMemset(weights.ptr, 0x3c, size_t(kLayers * layerElems) * sizeof(T)));
  for (T *buffer : {h.ptr, h2.ptr, norm.ptr})
    CUDA_CHECK(cudaMemset(buffer, 0x3c, size_t(hidden) * sizeof(T)));
  for (const void *kernel : {(const void *)infer::kernels::infer_gemv_rows<T, 0>,
                             (const void *)infer::kernels::infer_gemv_rows<T, 1>,
                             (const void *)infer::kernels::infer_gemv_rows<T, 2>,
                             (const void *)infer::kernels::infer_gemv_rows<T, 1, true>,
                             (const void *)decodeKernel<T>(D)})
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  cudaLaunchAttribute programmatic;
  auto launchRows = [&](const infer::kernels::GemvParams &g, cudaStream_t stream,
                        bool pairs = false) {
    cudaLaunchConfig_t c = infer::kerneltest::launchConfig(
        dim3(infer::kernels::gemvRowsGrid(g.n)), infer::kernels::kGemvRowsThreads,
        size_t(infer::kernels::gemvRowsSharedBytes(g.k, 2)), stream, true, programmatic);
    auto kernel = pairs             ? infer::kernels::infer_gemv_rows<T, 1, true>
                  : g.prologue == 1 ? infer::kernels::infer_gemv_rows<T, 1>
                  : g.prologue == 2 ? infer::kernels::infer_gemv_rows<T, 2>
                                    : infer::kernels::infer_gemv_rows<T, 0>;
    CUDA_CHECK(cudaLaunchKernelEx(&c, kernel, g));
  };
  auto layer = [&](int index, cudaStream_t stream) {
    const T *base = weights.ptr + index * layerElems;
    infer::kernels::GemvParams qkv = rowGemvParams(h.ptr, base, ts.qkv.ptr, hidden, qkvWidth);
    qkv.prologue = 1, qkv.normWeight = norm.ptr, qkv.normEpsilon = 1e-5f;
    launchRows(qkv, stream);
    cudaLaunchConfig_t c = infer::kerneltest::launchConfig(
        dim3(1, decode.y, decode.z), kKvAttentionThreads, 0, stream, true, programmatic);
    CUDA_CHECK(cudaLaunchKernelEx(&c, decodeKernel<T>(D), decode.params));
    infer::kernels::GemvParams o =
        rowGemvParams(ts.out.ptr, base + qkvElems, h2.ptr, hidden, hidden);
    o.residual = h.ptr;
    launchRows(o, stream);
    infer::kernels::GemvParams up =
        rowGemvParams(h2.ptr, base + qkvElems + oElems, gateUp.ptr, hidden, 2 * intermediate);
    up.prologue = 1, up.normWeight = norm.ptr, up.normEpsilon = 1e-5f;
    infer::kernels::GemvParams down = rowGemvParams(
        gateUp.ptr, base + qkvElems + oElems + gateUpElems, h.ptr, intermediate, hidden);
    down.residual = h2.ptr;
    if (gatedPairs) {
      up.activation = 0; // writes silu(gate) * up: gateUp's first half
      launchRows(up, stream, /*pairs=*/true);
    } else {
      launchRows(up, stream);
      down.prologue = 2, down.activation = 0, down.up = gateUp.ptr + intermediate;
      down.inputRowStride = down.upRowStride = 2 * intermediate;
    }
    launchRows(down, stream);
  };
  const double usPerLayer = graphMicros(layer, kLayers, 10);
  const double floorUs = double(layerElems) * sizeof(T) / 4.3e12 * 1e6;
  std::printf("layer bf16 decode 1 seq x context %lld, heads %lld/%lld x %lld, intermediate %lld: "
              "%.2f us per layer (rms_norm + qkv GEMV, decode, o GEMV, rms_norm + gate/up GEMV, "
              "down GEMV, the gated activation %s; %d layers, their own weights), floor %.2f us "
              "(%.1f MB at 4.3 TB/s)\n",
              context, H, KV, D, intermediate, usPerLayer,
              gatedPairs ? "in gate/up (pairs)" : "in down's prologue", kLayers, floorUs,
              double(layerElems) * sizeof(T) / 1e6);
}

#ifdef INFER_KERNEL_STAMPS
/// --stamps (a build with -DINFER_KERNEL_STAMPS, Common.cuh): a decode layer's
/// attention between its GEMVs as the step runs them — infer_gemv_rows<bf16,
/// 1> writing the qkv row (hidden H * D -> (H + 2 KV) * D, the rms_norm
/// prologue), infer_kv_decode, infer_gemv_rows<bf16, 0> (the o_proj), each
/// launched programmatically, 16 such layers in a CUDA graph — and prints
/// when each point of the decode blocks of the last layer came, relative to
/// the qkv GEMV's end (its last block).
/// carveout: the shared-memory carveout all three kernels ask for (-1: the
/// driver's choice per kernel; the runtime asks 100 of every kernel).
void stampDecode(long long context, long long H, long long KV, long long D, unsigned splits = 0,
                 int carveout = -1) {
  using T = __nv_bfloat16;
  std::mt19937 rng(5);
  TimingStep ts({Seq{context, 1}}, H, KV, D, /*bs=*/16, rng);
  const DecodeLaunch decode = decodeLaunchFor(ts, H, KV, D, splits);
  const infer::kernels::RotaryKvWriteParams &r = decode.params;
  const unsigned y = decode.y, z = decode.z;
  const long long hidden = H * D, qkvWidth = (H + 2 * KV) * D;
  DeviceBuffer<T> wQkv{size_t(qkvWidth * hidden)}, wO{size_t(hidden * hidden)}, x{size_t(hidden)},
      norm{size_t(hidden)}, oOut{size_t(hidden)};
  CUDA_CHECK(cudaMemset(wQkv.ptr, 0x3c, size_t(qkvWidth * hidden) * sizeof(T)));
  CUDA_CHECK(cudaMemset(wO.ptr, 0x3c, size_t(hidden * hidden) * sizeof(T)));
  CUDA_CHECK(cudaMemset(x.ptr, 0x3c, size_t(hidden) * sizeof(T)));
  CUDA_CHECK(cudaMemset(norm.ptr, 0x3c, size_t(hidden) * sizeof(T)));
  infer::kernels::GemvParams qkv = rowGemvParams(x.ptr, wQkv.ptr, ts.qkv.ptr, hidden, qkvWidth);
  qkv.prologue = 1, qkv.normWeight = norm.ptr, qkv.normEpsilon = 1e-5f;
  const infer::kernels::GemvParams o = rowGemvParams(ts.out.ptr, wO.ptr, oOut.ptr, hidden, hidden);
  for (const void *kernel : {(const void *)infer::kernels::infer_gemv_rows<T, 1>,
                             (const void *)decodeKernel<T>(D),
                             (const void *)infer::kernels::infer_gemv_rows<T, 0>})
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
  cudaLaunchAttribute programmatic;
  auto config = [&](dim3 grid, unsigned block, size_t shared, cudaStream_t stream) {
    return infer::kerneltest::launchConfig(grid, block, shared, stream, true, programmatic);
  };
  auto layer = [&](int, cudaStream_t stream) {
    const size_t rowsShared = size_t(infer::kernels::gemvRowsSharedBytes(hidden, 2));
    cudaLaunchConfig_t c = config(dim3(infer::kernels::gemvRowsGrid(qkvWidth)),
                                  infer::kernels::kGemvRowsThreads, rowsShared, stream);
    CUDA_CHECK(cudaLaunchKernelEx(&c, infer::kernels::infer_gemv_rows<T, 1>, qkv));
    c = config(dim3(1, y, z), kKvAttentionThreads, 0, stream);
    CUDA_CHECK(cudaLaunchKernelEx(&c, decodeKernel<T>(D), r));
    c = config(dim3(infer::kernels::gemvRowsGrid(hidden)), infer::kernels::kGemvRowsThreads,
               rowsShared, stream);
    CUDA_CHECK(cudaLaunchKernelEx(&c, infer::kernels::infer_gemv_rows<T, 0>, o));
  };
  const double usPerLayer = graphMicros(layer, 16, 10);
  // Once more with the stamps cleared: they keep the last layer's times.
  unsigned long long zero[infer::kernels::kKernelStampSlots] = {};
  CUDA_CHECK(cudaMemcpyToSymbol(infer::kernels::inferKernelStamps, zero, sizeof zero));
  graphMicros(layer, 16, 1);
  unsigned long long stamps[infer::kernels::kKernelStampSlots];
  CUDA_CHECK(cudaMemcpyFromSymbol(stamps, infer::kernels::inferKernelStamps, sizeof stamps));
  const double base = double(stamps[201]);
  auto us = [&](unsigned long long t) { return t ? (double(t) - base) / 1e3 : -1.0; };
  std::printf("stamps bf16 decode 1 seq x context %lld, heads %lld/%lld x %lld, grid (1, %u, %u), "
              "carveout %d: %.2f us per layer (qkv GEMV + decode + o GEMV); us after the qkv GEMV's end: its "
              "last wait release %.2f, the o GEMV's last wait release %.2f, its end %.2f\n",
              context, H, KV, D, y, z, carveout, usPerLayer, us(stamps[211]), us(stamps[210]),
              us(stamps[200]));
  const char *points[] = {"entry", "token found", "before wait", "after wait",
                          "staged",  "keys done",   "merged",      "written"};
  for (unsigned b = 0; b < y && b < 8; ++b) {
    std::printf("  block y=%u:", b);
    for (int i = 0; i < 8; ++i)
      std::printf(" %s %.2f%s", points[i], us(stamps[b * 16 + i]), i < 7 ? "," : "\n");
  }
}
#endif

} // namespace

int main(int argc, char **argv) {
  // --no-timings: the checks alone (e.g. under compute-sanitizer);
  // --prefill-timings: the 2,048-token prefill timings alone (kernel experiments).
  const bool timings = !(argc > 1 && std::strcmp(argv[1], "--no-timings") == 0);
  const bool prefillOnly = argc > 1 && std::strcmp(argv[1], "--prefill-timings") == 0;
  if (argc > 1 && std::strcmp(argv[1], "--layer-timings") == 0) {
    if (!infer::kerneltest::haveDevice())
      return 77;
    for (bool gatedPairs : {true, false}) {
      for (long long context : {128LL, 200LL, 1000LL})
        timeDecodeLayers(context, 32, 4, 64, 5632, gatedPairs); // TinyLlama-1.1B
      timeDecodeLayers(200, 32, 8, 128, 14336, gatedPairs);     // Llama-3-8B
    }
    return 0;
  }
#ifdef INFER_KERNEL_STAMPS
  if (argc > 1 && std::strcmp(argv[1], "--stamps") == 0) {
    if (!infer::kerneltest::haveDevice())
      return 77;
    for (int carveout : {-1, 100}) {
      for (long long context : {128LL, 200LL, 1000LL})
        stampDecode(context, 32, 4, 64, 0, carveout);
      stampDecode(200, 32, 8, 128, 0, carveout);
      stampDecode(200, 32, 4, 64, /*splits=*/1, carveout); // no blocks past the used split
    }
    return 0;
  }
#endif
  if (!infer::kerneltest::haveDevice())
    return 77;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

  int failures = 0;
  if (prefillOnly) {
    failures += timePrefill(2048, 32, 8, 128) ? 0 : 1;
    failures += timePrefill(2048, 32, 4, 64) ? 0 : 1;
    return failures ? 1 : 0;
  }
  failures += runAll<float>() + runAll<__nv_bfloat16>() + runAll<__half>();
  if (timings) {
    const long long heads[2][3] = {{32, 4, 64}, {32, 8, 128}};
    const long long batches[][2] = {{1, 128}, {1, 200}, {1, 256}, {1, 512}, {1, 1000},
                                    {1, 2000}, {1, 4000}, {64, 1024}, {512, 192}};
    for (const auto &h : heads)
      for (const auto &b : batches)
        timeDecode(b[0], b[1], h[0], h[1], h[2]);
    failures += timePrefill(2048, 32, 8, 128) ? 0 : 1;
    failures += timePrefill(2048, 32, 4, 64) ? 0 : 1;
  }
  if (failures) {
    std::printf("FAILED: %d case(s)\n", failures);
    return 1;
  }
  std::printf("all kv attention cases passed\n");
  return 0;
}
