//===- StepCosts.h - the GEMM bytes and FLOPs of a step, for the roofline -===//
//
// `infer-run bench` quotes each run beside the H200 floor (DESIGN.md):
// every step streams all GEMM weights once (bytes / 4.3 TB/s; a quantized
// GEMM's quantized bytes and scales) and does two
// FLOPs per multiply-add (FLOPs / 790 TFLOP/s, the bf16 tensor-core peak);
// a step can be no faster than the larger of the two. Attention, the KV
// reads and the non-GEMM launches are left out, so the floor is a lower
// bound on the step's time and the ceiling it gives is an upper bound.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_EXEC_STEPCOSTS_H
#define INFER_RUNTIME_EXEC_STEPCOSTS_H

#include "runtime/artifact/artifact.pb.h"

#include <cstdint>

namespace infer::exec {

inline constexpr double kHbmBytesPerSecond = 4.3e12;    ///< H200 HBM3e
inline constexpr double kDenseFlopsPerSecond = 790e12;  ///< H200 bf16 dense, tensor cores

struct StepCosts {
  int64_t gemmWeightBytes = 0; ///< all GEMM weights, each read once per step
  int64_t macsPerToken = 0;    ///< k * n of the GEMMs that run for every token
  int64_t macsPerLogitRow = 0; ///< k * n of those that run per logit row (the LM head)
};

/// The GEMM launches of `program` (weights in `manifest`).
StepCosts stepCosts(const artifact::Manifest &manifest, const artifact::ExecProgram &program);

/// The floor of one step of `tokens` tokens and `logitRows` logit rows.
double stepFloorSeconds(const StepCosts &costs, int64_t tokens, int64_t logitRows);

} // namespace infer::exec

#endif // INFER_RUNTIME_EXEC_STEPCOSTS_H
