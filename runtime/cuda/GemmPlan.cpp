//===- GemmPlan.cpp - cuBLASLt descriptors for one GEMM shape -------------===//

#include "runtime/cuda/GemmPlan.h"

namespace infer::cuda {
namespace art = artifact;
namespace {

StatusOr<cudaDataType_t> dataType(art::ElementType type) {
  switch (type) {
  case art::ELEMENT_TYPE_F32:
    return CUDA_R_32F;
  case art::ELEMENT_TYPE_BF16:
    return CUDA_R_16BF;
  case art::ELEMENT_TYPE_F16:
    return CUDA_R_16F;
  default:
    return unimplementedError(std::string("cuBLASLt GEMM of ") + art::elementTypeName(type));
  }
}

} // namespace

StatusOr<GemmPlan> GemmPlan::create(const CudaApi &api, cublasLtHandle_t handle,
                                    const GemmShape &shape) {
  ASSIGN_OR_RETURN(cudaDataType_t type, dataType(shape.type));
  if (shape.fp8 && (!shape.transposed || shape.type == art::ELEMENT_TYPE_F32))
    return unimplementedError("cuBLASLt FP8 GEMM of " + shape.key() +
                              " (it takes an [n, k] weight and a 16-bit output)");
  // FP8: E4M3 weight and inputs, each with a vector of scales along its
  // outer dimension (weight rows, tokens); C and D in the output's type.
  const cudaDataType_t operands = shape.fp8 ? CUDA_R_8F_E4M3 : type;
  GemmPlan plan(api, handle, shape);
  INFER_CUBLAS_CHECK(api,
                     api.cublasLtMatmulDescCreate(&plan.desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t transA = shape.transposed ? CUBLAS_OP_T : CUBLAS_OP_N, transB = CUBLAS_OP_N;
  INFER_CUBLAS_CHECK(api, api.cublasLtMatmulDescSetAttribute(
                              plan.desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof(transA)));
  INFER_CUBLAS_CHECK(api, api.cublasLtMatmulDescSetAttribute(
                              plan.desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof(transB)));
  if (shape.fp8) {
    cublasLtMatmulMatrixScale_t outer = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    for (cublasLtMatmulDescAttributes_t mode :
         {CUBLASLT_MATMUL_DESC_A_SCALE_MODE, CUBLASLT_MATMUL_DESC_B_SCALE_MODE})
      INFER_CUBLAS_CHECK(
          api, api.cublasLtMatmulDescSetAttribute(plan.desc_, mode, &outer, sizeof(outer)));
    // The heuristic refuses outer-vector modes without scale pointers; it
    // does not read them. runFp8 sets each launch's own.
    const void *placeholder = reinterpret_cast<const void *>(uintptr_t(256));
    for (cublasLtMatmulDescAttributes_t pointer :
         {CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER})
      INFER_CUBLAS_CHECK(api, api.cublasLtMatmulDescSetAttribute(plan.desc_, pointer, &placeholder,
                                                                 sizeof(placeholder)));
  }
  if (shape.bias) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    INFER_CUBLAS_CHECK(api,
                       api.cublasLtMatmulDescSetAttribute(plan.desc_, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                                          &epilogue, sizeof(epilogue)));
  }
  // Column-major view: D (n x T, ld n) = op(A) (n x k) * B (k x T, ld k).
  const uint64_t k = uint64_t(shape.k), n = uint64_t(shape.n), rows = uint64_t(shape.tokens);
  if (shape.transposed)
    INFER_CUBLAS_CHECK(api, api.cublasLtMatrixLayoutCreate(&plan.a_, operands, k, n, int64_t(k)));
  else
    INFER_CUBLAS_CHECK(api, api.cublasLtMatrixLayoutCreate(&plan.a_, operands, n, k, int64_t(n)));
  INFER_CUBLAS_CHECK(api, api.cublasLtMatrixLayoutCreate(&plan.b_, operands, k, rows, int64_t(k)));
  INFER_CUBLAS_CHECK(api, api.cublasLtMatrixLayoutCreate(&plan.c_, type, n, rows, int64_t(n)));
  return plan;
}

GemmPlan::GemmPlan(GemmPlan &&other) noexcept
    : api_(other.api_), handle_(other.handle_), shape_(other.shape_), desc_(other.desc_),
      a_(other.a_), b_(other.b_), c_(other.c_) {
  other.desc_ = nullptr;
  other.a_ = other.b_ = other.c_ = nullptr;
}

GemmPlan::~GemmPlan() {
  if (a_)
    api_->cublasLtMatrixLayoutDestroy(a_);
  if (b_)
    api_->cublasLtMatrixLayoutDestroy(b_);
  if (c_)
    api_->cublasLtMatrixLayoutDestroy(c_);
  if (desc_)
    api_->cublasLtMatmulDescDestroy(desc_);
}

StatusOr<std::vector<cublasLtMatmulAlgo_t>> GemmPlan::heuristics(int count) const {
  cublasLtMatmulPreference_t preference = nullptr;
  INFER_CUBLAS_CHECK(*api_, api_->cublasLtMatmulPreferenceCreate(&preference));
  size_t workspace = kGemmWorkspaceBytes;
  cublasStatus_t status = api_->cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(count));
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = api_->cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, c_, preference, count,
                                                  results.data(), &found);
  api_->cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS)
    return cublasError(*api_, status, "cublasLtMatmulAlgoGetHeuristic");
  std::vector<cublasLtMatmulAlgo_t> algorithms;
  for (int i = 0; i < found; ++i)
    if (results[size_t(i)].state == CUBLAS_STATUS_SUCCESS)
      algorithms.push_back(results[size_t(i)].algo);
  if (algorithms.empty())
    return unimplementedError("cuBLASLt has no algorithm for " + shape_.key());
  return algorithms;
}

bool GemmPlan::accepts(const cublasLtMatmulAlgo_t &algo) const {
  cublasLtMatmulHeuristicResult_t check{};
  return api_->cublasLtMatmulAlgoCheck(handle_, desc_, a_, b_, c_, c_, &algo, &check) ==
             CUBLAS_STATUS_SUCCESS &&
         check.workspaceSize <= kGemmWorkspaceBytes;
}

Status GemmPlan::runFp8(const cublasLtMatmulAlgo_t &algo, const void *weight,
                        const float *weightScales, const void *input, const float *inputScales,
                        const void *residual, const void *bias, void *out, CUdeviceptr workspace,
                        CUstream stream) const {
  if (!shape_.fp8)
    return internalError("GemmPlan::runFp8 on the 16-bit plan " + shape_.key());
  // Shared by every launch of the shape, as the bias pointer.
  INFER_CUBLAS_CHECK(
      *api_, api_->cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                  &weightScales, sizeof(weightScales)));
  INFER_CUBLAS_CHECK(
      *api_, api_->cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                                  &inputScales, sizeof(inputScales)));
  return run(algo, weight, input, residual, bias, out, workspace, stream);
}

Status GemmPlan::run(const cublasLtMatmulAlgo_t &algo, const void *weight, const void *input,
                     const void *residual, const void *bias, void *out, CUdeviceptr workspace,
                     CUstream stream) const {
  float alpha = 1.f, beta = shape_.residual ? 1.f : 0.f;
  if (shape_.bias) // the plan is shared by every launch of its shape
    INFER_CUBLAS_CHECK(*api_, api_->cublasLtMatmulDescSetAttribute(
                                  desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  const void *c = shape_.residual ? residual : out;
  INFER_CUBLAS_CHECK(
      *api_, api_->cublasLtMatmul(handle_, desc_, &alpha, weight, a_, input, b_, &beta, c, c_, out,
                                  c_, &algo, reinterpret_cast<void *>(workspace),
                                  kGemmWorkspaceBytes, reinterpret_cast<cudaStream_t>(stream)));
  return okStatus();
}

} // namespace infer::cuda
