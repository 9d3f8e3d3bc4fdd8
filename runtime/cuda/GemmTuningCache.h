//===- GemmTuningCache.h - cuBLASLt algorithms kept across processes -*- C++ -*-===//
//
// GemmRunner times cuBLASLt's candidate algorithms at a GEMM shape's first
// launch and keeps the fastest. Timing is noisy, so two processes could keep
// different algorithms (different summation orders, so different bits: greedy
// ids of a random-weight model differed between runs; bench/results/
// tinyllama-1.1b-serving.md, "Session 22"), and every process paid for the
// timing. The tuning cache keeps each choice in a JSON file per GPU and
// cuBLASLt version, so later processes take it without timing: the same
// algorithm, the same bits, on every run after the first.
//
//   $INFER_CACHE_DIR (else $XDG_CACHE_HOME/infer, else $HOME/.cache/infer)
//     gemm-tuning.json: {"format": 1, "devices": {"<device key>":
//                        {"<shape key>": "<algorithm: 128 hex digits>", ...}}}
//
// INFER_GEMM_TUNING_CACHE=0 turns it off. A file that is missing, unreadable
// or malformed counts as empty; writes go to a temporary file renamed into
// place and merge what other processes wrote meanwhile (theirs win where both
// tuned a shape, so every later process agrees with the file). Plain C++: the
// algorithm is its 64 opaque bytes (cublasLtMatmulAlgo_t's data, which
// cuBLASLt documents as serializable for the same library version).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_GEMMTUNINGCACHE_H
#define INFER_RUNTIME_CUDA_GEMMTUNINGCACHE_H

#include "runtime/base/Status.h"

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace infer::cuda {

/// cublasLtMatmulAlgo_t's bytes.
using GemmAlgorithmBytes = std::array<uint64_t, 8>;

class GemmTuningCache {
public:
  /// The cache file for these environment values (each may be null): the
  /// file in cacheDir, else xdgCacheHome/infer, else home/.cache/infer; none
  /// when all are unset or empty.
  static std::optional<std::string> pathFor(const char *cacheDir, const char *xdgCacheHome,
                                            const char *home);

  /// The cache at `path` for `deviceKey` (the GPU, its multiprocessors and
  /// the cuBLASLt version): reads the file once (what it holds for the key).
  GemmTuningCache(std::string path, std::string deviceKey);

  /// The algorithm kept for `shapeKey`, if any.
  std::optional<GemmAlgorithmBytes> find(const std::string &shapeKey) const;

  /// Keeps `algorithm` for `shapeKey` and writes the file (merged with what
  /// it holds now; the file's entry wins where both have the shape, and is
  /// what find() returns afterwards). Returns why the file could not be
  /// written; the entry is kept in memory either way.
  Status remember(const std::string &shapeKey, const GemmAlgorithmBytes &algorithm);

  const std::string &path() const { return path_; }

private:
  std::string path_, deviceKey_;
  std::map<std::string, GemmAlgorithmBytes> entries_;
};

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_GEMMTUNINGCACHE_H
