//===- gemv_test.cu - infer_gemv against a double reference, and its speed ===//
//
// Runs infer_gemv<T> for f32, bf16 and f16, W [k, n] and [n, k], rows 1..8,
// infer_gemv_rows<T> (GemvRows.cuh) for bf16 and f16, W [n, k], rows 1..4,
// and infer_gemv_rows_mma<T> (GemvRowsMma.cuh), rows 1 .. gemvMmaMaxRows,
// the one-row kernel's folded argmax (kArgmax: same bits, the lowest id of
// the largest output, also when tied),
// with and without bias and residual, over odd and round shapes (k = 3,
// n = 5 up to k = 2048, n = 2560), with every operand 16-byte aligned and
// with every operand one element off. Each case runs twice in a row over a
// split-k workspace filled with different garbage (0xff bytes: NaN, then 0x7f:
// 3.4e38) and must give the same bits both times (the splits meet in a fixed
// order, GemvGeometry.h); the second launch must find the counters zeroed
// again, and after each shape all counters must read zero.
// Every tile width and a range of k splits (including empty splits) run
// through the same kernel body as well, and a programmatic (PDL) launch with
// the weight prefetch must wait for a slow producer of its input. The reference sums in double over
// the same rounded inputs; the error is relative to the largest output.
// Outputs start as NaN, rows past `rows` must stay so, and a guard after the
// output must stay intact.
//
// Then (GemvTiming.cuh; the launchers are in GemvTestLaunch.cuh) times bf16
// at rows 1 and 8 on the decode GEMMs of TinyLlama-1.1B and Llama-3-8B and
// their tied LM heads (not asserted): gemvGrid()'s geometry per launch over
// 200 eager launches and inside a graph of 50, as GB/s of weight bytes,
// beside a device-to-device copy. Weights rotate over at least two copies
// totalling >= 768 MB (at most 64 copies) so that L2 (60 MB) does not serve
// them. Then each decode GEMV per shape at the row counts the runtime gives
// it, and the GEMVs of whole layers in one graph, plainly and as
// programmatic launches with the weight prefetch. The timed kernels ask for
// the runtime's shared-memory carveout (100). Options for manual runs:
// --small (no large shapes, e.g. under compute-sanitizer), --no-timing,
// --chain-only (of the timing, only the layer chains), --sweep (the tile
// width x split sweep gemvShape()'s policy was chosen from), --mma-splits
// (infer_gemv_rows_mma per shape and in the layer chain with a tile's k over
// 1 and 8 warps, what gemvMmaSplits() was chosen from), --mma-profile (only
// a few launches of the tensor-core and row GEMVs on one shape, for ncu).
//
//   nvcc -std=c++17 -O2 -arch=sm_90a -I<repo> -o gemv_test
//       codegen/cuda/tests/gemv_test.cu
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/GemvTestLaunch.cuh"
#include "codegen/cuda/tests/GemvTiming.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

/// One shape, type, layout and alignment: operands on the device, the
/// reference products, and the output buffer (kMaxRows x n, then a guard).
template <typename T> class ShapeCases {
public:
  ShapeCases(i64 k, i64 n, int transposed, bool misaligned)
      : k_(k), n_(n), transposed_(transposed), offset_(misaligned ? 1 : 0) {
    std::vector<double> x, w;
    hostX_ = randomValues<T>(size_t(kGemvMaxRows * k), x);
    hostW_ = randomValues<T>(size_t(k * n), w);
    hostBias_ = randomValues<T>(size_t(n), bias_);
    hostResidual_ = randomValues<T>(size_t(kGemvMaxRows * n), residual_);
    dot_.assign(size_t(kGemvMaxRows * n), 0.0);
    for (i64 t = 0; t < kGemvMaxRows; ++t)
      for (i64 kk = 0; kk < k; ++kk) {
        const double xv = x[size_t(t * k + kk)];
        double *row = &dot_[size_t(t * n)];
        for (i64 j = 0; j < n; ++j)
          row[j] += xv * w[size_t(transposed ? j * k + kk : kk * n + j)];
      }
    input_ = new DeviceArray<T>(hostX_, offset_);
    weight_ = new DeviceArray<T>(hostW_, offset_);
    biasDevice_ = new DeviceArray<T>(hostBias_, offset_);
    residualDevice_ = new DeviceArray<T>(hostResidual_, offset_);
    outputBytes_ = size_t(kGemvMaxRows * n) * sizeof(T);
    CUDA_CHECK(cudaMalloc(&outputBase_, outputBytes_ + sizeof(T) + kGuard));
    output_ = static_cast<T *>(outputBase_) + offset_;
  }
  ~ShapeCases() {
    delete input_;
    delete weight_;
    delete biasDevice_;
    delete residualDevice_;
    (void)cudaFree(outputBase_);
  }

  /// Runs one case twice over differently soiled workspaces
  /// (`kernel`; warpsN and splits are infer_gemv's); returns false (and reports) on a
  /// mismatch with the reference or between the two runs' bits.
  bool run(int rows, bool useBias, bool useResidual, int warpsN = 0, unsigned splits = 1,
           Kernel kernel = Kernel::gemv) {
    GemvParams p = gemvParams(input_->data, weight_->data, output_, rows, k_, n_, transposed_);
    p.bias = useBias ? biasDevice_->data : nullptr;
    p.residual = useResidual ? residualDevice_->data : nullptr;
    ++cases_;
    std::vector<unsigned char> first;
    for (int attempt = 0; attempt < 2; ++attempt) {
      soilWorkspace(attempt == 0 ? 0xff : 0x7f, workspaceFloatsOf(p, warpsN, splits));
      CUDA_CHECK(cudaMemset(outputBase_, 0xff, outputBytes_ + sizeof(T) + kGuard));
      if (kernel == Kernel::rows)
        launchRows<T>(p);
      else if (kernel == Kernel::rowsMma)
        launchRowsMma<T>(p);
      else
        launch<T>(p, warpsN, splits);
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<unsigned char> raw(outputBytes_ + kGuard);
      CUDA_CHECK(cudaMemcpy(raw.data(), output_, raw.size(), cudaMemcpyDeviceToHost));
      const size_t written = size_t(rows * n_) * sizeof(T);
      const bool untouched = std::all_of(raw.begin() + long(written), raw.end(),
                                         [](unsigned char c) { return c == 0xff; });
      double maxRef = 0, maxErr = 0;
      for (i64 t = 0; t < rows; ++t)
        for (i64 j = 0; j < n_; ++j) {
          double ref = dot_[size_t(t * n_ + j)];
          if (useBias)
            ref += bias_[size_t(j)];
          if (useResidual)
            ref += residual_[size_t(t * n_ + j)];
          ref = TypeInfo<T>::value(TypeInfo<T>::from(ref));
          T got;
          std::memcpy(&got, raw.data() + size_t(t * n_ + j) * sizeof(T), sizeof(T));
          const double d = std::fabs(TypeInfo<T>::value(got) - ref);
          maxRef = std::max(maxRef, std::fabs(ref));
          maxErr = std::max(maxErr, std::isnan(d) ? INFINITY : d);
        }
      const double error = maxErr / std::max(maxRef, 1e-30);
      worst_ = std::max(worst_, error);
      if (!untouched || !(error <= TypeInfo<T>::tolerance)) {
        std::printf("FAIL %s: %s rows %d bias %d residual %d warpsN %d splits %u run %d: "
                    "max_err %.3e (tol %.0e)%s\n",
                    label().c_str(), kernelName(kernel), rows,
                    int(useBias), int(useResidual), warpsN, splits,
                    attempt + 1, error, TypeInfo<T>::tolerance,
                    untouched ? "" : " [wrote past rows * n]");
        return false;
      }
      if (attempt == 0) {
        first = raw;
      } else if (raw != first) {
        std::printf("FAIL %s: %s rows %d bias %d residual %d warpsN %d splits %u: the second run's "
                    "bits differ from the first's\n",
                    label().c_str(), kernelName(kernel), rows,
                    int(useBias), int(useResidual), warpsN, splits);
        return false;
      }
    }
    return true;
  }

  std::string label() const {
    char text[128];
    std::snprintf(text, sizeof(text), "%s %s k=%lld n=%lld%s", TypeInfo<T>::name,
                  transposed_ ? "[n,k]" : "[k,n]", k_, n_, offset_ ? " misaligned" : "");
    return text;
  }
  int cases() const { return cases_; }
  double worst() const { return worst_; }

private:
  static constexpr size_t kGuard = 64;
  i64 k_, n_;
  int transposed_, offset_;
  std::vector<T> hostX_, hostW_, hostBias_, hostResidual_;
  std::vector<double> bias_, residual_, dot_;
  DeviceArray<T> *input_ = nullptr, *weight_ = nullptr, *biasDevice_ = nullptr,
                 *residualDevice_ = nullptr;
  void *outputBase_ = nullptr;
  T *output_ = nullptr;
  size_t outputBytes_ = 0;
  int cases_ = 0;
  double worst_ = 0;
};

template <typename T> void testShape(i64 k, i64 n, int transposed, bool misaligned) {
  ShapeCases<T> cases(k, n, transposed, misaligned);
  int failed = 0;
  const bool large = k * n > 1000000;
  // The geometry of gemvGrid(): every row count, bias and residual.
  for (int rows = 1; rows <= kGemvMaxRows; ++rows)
    for (int combo = 0; combo < 4; ++combo) {
      if (large && combo != rows % 4)
        continue;
      failed += cases.run(rows, combo & 1, combo & 2) ? 0 : 1;
    }
  // Every tile width with one split, a few, and more than k has chunks for
  // (the last ones empty).
  const i64 chunks = std::max<i64>(1, (k + kGemvSplitRows - 1) / kGemvSplitRows);
  std::vector<unsigned> splits = {1u, 2u, 5u, unsigned(chunks + 1)};
  std::sort(splits.begin(), splits.end());
  splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
  for (int warpsN : {1, 2, 4, 8})
    for (unsigned s : splits)
      for (int rows : {3, 8}) {
        if (large && rows == 3)
          continue;
        failed += cases.run(rows, true, true, warpsN, s) ? 0 : 1;
      }
  // infer_gemv_rows where codegen would pick it (gemvRowsSupported,
  // gemvMultiRowsSupported; the weights are 16-byte aligned in artifacts):
  // one row and 2 .. kGemvRowsMultiRows, bias and residual.
  if (!misaligned && gemvRowsSupported(k, n, transposed, int(sizeof(T))))
    for (int rows = 1; rows <= kGemvRowsMultiRows; ++rows)
      if (rows == 1 || gemvMultiRowsSupported(k, n, transposed, int(sizeof(T))))
        for (int combo = 0; combo < 4; ++combo)
          failed += cases.run(rows, combo & 1, combo & 2, 0, 1, Kernel::rows) ? 0 : 1;
  // infer_gemv_rows_mma: every row count it takes, bias and residual, with
  // a tile's k split over 8 warps and over none.
  if (!misaligned)
    for (int splits : {1, 8}) {
      gMmaSplits = splits;
      for (int rows = 1; rows <= gemvMmaMaxRows(k, n, transposed, int(sizeof(T))); ++rows)
        for (int combo = 0; combo < 4; ++combo) {
          if (large && combo != (rows + splits) % 4)
            continue;
          failed += cases.run(rows, combo & 1, combo & 2, 0, 1, Kernel::rowsMma) ? 0 : 1;
        }
    }
  gMmaSplits = 0;
  const bool clean = countersClean();
  if (!clean) {
    std::printf("FAIL %s: counters not zero afterwards\n", cases.label().c_str());
    ++failed;
  }
  std::printf("%s %-40s %3d cases x2, max_err %.3e (tol %.0e)\n", failed ? "FAIL" : "PASS",
              cases.label().c_str(), cases.cases(), cases.worst(), TypeInfo<T>::tolerance);
  gFailures += failed;
}

/// small: only shapes up to about 1M weights (for runs under compute-sanitizer).
template <typename T> void testType(bool small) {
  // 8 x 5 .. 2056 x 77: row lengths infer_gemv_rows takes in one partial
  // unit, a unit and a partial one, and units plus a remainder.
  const i64 shapes[][2] = {{3, 5},      {100, 37},   {64, 64},  {333, 512}, {1234, 777},
                           {2048, 2560}, {8, 5},     {264, 1000}, {2056, 77}};
  for (int transposed : {0, 1})
    for (const auto &s : shapes)
      for (bool misaligned : {false, true})
        if (!small || s[0] * s[1] <= 1000000)
          testShape<T>(s[0], s[1], transposed, misaligned);
}

/// The fused prologues (GemvParams::prologue): 1 = rms_norm of the input rows
/// (weight offset 0.5, epsilon 1e-5), 2 = silu(gate) * up from a packed
/// [gate | up] row of 2k. The reference computes the prologue in double,
/// rounds it to T as the separate kernels store it, then the dot products.
template <typename T>
void testPrologue(int prologue, i64 k, i64 n, int transposed, Kernel kernel = Kernel::gemv) {
  const bool rowsKernel = kernel == Kernel::rows;
  const i64 stride = prologue == 1 ? k : 2 * k;
  std::vector<double> x, w, g;
  std::vector<T> hostX = randomValues<T>(size_t(kGemvMaxRows * stride), x);
  std::vector<T> hostW = randomValues<T>(size_t(k * n), w);
  std::vector<T> hostG = randomValues<T>(size_t(k), g);
  DeviceArray<T> input(hostX, 0), weight(hostW, 0), normWeight(hostG, 0);
  T *output = nullptr;
  CUDA_CHECK(cudaMalloc(&output, size_t(kGemvMaxRows * n) * sizeof(T)));
  int failed = 0;
  double worst = 0;
  const bool multiRows =
      rowsKernel && gemvMultiRowsSupported(k, n, transposed, int(sizeof(T)));
  const int mmaRows = gemvMmaMaxRows(k, n, transposed, int(sizeof(T)));
  const std::vector<int> rowCounts = kernel == Kernel::rowsMma ? std::vector<int>{1, 3, mmaRows}
                                     : !rowsKernel ? std::vector<int>{1, 5, 8}
                                     : multiRows   ? std::vector<int>{1, 2, kGemvRowsMultiRows}
                                                   : std::vector<int>{1};
  for (int rows : rowCounts) {
    GemvParams p = gemvParams(input.data, weight.data, output, rows, k, n, transposed);
    p.prologue = prologue;
    p.inputRowStride = stride;
    p.normWeight = normWeight.data;
    p.normEpsilon = 1e-5f;
    p.normWeightOffset = 0.5f;
    p.activation = 0;
    p.up = input.data + k;
    p.upRowStride = stride;
    if (rowsKernel)
      launchRows<T>(p);
    else if (kernel == Kernel::rowsMma)
      launchRowsMma<T>(p);
    else
      launch<T>(p);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> got(size_t(rows * n));
    CUDA_CHECK(cudaMemcpy(got.data(), output, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    double maxRef = 0, maxErr = 0;
    for (i64 t = 0; t < rows; ++t) {
      std::vector<double> folded(static_cast<size_t>(k));
      double sum = 0;
      for (i64 i = 0; i < k; ++i)
        sum += x[size_t(t * stride + i)] * x[size_t(t * stride + i)];
      const double inv = 1.0 / std::sqrt(sum / double(k) + 1e-5);
      for (i64 i = 0; i < k; ++i) {
        const double a = x[size_t(t * stride + i)];
        const double v = prologue == 1 ? a * inv * (g[size_t(i)] + 0.5)
                                       : a / (1.0 + std::exp(-a)) * x[size_t(t * stride + k + i)];
        const T rounded = TypeInfo<T>::from(v);
        folded[size_t(i)] = TypeInfo<T>::value(rounded);
      }
      for (i64 j = 0; j < n; ++j) {
        double ref = 0;
        for (i64 i = 0; i < k; ++i)
          ref += folded[size_t(i)] * w[size_t(transposed ? j * k + i : i * n + j)];
        const double d = std::fabs(TypeInfo<T>::value(got[size_t(t * n + j)]) - ref);
        maxRef = std::max(maxRef, std::fabs(ref));
        maxErr = std::max(maxErr, std::isnan(d) ? INFINITY : d);
      }
    }
    const double error = maxErr / std::max(maxRef, 1e-30);
    worst = std::max(worst, error);
    // One ulp of T in a folded input moves a dot product by about that much.
    failed += error <= 2 * TypeInfo<T>::tolerance ? 0 : 1;
  }
  if (!countersClean())
    ++failed;
  std::string counts;
  for (int rows : rowCounts)
    counts += (counts.empty() ? "" : "/") + std::to_string(rows);
  std::printf("%s %s %s prologue %s [%s] k=%lld n=%lld rows %s, max_err %.3e (tol %.0e)\n",
              failed ? "FAIL" : "PASS", TypeInfo<T>::name, kernelName(kernel),
              prologue == 1 ? "rms_norm" : "silu*up", transposed ? "n,k" : "k,n", k, n,
              counts.c_str(), worst, 2 * TypeInfo<T>::tolerance);
  (void)cudaFree(output);
  gFailures += failed;
}

template <typename T> void testPrologues() {
  for (int prologue : {1, 2})
    for (int transposed : {0}) {
      testPrologue<T>(prologue, 64, 128, transposed);
      testPrologue<T>(prologue, 2048, 2560, transposed);
      testPrologue<T>(prologue, 100, 37, transposed);
    }
  if constexpr (sizeof(T) == 2)
    for (int prologue : {1, 2}) {
      testPrologue<T>(prologue, 64, 128, 1, Kernel::rows);
      testPrologue<T>(prologue, 2048, 2560, 1, Kernel::rows);
      testPrologue<T>(prologue, 264, 37, 1, Kernel::rows);
      testPrologue<T>(prologue, 14336, 300, 1, Kernel::rows);
    }
  // infer_gemv_rows_mma folds the rms_norm only (a gated activation runs as
  // its own launch before it).
  if constexpr (sizeof(T) == 2) {
    for (int splits : {1, 8}) {
      gMmaSplits = splits;
      testPrologue<T>(1, 64, 128, 1, Kernel::rowsMma);
      testPrologue<T>(1, 2048, 2560, 1, Kernel::rowsMma);
      testPrologue<T>(1, 264, 37, 1, Kernel::rowsMma);
      testPrologue<T>(1, 14336, 300, 1, Kernel::rowsMma);
    }
    gMmaSplits = 0;
  }
}

/// infer_gemv_rows<T, prologue, true> (gated pairs, CudaLaunch.fuses_next):
/// a GEMV of 2 * half rows over [n, k] weights whose packed [gate | up]
/// output goes through silu(gate) * up, written as `half` values. The
/// reference rounds the inputs (rms_norm prologue 1 in double, rounded to T),
/// each GEMV output (+ bias) and the product to T, as the GEMV and the
/// activation kernel store them; outputs past `half` must stay untouched.
template <typename T> void testGatedPairs(int prologue, i64 k, i64 half, bool useBias) {
  const i64 n = 2 * half;
  std::vector<double> x, w, g, b;
  std::vector<T> hostX = randomValues<T>(size_t(k), x);
  std::vector<T> hostW = randomValues<T>(size_t(k * n), w);
  std::vector<T> hostG = randomValues<T>(size_t(k), g);
  std::vector<T> hostB = randomValues<T>(size_t(n), b);
  DeviceArray<T> input(hostX, 0), weight(hostW, 0), normWeight(hostG, 0), bias(hostB, 0);
  T *output = nullptr;
  const size_t bytes = size_t(n) * sizeof(T);
  CUDA_CHECK(cudaMalloc(&output, bytes));
  CUDA_CHECK(cudaMemset(output, 0xff, bytes));
  GemvParams p = gemvParams(input.data, weight.data, output, 1, k, n, 1);
  p.prologue = prologue;
  p.normWeight = normWeight.data;
  p.normEpsilon = 1e-5f;
  p.normWeightOffset = 0.5f;
  p.activation = 0;
  p.bias = useBias ? bias.data : nullptr;
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      launchConfig(dim3(gemvRowsGrid(n), 1, 1), kGemvRowsThreads,
                   size_t(gemvRowsSharedBytes(k, int(sizeof(T)))), 0, false, attribute);
  CUDA_CHECK(cudaLaunchKernelEx(&config, prologue == 1 ? infer_gemv_rows<T, 1, true>
                                                       : infer_gemv_rows<T, 0, true>,
                                p));
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> raw(bytes);
  CUDA_CHECK(cudaMemcpy(raw.data(), output, bytes, cudaMemcpyDeviceToHost));
  std::vector<double> folded(static_cast<size_t>(k));
  double squares = 0;
  for (i64 i = 0; i < k; ++i)
    squares += x[size_t(i)] * x[size_t(i)];
  const double inv = prologue == 1 ? 1.0 / std::sqrt(squares / double(k) + 1e-5) : 1.0;
  for (i64 i = 0; i < k; ++i)
    folded[size_t(i)] = prologue == 1
                            ? TypeInfo<T>::value(TypeInfo<T>::from(x[size_t(i)] * (g[size_t(i)] + 0.5)))
                            : x[size_t(i)];
  auto rounded = [](double v) { return TypeInfo<T>::value(TypeInfo<T>::from(v)); };
  auto gemvRow = [&](i64 j) {
    double sum = 0;
    for (i64 i = 0; i < k; ++i)
      sum += folded[size_t(i)] * w[size_t(j * k + i)];
    return rounded(sum * inv + (useBias ? b[size_t(j)] : 0.0));
  };
  double maxRef = 0, maxErr = 0;
  for (i64 j = 0; j < half; ++j) {
    const double gate = gemvRow(j), up = gemvRow(j + half);
    const double ref = rounded(gate / (1.0 + std::exp(-gate)) * up);
    T got;
    std::memcpy(&got, raw.data() + size_t(j) * sizeof(T), sizeof(T));
    const double d = std::fabs(TypeInfo<T>::value(got) - ref);
    maxRef = std::max(maxRef, std::fabs(ref));
    maxErr = std::max(maxErr, std::isnan(d) ? INFINITY : d);
  }
  const bool untouched = std::all_of(raw.begin() + long(size_t(half) * sizeof(T)), raw.end(),
                                     [](unsigned char c) { return c == 0xff; });
  const double error = maxErr / std::max(maxRef, 1e-30);
  // The rounded gate and up each carry the GEMV's error into the product.
  const bool failed = !untouched || !(error <= 2 * TypeInfo<T>::tolerance);
  std::printf("%s %s infer_gemv_rows gated pairs prologue %d k=%lld n=2x%lld bias %d, max_err "
              "%.3e (tol %.0e)%s\n",
              failed ? "FAIL" : "PASS", TypeInfo<T>::name, prologue, k, half, int(useBias), error,
              2 * TypeInfo<T>::tolerance, untouched ? "" : " [wrote past n / 2]");
  (void)cudaFree(output);
  gFailures += failed ? 1 : 0;
}

template <typename T> void testGatedPairsShapes() {
  testGatedPairs<T>(1, 64, 64, false);
  testGatedPairs<T>(1, 2048, 5632, false);
  testGatedPairs<T>(0, 264, 37, true);
  testGatedPairs<T>(1, 4096, 300, true);
}

/// The producer of testProgrammaticLaunch: lets its dependents launch at
/// once, waits ~`nanoseconds`, then copies `source` into `input`. A GEMV
/// launched programmatically after it must still read the copied values.
template <typename T>
__global__ void writeInputLate(T *input, const T *source, i64 count, unsigned long long nanoseconds) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
  for (i64 i = threadIdx.x; i < count; i += blockDim.x)
    input[i] = source[i];
}

/// Programmatic dependent launch (Common.cuh, waitForPreviousKernel; the
/// GEMV's weight prefetch before it): the input starts as NaN and is written
/// by a slow producer that releases its dependents first; the GEMV, launched
/// with programmatic stream serialization and prefetchBytes set, must match
/// the reference of the written input. Both layouts, rows 1 and 8.
template <typename T>
void testProgrammaticLaunch(i64 k, i64 n, int transposed, Kernel kernel = Kernel::gemv) {
  std::vector<double> x, w;
  std::vector<T> hostX = randomValues<T>(size_t(kGemvMaxRows * k), x);
  std::vector<T> hostW = randomValues<T>(size_t(k * n), w);
  DeviceArray<T> source(hostX, 0), weight(hostW, 0), input(hostX, 0);
  T *output = nullptr;
  CUDA_CHECK(cudaMalloc(&output, size_t(kGemvMaxRows * n) * sizeof(T)));
  int failed = 0;
  double worst = 0;
  for (int rows : {1, 8}) {
    if (kernel == Kernel::rows && rows > 1)
      break;
    CUDA_CHECK(cudaMemset(input.data, 0xff, size_t(kGemvMaxRows * k) * sizeof(T)));
    CUDA_CHECK(cudaMemset(output, 0xff, size_t(kGemvMaxRows * n) * sizeof(T)));
    CUDA_CHECK(cudaDeviceSynchronize());
    writeInputLate<T><<<1, 256>>>(input.data, source.data, rows * k, 50000ull);
    CUDA_CHECK(cudaGetLastError());
    GemvParams p = gemvParams(input.data, weight.data, output, rows, k, n, transposed);
    p.prefetchBytes = 32 << 10;
    if (kernel == Kernel::rows)
      launchRows<T>(p, /*programmatic=*/true);
    else if (kernel == Kernel::rowsMma)
      launchRowsMma<T>(p, /*programmatic=*/true);
    else
      launchEx<T>(p, /*programmatic=*/true, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> got(size_t(rows * n));
    CUDA_CHECK(cudaMemcpy(got.data(), output, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    double maxRef = 0, maxErr = 0;
    for (i64 t = 0; t < rows; ++t)
      for (i64 j = 0; j < n; ++j) {
        double ref = 0;
        for (i64 kk = 0; kk < k; ++kk)
          ref += x[size_t(t * k + kk)] * w[size_t(transposed ? j * k + kk : kk * n + j)];
        ref = TypeInfo<T>::value(TypeInfo<T>::from(ref));
        const double d = std::fabs(TypeInfo<T>::value(got[size_t(t * n + j)]) - ref);
        maxRef = std::max(maxRef, std::fabs(ref));
        maxErr = std::max(maxErr, std::isnan(d) ? INFINITY : d);
      }
    const double error = maxErr / std::max(maxRef, 1e-30);
    worst = std::max(worst, error);
    failed += error <= TypeInfo<T>::tolerance ? 0 : 1;
  }
  (void)cudaFree(output);
  if (!countersClean())
    ++failed;
  std::printf("%s %s %s: programmatic launch after a slow producer %s k=%lld n=%lld: max_err "
              "%.3e (tol %.0e)\n",
              failed ? "FAIL" : "PASS", TypeInfo<T>::name,
              kernelName(kernel), transposed ? "[n,k]" : "[k,n]", k, n,
              worst, TypeInfo<T>::tolerance);
  gFailures += failed;
}

} // namespace

/// Options (none in CTest): --probe stops after finding the device, --small
/// skips the large shapes, --no-timing skips the timing, --chain-only times
/// only the layer chains, --sweep adds the tuning sweep to it, --mma-splits
/// times the tensor-core GEMV's two forms, --mma-profile only launches a few
/// GEMVs (for ncu).
/// The LM head's folded argmax (infer_gemv_rows<T, prologue, false, 1, true>,
/// GemvParams::argmax) over [n, k] weights whose rows repeat every `period`
/// rows (0: none), so that the largest output is tied between ids: the
/// outputs must be the plain kernel's bits, and the slot (started at 0)
/// must hold the lowest id of the largest output, with that output's key
/// (Sampling.cuh: NaN 0, -0 == +0) above it. A null slot leaves the outputs
/// as they are.
template <typename T, int kPrologue> void testArgmaxFold(i64 k, i64 n, i64 period) {
  std::vector<double> x, w, g;
  std::vector<T> hostX = randomValues<T>(size_t(k), x);
  std::vector<T> hostW = randomValues<T>(size_t(k * n), w);
  std::vector<T> hostG = randomValues<T>(size_t(k), g);
  if (period > 0)
    for (i64 j = period; j < n; ++j)
      std::copy_n(hostW.begin() + (j % period) * k, k, hostW.begin() + j * k);
  DeviceArray<T> input(hostX, 0), weight(hostW, 0), normWeight(hostG, 0);
  T *output = nullptr;
  unsigned long long *slot = nullptr;
  CUDA_CHECK(cudaMalloc(&output, size_t(n) * sizeof(T)));
  CUDA_CHECK(cudaMalloc(&slot, sizeof(unsigned long long)));
  GemvParams p = gemvParams(input.data, weight.data, output, 1, k, n, 1);
  p.prologue = kPrologue;
  p.normWeight = normWeight.data;
  p.normEpsilon = 1e-5f;
  p.normWeightOffset = 0.f;
  const size_t shared = size_t(gemvRowsSharedBytes(k, int(sizeof(T))));
  auto run = [&](auto kernel, unsigned long long *argmax) {
    p.argmax = argmax;
    CUDA_CHECK(cudaMemset(output, 0xff, size_t(n) * sizeof(T)));
    launchRowsKernel(kernel, unsigned(gemvRowsGrid(n)), shared, p, false, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> got(static_cast<size_t>(n));
    CUDA_CHECK(cudaMemcpy(got.data(), output, got.size() * sizeof(T), cudaMemcpyDeviceToHost));
    return got;
  };
  const std::vector<T> plain = run(infer_gemv_rows<T, kPrologue, false, 1, false>, nullptr);
  CUDA_CHECK(cudaMemset(slot, 0, sizeof(unsigned long long)));
  const std::vector<T> folded = run(infer_gemv_rows<T, kPrologue, false, 1, true>, slot);
  const std::vector<T> unslotted = run(infer_gemv_rows<T, kPrologue, false, 1, true>, nullptr);
  unsigned long long got = 0;
  CUDA_CHECK(cudaMemcpy(&got, slot, sizeof(got), cudaMemcpyDeviceToHost));
  // The reference: the lowest id of the largest output, NaN never wins.
  i64 best = 0;
  for (i64 j = 1; j < n; ++j) {
    const double a = TypeInfo<T>::value(plain[size_t(j)]), b = TypeInfo<T>::value(plain[size_t(best)]);
    if (a > b || (std::isnan(b) && !std::isnan(a)))
      best = j;
  }
  i64 ties = 0;
  for (i64 j = 0; j < n; ++j)
    ties += TypeInfo<T>::value(plain[size_t(j)]) == TypeInfo<T>::value(plain[size_t(best)]);
  const unsigned long long want =
      infer::kerneltest::hostArgmaxWord(float(TypeInfo<T>::value(plain[size_t(best)])),
                                        unsigned(best));
  const bool sameBits = std::memcmp(plain.data(), folded.data(), plain.size() * sizeof(T)) == 0 &&
                        std::memcmp(plain.data(), unslotted.data(), plain.size() * sizeof(T)) == 0;
  const bool ok = sameBits && got == want;
  std::printf("%s %s infer_gemv_rows argmax fold, prologue %d, k=%lld n=%lld, rows repeating every "
              "%lld: id %u (want %lld, %lld tied), key %s, outputs %s\n",
              ok ? "PASS" : "FAIL", TypeInfo<T>::name, kPrologue, k, n, period,
              0xffffffffu - unsigned(got), best, ties, got >> 32 == want >> 32 ? "ok" : "WRONG",
              sameBits ? "the plain kernel's bits" : "DIFFER");
  (void)cudaFree(output);
  (void)cudaFree(slot);
  gFailures += ok ? 0 : 1;
}

template <typename T> void testArgmaxFolds() {
  testArgmaxFold<T, 0>(2048, 32000, 0);
  testArgmaxFold<T, 0>(2048, 32000, 4000);
  testArgmaxFold<T, 1>(2048, 32000, 3);
  testArgmaxFold<T, 0>(264, 1000, 0);
  testArgmaxFold<T, 1>(2056, 77, 7);
  testArgmaxFold<T, 0>(8, 5, 1);
}

int main(int argc, char **argv) {
  bool probe = false, small = false, timing = true, sweep = false, chainOnly = false,
       mmaSplits = false, mmaProfile = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--probe"))
      probe = true;
    else if (!std::strcmp(argv[i], "--small"))
      small = true;
    else if (!std::strcmp(argv[i], "--no-timing"))
      timing = false;
    else if (!std::strcmp(argv[i], "--chain-only"))
      chainOnly = true;
    else if (!std::strcmp(argv[i], "--sweep"))
      sweep = true;
    else if (!std::strcmp(argv[i], "--mma-splits"))
      mmaSplits = true;
    else if (!std::strcmp(argv[i], "--mma-profile"))
      mmaProfile = true;
    else {
      std::fprintf(stderr, "usage: %s [--probe] [--small] [--no-timing] [--chain-only] [--sweep] [--mma-splits] [--mma-profile]\n", argv[0]);
      return 2;
    }
  }
  if (!infer::kerneltest::haveDevice())
    return 77;
  if (probe)
    return 0;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  if (mmaProfile) {
    preferRuntimeCarveout();
    profileMma();
    return 0;
  }
  for (auto kernel : {infer_gemv<float>, infer_gemv<bf16>, infer_gemv<__half>,
                      infer_gemv_fused<bf16, 1>, infer_gemv_fused<bf16, 2>}) {
    cudaFuncAttributes attributes;
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kGemvThreads, 0));
    std::printf("infer_gemv: %d registers, %zu bytes static shared, %d blocks per SM\n",
                attributes.numRegs, attributes.sharedSizeBytes, blocks);
  }
  for (auto kernel : {infer_gemv_rows<bf16, 0>, infer_gemv_rows<bf16, 1>, infer_gemv_rows<bf16, 2>,
                      infer_gemv_rows<bf16, 1, true>}) {
    cudaFuncAttributes attributes;
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kGemvRowsThreads,
                                                             size_t(gemvRowsSharedBytes(4096, 2))));
    std::printf("infer_gemv_rows: %d registers, %d blocks per SM at k = 4096\n",
                attributes.numRegs, blocks);
  }
  for (auto kernel : {mmaKernel<bf16>(0, 1), mmaKernel<bf16>(1, 1), mmaKernel<bf16>(0, 8),
                      mmaKernel<bf16>(1, 8)}) {
    cudaFuncAttributes attributes;
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    const int shared = int(gemvMmaSharedBytes(5632, 2, kGemvMmaRows));
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kGemvRowsThreads,
                                                             size_t(shared)));
    std::printf("infer_gemv_rows_mma: %d registers, %zu bytes static shared, %d blocks per SM at "
                "k = 5632, 8 rows\n",
                attributes.numRegs, attributes.sharedSizeBytes, blocks);
  }
  CUDA_CHECK(cudaMalloc(&gWorkspace, size_t(kWorkspaceFloats) * sizeof(float)));
  soilWorkspace(0xff);
  CUDA_CHECK(cudaMalloc(&gCounters, size_t(gemvCounters(kMaxN)) * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(gCounters, 0, size_t(gemvCounters(kMaxN)) * sizeof(unsigned)));

  testType<float>(small);
  testType<bf16>(small);
  testType<__half>(small);
  testPrologues<float>();
  testPrologues<bf16>();
  testPrologues<__half>();
  testGatedPairsShapes<bf16>();
  testGatedPairsShapes<__half>();
  testArgmaxFolds<bf16>();
  testArgmaxFolds<__half>();
  for (int transposed : {0, 1}) {
    testProgrammaticLaunch<bf16>(2048, 2560, transposed);
    testProgrammaticLaunch<float>(333, 512, transposed);
  }
  testProgrammaticLaunch<bf16>(2048, 2560, 1, Kernel::rows);
  for (int splits : {1, 8}) {
    gMmaSplits = splits;
    testProgrammaticLaunch<bf16>(2048, 2560, 1, Kernel::rowsMma);
  }
  gMmaSplits = 0;
  std::printf("%s: %d failed\n", gFailures ? "FAILED" : "correctness OK", gFailures);
  std::fflush(stdout);
  if (!timing) {
    (void)cudaFree(gWorkspace);
    (void)cudaFree(gCounters);
    return gFailures ? 1 : 0;
  }

  preferRuntimeCarveout();
  if (!chainOnly)
    timeCopy();
  struct Shape {
    i64 k, n;
    int transposed;
    const char *model;
  };
  const Shape shapes[] = {{2048, 2560, 0, "tinyllama"},  {2048, 2048, 0, "tinyllama"},
                          {2048, 11264, 0, "tinyllama"}, {5632, 2048, 0, "tinyllama"},
                          {2048, 32000, 0, "tinyllama"}, {4096, 6144, 0, "llama3-8b"},
                          {4096, 4096, 0, "llama3-8b"},  {4096, 28672, 0, "llama3-8b"},
                          {14336, 4096, 0, "llama3-8b"}, {4096, 128256, 0, "llama3-8b"},
                          {2048, 32000, 1, "tied-head"}, {4096, 128256, 1, "tied-head"}};
  for (const Shape &s : shapes)
    if (!chainOnly)
      timeShape(s.k, s.n, s.transposed, s.model, sweep);
  const i64 tinyllamaLayer[][2] = {{2048, 2560}, {2048, 2048}, {2048, 11264}, {5632, 2048}};
  const i64 tinyllamaShapes[][2] = {{2048, 2560}, {2048, 2048}, {2048, 11264}, {5632, 2048},
                                    {2048, 32000}};
  timeRowsShapes(tinyllamaShapes, 5, "tinyllama");
  if (mmaSplits) {
    const i64 llama3Shapes[][2] = {{4096, 6144}, {4096, 4096}, {4096, 28672}, {14336, 4096},
                                   {4096, 128256}};
    for (int splits : {1, 8}) {
      gMmaSplits = splits;
      std::printf("infer_gemv_rows_mma with a tile's k over %d warps:\n", splits);
      timeRowsShapes(tinyllamaShapes, 5, "tinyllama");
      timeRowsShapes(llama3Shapes, 5, "llama3-8b");
      timeLayerChain(tinyllamaLayer, 4, 22, "tinyllama");
    }
    gMmaSplits = 0;
    std::printf("infer_gemv_rows_mma with gemvMmaSplits():\n");
  }
  timeLayerChain(tinyllamaLayer, 4, 22, "tinyllama");
  const i64 llama3Layer[][2] = {{4096, 6144}, {4096, 4096}, {4096, 28672}, {14336, 4096}};
  timeLayerChain(llama3Layer, 4, 8, "llama3-8b");
  if (!countersClean()) {
    std::printf("FAIL: counters not zero after the timing runs\n");
    ++gFailures;
  }
  (void)cudaFree(gWorkspace);
  (void)cudaFree(gCounters);
  std::printf("%s: %d failed\n", gFailures ? "FAILED" : "OK", gFailures);
  return gFailures ? 1 : 0;
}
