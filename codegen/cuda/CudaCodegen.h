//===- CudaCodegen.h - the exec program's GPU code, compiled with NVRTC ---===//
//
// Called by infer-compile for `--target cuda` after the exec program is
// serialized: picks the kernel of every launch (a template instantiation of
// the hand-written families in kernels/, a generated kernel per
// exec.elementwise region, or cuBLASLt for GEMMs), records its grid, block
// and shared memory, and compiles one CUDA C++ translation unit with NVRTC to
// an sm_90 cubin (plus its compute_90 PTX with --ptx), stored as
// Manifest.cuda. Plain C++
// over the artifact protobuf (no MLIR): the program it sees is exactly what
// the runtime will run.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_CUDACODEGEN_H
#define INFER_CODEGEN_CUDA_CUDACODEGEN_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <string>
#include <vector>

namespace infer::codegen {

/// The most NVRTC programs generateCudaModule compiles an artifact's kernels
/// in (at once, each in a process of its own: NvrtcProcesses.cpp).
constexpr size_t kMaxNvrtcPrograms = 6;

struct CudaCodegenOptions {
  /// The cubin's architecture: sm_90a, for the prefill attention's wgmma
  /// (KvPrefillWgmma.cuh). An sm_90a cubin loads on sm_90 GPUs (H100, H200)
  /// only.
  std::string arch = "sm_90a";
  /// The virtual architecture of the PTX stored with --ptx, which the driver
  /// JIT-compiles where the cubin does not load: a second NVRTC program, as
  /// sm_90a's own PTX would not JIT for later GPUs (kernels built for it take
  /// their paths without the arch-specific instructions).
  std::string ptxArch = "compute_90";
  /// Store that PTX too (infer-compile --ptx). Off by default: NVRTC now and
  /// then numbers a function's virtual registers differently for the same
  /// source (the cubin comes out the same), so an artifact with PTX is not
  /// always byte-for-byte reproducible.
  bool embedPtx = false;
  /// NVRTC -lineinfo: source lines in sanitizer and profiler reports, at the
  /// price of a reproducible artifact (NVRTC records the working directory).
  bool lineInfo = false;
  /// At most this many NVRTC programs for the cubins, compiled side by side
  /// (1 to kMaxNvrtcPrograms; infer-compile --nvrtc-programs). The cubins,
  /// and so the artifact's bytes, differ with it.
  size_t maxPrograms = kMaxNvrtcPrograms;
  /// When set, receives one line per NVRTC program of the cubins: its
  /// seconds and its kernel families ("2.10 s infer_attention,
  /// infer_sample"), longest first (infer-compile prints them: the NVRTC
  /// time of a first compile is the longest program's).
  std::vector<std::string> *programTimes = nullptr;
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

/// Generated elementwise kernels are named this and a number.
inline const std::string kElementwiseKernelPrefix = "infer_elementwise_";

/// Those programs: the kernels' name expressions grouped by family (the
/// template's name; all generated elementwise kernels are one family), the
/// families placed largest first, each on the program with the least work so
/// far. Depends on the expressions alone, never on the machine, so the
/// artifact's bytes do not either. Every expression lands in one program;
/// none is empty.
std::vector<std::vector<std::string>>
groupKernelsIntoPrograms(const std::vector<std::string> &expressions,
                         size_t maxPrograms = kMaxNvrtcPrograms);

/// The kernel family of a name expression: the template's unqualified name
/// (kElementwiseKernelPrefix for every generated elementwise kernel).
std::string kernelFamilyOf(const std::string &expression);

/// "major.minor" of the NVRTC infer-compile runs with.
std::string nvrtcVersion();

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_CUDACODEGEN_H
