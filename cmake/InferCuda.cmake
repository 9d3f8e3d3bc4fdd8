# The CUDA toolkit (NVRTC, driver API, cuBLASLt) is optional: without it the
# compiler refuses --target cuda and the runtime has only the cpu backend.
# Sets INFER_HAVE_CUDA (and INFER_CUDA_INCLUDE).
if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
  set(CUDAToolkit_ROOT /usr/local/cuda)
endif()
option(INFER_WITH_CUDA "Build codegen and the cuda backend when the CUDA toolkit is found" ON)
if(INFER_WITH_CUDA)
  find_package(CUDAToolkit QUIET)
endif()
if(INFER_WITH_CUDA AND CUDAToolkit_FOUND AND TARGET CUDA::nvrtc AND TARGET CUDA::cublasLt)
  set(INFER_HAVE_CUDA ON)
  list(GET CUDAToolkit_INCLUDE_DIRS 0 INFER_CUDA_INCLUDE)
  message(STATUS "CUDA ${CUDAToolkit_VERSION}: building codegen and the cuda backend")
else()
  set(INFER_HAVE_CUDA OFF)
  message(STATUS "No CUDA toolkit: building without codegen and the cuda backend")
endif()
