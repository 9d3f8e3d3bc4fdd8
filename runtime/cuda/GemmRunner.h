//===- GemmRunner.h - exec GEMM launches as cuBLASLt matmuls ----*- C++ -*-===//
//
// out[T, n] = input[T, k] x weight (+ bias) (+ residual), row-major, weight
// [k, n] or [n, k] (transpose_weight). cuBLASLt is column-major, so this runs
// out^T = op(W)^T-as-stored x input^T: A is the weight (m = n features), B the
// input (n = T), C the residual (beta 1) and D the output; the bias is the
// BIAS epilogue. bf16/f16 operands accumulate in fp32; f32 uses the plain
// fp32 compute type (no TF32) so fp32 artifacts stay within 1e-3 of PyTorch.
// The descriptors are cached per shape (type, k, n, T, transpose, epilogues),
// shared by every launch of that shape (the bias pointer is set per call).
// The algorithm is tuned once per shape and power-of-two bucket of T: the
// heuristic's top candidates (up to 8; INFER_GEMM_TUNE=N: up to N) are each
// timed on the first launch's own operands and the fastest is kept for every
// T of the bucket it is valid for (cublasLtMatmulAlgoCheck), so a server's
// many step sizes tune a few times, not once per size (INFER_GEMM_TUNE=0:
// the heuristic's first). Each choice is kept in the tuning cache
// (GemmTuningCache.h), which later processes take it from without timing.
// INFER_GEMM_TUNE_LOG=1 prints each tuning's outcome to stderr.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_GEMMRUNNER_H
#define INFER_RUNTIME_CUDA_GEMMRUNNER_H

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/GemmTuningCache.h"
#include "runtime/cuda/RuntimeOptions.h"
#include "runtime/exec/LaunchArgs.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>
#include <utility>

namespace infer::cuda {

/// cuBLASLt candidates to time per shape bucket for an INFER_GEMM_TUNE
/// setting: null or empty, 8; "0", 1 (the heuristic's first, no timing); "N",
/// N (1 to 64). Anything else sets `warning` and gives 8.
int gemmTuneCandidates(const char *setting, std::string *warning);

class GemmRunner {
public:
  /// Allocates the workspace and the cuBLASLt handle; opens the tuning cache
  /// for `device` (its name and multiprocessors; the cuBLASLt version is
  /// added) unless tuning or the cache is off.
  static StatusOr<std::unique_ptr<GemmRunner>> create(const CudaApi &api, const std::string &device,
                                                      const RuntimeOptions &options);
  ~GemmRunner();

  Status run(const exec::LaunchArgs &args, CUstream stream);
  /// The same with the weight's layout given rather than read from the
  /// launch's transpose_weight (a QUANTIZED_GEMM's dequantized [n, k] weight).
  Status run(const exec::LaunchArgs &args, CUstream stream, bool transposed);

private:
  struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo{};
    /// The heuristic's candidates, timed on the first run (then one is kept).
    std::vector<cublasLtMatmulAlgo_t> candidates;
    bool transposed = false, bias = false, residual = false;
  };
  explicit GemmRunner(const CudaApi &api) : api_(api) {}
  StatusOr<Plan *> plan(const exec::LaunchArgs &args, bool transposed);
  /// Whether cuBLASLt accepts `algo` for the plan's shape within our workspace.
  bool accepts(const Plan &plan, const cublasLtMatmulAlgo_t &algo) const;
  Status matmul(const Plan &plan, const cublasLtMatmulAlgo_t &algo, const exec::LaunchArgs &args,
                CUstream stream);
  /// Times every candidate on the launch's own operands and keeps the fastest.
  Status tune(Plan &plan, const exec::LaunchArgs &args, CUstream stream);

  /// (element type, k, n, T, transposed, bias, residual).
  using ShapeKey = std::tuple<int, int64_t, int64_t, int64_t, bool, bool, bool>;
  /// A bucket's key in the tuning cache ("bf16 k2048 n2560 T16 nk bias0 residual1").
  static std::string cacheKey(const ShapeKey &bucket);

  const CudaApi &api_;
  cublasLtHandle_t handle_ = nullptr;
  CUdeviceptr workspace_ = 0;
  /// Heuristic candidates timed per shape bucket (1: no tuning).
  int tuneCandidates_ = 8;
  /// INFER_GEMM_TUNE_LOG=1: each tuning's outcome on stderr.
  bool logTuning_ = false;
  std::map<ShapeKey, Plan> plans_;
  /// The tuned algorithm by shape with T rounded up to a power of two.
  std::map<ShapeKey, cublasLtMatmulAlgo_t> tuned_;
  /// Tuned algorithms of earlier processes (none when off).
  std::unique_ptr<GemmTuningCache> cache_;
  bool cacheWarned_ = false;
};

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_GEMMRUNNER_H
