//===- CudaCodegen.h - the exec program's GPU code, compiled with NVRTC ---===//
//
// Called by infer-compile for `--target cuda` after the exec program is
// serialized: picks the kernel of every launch (a template instantiation of
// the hand-written families in kernels/, a generated kernel per
// exec.elementwise region, or cuBLASLt for GEMMs), records its grid, block
// and shared memory, and compiles one CUDA C++ translation unit with NVRTC to
// an sm_90a cubin plus compute_90 PTX, stored as Manifest.cuda. Plain C++
// over the artifact protobuf (no MLIR): the program it sees is exactly what
// the runtime will run.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_CUDACODEGEN_H
#define INFER_CODEGEN_CUDA_CUDACODEGEN_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <string>

namespace infer::codegen {

struct CudaCodegenOptions {
  std::string arch = "sm_90a";
  std::string ptxArch = "compute_90";
  /// NVRTC -lineinfo: source lines in sanitizer and profiler reports, at the
  /// price of a reproducible artifact (NVRTC records the working directory).
  bool lineInfo = false;
};

/// Fills `manifest.cuda` for `manifest.exec`. Errors name the launch and
/// what the cuda backend lacks for it.
Status generateCudaModule(artifact::Manifest &manifest, const CudaCodegenOptions &options = {});

/// The CUDA C++ source of one exec.elementwise launch's kernel, named
/// `kernelName` (exposed for tests).
StatusOr<std::string> generateElementwiseKernel(const artifact::ExecProgram &program,
                                                const artifact::Manifest &manifest,
                                                const artifact::Launch &launch,
                                                const std::string &kernelName);

/// "major.minor" of the NVRTC infer-compile runs with.
std::string nvrtcVersion();

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_CUDACODEGEN_H
