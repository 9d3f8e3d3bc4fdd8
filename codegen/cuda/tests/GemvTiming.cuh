//===- GemvTiming.cuh - gemv_test's timing of the decode GEMVs ------------===//
//
// For gemv_test.cu (one translation unit; not asserted): each GEMM shape of
// TinyLlama-1.1B and Llama-3-8B alone, eagerly and inside graphs, with
// rotating copies of the weights so that L2 does not serve them; each decode
// GEMV per shape at the row counts the runtime gives it; and the GEMVs of
// whole layers in one graph, plainly and programmatically, beside the bytes /
// 4.3 TB/s floor.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_TESTS_GEMVTIMING_CUH
#define INFER_CODEGEN_CUDA_TESTS_GEMVTIMING_CUH

#include "codegen/cuda/tests/GemvTestLaunch.cuh"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>

namespace {

__global__ void fillRandom(bf16 *p, i64 count, unsigned seed) {
  for (i64 i = blockIdx.x * i64(blockDim.x) + threadIdx.x; i < count;
       i += i64(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2bfloat16_rn(float(int(h & 0xffff) - 32768) / 32768.f);
  }
}

/// The weights of one timed shape, in copies that rotate.
struct TimedWeights {
  std::vector<bf16 *> copies;
  bf16 *input = nullptr, *output = nullptr;
  i64 k, n;
  TimedWeights(i64 k_, i64 n_) : k(k_), n(n_) {
    const double bytes = double(k) * double(n) * sizeof(bf16);
    const int count = int(std::min(64.0, std::max(2.0, std::ceil(768e6 / bytes))));
    for (int i = 0; i < count; ++i) {
      bf16 *p = nullptr;
      CUDA_CHECK(cudaMalloc(&p, size_t(k * n) * sizeof(bf16)));
      fillRandom<<<1024, 256>>>(p, k * n, unsigned(i) * 7919u + 1u);
      CUDA_CHECK(cudaGetLastError());
      copies.push_back(p);
    }
    CUDA_CHECK(cudaMalloc(&input, size_t(kGemvMaxRows * k) * sizeof(bf16)));
    fillRandom<<<64, 256>>>(input, kGemvMaxRows * k, 12345u);
    CUDA_CHECK(cudaMalloc(&output, size_t(kGemvMaxRows * n) * sizeof(bf16)));
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~TimedWeights() {
    for (bf16 *p : copies)
      (void)cudaFree(p);
    (void)cudaFree(input);
    (void)cudaFree(output);
  }
  GemvParams params(int i, int rows, int transposed) const {
    return gemvParams(input, copies[size_t(i) % copies.size()], output, rows, k, n, transposed);
  }
};

/// Milliseconds per replay of a graph of what `enqueue` launches on its
/// stream, over `replays` replays after one warm-up.
double replayMs(const std::function<void(cudaStream_t)> &enqueue, int replays) {
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  enqueue(stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int r = 0; r < replays; ++r)
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  return double(ms) / replays;
}

/// Milliseconds per launch inside a graph of `perGraph` launches replayed
/// `replays` times.
double graphMs(const TimedWeights &w, int rows, int transposed, int warpsN, unsigned splits,
               int perGraph, int replays) {
  return replayMs(
             [&](cudaStream_t stream) {
               for (int i = 0; i < perGraph; ++i)
                 launch<bf16>(w.params(i, rows, transposed), warpsN, splits, stream);
             },
             replays) /
         perGraph;
}

/// Milliseconds per launch over `reps` eager launches on the legacy stream,
/// each over the next copy of the weights.
double eagerMs(const TimedWeights &w, int rows, int transposed, int warpsN, unsigned splits,
               int reps) {
  int copy = 0;
  return infer::kerneltest::timeMs(
      [&] { launch<bf16>(w.params(copy++, rows, transposed), warpsN, splits); }, reps);
}

/// Prints the sweep of tile widths and split counts (inside graphs, what
/// decode replays) that gemvShape()'s policy was chosen from.
void sweepShape(const TimedWeights &w, int rows, int transposed, const char *model) {
  const i64 k = w.k, n = w.n;
  const double bytes = double(k) * double(n) * sizeof(bf16);
  const i64 chunks = std::max<i64>(1, (k + kGemvSplitRows - 1) / kGemvSplitRows);
  std::string sweep;
  for (int warpsN : {1, 2, 4, 8})
    for (unsigned s : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u, 24u, 32u, 48u, 64u, 96u, 128u}) {
      // Splits that leave a chunk empty are the same as fewer.
      if (s > unsigned(chunks) || (s > 1 && gemvSplitChunk(k, s) * (s - 1) >= k))
        continue;
      const double ms = graphMs(w, rows, transposed, warpsN, s, 30, 2);
      char item[64];
      std::snprintf(item, sizeof(item), " %d/%u:%.0f", warpsN, s, bytes / ms / 1e6);
      sweep += item;
    }
  std::printf("sweep %s %s k=%lld n=%lld rows=%d (warpsN/splits:GB/s):%s\n", model,
              transposed ? "[n,k]" : "[k,n]", k, n, rows, sweep.c_str());
}

void timeShape(i64 k, i64 n, int transposed, const char *model, bool sweep) {
  TimedWeights w(k, n);
  const double bytes = double(k) * double(n) * sizeof(bf16);
  const GemvGrid grid = gemvGrid(k, n, transposed);
  const int warpsN = gemvShape(k, n, transposed).warpsN;
  for (int rows : {1, 8}) {
    if (sweep)
      sweepShape(w, rows, transposed, model);
    const double eager = eagerMs(w, rows, transposed, 0, 1, 200);
    const double graph = graphMs(w, rows, transposed, 0, 1, 50, 4);
    std::printf("time  %-10s %s k=%5lld n=%6lld rows=%d grid %4ux%-3u (warpsN %d): eager %7.2f us "
                "%5.0f GB/s, graph %7.2f us %5.0f GB/s\n",
                model, transposed ? "[n,k]" : "[k,n]", k, n, rows, grid.x, grid.y, warpsN,
                eager * 1e3, bytes / eager / 1e6, graph * 1e3, bytes / graph / 1e6);
    std::fflush(stdout);
  }
}

/// Each decode GEMV of a layer alone over [n, k] weights, at the row counts
/// the runtime gives each kernel: microseconds per launch inside a graph of
/// 40 programmatic launches over rotating copies (no prologue), beside the
/// bytes / 4.3 TB/s floor.
void timeRowsShapes(const i64 (*shapes)[2], int count, const char *model) {
  for (int i = 0; i < count; ++i) {
    TimedWeights w(shapes[i][0], shapes[i][1]);
    const double bytes = double(w.k) * double(w.n) * sizeof(bf16);
    std::string line;
    struct Run {
      Kernel kernel;
      int rows;
    };
    for (const Run &r : {Run{Kernel::rows, 1}, Run{Kernel::rowsMma, 1}, Run{Kernel::rows, 2},
                         Run{Kernel::rowsMma, 2}, Run{Kernel::gemv, 4}, Run{Kernel::rowsMma, 4},
                         Run{Kernel::gemv, 8}, Run{Kernel::rowsMma, 8}}) {
      if ((r.kernel == Kernel::rowsMma &&
           r.rows > gemvMmaMaxRows(w.k, w.n, 1, int(sizeof(bf16)))) ||
          (r.kernel == Kernel::rows && r.rows > 1 &&
           !gemvMultiRowsSupported(w.k, w.n, 1, int(sizeof(bf16)))))
        continue;
      const double ms = replayMs(
                            [&](cudaStream_t stream) {
                              for (int l = 0; l < 40; ++l) {
                                GemvParams p = w.params(l, r.rows, 1);
                                p.prefetchBytes = 32 << 10;
                                if (r.kernel == Kernel::rows)
                                  launchRows<bf16>(p, l > 0, stream);
                                else if (r.kernel == Kernel::rowsMma)
                                  launchRowsMma<bf16>(p, l > 0, stream);
                                else
                                  launchEx<bf16>(p, l > 0, stream);
                              }
                            },
                            5) /
                        40;
      char item[64];
      std::snprintf(item, sizeof(item), " %s/%d %.2f", r.kernel == Kernel::rows ? "rows"
                                                        : r.kernel == Kernel::rowsMma ? "mma"
                                                                                      : "gemv",
                    r.rows, ms * 1e3);
      line += item;
    }
    std::printf("shape %-10s k=%5lld n=%6lld floor %.2f us:%s\n", model, w.k, w.n,
                bytes / 4.3e6, line.c_str());
    std::fflush(stdout);
  }
}

/// The decode GEMVs of `layers` transformer layers (qkv, o, gate/up, down of
/// one model, each layer its own weights) at rows 1 in one graph: launched
/// plainly, or programmatically with the weight prefetch, with gemvGrid()'s
/// geometry for waves of `wave` blocks (fewer than fit leave room for the next
/// kernel to start early): microseconds per layer and the weight stream rate,
/// beside the bytes / 4.3 TB/s floor.
void timeLayerChain(const i64 (*shapes)[2], int count, int layers, const char *model) {
  std::vector<TimedWeights *> weights;
  double layerBytes = 0;
  for (int i = 0; i < count; ++i) {
    weights.push_back(new TimedWeights(shapes[i][0], shapes[i][1]));
    layerBytes += double(shapes[i][0]) * double(shapes[i][1]) * sizeof(bf16);
  }
  struct Variant {
    i64 wave;
    i64 prefetchBytes; // < 0: plain launches
    bool prologues;    // as the step runs them: rms_norm into qkv and gate/up, act into down
    Kernel kernel;     // infer_gemv_rows(_mma) over [n, k] weights (wave unused)
    int rows = 1;      // input rows (decode tokens); the step folds no act at rows > 1
    bool downAct = true; // the act prologue into down where it applies (infer_gemv_rows,
                         // rows 1); without: as under gated pairs (the act then in gate/up)
  };
  const Kernel gemv = Kernel::gemv, rowsK = Kernel::rows, mma = Kernel::rowsMma;
  const i64 full = kGemvResidentBlocks;
  const Variant variants[] = {{full, -1, false, gemv},          {full, -1, true, gemv},
                              {full, 32 << 10, false, gemv},    {full / 2, -1, false, gemv},
                              {full / 2, 32 << 10, false, gemv}, {full / 3, -1, false, gemv},
                              {full / 3, 64 << 10, false, gemv}, {0, -1, false, rowsK},
                              {0, -1, true, rowsK},              {0, 0, true, rowsK},
                              {0, 0, true, rowsK, 1, false},     {0, 0, true, mma, 1},
                              {0, 0, false, rowsK, 1},           {0, 0, false, mma, 1},
                              {0, 0, false, mma, 4},
                              {full, 32 << 10, false, gemv, 2},  {0, 0, true, rowsK, 2},
                              {0, 0, true, mma, 2},              {full, 32 << 10, false, gemv, 4},
                              {0, 0, true, rowsK, 4},            {0, 0, true, mma, 4},
                              {full, 32 << 10, false, gemv, 8},  {0, 0, true, mma, 8}};
  for (const Variant &v : variants) {
    bool runs = true;
    for (int i = 0; i < count; ++i) {
      if (v.kernel == rowsK && v.rows > 1)
        runs = runs && gemvMultiRowsSupported(shapes[i][0], shapes[i][1], 1, int(sizeof(bf16)));
      if (v.kernel == mma)
        runs = runs && v.rows <= gemvMmaMaxRows(shapes[i][0], shapes[i][1], 1, int(sizeof(bf16)));
    }
    if (!runs)
      continue;
    const bool downAct = v.downAct && v.kernel == rowsK && v.rows == 1;
    const bool programmatic = v.prefetchBytes >= 0;
    const double ms = replayMs(
        [&](cudaStream_t stream) {
          for (int layer = 0; layer < layers; ++layer)
            for (int i = 0; i < count; ++i) {
              const TimedWeights &w = *weights[size_t(i)];
              // [n, k] as infer-compile stores them, except the rows-1
              // infer_gemv variants of session 13 ([k, n]).
              GemvParams p = w.params(layer, v.rows, v.kernel != gemv || v.rows > 1 ? 1 : 0);
              p.prefetchBytes = programmatic ? v.prefetchBytes : 0;
              const bool act = i == 3 && (v.kernel == gemv ? v.rows == 1 : downAct);
              if (v.prologues && count == 4 && i != 1 && (i != 3 || act)) {
                p.prologue = i == 3 ? 2 : 1;
                p.normWeight = w.input + w.k; // any k values of the second row
                p.normEpsilon = 1e-5f;
                p.up = w.input + w.k; // gate | up in one row of 2k
                p.inputRowStride = p.upRowStride = i == 3 ? 2 * w.k : w.k;
              }
              if (v.kernel == rowsK)
                launchRows<bf16>(p, programmatic && layer + i > 0, stream);
              else if (v.kernel == mma)
                launchRowsMma<bf16>(p, programmatic && layer + i > 0, stream);
              else
                launchEx<bf16>(p, programmatic && layer + i > 0, stream, v.wave);
            }
        },
        10);
    const double layerUs = ms * 1e3 / layers;
    char how[96];
    if (v.kernel != gemv)
      std::snprintf(how, sizeof(how), "%s [n,k]%s%s%s", kernelName(v.kernel),
                    v.prologues ? ", prologues" : "", v.prologues && !downAct ? " (no act)" : "",
                    programmatic ? ", programmatic" : "");
    else if (programmatic)
      std::snprintf(how, sizeof(how), "programmatic + prefetch %lld KiB", v.prefetchBytes >> 10);
    else
      std::snprintf(how, sizeof(how), v.prologues ? "plain, with the step's prologues" : "plain");
    std::printf("chain %-10s %d layers x %d GEMVs, rows %d, waves of %3lld blocks, %-32s: %.2f us "
                "per layer, %.0f GB/s (floor %.2f us at 4.3 TB/s)\n",
                model, layers, count, v.rows, v.wave, how, layerUs, layerBytes / layerUs / 1e3,
                layerBytes / 4.3e6);
    std::fflush(stdout);
  }
  for (TimedWeights *w : weights)
    delete w;
}

/// Every timed kernel asks for the shared-memory carveout the runtime gives
/// all of ours (INFER_SMEM_CARVEOUT's default, docs/codegen.md): timed with
/// the driver's choice, infer_gemv's layer chains ran 5-7 us a layer faster
/// (session 24), which the runtime does not see.
void preferRuntimeCarveout() {
  const auto prefer = [](auto *kernel) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  };
  prefer(infer_gemv<bf16>);
  prefer(infer_gemv_fused<bf16, 1>);
  prefer(infer_gemv_fused<bf16, 2>);
  prefer(gemvForced<bf16>);
  prefer(infer_gemv_rows<bf16, 0>);
  prefer(infer_gemv_rows<bf16, 1>);
  prefer(infer_gemv_rows<bf16, 2>);
  prefer(infer_gemv_rows<bf16, 0, false, kGemvRowsMultiRows>);
  prefer(infer_gemv_rows<bf16, 1, false, kGemvRowsMultiRows>);
  prefer(infer_gemv_rows<bf16, 2, false, kGemvRowsMultiRows>);
  for (int splits : {1, 8}) {
    prefer(mmaKernel<bf16>(0, splits));
    prefer(mmaKernel<bf16>(1, splits));
  }
}

/// A few plain launches for a profiler (--mma-profile, no correctness run):
/// TinyLlama's gate/up GEMV at 4 tokens on infer_gemv_rows_mma with a tile's
/// k over 1 warp, then over 8, then infer_gemv_rows at one token; three
/// launches each over rotating weights.
void profileMma() {
  const TimedWeights w(2048, 11264);
  for (int splits : {1, 8}) {
    gMmaSplits = splits;
    for (int i = 0; i < 3; ++i)
      launchRowsMma<bf16>(w.params(i, 4, 1));
  }
  gMmaSplits = 0;
  for (int i = 0; i < 3; ++i)
    launchRows<bf16>(w.params(i, 1, 1));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::printf("profiled launches done\n");
}

/// Device-to-device copy rate (bytes read + written), the practical ceiling.
void timeCopy() {
  const size_t bytes = size_t(1) << 30;
  void *a = nullptr, *b = nullptr;
  CUDA_CHECK(cudaMalloc(&a, bytes));
  CUDA_CHECK(cudaMalloc(&b, bytes));
  CUDA_CHECK(cudaMemset(a, 1, bytes));
  CUDA_CHECK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < 10; ++i)
    CUDA_CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("device-to-device copy: %.0f GB/s (read + write)\n", 2.0 * bytes * 10 / ms / 1e6);
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  (void)cudaFree(a);
  (void)cudaFree(b);
}

} // namespace

#endif // INFER_CODEGEN_CUDA_TESTS_GEMVTIMING_CUH
