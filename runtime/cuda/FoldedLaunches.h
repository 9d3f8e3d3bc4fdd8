//===- FoldedLaunches.h - launches another launch's kernels may do -*- C++ -*-===//
//
// The step program's fusions are decided in the IR (docs/exec.md, "Kernel
// fusions decided in the IR"); codegen records, on a folding launch's
// CudaLaunch, the index of each launch it may do the work of
// (prologue_launch, epilogue_launch, qkv_gemm_launch). The runtime reads
// them here once, checked against the program, as maps both ways: from a
// folding launch to what it folds, and from a folded launch to who folds it.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_FOLDEDLAUNCHES_H
#define INFER_RUNTIME_CUDA_FOLDEDLAUNCHES_H

#include "runtime/artifact/artifact.pb.h"
#include "runtime/base/Status.h"

#include <vector>

namespace infer::cuda {

struct FoldedLaunches {
  /// Per launch, -1 for none: CudaLaunch.prologue_launch (a GEMM's folded
  /// rms_norm or gated activation, a KV_ATTENTION's rotary),
  /// epilogue_launch (a GEMM's gated activation), qkv_gemm_launch (a
  /// KV_ATTENTION's qkv GEMM).
  std::vector<int> prologue, epilogue, qkvGemm;
  /// Per launch, -1 for none: the launch whose prologue_launch it is, whose
  /// epilogue_launch it is, and (a GEMM) the KV_ATTENTION whose
  /// qkv_gemm_launch it is.
  std::vector<int> prologueOf, epilogueOf, qkvAttentionOf;
};

/// The maps of `program` with its `launches`; a data-loss error naming
/// `path` when a recorded index is out of range, of the wrong kind or
/// order, or claimed twice.
StatusOr<FoldedLaunches>
foldedLaunches(const artifact::ExecProgram &program,
               const google::protobuf::RepeatedPtrField<artifact::CudaLaunch> &launches,
               const std::string &path);

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_FOLDEDLAUNCHES_H
