//===- kv_attention_test.cu - infer_kv_write/infer_kv_attention vs double -===//
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
// Then times a bf16 decode step (not asserted).
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/kernels/KvAttention.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace {

using infer::kernels::kKvAttentionThreads;
using infer::kernels::KvAttentionParams;

#define CUDA_CHECK(expr)                                                                           \
  do {                                                                                             \
    cudaError_t status_ = (expr);                                                                  \
    if (status_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,                    \
                   cudaGetErrorString(status_));                                                   \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

template <typename T> struct TypeInfo;
template <> struct TypeInfo<float> {
  static constexpr const char *name = "f32";
  static constexpr double tolerance = 2e-5;
  static float from(float x) { return x; }
  static float value(float x) { return x; }
};
template <> struct TypeInfo<__nv_bfloat16> {
  static constexpr const char *name = "bf16";
  static constexpr double tolerance = 2e-2;
  static __nv_bfloat16 from(float x) { return __float2bfloat16_rn(x); }
  static float value(__nv_bfloat16 x) { return __bfloat162float(x); }
};
template <> struct TypeInfo<__half> {
  static constexpr const char *name = "f16";
  static constexpr double tolerance = 5e-3;
  static __half from(float x) { return __float2half_rn(x); }
  static float value(__half x) { return __half2float(x); }
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

template <typename T> void randomFill(std::vector<T> &host, std::mt19937 &rng) {
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (T &x : host)
    x = TypeInfo<T>::from(uniform(rng));
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

/// Runs one case; prints a line and returns whether it passed.
template <typename T>
bool runCase(const Case &c, const std::vector<Seq> &seqs, std::mt19937 &rng) {
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
  DeviceBuffer<long long> starts(step.seqStarts.size()), lens(step.contextLens.size()),
      tables(step.blockTables.size()), slots(step.slotIds.size());
  upload(starts.ptr, step.seqStarts);
  upload(lens.ptr, step.contextLens);
  upload(tables.ptr, step.blockTables);
  upload(slots.ptr, step.slotIds);
  p.seqStarts = starts.ptr;
  p.contextLens = lens.ptr;
  p.blockTables = tables.ptr;
  p.slotIds = slots.ptr;

  const long long outElements = tokens * H * D, guard = 64;
  const long long outTotal = pad + outElements + guard;
  DeviceBuffer<T> outDev{size_t(outTotal)};
  CUDA_CHECK(cudaMemset(outDev.ptr, 0xff, size_t(outTotal) * sizeof(T))); // NaN in every type
  p.output = outDev.ptr + pad;
  p.qRowStride = qStride;
  p.kRowStride = p.vRowStride = kvStride;
  p.tokens = tokens;
  p.numSeqs = step.numSeqs;
  p.maxBlocksPerSeq = step.maxBlocks;
  p.blockSize = bs;
  p.numHeads = H;
  p.numKvHeads = KV;
  p.headDim = D;
  p.scale = float(1.0 / std::sqrt(double(D)));
  p.softcap = c.softcap;

  infer::kernels::infer_kv_write<T><<<unsigned(tokens), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
  infer::kernels::infer_kv_attention<T>
      <<<dim3(unsigned(tokens), unsigned(KV)), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<T> cacheResult(cacheHost.size()), out(static_cast<size_t>(outTotal));
  CUDA_CHECK(cudaMemcpy(cacheResult.data(), cacheDev.ptr, cacheResult.size() * sizeof(T),
                        cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(out.data(), outDev.ptr, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
  const bool cacheOk =
      std::memcmp(cacheResult.data(), expectedCache.data(), cacheResult.size() * sizeof(T)) == 0;

  // Rows outside every sequence (padding) and the guards stay untouched.
  bool untouched = true;
  for (long long i = 0; i < outTotal; ++i) {
    bool inside = i >= pad && i < pad + step.realTokens * H * D;
    if (inside)
      continue;
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &out[size_t(i)], sizeof(T));
    for (unsigned char byte : bytes)
      untouched = untouched && byte == 0xff;
  }

  // Reference, as runtime/cpu/KvAttentionKernel.cpp.
  const double scale = double(p.scale), softcap = double(c.softcap);
  const long long group = H / KV;
  double maxError = 0;
  std::vector<double> scores;
  for (long long s = 0; s < step.numSeqs; ++s) {
    long long begin = step.seqStarts[size_t(s)], end = step.seqStarts[size_t(s + 1)];
    long long contextLen = step.contextLens[size_t(s)], n = end - begin;
    const long long *table = step.blockTables.data() + s * step.maxBlocks;
    auto key = [&](long long position, long long which) {
      long long block = table[position / bs];
      return expected + ((block * 2 + which) * bs + position % bs) * rowElems;
    };
    scores.resize(size_t(contextLen));
    for (long long j = 0; j < n; ++j) {
      long long row = begin + j, visible = contextLen - n + j + 1;
      for (long long h = 0; h < H; ++h) {
        const T *query = qBase + row * qStride + h * D;
        long long kvOffset = (h / group) * D;
        double maximum = -INFINITY;
        for (long long pos = 0; pos < visible; ++pos) {
          const T *k = key(pos, 0) + kvOffset;
          double dot = 0;
          for (long long d = 0; d < D; ++d)
            dot += double(TypeInfo<T>::value(query[d])) * double(TypeInfo<T>::value(k[d]));
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
        for (long long d = 0; d < D; ++d) {
          double acc = 0;
          for (long long pos = 0; pos < visible; ++pos)
            acc += scores[size_t(pos)] * double(TypeInfo<T>::value(key(pos, 1)[kvOffset + d]));
          double want = acc / sum;
          double got = double(TypeInfo<T>::value(out[size_t(pad + row * H * D + h * D + d)]));
          double error = std::fabs(got - want);
          maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
        }
      }
    }
  }

  bool ok = cacheOk && untouched && maxError <= TypeInfo<T>::tolerance;
  std::printf("%-4s heads=%2d/%d D=%-3d block=%-2d %s%s softcap=%-2g tokens=%lld: max error %.3g "
              "(tolerance %.0e)%s%s %s\n",
              TypeInfo<T>::name, c.heads, c.kvHeads, c.headDim, c.blockSize,
              c.packed ? "packed  " : "separate", c.misaligned ? " misaligned" : "",
              double(c.softcap), tokens, maxError, TypeInfo<T>::tolerance,
              cacheOk ? "" : " CACHE MISMATCH", untouched ? "" : " WROTE OUTSIDE THE ROWS",
              ok ? "ok" : "FAIL");
  return ok;
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

template <typename T> int runAll() {
  std::mt19937 rng(1234);
  // context, new tokens: prefill from empty, decodes, chunks continuing a context.
  const std::vector<Seq> seqs = {{1, 1},   {5, 5},     {16, 1},   {17, 3},  {8, 0},
                                 {100, 1}, {1000, 7},  {1000, 1}, {17, 17}, {5, 2}};
  int failures = 0;
  for (const Case &c : cases())
    failures += runCase<T>(c, seqs, rng) ? 0 : 1;
  return failures;
}

/// bf16 decode: 64 sequences x 1 new token, context 1024, 32/4 heads x 64,
/// block size 16. Times infer_kv_attention alone (not asserted).
void timeDecode() {
  using T = __nv_bfloat16;
  const long long seqsCount = 64, context = 1024, H = 32, KV = 4, D = 64, bs = 16;
  std::mt19937 rng(7);
  std::vector<Seq> seqs(size_t(seqsCount), Seq{context, 1});
  Step step(seqs, bs, 0, rng);
  const long long tokens = step.tokens, stride = (H + 2 * KV) * D;
  std::vector<T> qkv(size_t(tokens * stride)), cache(size_t(step.numBlocks * 2 * bs * KV * D));
  randomFill(qkv, rng);
  randomFill(cache, rng);
  DeviceBuffer<T> qkvDev(qkv.size()), cacheDev(cache.size()), outDev(size_t(tokens * H * D));
  upload(qkvDev.ptr, qkv);
  upload(cacheDev.ptr, cache);
  DeviceBuffer<long long> starts(step.seqStarts.size()), lens(step.contextLens.size()),
      tables(step.blockTables.size()), slots(step.slotIds.size());
  upload(starts.ptr, step.seqStarts);
  upload(lens.ptr, step.contextLens);
  upload(tables.ptr, step.blockTables);
  upload(slots.ptr, step.slotIds);
  KvAttentionParams p;
  std::memset(&p, 0, sizeof(p));
  p.q = qkvDev.ptr;
  p.k = qkvDev.ptr + H * D;
  p.v = qkvDev.ptr + (H + KV) * D;
  p.output = outDev.ptr;
  p.cache = cacheDev.ptr;
  p.seqStarts = starts.ptr;
  p.contextLens = lens.ptr;
  p.blockTables = tables.ptr;
  p.slotIds = slots.ptr;
  p.qRowStride = p.kRowStride = p.vRowStride = stride;
  p.tokens = tokens;
  p.numSeqs = step.numSeqs;
  p.maxBlocksPerSeq = step.maxBlocks;
  p.blockSize = bs;
  p.numHeads = H;
  p.numKvHeads = KV;
  p.headDim = D;
  p.scale = 0.125f;
  p.softcap = 0.f;
  infer::kernels::infer_kv_write<T><<<unsigned(tokens), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
  const dim3 grid{unsigned(tokens), unsigned(KV)};
  for (int i = 0; i < 3; ++i)
    infer::kernels::infer_kv_attention<T><<<grid, kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const int reps = 50;
  CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i)
    infer::kernels::infer_kv_attention<T><<<grid, kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaGetLastError());
  float elapsed = 0;
  CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  double us = double(elapsed) * 1e3 / reps;
  double bytes = double(seqsCount) * context * 2 * KV * D * sizeof(T);
  double gbs = bytes / (us * 1e-6) / 1e9;
  std::printf("timing bf16 decode %lld seqs x 1 token, context %lld, heads %lld/%lld x %lld, "
              "block %lld: %.2f us, %.1f GB/s of K/V (%.1f%% of 4.3 TB/s)\n",
              seqsCount, context, H, KV, D, bs, us, gbs, gbs / 4300.0 * 100.0);
}

} // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

  int failures = runAll<float>() + runAll<__nv_bfloat16>() + runAll<__half>();
  timeDecode();
  if (failures) {
    std::printf("FAILED: %d case(s)\n", failures);
    return 1;
  }
  std::printf("all kv attention cases passed\n");
  return 0;
}
