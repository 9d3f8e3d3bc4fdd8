//===- GemvTestLaunch.cuh - gemv_test's launchers and shared operands ---===//
//
// For gemv_test.cu (one translation unit): the kernels it instantiates, the
// split-k workspace and counters every infer_gemv launch shares, and a
// launcher per decode GEMV (infer_gemv, infer_gemv_rows in its one-row and
// multi-row forms, infer_gemv_rows_mma) with the geometry the runtime gives
// it, plain or as a programmatic dependent launch.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_TESTS_GEMVTESTLAUNCH_CUH
#define INFER_CODEGEN_CUDA_TESTS_GEMVTESTLAUNCH_CUH

#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "codegen/cuda/kernels/GemvRowsMma.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
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
template __global__ void infer_gemv_rows_mma<__nv_bfloat16, 0, 1>(GemvParams);
template __global__ void infer_gemv_rows_mma<__nv_bfloat16, 0, 8>(GemvParams);
template __global__ void infer_gemv_rows_mma<__nv_bfloat16, 1, 1>(GemvParams);
template __global__ void infer_gemv_rows_mma<__nv_bfloat16, 1, 8>(GemvParams);
template __global__ void infer_gemv_rows_mma<__half, 0, 1>(GemvParams);
template __global__ void infer_gemv_rows_mma<__half, 0, 8>(GemvParams);
template __global__ void infer_gemv_rows_mma<__half, 1, 1>(GemvParams);
template __global__ void infer_gemv_rows_mma<__half, 1, 8>(GemvParams);
} // namespace kernels
} // namespace infer

namespace {

using namespace infer::kernels;
using bf16 = __nv_bfloat16;
using infer::kerneltest::allowDynamicShared;
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

/// Launches a kernel of the infer_gemv_rows family (kGemvRowsThreads threads,
/// `shared` bytes of dynamic shared memory, its limit raised first).
inline void launchRowsKernel(void (*kernel)(GemvParams), unsigned grid, size_t shared,
                             const GemvParams &p, bool programmatic, cudaStream_t stream) {
  cudaLaunchAttribute attribute;
  allowDynamicShared(kernel, shared);
  const cudaLaunchConfig_t config =
      launchConfig(dim3(grid, 1, 1), kGemvRowsThreads, shared, stream, programmatic, attribute);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, p));
}

/// infer_gemv_rows<T, p.prologue, false, kRows> over p.rows input rows with
/// gemvRowsGrid()'s geometry, programmatically when asked.
template <typename T, int kRows>
void launchRowsOf(const GemvParams &p, bool programmatic, cudaStream_t stream) {
  auto *kernel = p.prologue == 1   ? infer_gemv_rows<T, 1, false, kRows>
                 : p.prologue == 2 ? infer_gemv_rows<T, 2, false, kRows>
                                   : infer_gemv_rows<T, 0, false, kRows>;
  launchRowsKernel(kernel, gemvRowsGrid(p.n), size_t(gemvRowsSharedBytes(p.k, int(sizeof(T)), kRows)),
                   p, programmatic, stream);
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

/// The warps sharing a tile's k that launchRowsMma runs infer_gemv_rows_mma
/// with: 0 = gemvMmaSplits(n), as codegen picks; else 1 or 8 (the
/// correctness cases run both forms, --mma-splits times both).
int gMmaSplits = 0;

/// infer_gemv_rows_mma<T, prologue, splits>.
template <typename T> auto *mmaKernel(int prologue, int splits) {
  if (splits == 1)
    return prologue == 1 ? infer_gemv_rows_mma<T, 1, 1> : infer_gemv_rows_mma<T, 0, 1>;
  return prologue == 1 ? infer_gemv_rows_mma<T, 1, 8> : infer_gemv_rows_mma<T, 0, 8>;
}

/// infer_gemv_rows_mma<T, p.prologue, gMmaSplits or gemvMmaSplits()> (rms_norm
/// or none) with gemvMmaGrid()'s geometry and shared memory for p.rows
/// staged rows.
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
    launchRowsKernel(mmaKernel<T>(p.prologue, gMmaSplits ? gMmaSplits : gemvMmaSplits(p.n)),
                     gemvMmaGrid(p.n), size_t(gemvMmaSharedBytes(p.k, int(sizeof(T)), int(p.rows))),
                     p, programmatic, stream);
  }
}

/// Which decode GEMV a case runs: infer_gemv, infer_gemv_rows (one row, or
/// the multi-row form), infer_gemv_rows_mma.
enum class Kernel { gemv, rows, rowsMma };

const char *kernelName(Kernel kernel) {
  const char *mma = gMmaSplits == 1   ? "infer_gemv_rows_mma<1 split>"
                    : gMmaSplits == 8 ? "infer_gemv_rows_mma<8 splits>"
                                      : "infer_gemv_rows_mma";
  return kernel == Kernel::rows ? "infer_gemv_rows" : kernel == Kernel::rowsMma ? mma : "infer_gemv";
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

} // namespace

#endif // INFER_CODEGEN_CUDA_TESTS_GEMVTESTLAUNCH_CUH
