//===- RuntimeOptions.h - the cuda backend's INFER_* switches ---*- C++ -*-===//
//
// Every environment variable the cuda backend reads (docs/cli.md,
// "Environment variables"), parsed and checked in one place when an
// artifact is loaded. They change how a step is run (graphs, launch
// overlap, which of the recorded kernels a step's size takes, GEMM tuning),
// never which fusions exist: the compile decides those (docs/exec.md).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_RUNTIMEOPTIONS_H
#define INFER_RUNTIME_CUDA_RUNTIMEOPTIONS_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infer::cuda {

/// Programmatic dependent launch (INFER_PDL): in no step, decode steps
/// (T <= kGemvMaxRows, the default) or every step.
enum class ProgrammaticLaunch { Off, Decode, All };

struct RuntimeOptions {
  bool graphs = true;        ///< INFER_CUDA_GRAPHS=0: every step launch by launch
  bool prefillGraphs = true; ///< INFER_PREFILL_GRAPHS=0: prefill steps never captured
  bool uploadStream = true;  ///< INFER_UPLOAD_STREAM=0: uploads and copies on the step's stream
  ProgrammaticLaunch programmaticLaunch = ProgrammaticLaunch::Decode; ///< INFER_PDL=0 / 1
  /// INFER_SMEM_CARVEOUT: the carveout (percent) every kernel asks for; -1
  /// leaves each the driver's choice.
  int sharedCarveout = 100;
  /// INFER_PROFILE_STEPS=a,b,...: step calls (1-based) run launch by launch
  /// with the time by launch kind printed.
  std::vector<int64_t> profiledSteps;
  /// What was given but ignored (INFER_GEMM_TUNE*, which the tuning records of
  /// `infer-compile --tune` replaced; INFER_GEMV_MMA_MIN, which exec.gemm's
  /// mma_gemv decides), for stderr.
  std::vector<std::string> warnings;
};

/// The options from `environment` (a getenv: null for unset variables); an
/// invalid-argument error naming the variable, its value and what it takes.
StatusOr<RuntimeOptions>
parseRuntimeOptions(const std::function<const char *(const char *)> &environment);

/// parseRuntimeOptions of this process's environment.
StatusOr<RuntimeOptions> runtimeOptionsFromEnvironment();

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_RUNTIMEOPTIONS_H
