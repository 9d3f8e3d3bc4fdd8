//===- CudaApi.h - the CUDA driver and cuBLASLt, loaded at run time -*- C++ -*-===//
//
// infer-run must start (and run the cpu backend) on machines with no NVIDIA
// driver, so it links neither libcuda nor libcublasLt: the cuda backend
// dlopens them on first use and calls through these tables. The types come
// from the toolkit's headers at build time.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_CUDAAPI_H
#define INFER_RUNTIME_CUDA_CUDAAPI_H

#include "runtime/base/Status.h"

#include <cublasLt.h>
#include <cuda.h>

namespace infer::cuda {

#define INFER_CUDA_DRIVER_FUNCTIONS(X)                                                            \
  X(cuInit) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)            \
  X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease)                \
  X(cuCtxSetCurrent) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo) X(cuMemcpyHtoD)                   \
  X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemcpy2DAsync) X(cuMemsetD8Async) X(cuStreamCreate)                  \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuModuleLoadData) X(cuModuleUnload)                 \
  X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) X(cuLaunchKernel) X(cuLaunchKernelEx) X(cuEventCreate)                 \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy)                  \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch)            \
  X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuMemHostAlloc) X(cuMemFreeHost)                 \
  X(cuMemHostGetDevicePointer)

#define INFER_CUBLASLT_FUNCTIONS(X)                                                               \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtMatmulDescCreate)                                \
  X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate)    \
  X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate)                                \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)                      \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulAlgoCheck) X(cublasLtMatmul) X(cublasLtGetStatusString) \
  X(cublasLtGetVersion)

struct CudaApi {
#define INFER_DECLARE(name) decltype(&::name) name = nullptr;
  INFER_CUDA_DRIVER_FUNCTIONS(INFER_DECLARE)
  INFER_CUBLASLT_FUNCTIONS(INFER_DECLARE)
#undef INFER_DECLARE
};

/// The loaded API (libcuda.so.1 and libcublasLt), or why it is unavailable
/// (no driver, no cuBLASLt, cuInit failed). Loaded once per process.
StatusOr<const CudaApi *> loadCudaApi();

/// The shared-memory carveout every kernel of ours asks for, from the value
/// of INFER_SMEM_CARVEOUT (null when unset): 100 by default, -1 for the
/// driver's choice per kernel, 0..100 as given; anything else is an error.
StatusOr<int> sharedCarveoutSetting(const char *value);

/// An error for a failed driver call, with the driver's message.
Status driverError(const CudaApi &api, CUresult result, const char *what);
Status cublasError(const CudaApi &api, cublasStatus_t status, const char *what);

#define INFER_CUDA_STRINGIZE_(x) #x
#define INFER_CUDA_STRINGIZE(x) INFER_CUDA_STRINGIZE_(x)
/// `call` and where it is, for the error message.
#define INFER_CUDA_WHERE(call) #call " at " __FILE__ ":" INFER_CUDA_STRINGIZE(__LINE__)

#define INFER_CU_CHECK(api, call)                                                                 \
  do {                                                                                            \
    CUresult infer_result_ = (call);                                                              \
    if (infer_result_ != CUDA_SUCCESS)                                                            \
      return ::infer::cuda::driverError(api, infer_result_, INFER_CUDA_WHERE(call));              \
  } while (0)

#define INFER_CUBLAS_CHECK(api, call)                                                             \
  do {                                                                                            \
    cublasStatus_t infer_status_ = (call);                                                        \
    if (infer_status_ != CUBLAS_STATUS_SUCCESS)                                                   \
      return ::infer::cuda::cublasError(api, infer_status_, INFER_CUDA_WHERE(call));              \
  } while (0)

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_CUDAAPI_H
