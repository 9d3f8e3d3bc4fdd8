//===- Tuning.h - infer-compile --tune and --tuning-db ----------*- C++ -*-===//
//
// The tuning records a compile puts in its artifact (docs/tuning.md): with
// --tune, this GPU's (timed now, or taken from --tuning-db where it has
// them); with --tuning-db alone, every GPU's the file holds for the
// program's shapes (no GPU needed). The report of tuned against heuristic
// times goes to stderr.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TOOLS_INFER_COMPILE_TUNING_H
#define INFER_TOOLS_INFER_COMPILE_TUNING_H

#include "runtime/artifact/ArtifactFormat.h"

#include <string>

namespace infer::tools {

struct TuningOptions {
  bool tune = false;
  std::string database; ///< --tuning-db FILE ("" when not given)
};

/// Why --tune cannot run here (no GPU, no CUDA build), before any work.
Status checkTuningPossible(const TuningOptions &options);

/// Adds the records to `manifest` (its CUDA module already generated; built
/// with the CUDA toolkit only, as is target cuda).
Status addTuningRecords(artifact::Manifest &manifest, const TuningOptions &options);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_COMPILE_TUNING_H
