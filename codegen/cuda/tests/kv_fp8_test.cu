//===- kv_fp8_test.cu - the FP8 KV cache's attention kernels vs double ----===//
//
// The paged attention over an FP8 cache (--kv-cache-dtype fp8: E4M3 bytes of
// K / kScale and V / vScale), bf16 and f16, on random non-contiguous block
// tables: infer_kv_write_fp8<T>, then infer_kv_attention_fp8<T> (the general
// path, on the split-KV grid with its workspace and on the plain grid) and,
// where kvPrefillSupported, infer_kv_prefill_attention_fp8<T> (the tensor-core
// prefill decoding E4M3 rows as it loads them). Steps: long prefill chunks
// (300 new tokens over a 200-token prefix, a 1000-token prompt, 130 over 201)
// with a decode, and short ones (5, 16 over 17, a decode); GQA, head sizes
// 128, 64, 80 and 256, block sizes 16 and 6, softcap 0 and 30. The cache's
// other positions hold random E4M3 bytes (no NaN). The written rows must be
// the host's E4M3 encoding of K / kScale and V / vScale (as
// quant::e4m3FromFloat); outputs are compared with a reference in double over
// the cache as written (E4M3 value times its scale), as
// runtime/cpu/KvAttentionKernel.cpp. Then times a 2,048-token bf16 prefill at
// Llama-3-8B's heads through the prefill kernel, the general path, and the
// 16-bit cache's prefill kernel (not asserted).
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/KvAttentionTestSupport.cuh"

namespace {

using infer::kernels::kvPrefillSharedBytes;
using infer::kernels::kvPrefillSupported;

/// The value of E4M3FN `bits` (0x7f / 0xff, NaN, never appear here).
double e4m3Value(unsigned bits) {
  const unsigned exponent = (bits >> 3) & 0xfu, mantissa = bits & 7u;
  const double magnitude = exponent == 0
                               ? mantissa * std::ldexp(1.0, -9)
                               : (1.0 + mantissa / 8.0) * std::ldexp(1.0, int(exponent) - 7);
  return (bits & 0x80u) ? -magnitude : magnitude;
}

/// x as E4M3FN bits: |x| clamped to 448, rounded to nearest even (finite x).
unsigned e4m3Bits(float x) {
  const unsigned sign = std::signbit(x) ? 0x80u : 0u;
  const double a = std::min(std::fabs(double(x)), 448.0);
  unsigned best = 0;
  double bestError = INFINITY;
  for (unsigned bits = 0; bits < 0x7f; ++bits) { // magnitudes in increasing order
    const double error = std::fabs(e4m3Value(bits) - a);
    if (error < bestError || (error == bestError && (bits & 1u) == 0)) {
      best = bits;
      bestError = error;
    }
  }
  return sign | best;
}

/// Outputs in double of every real token over `cache`, the decoded cache
/// ([block][K | V][offset][kv head][d], scales applied).
std::vector<double> reference(const Case &c, const Step &step, const std::vector<double> &cache,
                              const std::vector<double> &q, double scale) {
  const long long H = c.heads, KV = c.kvHeads, D = c.headDim, bs = c.blockSize;
  const long long rowElems = KV * D, group = H / KV;
  std::vector<double> want(size_t(step.realTokens * H * D), 0.0), scores;
  for (long long s = 0; s < step.numSeqs; ++s) {
    const long long begin = step.seqStarts[size_t(s)], end = step.seqStarts[size_t(s + 1)];
    const long long context = step.contextLens[size_t(s)], n = end - begin;
    const long long *table = step.blockTables.data() + s * step.maxBlocks;
    auto row = [&](long long pos, int half) {
      return &cache[size_t(((table[pos / bs] * 2 + half) * bs + pos % bs) * rowElems)];
    };
    scores.resize(size_t(context));
    for (long long j = 0; j < n; ++j) {
      const long long token = begin + j, visible = context - n + j + 1;
      for (long long h = 0; h < H; ++h) {
        const double *query = &q[size_t((token * H + h) * D)];
        const long long kvOffset = (h / group) * D;
        double maximum = -INFINITY;
        for (long long pos = 0; pos < visible; ++pos) {
          const double *k = row(pos, 0) + kvOffset;
          double dot = 0;
          for (long long d = 0; d < D; ++d)
            dot += query[d] * k[d];
          double score = dot * scale;
          if (c.softcap > 0)
            score = c.softcap * std::tanh(score / c.softcap);
          scores[size_t(pos)] = score;
          maximum = std::max(maximum, score);
        }
        double sum = 0;
        for (long long pos = 0; pos < visible; ++pos)
          sum += scores[size_t(pos)] = std::exp(scores[size_t(pos)] - maximum);
        double *out = &want[size_t((token * H + h) * D)];
        for (long long pos = 0; pos < visible; ++pos) {
          const double *v = row(pos, 1) + kvOffset;
          for (long long d = 0; d < D; ++d)
            out[d] += scores[size_t(pos)] / sum * v[d];
        }
      }
    }
  }
  return want;
}

/// The heads and strides of separate q / k / v rows (q rows of H * D, K and
/// V rows of KV * D) and the softmax scale 1 / sqrt(D).
void setHeads(KvAttentionParams &p, long long H, long long KV, long long D) {
  p.qRowStride = H * D;
  p.kRowStride = p.vRowStride = KV * D;
  p.numHeads = H;
  p.numKvHeads = KV;
  p.headDim = D;
  p.scale = float(1.0 / std::sqrt(double(D)));
}

template <typename T> void writeFp8(const KvAttentionParams &p) {
  infer::kernels::infer_kv_write_fp8<T><<<unsigned(p.tokens), kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// infer_kv_attention_fp8 on the split-KV grid (workspace and counters), or
/// the plain (tokens, kv heads) grid without them.
template <typename T> void generalFp8(KvAttentionParams p, bool split) {
  const unsigned y = unsigned(infer::kernels::kvDecodeGridY(p.numHeads, p.numKvHeads));
  unsigned z = 1;
  if (split) {
    DecodeWorkspace &w = decodeWorkspace();
    w.reserve(p.tokens, p.numHeads, p.numKvHeads, p.headDim);
    p.workspace = w.workspace;
    p.counters = w.counters;
    z = unsigned(infer::kernels::kvDecodeSplits(p.tokens, p.numHeads, p.numKvHeads));
  } else {
    p.workspace = nullptr;
    p.counters = nullptr;
  }
  const dim3 grid(unsigned(p.tokens), split ? y : unsigned(p.numKvHeads), z);
  infer::kernels::infer_kv_attention_fp8<T><<<grid, kKvAttentionThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// infer_kv_prefill_attention_fp8, the instantiation codegen names for the
/// head size (kvPrefillSupported must hold).
template <typename T> void prefillFp8(const KvAttentionParams &p, long long maxNewTokens) {
  const int shared = kvPrefillSharedBytes(p.headDim, int(sizeof(T)));
  const bool small = infer::kernels::attentionHeadClass(p.headDim) == 64;
  auto *function = small ? infer::kernels::infer_kv_prefill_attention_fp8<T, 64>
                         : infer::kernels::infer_kv_prefill_attention_fp8<T, 256>;
  CUDA_CHECK(cudaFuncSetAttribute(function, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
  const dim3 grid(unsigned((maxNewTokens + kKvPrefillBlockQ - 1) / kKvPrefillBlockQ),
                  unsigned(p.numHeads), unsigned(p.numSeqs));
  function<<<grid, kKvPrefillThreads, shared>>>(p);
  CUDA_CHECK(cudaGetLastError());
}

/// One case on one step: the write's bytes, then each kernel's outputs
/// against the reference; returns the number of failures.
template <typename T> int runCase(const Case &c, const std::vector<Seq> &seqs, std::mt19937 &rng) {
  const long long H = c.heads, KV = c.kvHeads, D = c.headDim, bs = c.blockSize;
  const float kScale = 1.f / 300.f, vScale = 1.f / 200.f;
  Step step(seqs, bs, /*padding=*/1, rng);
  const long long tokens = step.tokens, rowElems = KV * D;
  std::vector<double> q;
  std::vector<T> qHost = infer::kerneltest::randomElements<T>(size_t(tokens * H * D), rng, &q);
  std::vector<T> kHost = infer::kerneltest::randomElements<T>(size_t(tokens * rowElems), rng);
  std::vector<T> vHost = infer::kerneltest::randomElements<T>(size_t(tokens * rowElems), rng);

  // The cache before the step: random E4M3 bytes; after it, the step's rows.
  const long long cacheBytes = step.numBlocks * 2 * bs * rowElems;
  std::vector<unsigned char> before(static_cast<size_t>(cacheBytes));
  std::uniform_int_distribution<int> byte(0, 0x7e);
  std::bernoulli_distribution negative(0.5);
  for (unsigned char &b : before)
    b = (unsigned char)(byte(rng) | (negative(rng) ? 0x80 : 0));
  std::vector<unsigned char> after = before;
  for (long long t = 0; t < tokens; ++t) {
    const long long slot = step.slotIds[size_t(t)];
    if (slot < 0)
      continue;
    const long long block = slot / bs, offset = slot % bs;
    for (long long e = 0; e < rowElems; ++e) {
      const float k = float(TypeInfo<T>::value(kHost[size_t(t * rowElems + e)]));
      const float v = float(TypeInfo<T>::value(vHost[size_t(t * rowElems + e)]));
      after[size_t(((block * 2 + 0) * bs + offset) * rowElems + e)] =
          (unsigned char)e4m3Bits(k / kScale);
      after[size_t(((block * 2 + 1) * bs + offset) * rowElems + e)] =
          (unsigned char)e4m3Bits(v / vScale);
    }
  }
  std::vector<double> decoded(after.size());
  const long long halfBytes = bs * rowElems;
  for (size_t i = 0; i < after.size(); ++i)
    decoded[i] =
        e4m3Value(after[i]) * ((long long)(i / size_t(halfBytes)) % 2 == 0 ? kScale : vScale);

  DeviceBuffer<T> qDev(qHost.size()), kDev(kHost.size()), vDev(vHost.size());
  DeviceBuffer<unsigned char> cacheDev(before.size());
  upload(qDev.ptr, qHost);
  upload(kDev.ptr, kHost);
  upload(vDev.ptr, vHost);
  KvAttentionParams p;
  std::memset(&p, 0, sizeof(p));
  p.q = qDev.ptr;
  p.k = kDev.ptr;
  p.v = vDev.ptr;
  p.cache = cacheDev.ptr;
  const DeviceStep deviceStep(step);
  deviceStep.fill(p, step, bs);
  const long long outElements = tokens * H * D;
  DeviceBuffer<T> outDev{size_t(outElements)};
  p.output = outDev.ptr;
  setHeads(p, H, KV, D);
  p.softcap = c.softcap;
  p.kCacheScale = kScale;
  p.vCacheScale = vScale;
  const std::vector<double> want = reference(c, step, decoded, q, double(p.scale));

  int failures = 0;
  auto run = [&](const char *kernel, auto attention) {
    upload(cacheDev.ptr, before);
    CUDA_CHECK(cudaMemset(outDev.ptr, 0xff, size_t(outElements) * sizeof(T))); // NaN
    writeFp8<T>(p);
    attention();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned char> cache(before.size());
    CUDA_CHECK(cudaMemcpy(cache.data(), cacheDev.ptr, cache.size(), cudaMemcpyDeviceToHost));
    std::vector<T> out(static_cast<size_t>(outElements));
    CUDA_CHECK(cudaMemcpy(out.data(), outDev.ptr, out.size() * sizeof(T), cudaMemcpyDeviceToHost));
    double maxError = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const double error = std::fabs(TypeInfo<T>::value(out[i]) - want[i]);
      maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
    }
    const bool cacheOk = cache == after, ok = cacheOk && maxError <= TypeInfo<T>::tolerance;
    std::printf("%-22s %s H=%d KV=%d D=%d bs=%d softcap=%g tokens=%lld: max error %.3g "
                "(tolerance %.0e)%s %s\n",
                kernel, TypeInfo<T>::name, c.heads, c.kvHeads, c.headDim, c.blockSize,
                double(c.softcap), tokens, maxError, TypeInfo<T>::tolerance,
                cacheOk ? "" : " CACHE MISMATCH", ok ? "ok" : "FAIL");
    failures += ok ? 0 : 1;
  };
  run("kv_attention_fp8", [&] { generalFp8<T>(p, true); });
  run("kv_attention_fp8/1", [&] { generalFp8<T>(p, false); });
  if (kvPrefillSupported(D, int(sizeof(T))))
    run("kv_prefill_fp8", [&] { prefillFp8<T>(p, deviceStep.maxNewTokens); });
  if (!decodeWorkspace().countersZero()) {
    std::printf("FAIL kv_attention_fp8 left a split counter nonzero\n");
    ++failures;
  }
  return failures;
}

template <typename T> int runAll() {
  std::mt19937 rng(2024);
  // heads, kvHeads, headDim, blockSize, packed, misaligned, softcap
  const std::vector<Case> cases = {{8, 2, 128, 16, false, false, 0.f},
                                   {16, 4, 64, 6, false, false, 30.f},
                                   {4, 2, 80, 16, false, false, 0.f},
                                   {6, 2, 256, 16, false, false, 30.f}};
  const std::vector<Seq> longSeqs = {{500, 300}, {1000, 1000}, {331, 130}, {40, 1}};
  const std::vector<Seq> shortSeqs = {{5, 5}, {33, 16}, {17, 1}};
  int failures = 0;
  for (const Case &c : cases) {
    failures += runCase<T>(c, longSeqs, rng);
    failures += runCase<T>(c, shortSeqs, rng);
  }
  return failures;
}

/// Microseconds of one 2,048-token bf16 prefill (one sequence, heads
/// H / KV x D) through the FP8 cache's prefill kernel and general path and
/// the 16-bit cache's prefill kernel (the write not counted).
void timePrefill(long long H, long long KV, long long D) {
  using T = __nv_bfloat16;
  std::mt19937 rng(7);
  const long long n = 2048, bs = 16;
  Step step({{n, n}}, bs, /*padding=*/0, rng);
  const long long rowElems = KV * D;
  DeviceBuffer<T> qDev(size_t(n * H * D)), kvDev(size_t(n * rowElems)), outDev(size_t(n * H * D));
  DeviceBuffer<T> cache16(size_t(step.numBlocks * 2 * bs * rowElems));
  DeviceBuffer<unsigned char> cache8(size_t(step.numBlocks * 2 * bs * rowElems));
  std::vector<T> host = infer::kerneltest::randomElements<T>(size_t(n * H * D), rng);
  upload(qDev.ptr, host);
  host.resize(size_t(n * rowElems));
  upload(kvDev.ptr, host);
  KvAttentionParams p;
  std::memset(&p, 0, sizeof(p));
  p.q = qDev.ptr;
  p.k = p.v = kvDev.ptr;
  p.output = outDev.ptr;
  const DeviceStep deviceStep(step);
  deviceStep.fill(p, step, bs);
  setHeads(p, H, KV, D);
  KvAttentionParams p16 = p, p8 = p;
  p16.cache = cache16.ptr;
  launchWrite<T>(p16);
  p8.cache = cache8.ptr;
  p8.kCacheScale = p8.vCacheScale = 1.f / 300.f;
  writeFp8<T>(p8);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double fp8Prefill = 1e3 * timeMs([&] { prefillFp8<T>(p8, n); }, 10);
  const double fp8General = 1e3 * timeMs([&] { generalFp8<T>(p8, true); }, 3);
  const double bf16Prefill = 1e3 * timeMs([&] { launchPrefill<T>(p16, n); }, 10);
  std::printf("timing bf16 prefill of %lld tokens, H=%lld KV=%lld D=%lld: FP8 cache "
              "kv_prefill_fp8 %.0f us, kv_attention_fp8 %.0f us; bf16 cache kv_prefill %.0f us\n",
              n, H, KV, D, fp8Prefill, fp8General, bf16Prefill);
}

} // namespace

int main() {
  if (!infer::kerneltest::haveDevice())
    return 77;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
  const int failures = runAll<__nv_bfloat16>() + runAll<__half>();
  timePrefill(32, 8, 128); // Llama-3-8B
  timePrefill(32, 4, 64);  // TinyLlama
  if (failures) {
    std::printf("FAILED: %d case(s)\n", failures);
    return 1;
  }
  std::printf("all FP8 KV cache cases passed\n");
  return 0;
}
