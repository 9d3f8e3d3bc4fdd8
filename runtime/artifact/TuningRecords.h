//===- TuningRecords.h - GEMM tuning records: shapes, buckets, report -*- C++ -*-===//
//
// What a tuning record is keyed by: the element type, k, n, the step's
// tokens (rounded up to a power of two: the bucket one record covers), the
// weight's layout and the epilogues. No CUDA here: the compile's tuning
// database and `infer-run info` use it too.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_ARTIFACT_TUNINGRECORDS_H
#define INFER_RUNTIME_ARTIFACT_TUNINGRECORDS_H

#include "runtime/artifact/ArtifactFormat.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace infer::artifact {

struct GemmShape {
  ElementType type = ELEMENT_TYPE_UNSPECIFIED;
  int64_t k = 0, n = 0, tokens = 0;
  bool transposed = false, bias = false, residual = false;
  /// E4M3 weight and inputs with outer-vector scales (CudaLaunch.fp8_gemm);
  /// such shapes run cuBLASLt's heuristic and have no tuning records.
  bool fp8 = false;

  /// The same shape with tokens rounded up to a power of two: the bucket a
  /// tuning record covers.
  GemmShape bucket() const;
  /// "bf16 k2048 n2560 T16 nk bias0 residual1" (no T when tokens is 0).
  std::string key() const;
  auto tied() const { return std::tie(type, k, n, tokens, transposed, bias, residual, fp8); }
  bool operator<(const GemmShape &other) const { return tied() < other.tied(); }
  bool operator==(const GemmShape &other) const { return tied() == other.tied(); }
};

/// The smallest power of two at least `value` (1 for value <= 1).
int64_t powerOfTwoAtLeast(int64_t value);

/// The record's shape, and a record of `shape` with no algorithm yet.
GemmShape shapeOf(const GemmTuningRecord &record);
GemmTuningRecord recordOf(const GemmShape &shape);

/// A cuBLASLt GEMM shape of an artifact's programs (tokens 0) and how many
/// launches of the step program (else the forward program) have it.
struct GemmUse {
  GemmShape shape;
  int launches = 0;
};

/// Every GEMM shape the cuda backend may run through cuBLASLt: the GEMM
/// launches of both programs and the QUANTIZED_GEMMs whose large steps run a
/// dequantized weight (transposed). In a fixed order.
std::vector<GemmUse> gemmUses(const Manifest &manifest);

/// The token buckets a compile tunes: 1, 2, 4, ... up to the first power of
/// two at least the largest step (max_batch_tokens, else the forward
/// program's bound).
std::vector<int64_t> tokenBuckets(const Manifest &manifest);

/// What a compile tunes: every shape of gemmUses at every token bucket, in
/// the order of both.
std::vector<GemmShape> gemmBuckets(const Manifest &manifest);

/// Records well formed: a 64-byte algorithm, a 16-/32-bit float type, k and n
/// in range, a power-of-two bucket, finite times, no shape twice in a set.
Status checkTuningRecords(const TuningRecords &records);

/// A table: per record (shape, launches of it, heuristic and tuned
/// microseconds), then per bucket the sum over the program's GEMM launches
/// at that step size, heuristic against tuned.
std::string tuningReport(const Manifest &manifest, const TuningRecords &records);

} // namespace infer::artifact

#endif // INFER_RUNTIME_ARTIFACT_TUNINGRECORDS_H
