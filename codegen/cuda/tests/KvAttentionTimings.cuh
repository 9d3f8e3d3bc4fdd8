//===- KvAttentionTimings.cuh - kv_attention_test's timings ---------------===//
//
// For kv_attention_test.cu (one translation unit; not asserted beyond the
// prefills agreeing with infer_attention): bf16 decode steps, the 2,048-token
// prefill through every prefill kernel, whole batch-1 decode layers
// (--layer-timings) and, in -DINFER_KERNEL_STAMPS builds, the decode
// attention's stages (--stamps).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_TESTS_KVATTENTIONTIMINGS_CUH
#define INFER_CODEGEN_CUDA_TESTS_KVATTENTIONTIMINGS_CUH

#include "codegen/cuda/tests/KvAttentionTestSupport.cuh"
#include "codegen/cuda/kernels/QkvDecode.cuh"

namespace {

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
  // infer_kv_decode takes heads of at most 128 (the general path's 256 have no fused kernel).
  const bool fusable = D <= 128;
  const double usThree = fusable ? graphMicros(three, 16, 10) : 0.0;
  const double usFused = fusable ? graphMicros(fused, 16, 10) : 0.0;
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

/// infer_qkv_decode (QkvDecode.cuh) for heads of D elements.
template <typename T> auto qkvDecodeKernel(long long D) {
  return infer::kernels::kvDecodeMaxDim(D) == 64 ? infer::kernels::infer_qkv_decode<T, float, 64>
                                                 : infer::kernels::infer_qkv_decode<T, float, 128>;
}

__global__ void bumpStepSerial(unsigned long long *serial) { *serial += 1; }

/// QkvDecodeParams::lateTrigger of the timings' launches (an experiment's knob).
unsigned qkvDecodeLateTrigger = 0;

/// infer_qkv_decode's exchange and step serial, and its launch in place of a
/// batch-1 layer's qkv GEMV and infer_kv_decode. Layer 0 bumps the serial
/// first (as the host would before a step) and launches without
/// programmatic overlap, so that every launch's first reads see the bump.
struct QkvDecodeLaunch {
  DeviceBuffer<unsigned> exchange;
  DeviceBuffer<unsigned long long> serial{1};
  explicit QkvDecodeLaunch(long long n) : exchange(size_t(n)) {
    CUDA_CHECK(cudaMemset(exchange.ptr, 0, size_t(n) * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(serial.ptr, 0, sizeof(unsigned long long)));
    CUDA_CHECK(cudaDeviceSynchronize()); // before launches on non-blocking streams
    // The attention blocks' shared memory is over the default 48 KiB.
    const int most = int(infer::kernels::qkvDecodeSharedBytes(
        infer::kernels::kGemvRowsMaxSharedBytes / 2, 2));
    for (const void *kernel : {(const void *)qkvDecodeKernel<__nv_bfloat16>(64),
                               (const void *)qkvDecodeKernel<__nv_bfloat16>(128)})
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, most));
  }
  void launch(const infer::kernels::GemvParams &qkv, const DecodeLaunch &decode, unsigned splits,
              unsigned layer, long long D, cudaStream_t stream) {
    if (layer == 0)
      bumpStepSerial<<<1, 1, 0, stream>>>(serial.ptr);
    infer::kernels::QkvDecodeParams f{};
    f.gemv = qkv;
    f.decode = decode.params;
    f.exchange = exchange.ptr;
    f.stepSerial = serial.ptr;
    f.layer = layer;
    f.attentionY = decode.y, f.attentionZ = splits;
    f.lateTrigger = qkvDecodeLateTrigger;
    cudaLaunchAttribute programmatic;
    cudaLaunchConfig_t c = infer::kerneltest::launchConfig(
        dim3(infer::kernels::kQkvDecodeBlocks), infer::kernels::kGemvRowsThreads,
        size_t(infer::kernels::qkvDecodeSharedBytes(qkv.k, 2)), stream, layer > 0, programmatic);
    CUDA_CHECK(cudaLaunchKernelEx(&c, qkvDecodeKernel<__nv_bfloat16>(D), f));
  }
};

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
                      long long intermediate, bool gatedPairs, unsigned fusedSplits = 0) {
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
                             (const void *)decodeKernel<T>(D), (const void *)qkvDecodeKernel<T>(D)})
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  QkvDecodeLaunch fused(qkvWidth);
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
    if (fusedSplits > 0) {
      fused.launch(qkv, decode, fusedSplits, unsigned(index), D, stream);
    } else {
      launchRows(qkv, stream);
      cudaLaunchConfig_t c = infer::kerneltest::launchConfig(
          dim3(1, decode.y, decode.z), kKvAttentionThreads, 0, stream, true, programmatic);
      CUDA_CHECK(cudaLaunchKernelEx(&c, decodeKernel<T>(D), decode.params));
    }
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
  char attention[64];
  std::snprintf(attention, sizeof(attention),
                fusedSplits ? "infer_qkv_decode (%u splits)" : "qkv GEMV, decode", fusedSplits);
  std::printf("layer bf16 decode 1 seq x context %lld, heads %lld/%lld x %lld, intermediate %lld: "
              "%.2f us per layer (rms_norm + %s, o GEMV, rms_norm + gate/up GEMV, "
              "down GEMV, the gated activation %s; %d layers, their own weights), floor %.2f us "
              "(%.1f MB at 4.3 TB/s)\n",
              context, H, KV, D, intermediate, usPerLayer, attention,
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
                 int carveout = -1, unsigned fusedSplits = 0) {
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
                             (const void *)decodeKernel<T>(D), (const void *)qkvDecodeKernel<T>(D),
                             (const void *)infer::kernels::infer_gemv_rows<T, 0>})
    CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
  QkvDecodeLaunch fused(qkvWidth);
  cudaLaunchAttribute programmatic;
  auto config = [&](dim3 grid, unsigned block, size_t shared, cudaStream_t stream) {
    return infer::kerneltest::launchConfig(grid, block, shared, stream, true, programmatic);
  };
  auto layer = [&](int index, cudaStream_t stream) {
    const size_t rowsShared = size_t(infer::kernels::gemvRowsSharedBytes(hidden, 2));
    cudaLaunchConfig_t c;
    if (fusedSplits > 0) {
      fused.launch(qkv, decode, fusedSplits, unsigned(index), D, stream);
    } else {
      c = config(dim3(infer::kernels::gemvRowsGrid(qkvWidth)), infer::kernels::kGemvRowsThreads,
                 rowsShared, stream);
      CUDA_CHECK(cudaLaunchKernelEx(&c, infer::kernels::infer_gemv_rows<T, 1>, qkv));
      c = config(dim3(1, y, z), kKvAttentionThreads, 0, stream);
      CUDA_CHECK(cudaLaunchKernelEx(&c, decodeKernel<T>(D), r));
    }
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
              "fused splits %u, "
              "carveout %d: %.2f us per layer (qkv GEMV + decode + o GEMV); us after the qkv GEMV's end: its "
              "last wait release %.2f, the o GEMV's last wait release %.2f, its end %.2f\n",
              context, H, KV, D, y, z, fusedSplits, carveout, usPerLayer, us(stamps[211]), us(stamps[210]),
              us(stamps[200]));
  const char *points[] = {"entry",        "token found", "before wait", "after wait",
                          "staged",       "keys done",   "merged",      "written",
                          // point 8 unused since session 36: the new key is one of the mma keys
                          "-", "first keys in registers", "first keys scored", "first step done"};
  constexpr int kPoints = int(sizeof points / sizeof points[0]);
  for (unsigned b = 0; b < y && b < 8; ++b) {
    std::printf("  block y=%u:", b);
    for (int i = 0; i < kPoints; ++i)
      std::printf(" %s %.2f%s", points[i], us(stamps[b * 16 + i]), i < kPoints - 1 ? "," : "\n");
  }
}
#endif

} // namespace

#endif // INFER_CODEGEN_CUDA_TESTS_KVATTENTIONTIMINGS_CUH
