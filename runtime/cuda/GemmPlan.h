//===- GemmPlan.h - cuBLASLt descriptors for one GEMM shape -----*- C++ -*-===//
//
// out[T, n] = input[T, k] x weight (+ bias) (+ residual), row-major, weight
// [k, n] or [n, k] (transposed). cuBLASLt is column-major, so this runs
// out^T = op(W)^T-as-stored x input^T: A is the weight (m = n features), B the
// input (n = T), C the residual (beta 1) and D the output; the bias is the
// BIAS epilogue. bf16/f16 operands accumulate in fp32; f32 uses the plain
// fp32 compute type (no TF32) so fp32 artifacts stay within 1e-3 of PyTorch.
// An fp8 shape multiplies E4M3 operands (the weight [n, k]) and scales the
// fp32 sums by the weight row's and the token's scale (outer vectors).
//
// Shared by the runtime's GemmRunner (which runs the algorithm a tuning
// record names, else the heuristic's first) and `infer-compile --tune`
// (codegen/cuda/GemmTuner.h, which times the heuristic's candidates), so
// both see one shape the same way.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CUDA_GEMMPLAN_H
#define INFER_RUNTIME_CUDA_GEMMPLAN_H

#include "runtime/artifact/TuningRecords.h"
#include "runtime/cuda/CudaApi.h"

#include <cstdint>
#include <vector>

namespace infer::cuda {

using artifact::GemmShape;

/// The workspace every GEMM may use (GemmRunner allocates it once).
constexpr size_t kGemmWorkspaceBytes = 32u << 20;
/// cuBLASLt heuristic candidates asked for: the tuner times them all, the
/// runtime without a record runs the first (asked the same way).
constexpr int kGemmHeuristicCandidates = 8;

class GemmPlan {
public:
  /// The descriptors for `shape` (f32, bf16 or f16).
  static StatusOr<GemmPlan> create(const CudaApi &api, cublasLtHandle_t handle,
                                   const GemmShape &shape);
  GemmPlan(GemmPlan &&other) noexcept;
  GemmPlan &operator=(GemmPlan &&) = delete;
  GemmPlan(const GemmPlan &) = delete;
  ~GemmPlan();

  /// cuBLASLt's heuristic candidates that run, best first (at most `count`;
  /// an error when it has none).
  StatusOr<std::vector<cublasLtMatmulAlgo_t>> heuristics(int count) const;
  /// Whether cuBLASLt accepts `algo` for this shape within the workspace.
  bool accepts(const cublasLtMatmulAlgo_t &algo) const;
  /// One matmul; `residual` (beta 1) and `bias` only where the shape has them.
  Status run(const cublasLtMatmulAlgo_t &algo, const void *weight, const void *input,
             const void *residual, const void *bias, void *out, CUdeviceptr workspace,
             CUstream stream) const;

  /// One FP8 matmul (shape().fp8): E4M3 `weight` [n, k] and `input` [T, k]
  /// with their f32 scales, [n] and [T].
  Status runFp8(const cublasLtMatmulAlgo_t &algo, const void *weight, const float *weightScales,
                const void *input, const float *inputScales, const void *residual, const void *bias,
                void *out, CUdeviceptr workspace, CUstream stream) const;

  const GemmShape &shape() const { return shape_; }

private:
  GemmPlan(const CudaApi &api, cublasLtHandle_t handle, const GemmShape &shape)
      : api_(&api), handle_(handle), shape_(shape) {}
  const CudaApi *api_;
  cublasLtHandle_t handle_;
  GemmShape shape_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
};

} // namespace infer::cuda

#endif // INFER_RUNTIME_CUDA_GEMMPLAN_H
