//===- qkv_decode_test.cu - infer_qkv_decode against its two kernels ------===//
//
// infer_qkv_decode (QkvDecode.cuh) computes what infer_gemv_rows<bf16, 1>
// (rms_norm + qkv GEMV) followed by infer_kv_decode compute, in one grid:
// for one decode token at contexts 1, 17, 128, 200 and 1,000 over a random
// cache (block size 16), TinyLlama's (32/4 x 64) and Llama-3-8B's (32/8 x
// 128) heads, 1 and 2 splits, its qkv row and cache must be bit-identical
// to the two kernels' (infer_kv_decode with the same grid z; kv_attention_test
// checks that one against a double reference), and its attention output
// within kv_attention_test's tolerance of theirs: its 8 warps take a key step
// each where infer_kv_decode's 4 take two, so the softmax sums in another
// order. Each case runs the fused kernel three times: a fresh input at a new
// step serial, then a second input at the same serial and the next layer
// number, then the first input again at the next serial, so that a poll that
// took an earlier launch's exchange words would write the other input's new
// key and value to the cache, or give an output nearer the other input's.
//
// `--layer-timings [llama]`: kv_attention_test's batch-1 decode layers
// (TinyLlama's, or Llama-3-8B's) with the two kernels and with
// infer_qkv_decode (1 split, 1 split letting the o GEMV launch only after
// the poll, 2 splits), two rounds. Built with -DINFER_KERNEL_STAMPS,
// `--stamps` prints kv_attention_test's stamps of the same modes (µs after
// the qkv GEMV's last block; bench/results/tinyllama-1.1b-serving.md,
// session 31).
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/KvAttentionTestSupport.cuh"
#include "codegen/cuda/tests/KvAttentionTimings.cuh"

namespace {

using T = __nv_bfloat16;

template <typename E> std::vector<E> download(const E *device, size_t n) {
  std::vector<E> host(n);
  CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(E), cudaMemcpyDeviceToHost));
  return host;
}

template <typename E> bool sameBytes(const std::vector<E> &a, const std::vector<E> &b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(E)) == 0;
}

/// One case: returns true when all three fused launches match.
bool checkCase(long long context, long long H, long long KV, long long D, unsigned splits) {
  std::mt19937 rng(unsigned(context * 7 + D + splits));
  TimingStep ts({Seq{context, 1}}, H, KV, D, /*bs=*/16, rng);
  const long long hidden = H * D, qkvWidth = (H + 2 * KV) * D;
  const size_t cacheElems = size_t(ts.step.numBlocks * 2 * 16 * KV * D);
  std::vector<T> cache(cacheElems);
  randomFill(cache, rng);
  upload(ts.cache.ptr, cache);

  std::vector<T> weights = infer::kerneltest::randomElements<T>(size_t(qkvWidth * hidden), rng,
                                                                nullptr, -0.05, 0.05);
  std::vector<T> norm = infer::kerneltest::randomElements<T>(size_t(hidden), rng, nullptr, 0.5, 1.5);
  DeviceBuffer<T> w{weights.size()}, normWeight{norm.size()}, input{size_t(hidden)},
      input2{size_t(hidden)};
  upload(w.ptr, weights);
  upload(normWeight.ptr, norm);
  for (T *buffer : {input.ptr, input2.ptr}) {
    std::vector<T> x(static_cast<size_t>(hidden));
    randomFill(x, rng);
    upload(buffer, x);
  }
  DecodeLaunch decode = decodeLaunchFor(ts, H, KV, D, splits);
  auto qkvParams = [&](const T *x) {
    infer::kernels::GemvParams g = rowGemvParams(x, w.ptr, ts.qkv.ptr, hidden, qkvWidth);
    g.prologue = 1, g.normWeight = normWeight.ptr, g.normEpsilon = 1e-5f;
    return g;
  };
  struct Result {
    std::vector<T> qkv, out, cache;
  };
  auto result = [&] {
    CUDA_CHECK(cudaDeviceSynchronize());
    return Result{download(ts.qkv.ptr, size_t(qkvWidth)), download(ts.out.ptr, size_t(hidden)),
                  download(ts.cache.ptr, cacheElems)};
  };
  auto reset = [&] {
    upload(ts.cache.ptr, cache);
    CUDA_CHECK(cudaMemset(ts.qkv.ptr, 0, size_t(qkvWidth) * sizeof(T)));
    CUDA_CHECK(cudaMemset(ts.out.ptr, 0, size_t(hidden) * sizeof(T)));
    CUDA_CHECK(cudaDeviceSynchronize()); // the fused runs use a non-blocking stream
  };
  auto separate = [&](const T *x) {
    reset();
    const infer::kernels::GemvParams g = qkvParams(x);
    infer::kernels::infer_gemv_rows<T, 1><<<infer::kernels::gemvRowsGrid(g.n),
                                           infer::kernels::kGemvRowsThreads,
                                           size_t(infer::kernels::gemvRowsSharedBytes(g.k, 2))>>>(g);
    CUDA_CHECK(cudaGetLastError());
    decodeKernel<T>(D)<<<dim3(1, decode.y, decode.z), kKvAttentionThreads>>>(decode.params);
    CUDA_CHECK(cudaGetLastError());
    return result();
  };
  QkvDecodeLaunch fused(qkvWidth);
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // layer 0 bumps the serial (QkvDecodeLaunch::launch).
  auto runFused = [&](const T *x, unsigned layer) {
    reset();
    fused.launch(qkvParams(x), decode, splits, layer, D, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return result();
  };
  const Result want1 = separate(input.ptr), want2 = separate(input2.ptr);
  const Result runs[3] = {runFused(input.ptr, 0), runFused(input2.ptr, 1),
                          runFused(input.ptr, 0)};
  const Result *wants[3] = {&want1, &want2, &want1};
  CUDA_CHECK(cudaStreamDestroy(stream));
  bool ok = true;
  double worst = 0.0;
  for (int i = 0; i < 3; ++i) {
    const double error = worstOrderError(runs[i].out, wants[i]->out);
    worst = std::max(worst, error);
    const bool qkvSame = sameBytes(runs[i].qkv, wants[i]->qkv);
    // Nearer its own input's output than the other input's: a stale q.
    const std::vector<T> &otherOut = wants[i] == &want1 ? want2.out : want1.out;
    const double errorToOther = worstOrderError(runs[i].out, otherOut);
    const bool outClose = error <= TypeInfo<T>::tolerance && error < errorToOther;
    const bool cacheSame = sameBytes(runs[i].cache, wants[i]->cache);
    if (!qkvSame || !outClose || !cacheSame) {
      std::printf("FAIL qkv_decode context %lld heads %lld/%lld x %lld splits %u launch %d: "
                  "qkv %s, out error %.3g (tolerance %.0e; %.3g to the other input's), cache %s\n",
                  context, H, KV, D, splits, i, qkvSame ? "=" : "!=", error,
                  TypeInfo<T>::tolerance, errorToOther, cacheSame ? "=" : "!=");
      ok = false;
    }
  }
  // The two inputs must write different new keys, or the cache could not
  // tell a stale poll (the other launch's words) from a fresh one.
  if (sameBytes(want1.cache, want2.cache)) {
    std::printf("FAIL qkv_decode context %lld: both inputs write the same cache\n", context);
    ok = false;
  }
  if (ok)
    std::printf("ok qkv_decode context %lld heads %lld/%lld x %lld splits %u (out error %.3g)\n",
                context, H, KV, D, splits, worst);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (!infer::kerneltest::haveDevice())
    return 77;
  if (argc > 1 && std::strcmp(argv[1], "--layer-timings") == 0) {
    // --layer-timings [llama]: TinyLlama-1.1B's layers, or Llama-3-8B's.
    // Modes: the two kernels; fused 1 split; fused 1 split, late trigger;
    // fused 2 splits.
    const bool llama = argc > 2 && std::strcmp(argv[2], "llama") == 0;
    const unsigned modes[4][2] = {{0, 0}, {1, 0}, {1, 1}, {2, 0}};
    for (int round = 0; round < 2; ++round)
      for (const auto &mode : modes) {
        qkvDecodeLateTrigger = mode[1];
        if (mode[1])
          std::printf("(late trigger)\n");
        if (llama) {
          timeDecodeLayers(200, 32, 8, 128, 14336, true, mode[0]);
          continue;
        }
        for (long long context : {128LL, 200LL, 1000LL})
          timeDecodeLayers(context, 32, 4, 64, 5632, true, mode[0]);
      }
    return 0;
  }
#ifdef INFER_KERNEL_STAMPS
  if (argc > 1 && std::strcmp(argv[1], "--stamps") == 0) {
    const unsigned modes[4][2] = {{0, 0}, {1, 0}, {1, 1}, {2, 0}};
    for (const auto &mode : modes) {
      qkvDecodeLateTrigger = mode[1];
      if (mode[1])
        std::printf("(late trigger)\n");
      for (long long context : {128LL, 200LL})
        stampDecode(context, 32, 4, 64, 0, 100, mode[0]);
    }
    return 0;
  }
#endif
  int failures = 0;
  const long long shapes[2][3] = {{32, 4, 64}, {32, 8, 128}};
  for (const auto &shape : shapes)
    for (long long context : {1LL, 17LL, 128LL, 200LL, 1000LL})
      for (unsigned splits : {1u, 2u})
        failures += checkCase(context, shape[0], shape[1], shape[2], splits) ? 0 : 1;
  if (failures) {
    std::printf("FAILED: %d case(s)\n", failures);
    return 1;
  }
  std::printf("all qkv decode cases passed\n");
  return 0;
}
