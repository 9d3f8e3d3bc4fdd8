//===- GemmTuner.h - cuBLASLt algorithms timed at compile time --*- C++ -*-===//
//
// `infer-compile --tune` (docs/tuning.md): for every cuBLASLt GEMM shape of
// the artifact's programs and every token bucket (1, 2, 4, ... up to the
// largest step), cuBLASLt's heuristic candidates are each timed on this
// machine's GPU 0 and the fastest becomes a tuning record. The runtime runs
// a record's algorithm and never times anything, so every process on one
// artifact runs the same algorithms and gives the same bits.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_GEMMTUNER_H
#define INFER_CODEGEN_CUDA_GEMMTUNER_H

#include "codegen/cuda/TuningDatabase.h"

#include <functional>
#include <string>

namespace infer::codegen {

/// What --tune says where there is no GPU.
inline constexpr const char *kNoGpuToTune =
    "--tune times GEMMs on this machine's GPU, and there is none usable here; --tuning-db FILE "
    "alone reuses earlier tunings without one";

/// This GPU's records for every GEMM shape and bucket of `manifest`.
/// Records `database` (may be null) holds for this GPU and cuBLASLt are
/// taken without timing; those timed are added to it. `progress` gets a
/// line per shape. An error when there is no GPU or it has too little
/// free memory for the largest shape.
StatusOr<artifact::TuningRecords>
tuneGemms(const artifact::Manifest &manifest, TuningDatabase *database,
          const std::function<void(const std::string &)> &progress);

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_GEMMTUNER_H
