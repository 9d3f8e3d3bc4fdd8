//===- KernelTestSupport.cuh - what every kernel test needs ---------------===//
//
// Host helpers shared by the nvcc-built kernel tests (codegen/cuda/tests):
// the CUDA error check, the element types' names and conversions, a per-type
// tolerance pick, and the device probe that makes a test exit 77 (ctest SKIP)
// on a machine without a GPU.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_TESTS_KERNELTESTSUPPORT_CUH
#define INFER_CODEGEN_CUDA_TESTS_KERNELTESTSUPPORT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

/// Exits 1 with the failed call, where it is and CUDA's message.
#define CUDA_CHECK(expr)                                                                           \
  do {                                                                                             \
    cudaError_t status_ = (expr);                                                                  \
    if (status_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr,                    \
                   cudaGetErrorString(status_));                                                   \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

namespace infer {
namespace kerneltest {

/// An element type's name in reports and its round-to-nearest-even
/// conversions from and to double (host side).
template <typename T> struct Element;
template <> struct Element<float> {
  static constexpr const char *name = "f32";
  static float from(double x) { return float(x); }
  static double value(float x) { return x; }
};
template <> struct Element<__nv_bfloat16> {
  static constexpr const char *name = "bf16";
  static __nv_bfloat16 from(double x) { return __float2bfloat16_rn(float(x)); }
  static double value(__nv_bfloat16 x) { return __bfloat162float(x); }
};
template <> struct Element<__half> {
  static constexpr const char *name = "f16";
  static __half from(double x) { return __float2half_rn(float(x)); }
  static double value(__half x) { return __half2float(x); }
};

/// n values uniform in [lo, hi), rounded to T (the inputs a kernel reads);
/// `values`, when given, gets them back as double for the reference.
template <typename T, typename Rng>
std::vector<T> randomElements(size_t n, Rng &rng, std::vector<double> *values = nullptr,
                              double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> uniform(lo, hi);
  std::vector<T> host(n);
  if (values)
    values->resize(n);
  for (size_t i = 0; i < n; ++i) {
    host[i] = Element<T>::from(uniform(rng));
    if (values)
      (*values)[i] = Element<T>::value(host[i]);
  }
  return host;
}

/// Milliseconds per call of `launch` on `stream` (after two warm-up calls); a
/// launch that failed stops the test.
template <typename Launch> double timeMs(Launch launch, int reps, cudaStream_t stream = 0) {
  for (int i = 0; i < 2; ++i)
    launch();
  CUDA_CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < reps; ++i)
    launch();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  CUDA_CHECK(cudaGetLastError());
  float elapsed = 0;
  CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return double(elapsed) / reps;
}

/// The launch of `grid` x `block` threads on `stream`, with programmatic
/// stream serialization (`attribute`, which must outlive the launch) when
/// `programmatic` (the runtime's programmatic dependent launch).
inline cudaLaunchConfig_t launchConfig(dim3 grid, unsigned block, size_t sharedBytes,
                                       cudaStream_t stream, bool programmatic,
                                       cudaLaunchAttribute &attribute) {
  attribute = cudaLaunchAttribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(block, 1, 1);
  config.dynamicSmemBytes = sharedBytes;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = programmatic ? 1 : 0;
  return config;
}

/// Lets `kernel` launch with `bytes` of dynamic shared memory. The default
/// limit is 48 KiB less the kernel's static shared memory, so a launch of
/// under 48 KiB can need it raised too (as the runtime does, CudaBackend.cpp).
template <typename Kernel> void allowDynamicShared(Kernel *kernel, size_t bytes) {
  cudaFuncAttributes attributes{};
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (bytes > size_t(attributes.maxDynamicSharedSizeBytes))
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    int(bytes)));
}

/// The tolerance of a test for T, from its three (f32, bf16, f16).
template <typename T> constexpr double pickTolerance(double f32, double bf16, double f16);
template <> constexpr double pickTolerance<float>(double f32, double, double) { return f32; }
template <> constexpr double pickTolerance<__nv_bfloat16>(double, double bf16, double) {
  return bf16;
}
template <> constexpr double pickTolerance<__half>(double, double, double f16) { return f16; }

/// True when a CUDA device is usable; otherwise prints the SKIP line (the
/// test then exits 77).
inline bool haveDevice() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return false;
  }
  return true;
}

/// `count` elements of device memory (at least one), freed with the buffer.
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

/// The argmax word the LM head folds and infer_sample reads for logit x at
/// `id` (Common.cuh's orderKey and argmaxCandidate, written again on the host
/// as the tests' reference): x's order key (NaN lowest, -0 as +0) above ~id,
/// so that the largest word is the lowest id of the largest logit.
inline unsigned long long hostArgmaxWord(float x, unsigned id) {
  unsigned bits;
  std::memcpy(&bits, &x, 4);
  if ((bits << 1) == 0u)
    bits = 0u;
  const unsigned key = std::isnan(x) ? 0u : (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
  return (static_cast<unsigned long long>(key) << 32) | (0xffffffffu - id);
}

} // namespace kerneltest
} // namespace infer

#endif // INFER_CODEGEN_CUDA_TESTS_KERNELTESTSUPPORT_CUH
