//===- Nvrtc.h - compiles the generated CUDA C++ with NVRTC -----*- C++ -*-===//
#ifndef INFER_CODEGEN_CUDA_NVRTC_H
#define INFER_CODEGEN_CUDA_NVRTC_H

#include "runtime/base/Status.h"

#include <map>
#include <string>
#include <vector>

namespace infer::codegen {

struct NvrtcOutput {
  /// The cubin for the real architecture compiled for ("sm_XX"); empty when
  /// compiled for a virtual one ("compute_XX").
  std::string cubin;
  /// The PTX text NVRTC made (on the way to the cubin, for a real architecture).
  std::string ptx;
  /// Name expression -> lowered (mangled) name.
  std::map<std::string, std::string> loweredNames;
  /// Wall seconds the compile took (compileInSeparateProcesses; not part of
  /// the artifact).
  double seconds = 0;
};

/// Compiles `source` (which may include the kernel headers embedded in
/// infer-compile, and CUDA's own headers) for `arch`: a real architecture
/// ("sm_90a") gives both the cubin and its PTX, a virtual one ("compute_90")
/// the PTX alone. Errors
/// carry NVRTC's log. `lineInfo` adds -lineinfo (source lines in
/// compute-sanitizer and profiler reports); NVRTC then records the working
/// directory in the code, so the output depends on where the compiler ran.
StatusOr<NvrtcOutput> compileWithNvrtc(const std::string &source,
                                       const std::vector<std::string> &nameExpressions,
                                       const std::string &arch, bool lineInfo);

/// One NVRTC program: compileWithNvrtc's arguments.
struct NvrtcJob {
  std::string source;
  std::vector<std::string> nameExpressions;
  std::string arch;
  bool lineInfo = false;
};

/// Compiles each job as compileWithNvrtc does, all at once, each in a child
/// process of its own (NvrtcProcesses.cpp says why); results in job order.
/// INFER_NVRTC_PROCESSES=0 compiles them one after another in this process
/// (the same bytes: a check and a fallback).
std::vector<StatusOr<NvrtcOutput>> compileInSeparateProcesses(const std::vector<NvrtcJob> &jobs);

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_NVRTC_H
