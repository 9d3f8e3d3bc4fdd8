//===- Tuning.cpp - infer-compile --tune and --tuning-db ------------------===//

#include "Tuning.h"

#include "runtime/artifact/TuningRecords.h"
#ifdef INFER_HAVE_CUDA
#include "codegen/cuda/GemmTuner.h"
#include "runtime/cuda/CudaApi.h"
#endif

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>

namespace infer::tools {
namespace art = artifact;

Status checkTuningPossible(const TuningOptions &options) {
  if (!options.tune && options.database.empty())
    return okStatus();
#ifndef INFER_HAVE_CUDA
  return failedPreconditionError("this infer-compile was built without the CUDA toolkit: no "
                                 "--tune or --tuning-db");
#else
  if (!options.tune)
    return okStatus();
  StatusOr<const cuda::CudaApi *> api = cuda::loadCudaApi();
  if (!api.ok())
    return failedPreconditionError(codegen::kNoGpuToTune + (" (" + api.status().message() + ")"));
  return okStatus();
#endif
}

#ifdef INFER_HAVE_CUDA
Status addTuningRecords(art::Manifest &manifest, const TuningOptions &options) {
  if (!options.tune && options.database.empty())
    return okStatus();
  std::optional<codegen::TuningDatabase> database;
  if (!options.database.empty()) {
    ASSIGN_OR_RETURN(database, codegen::TuningDatabase::open(options.database));
  }
  const std::vector<art::GemmShape> shapes = art::gemmBuckets(manifest);
  const std::set<art::GemmShape> buckets(shapes.begin(), shapes.end());
  std::vector<art::TuningRecords> sets;
  if (options.tune) {
    const auto start = std::chrono::steady_clock::now();
    ASSIGN_OR_RETURN(
        art::TuningRecords timed,
        codegen::tuneGemms(manifest, database ? &*database : nullptr, [](const std::string &line) {
          std::fprintf(stderr, "%s\n", line.c_str());
        }));
    std::fprintf(stderr, "  tuned in %.1f s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    sets.push_back(std::move(timed));
    if (database)
      RETURN_IF_ERROR(database->save());
  }
  if (database) // the file's other GPUs (with --tune, this GPU's set is the one just made)
    for (art::TuningRecords &set : database->select(buckets))
      if (sets.empty() || set.device() != sets[0].device() ||
          set.cublaslt_version() != sets[0].cublaslt_version())
        sets.push_back(std::move(set));
  if (sets.empty())
    std::fprintf(stderr,
                 "warning: %s holds no tuning records for this program's %zu GEMM shape "
                 "buckets; cuBLASLt's heuristic algorithms will run\n",
                 options.database.c_str(), buckets.size());
  for (art::TuningRecords &set : sets) {
    std::fprintf(stderr, "%s", art::tuningReport(manifest, set).c_str());
    *manifest.add_tuning() = std::move(set);
  }
  return okStatus();
}
#endif

} // namespace infer::tools
