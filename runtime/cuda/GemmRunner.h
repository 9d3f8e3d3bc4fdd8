//===- GemmRunner.h - exec GEMM launches as cuBLASLt matmuls ----*- C++ -*-===//
//
// Runs GEMM launches through cuBLASLt (GemmPlan.h: the layouts, epilogues
// and compute types). The descriptors are cached per shape and shared by
// every launch of that shape. The algorithm is the artifact's tuning record
// for this GPU and the step's token-count bucket (`infer-compile --tune`,
// docs/tuning.md) where cuBLASLt accepts it for the step's size, else the
// first of cuBLASLt's heuristic. Nothing is timed here: one artifact runs the
// same algorithms, and so gives the same bits, in every process.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_GEMMRUNNER_H
#define INFER_RUNTIME_CUDA_GEMMRUNNER_H

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/GemmPlan.h"
#include "runtime/exec/LaunchArgs.h"

#include <map>
#include <memory>
#include <string>

namespace infer::cuda {

/// The device key tuning records are matched by: "NVIDIA H200, 132 SMs".
std::string tuningDeviceKey(const std::string &deviceName, int multiprocessors);

/// The artifact's record set for `device` and this cuBLASLt version, if any.
const artifact::TuningRecords *tuningRecordsFor(const artifact::Manifest &manifest,
                                                const std::string &device, int64_t cublasLtVersion);

class GemmRunner {
public:
  /// Allocates the workspace and the cuBLASLt handle; takes the algorithms
  /// of `records` (null: none).
  static StatusOr<std::unique_ptr<GemmRunner>> create(const CudaApi &api,
                                                      const artifact::TuningRecords *records);
  ~GemmRunner();

  Status run(const exec::LaunchArgs &args, CUstream stream);
  /// The same with the weight's layout given rather than read from the
  /// launch's transpose_weight (a QUANTIZED_GEMM's dequantized [n, k] weight).
  Status run(const exec::LaunchArgs &args, CUstream stream, bool transposed);
  /// A QUANTIZED_GEMM's step as an FP8 GEMM (CudaLaunch.fp8_gemm): its E4M3
  /// weight and scales, with `inputs` [T, k] E4M3 and their `inputScales`.
  Status runFp8(const exec::LaunchArgs &args, CUstream stream, const void *inputs,
                const float *inputScales);

  /// Launches that ran a tuning record's algorithm, and cuBLASLt's heuristic.
  int64_t tunedPlans() const { return tunedPlans_; }
  int64_t heuristicPlans() const { return heuristicPlans_; }

private:
  struct Plan {
    GemmPlan descriptors;
    cublasLtMatmulAlgo_t algo{};
  };
  explicit GemmRunner(const CudaApi &api) : api_(api) {}
  StatusOr<Plan *> plan(const exec::LaunchArgs &args, bool transposed);
  /// The cached plan of `shape`, else a new one with its algorithm.
  StatusOr<Plan *> planFor(const exec::LaunchArgs &args, const GemmShape &shape);

  const CudaApi &api_;
  cublasLtHandle_t handle_ = nullptr;
  CUdeviceptr workspace_ = 0;
  std::map<GemmShape, Plan> plans_;
  /// The records' algorithms by bucket (GemmShape::bucket()).
  std::map<GemmShape, cublasLtMatmulAlgo_t> records_;
  int64_t tunedPlans_ = 0, heuristicPlans_ = 0;
};

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_GEMMRUNNER_H
