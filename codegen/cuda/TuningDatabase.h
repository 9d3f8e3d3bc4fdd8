//===- TuningDatabase.h - tuning records kept across compiles ---*- C++ -*-===//
//
// `infer-compile --tuning-db FILE`: the GEMM tuning records of earlier
// compiles, per GPU and cuBLASLt version, so a compile of the same shapes
// reuses them: with --tune it times only what the file lacks (and adds it),
// without --tune (no GPU needed) it copies every GPU's records for the
// program's shapes into the artifact. JSON:
//
//   {"format": 2, "record_sets": [{"device": "NVIDIA H200, 132 SMs",
//     "cublaslt_version": 130200, "gemm": [{"type": "bf16", "k": 2048,
//     "n": 2560, "tokens": 16, "transposed": true, "bias": false,
//     "residual": true, "algorithm": "<128 hex digits>", "tuned_us": 9.1,
//     "heuristic_us": 9.8, "candidates": 8}, ...]}, ...]}
//
// A missing file is an empty database; a file that is not one is an error
// (it is the user's file: never overwritten unread). save() merges with what
// the file holds by then (its records win, so concurrent compiles agree) and
// renames a temporary into place.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_CODEGEN_CUDA_TUNINGDATABASE_H
#define INFER_CODEGEN_CUDA_TUNINGDATABASE_H

#include "runtime/artifact/TuningRecords.h"

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace infer::codegen {

class TuningDatabase {
public:
  /// The database at `path` (missing: empty).
  static StatusOr<TuningDatabase> open(const std::string &path);

  /// The record kept for `bucket` on `device` with cuBLASLt `version`.
  const artifact::GemmTuningRecord *find(const std::string &device, int64_t version,
                                         const artifact::GemmShape &bucket) const;
  /// Keeps `record` (replacing one of the same shape).
  void add(const std::string &device, int64_t version, const artifact::GemmTuningRecord &record);
  /// Every GPU's records for `buckets`, a set per GPU that has any.
  std::vector<artifact::TuningRecords> select(const std::set<artifact::GemmShape> &buckets) const;
  /// Writes the file; what it holds by now wins where both have a shape.
  Status save();

  const std::string &path() const { return path_; }

private:
  using DeviceKey = std::pair<std::string, int64_t>;
  using Sets = std::map<DeviceKey, std::map<artifact::GemmShape, artifact::GemmTuningRecord>>;
  static StatusOr<Sets> read(const std::string &path);
  std::string path_;
  Sets sets_;
};

} // namespace infer::codegen

#endif // INFER_CODEGEN_CUDA_TUNINGDATABASE_H
