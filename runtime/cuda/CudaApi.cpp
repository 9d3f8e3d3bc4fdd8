//===- CudaApi.cpp - dlopen of libcuda.so.1 and libcublasLt ---------------===//

#include "runtime/cuda/CudaApi.h"

#include <dlfcn.h>

#include <cstdlib>

#include <mutex>
#include <string>

namespace infer::cuda {
namespace {

// cuda.h maps many names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2);
// stringizing after expansion looks up the symbol the header's types are for.
#define INFER_STRINGIZE_EXPANDED(x) INFER_STRINGIZE(x)
#define INFER_STRINGIZE(x) #x

StatusOr<void *> openFirst(std::initializer_list<const char *> names, const std::string &what) {
  std::string tried;
  for (const char *name : names) {
    if (void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))
      return handle;
    tried += std::string(tried.empty() ? "" : "; ") + dlerror();
  }
  return failedPreconditionError("the cuda backend is unavailable: cannot load " + what + " (" +
                                 tried + ")");
}

StatusOr<CudaApi> load() {
  CudaApi api;
  ASSIGN_OR_RETURN(void *driver, openFirst({"libcuda.so.1", "libcuda.so"}, "the NVIDIA driver"));
  ASSIGN_OR_RETURN(void *cublasLt,
                   openFirst({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                              "/usr/local/cuda/lib64/libcublasLt.so.13"},
                             "cuBLASLt"));
#define INFER_LOAD(library, name)                                                                 \
  api.name = reinterpret_cast<decltype(api.name)>(                                                \
      dlsym(library, INFER_STRINGIZE_EXPANDED(name)));                                            \
  if (!api.name)                                                                                  \
    return failedPreconditionError(std::string("the cuda backend is unavailable: ") +            \
                                   INFER_STRINGIZE_EXPANDED(name) + " is missing");
#define INFER_LOAD_DRIVER(name) INFER_LOAD(driver, name)
#define INFER_LOAD_CUBLASLT(name) INFER_LOAD(cublasLt, name)
  INFER_CUDA_DRIVER_FUNCTIONS(INFER_LOAD_DRIVER)
  INFER_CUBLASLT_FUNCTIONS(INFER_LOAD_CUBLASLT)
#undef INFER_LOAD
  CUresult result = api.cuInit(0);
  if (result != CUDA_SUCCESS)
    return driverError(api, result, "cuInit");
  int devices = 0;
  result = api.cuDeviceGetCount(&devices);
  if (result != CUDA_SUCCESS)
    return driverError(api, result, "cuDeviceGetCount");
  if (devices == 0)
    return failedPreconditionError("the cuda backend is unavailable: no CUDA device");
  return api;
}

} // namespace

namespace {

/// `value` (an environment variable's, null when unset) as an integer in
/// [low, high], `fallback` when unset; else an error naming the variable
/// and saying what it takes.
StatusOr<int> integerSetting(const char *name, const char *value, int low, int high,
                             int fallback, const std::string &takes) {
  if (!value)
    return fallback;
  char *end = nullptr;
  const long parsed = std::strtol(value, &end, 10);
  if (end == value || *end != '\0' || parsed < low || parsed > high)
    return invalidArgumentError(std::string(name) + " must be " + takes + ", not '" + value +
                                "'");
  return int(parsed);
}

} // namespace

StatusOr<int> sharedCarveoutSetting(const char *value) {
  constexpr int kDefault = 100; // the same carveout for every kernel (docs/codegen.md)
  return integerSetting("INFER_SMEM_CARVEOUT", value, -1, 100, kDefault, "-1 or 0..100");
}

StatusOr<const CudaApi *> loadCudaApi() {
  static std::once_flag once;
  static StatusOr<CudaApi> *loaded = nullptr;
  std::call_once(once, [] { loaded = new StatusOr<CudaApi>(load()); });
  if (!loaded->ok())
    return loaded->status();
  return &loaded->value();
}

Status driverError(const CudaApi &api, CUresult result, const char *what) {
  const char *message = nullptr;
  if (!api.cuGetErrorString || api.cuGetErrorString(result, &message) != CUDA_SUCCESS)
    message = "unknown error";
  return internalError(std::string("CUDA: ") + what + " failed: " + message + " (" +
                       std::to_string(int(result)) + ")");
}

Status cublasError(const CudaApi &api, cublasStatus_t status, const char *what) {
  const char *message = api.cublasLtGetStatusString ? api.cublasLtGetStatusString(status) : "?";
  return internalError(std::string("cuBLASLt: ") + what + " failed: " + message);
}

} // namespace infer::cuda
