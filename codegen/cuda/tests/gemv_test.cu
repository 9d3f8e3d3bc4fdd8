//===- gemv_test.cu - infer_gemv against a double reference, and its speed ===//
//
// Runs infer_gemv<T> for f32, bf16 and f16, W [k, n] and [n, k], rows 1..8,
// and infer_gemv_rows<T> (GemvRows.cuh) for bf16 and f16, W [n, k], row 1,
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
// Then times bf16 at rows 1 and 8 on the decode GEMMs of TinyLlama-1.1B and
// Llama-3-8B and their tied LM heads (not asserted): gemvGrid()'s geometry
// per launch over 200 eager launches and inside a graph of 50, as GB/s of
// weight bytes, beside a device-to-device copy. Weights rotate over at least
// two copies totalling >= 768 MB (at most 64 copies) so that L2 (60 MB) does
// not serve them. Then the GEMVs of whole layers in one graph, plainly and
// as programmatic launches with the weight prefetch. The timed kernels ask
// for the runtime's shared-memory carveout (100). Options for manual runs: --small (no large shapes, e.g.
// under compute-sanitizer), --no-timing, --chain-only (of the timing, only
// the layer chains), --sweep (the tile width x split
// sweep gemvShape()'s policy was chosen from).
//
//   nvcc -std=c++17 -O2 -arch=sm_90a -I<repo> -o gemv_test
//       codegen/cuda/tests/gemv_test.cu
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "codegen/cuda/kernels/GemvRowsMma.cuh"

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

namespace infer {
namespace kernels {
template __global__ void infer_gemv<float>(GemvParams);
template __global__ void infer_gemv<__nv_bfloat16>(GemvParams);
template __global__ void infer_gemv<__half>(GemvParams);
template __global__ void infer_gemv_fused<float, 1>(GemvParams);
template __global__ void infer_gemv_fused<float, 2>(GemvParams);
template __global__ void infer_gemv_fused<__nv_bfloat16, 1>(GemvParams);
template __global__ void infer_gemv_fused<__nv_bfloat16, 2>(GemvParams);
template __global__ void infer_gemv_fused<__half, 1>(GemvParams);
template __global__ void infer_gemv_fused<__half, 2>(GemvParams);
template __global__ void infer_gemv_rows<__nv_bfloat16, 0>(GemvParams);
template __global__ void infer_gemv_rows<__nv_bfloat16, 1>(GemvParams);
template __global__ void infer_gemv_rows<__nv_bfloat16, 2>(GemvParams);
template __global__ void infer_gemv_rows<__half, 0>(GemvParams);
template __global__ void infer_gemv_rows<__half, 1>(GemvParams);
template __global__ void infer_gemv_rows<__half, 2>(GemvParams);
template __global__ void infer_gemv_rows<__nv_bfloat16, 0, true>(GemvParams);
template __global__ void infer_gemv_rows<__nv_bfloat16, 1, true>(GemvParams);
template __global__ void infer_gemv_rows<__half, 0, true>(GemvParams);
template __global__ void infer_gemv_rows<__half, 1, true>(GemvParams);
template __global__ void infer_gemv_rows_mma<__nv_bfloat16, 0>(GemvParams);
template __global__ void infer_gemv_rows_mma<__nv_bfloat16, 1>(GemvParams);
template __global__ void infer_gemv_rows_mma<__half, 0>(GemvParams);
template __global__ void infer_gemv_rows_mma<__half, 1>(GemvParams);
} // namespace kernels
} // namespace infer

namespace {

using namespace infer::kernels;
using bf16 = __nv_bfloat16;
using infer::kerneltest::launchConfig;
using i64 = long long;


/// The kernel body with the tile width forced (infer_gemv takes it from the
/// grid); the grid's y is the number of splits.
template <typename T>
__global__ void __launch_bounds__(kGemvThreads) gemvForced(GemvParams p, int warpsN) {
  gemvimpl::gemv<T, 0>(p, warpsN);
}

template <typename T> struct TypeInfo : infer::kerneltest::Element<T> {
  static constexpr double tolerance = infer::kerneltest::pickTolerance<T>(1e-5, 1e-2, 2e-3);
};

/// The workspace and counters every launch shares, sized for the largest n
/// and the most k splits of any launch here (launch() checks).
constexpr i64 kMaxN = 128256;
constexpr i64 kMaxSplits = 64;
const i64 kWorkspaceFloats = gemvWorkspaceFloats(kMaxN, kMaxSplits);
float *gWorkspace = nullptr;
unsigned *gCounters = nullptr;
int gFailures = 0;

/// Parameters of a plain GEMV over the shared workspace and counters.
GemvParams gemvParams(const void *input, const void *weight, void *output, i64 rows, i64 k,
                      i64 n, int transposed) {
  GemvParams p{};
  p.input = input;
  p.weight = weight;
  p.output = output;
  p.workspace = gWorkspace;
  p.counters = gCounters;
  p.rows = rows;
  p.k = k;
  p.n = n;
  p.transposed = transposed;
  p.inputRowStride = k;
  return p;
}

/// Launches infer_gemv<T> (infer_gemv_fused<T, p.prologue> with a prologue)
/// with gemvGrid()'s grid for waves of `wave` blocks, as a programmatic
/// dependent launch when `programmatic`.
template <typename T>
void launchEx(const GemvParams &p, bool programmatic, cudaStream_t stream,
              i64 wave = kGemvResidentBlocks) {
  const GemvGrid g = gemvGrid(p.k, p.n, p.transposed, wave);
  cudaLaunchAttribute attribute;
  const cudaLaunchConfig_t config =
      launchConfig(dim3(g.x, g.y, g.z), kGemvThreads, 0, stream, programmatic, attribute);
  if (p.prologue == 1)
    CUDA_CHECK(cudaLaunchKernelEx(&config, infer_gemv_fused<T, 1>, p));
  else if (p.prologue == 2)
    CUDA_CHECK(cudaLaunchKernelEx(&config, infer_gemv_fused<T, 2>, p));
  else
    CUDA_CHECK(cudaLaunchKernelEx(&config, infer_gemv<T>, p));
}

/// infer_gemv_rows<T, p.prologue, false, kRows> over p.rows input rows with
/// gemvRowsGrid()'s geometry, programmatically when asked.
template <typename T, int kRows>
void launchRowsOf(const GemvParams &p, bool programmatic, cudaStream_t stream) {
  cudaLaunchAttribute attribute;
  const size_t shared = size_t(gemvRowsSharedBytes(p.k, int(sizeof(T)), kRows));
  auto *kernel = p.prologue == 1   ? infer_gemv_rows<T, 1, false, kRows>
                 : p.prologue == 2 ? infer_gemv_rows<T, 2, false, kRows>
                                   : infer_gemv_rows<T, 0, false, kRows>;
  if (shared > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(shared)));
  const cudaLaunchConfig_t config = launchConfig(dim3(gemvRowsGrid(p.n), 1, 1), kGemvRowsThreads,
                                                 shared, stream, programmatic, attribute);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, p));
}

/// Launches infer_gemv_rows over [n, k] weights: the one-row kernel for one
/// input row, the multi-row one (kRows kGemvRowsMultiRows, the instantiation
/// codegen names) for 2 .. kGemvRowsMultiRows, its whole capacity (the
/// runtime runs it up to kGemvRowsMultiRowsRun rows).
template <typename T>
void launchRows(const GemvParams &p, bool programmatic = false, cudaStream_t stream = 0) {
  if constexpr (sizeof(T) != 2) {
    std::fprintf(stderr, "infer_gemv_rows has no %zu-byte kernel\n", sizeof(T));
    std::abort();
  } else if (p.rows == 1) {
    launchRowsOf<T, 1>(p, programmatic, stream);
  } else if (p.rows <= kGemvRowsMultiRows) {
    launchRowsOf<T, kGemvRowsMultiRows>(p, programmatic, stream);
  } else {
    std::fprintf(stderr, "infer_gemv_rows takes at most %d rows\n", kGemvRowsMultiRows);
    std::abort();
  }
}

/// infer_gemv_rows_mma<T, p.prologue> (rms_norm or none) with gemvMmaGrid()'s
/// geometry and shared memory for p.rows staged rows.
template <typename T>
void launchRowsMma(const GemvParams &p, bool programmatic = false, cudaStream_t stream = 0) {
  if constexpr (sizeof(T) != 2) {
    std::fprintf(stderr, "infer_gemv_rows_mma has no %zu-byte kernel\n", sizeof(T));
    std::abort();
  } else {
    if (p.rows < 1 || p.rows > gemvMmaMaxRows(p.k, p.n, p.transposed, int(sizeof(T))) ||
        p.prologue == 2) {
      std::fprintf(stderr, "infer_gemv_rows_mma does not run %lld rows of k = %lld (prologue %d)\n",
                   p.rows, p.k, p.prologue);
      std::abort();
    }
    cudaLaunchAttribute attribute;
    const size_t shared = size_t(gemvMmaSharedBytes(p.k, int(sizeof(T)), int(p.rows)));
    auto *kernel = p.prologue == 1 ? infer_gemv_rows_mma<T, 1> : infer_gemv_rows_mma<T, 0>;
    if (shared > 48 * 1024)
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      int(shared)));
    const cudaLaunchConfig_t config = launchConfig(dim3(gemvMmaGrid(p.n), 1, 1), kGemvRowsThreads,
                                                   shared, stream, programmatic, attribute);
    CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, p));
  }
}

/// Which decode GEMV a case runs: infer_gemv, infer_gemv_rows (one row, or
/// the multi-row form), infer_gemv_rows_mma.
enum class Kernel { gemv, rows, rowsMma };

const char *kernelName(Kernel kernel) {
  return kernel == Kernel::rows ? "infer_gemv_rows"
         : kernel == Kernel::rowsMma ? "infer_gemv_rows_mma"
                                     : "infer_gemv";
}

/// The split-k workspace infer_gemv's launch by launch() uses.
i64 workspaceFloatsOf(const GemvParams &p, int warpsN, unsigned splits) {
  return gemvWorkspaceFloats(p.n, warpsN ? splits : gemvGrid(p.k, p.n, p.transposed).y);
}

/// warpsN 0: infer_gemv with gemvGrid(); else gemvForced with that tile
/// width and `splits` splits.
template <typename T>
void launch(const GemvParams &p, int warpsN = 0, unsigned splits = 1, cudaStream_t stream = 0) {
  if (workspaceFloatsOf(p, warpsN, splits) > kWorkspaceFloats) {
    std::fprintf(stderr, "gemv_test: n=%lld with %u splits needs a larger workspace\n", p.n,
                 splits);
    std::abort();
  }
  if (warpsN == 0) {
    const GemvGrid g = gemvGrid(p.k, p.n, p.transposed);
    if (p.prologue == 1)
      infer_gemv_fused<T, 1><<<dim3(g.x, g.y, g.z), kGemvThreads, 0, stream>>>(p);
    else if (p.prologue == 2)
      infer_gemv_fused<T, 2><<<dim3(g.x, g.y, g.z), kGemvThreads, 0, stream>>>(p);
    else
      infer_gemv<T><<<dim3(g.x, g.y, g.z), kGemvThreads, 0, stream>>>(p);
  } else {
    const i64 tile = i64(gemvWarpColumns(p.transposed)) * warpsN;
    const dim3 grid(unsigned((p.n + tile - 1) / tile), splits, 1);
    gemvForced<T><<<grid, kGemvThreads, 0, stream>>>(p, warpsN);
  }
  CUDA_CHECK(cudaGetLastError());
}

/// True when every counter reads zero (the workspace needs no initial values).
bool countersClean() {
  std::vector<unsigned> counters(size_t(gemvCounters(kMaxN)));
  CUDA_CHECK(cudaMemcpy(counters.data(), gCounters, counters.size() * sizeof(unsigned),
                        cudaMemcpyDeviceToHost));
  return std::all_of(counters.begin(), counters.end(), [](unsigned v) { return v == 0u; });
}

/// Fills the first `floats` of the split-k workspace with the byte `garbage`.
void soilWorkspace(int garbage, i64 floats = kWorkspaceFloats) {
  CUDA_CHECK(cudaMemset(gWorkspace, garbage, size_t(floats) * sizeof(float)));
}

/// Device copy of host values, `offset` elements into its allocation.
template <typename T> struct DeviceArray {
  void *base = nullptr;
  T *data = nullptr;
  DeviceArray(const std::vector<T> &host, int offset) {
    CUDA_CHECK(cudaMalloc(&base, (host.size() + 1) * sizeof(T)));
    data = static_cast<T *>(base) + offset;
    CUDA_CHECK(cudaMemcpy(data, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceArray() { (void)cudaFree(base); } // nothing to do about a failed free in a test
};

std::mt19937_64 rng(20261130);

/// n values uniform in [-1, 1), rounded to T; `values` gets them as double.
template <typename T> std::vector<T> randomValues(size_t n, std::vector<double> &values) {
  return infer::kerneltest::randomElements<T>(n, rng, &values);
}

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
  // infer_gemv_rows_mma: every row count it takes, bias and residual.
  if (!misaligned)
    for (int rows = 1; rows <= gemvMmaMaxRows(k, n, transposed, int(sizeof(T))); ++rows)
      for (int combo = 0; combo < 4; ++combo) {
        if (large && combo != rows % 4)
          continue;
        failed += cases.run(rows, combo & 1, combo & 2, 0, 1, Kernel::rowsMma) ? 0 : 1;
      }
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
    testPrologue<T>(1, 64, 128, 1, Kernel::rowsMma);
    testPrologue<T>(1, 2048, 2560, 1, Kernel::rowsMma);
    testPrologue<T>(1, 264, 37, 1, Kernel::rowsMma);
    testPrologue<T>(1, 14336, 300, 1, Kernel::rowsMma);
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

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

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

/// Milliseconds per launch over `reps` eager launches on the legacy stream.
double eagerMs(const TimedWeights &w, int rows, int transposed, int warpsN, unsigned splits,
               int reps) {
  for (int i = 0; i < 3; ++i)
    launch<bf16>(w.params(i, rows, transposed), warpsN, splits);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  for (int i = 0; i < reps; ++i)
    launch<bf16>(w.params(i, rows, transposed), warpsN, splits);
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return double(ms) / reps;
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
  prefer(infer_gemv_rows_mma<bf16, 0>);
  prefer(infer_gemv_rows_mma<bf16, 1>);
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

/// Options (none in CTest): --probe stops after finding the device, --small
/// skips the large shapes, --no-timing skips the timing, --chain-only times
/// only the layer chains, --sweep adds the
/// tuning sweep to it.
int main(int argc, char **argv) {
  bool probe = false, small = false, timing = true, sweep = false, chainOnly = false;
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
    else {
      std::fprintf(stderr, "usage: %s [--probe] [--small] [--no-timing] [--chain-only] [--sweep]\n", argv[0]);
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
  for (auto kernel : {infer_gemv_rows_mma<bf16, 0>, infer_gemv_rows_mma<bf16, 1>}) {
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
  for (int transposed : {0, 1}) {
    testProgrammaticLaunch<bf16>(2048, 2560, transposed);
    testProgrammaticLaunch<float>(333, 512, transposed);
  }
  testProgrammaticLaunch<bf16>(2048, 2560, 1, Kernel::rows);
  testProgrammaticLaunch<bf16>(2048, 2560, 1, Kernel::rowsMma);
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
