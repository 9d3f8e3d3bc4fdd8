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
// otherwise), once more in 256-thread blocks (no producer warpgroup: the
// former's path, where waiting for copies would hang); bf16 and f16 also run
// long prefill chunks (300 new tokens over 200 cached, a 1000-token prompt;
// block sizes 16 and 6) through all of these. infer_kv_attention runs with
// the split-KV grid of KvDecodeGeometry.h (workspace and counters; the
// counters must be left zero) and again with the plain (tokens, kv heads)
// grid and no workspace.
// Decode cases (16-bit types, also f32 on the general path) cover the fast
// path: batch 1 at 2,000+ positions (many splits), 64 sequences x 1024, GQA
// 8 and 4 at head size 128, head groups split over blocks (16 and 12 query
// heads per kv head), head size 96, block sizes 16, 6 and 4, softcap; and the
// general path's split-KV (head size 256 and 40, sliding windows of 700 and
// 300 keys). Then times bf16 decode steps (1 x 200, 1 x 2000, 64 x 1024, 512 x
// 192 at 32/4/64, 32/8/128 and 8/4/256: microseconds and GB/s of K/V read; also
// rotary + KV write + attention against infer_kv_decode), and a 2048-token bf16
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
// The step types and launchers are in KvAttentionTestSupport.cuh, the timings
// in KvAttentionTimings.cuh.
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/KvAttentionTestSupport.cuh"
#include "codegen/cuda/tests/KvAttentionTimings.cuh"

namespace {

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
      const long long firstKey = c.window > 0 && visible > c.window ? visible - c.window : 0;
      for (long long h = 0; h < H; ++h) {
        const T *qRow = qBase + row * qStride + h * D;
        for (long long d = 0; d < D; ++d)
          query[size_t(d)] = double(TypeInfo<T>::value(qRow[d]));
        const long long kvOffset = (h / group) * D;
        double maximum = -INFINITY;
        for (long long pos = firstKey; pos < visible; ++pos) {
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
        for (long long pos = firstKey; pos < visible; ++pos) {
          scores[size_t(pos)] = std::exp(scores[size_t(pos)] - maximum);
          sum += scores[size_t(pos)];
        }
        double *out = &want[size_t((row * H + h) * D)];
        for (long long pos = firstKey; pos < visible; ++pos) {
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
  std::printf("%-12s %-4s heads=%2d/%d D=%-3d block=%-2d %s%s softcap=%-2g window=%d tokens=%lld: "
              "max error %.3g (tolerance %.0e)%s%s %s\n",
              kernel, TypeInfo<T>::name, c.heads, c.kvHeads, c.headDim, c.blockSize,
              c.packed ? "packed  " : "separate", c.misaligned ? " misaligned" : "",
              double(c.softcap), c.window, tokens, maxError, TypeInfo<T>::tolerance,
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
  p.window = c.window;

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

  if (infer::kernels::kvPrefillSupported(D, int(sizeof(T))) && c.window == 0) {
    for (Prefill kernel : {Prefill::MmaSync, Prefill::Wgmma, Prefill::WgmmaNarrow}) {
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
      // The general path's split-KV: gemma2-2b's 256-wide heads, its 4,096-key window
      // (here 700 and 300) with softcap, short and long contexts.
      {{8, 4, 256, 16, true, false, 0.f}, {{3000, 1}}},
      {{8, 4, 256, 16, false, false, 50.f, 700}, {{3000, 1}, {500, 1}, {65, 2}, {1, 1}}},
      {{16, 2, 40, 6, false, false, 0.f, 300}, {{1000, 1}, {301, 1}, {130, 3}}},
  };
}

template <typename T> int runDecodeCases(std::mt19937 &rng) {
  int failures = 0;
  for (const DecodeCase &d : decodeCases())
    failures += runCase<T>(d.c, d.seqs, rng);
  return failures;
}

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
/// softcap 0 and 30; the rotary from inv_freq, from cos / sin caches at the
/// tokens' positions, and from the caches at positions 5 past them (the
/// fused kernel guesses the cache row from the position in the sequence and
/// must reload it). The cache must come out identical (same bytes), the
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
  enum RotaryTable { kInvFreq, kCaches, kCachesShifted };
  struct DecodeCase {
    DecodeShape shape;
    RotaryTable table;
  };
  std::vector<DecodeCase> decodeCases;
  for (const DecodeShape &shape : shapes)
    for (RotaryTable table : {kInvFreq, kCaches, kCachesShifted})
      decodeCases.push_back({shape, table});
  int failures = 0, cases = 0;
  for (const DecodeCase &decodeCase : decodeCases) {
    const DecodeShape &shape = decodeCase.shape;
    const RotaryTable table = decodeCase.table;
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
      positions.push_back(seq.context - 1 + (table == kCachesShifted ? 5 : 0));
    positions.push_back(0); // padding
    // cos / sin of every position the caches may be asked for.
    const long long cacheRows = 2200, half = shape.rotaryDim / 2;
    std::vector<float> cosHost(size_t(cacheRows * half)), sinHost(cosHost.size());
    for (long long row = 0; row < cacheRows; ++row)
      for (long long i = 0; i < half; ++i) {
        cosHost[size_t(row * half + i)] = float(std::cos(double(row) * invFreq[size_t(i)]));
        sinHost[size_t(row * half + i)] = float(std::sin(double(row) * invFreq[size_t(i)]));
      }
    DeviceBuffer<float> cosCache(cosHost.size()), sinCache(sinHost.size());
    upload(cosCache.ptr, cosHost);
    upload(sinCache.ptr, sinHost);
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
      if (table != kInvFreq) {
        p.rotary.invFreq = nullptr;
        p.rotary.cosCache = cosCache.ptr;
        p.rotary.sinCache = sinCache.ptr;
        p.rotary.cacheRows = cacheRows;
      }
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
    const double worst = worstOrderError(got, want);
    const bool countersZero = w.countersZero();
    ++cases;
    if (!sameCache || !(worst <= TypeInfo<T>::tolerance) || !countersZero) {
      std::printf("FAIL %s kv_decode H=%lld KV=%lld D=%lld bs=%lld rotary_dim=%lld "
                  "interleaved=%d softcap=%g %s: %s worst error %.3g (tolerance %.3g)%s\n",
                  TypeInfo<T>::name, H, KV, D, bs, shape.rotaryDim, shape.interleaved,
                  double(shape.softcap),
                  table == kInvFreq ? "inv_freq" : table == kCaches ? "caches" : "caches+5",
                  sameCache ? "cache same," : "cache differs,", worst,
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
    // TinyLlama, Llama-3-8B, gemma2-2b (256-wide heads: the general path).
    const long long heads[3][3] = {{32, 4, 64}, {32, 8, 128}, {8, 4, 256}};
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
