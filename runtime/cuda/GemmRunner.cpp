//===- GemmRunner.cpp - cuBLASLt matmul for exec GEMM launches ------------===//

#include "runtime/cuda/GemmRunner.h"

#include "runtime/artifact/ArtifactFormat.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace infer::cuda {
namespace art = artifact;
namespace {

constexpr size_t kWorkspaceBytes = 32u << 20;
constexpr int kDefaultTuneCandidates = 8;
constexpr int kMaxTuneCandidates = 64;
constexpr int kTuneRepeats = 5;

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

CUdeviceptr address(const exec::View &view) { return reinterpret_cast<CUdeviceptr>(view.data); }

int64_t powerOfTwoAtLeast(int64_t value) {
  int64_t bucket = 1;
  while (bucket < value)
    bucket *= 2;
  return bucket;
}

} // namespace

int gemmTuneCandidates(const char *setting, std::string *warning) {
  if (!setting || !*setting)
    return kDefaultTuneCandidates;
  char *end = nullptr;
  const long value = std::strtol(setting, &end, 10);
  if (*end != '\0' || value < 0 || value > kMaxTuneCandidates) {
    if (warning)
      *warning = "INFER_GEMM_TUNE=" + std::string(setting) + " is not a count of 0 to " +
                 std::to_string(kMaxTuneCandidates) + "; timing the top " +
                 std::to_string(kDefaultTuneCandidates) + " cuBLASLt algorithms";
    return kDefaultTuneCandidates;
  }
  return value == 0 ? 1 : int(value);
}

StatusOr<std::unique_ptr<GemmRunner>>
GemmRunner::create(const CudaApi &api, const std::string &device, const RuntimeOptions &options) {
  std::unique_ptr<GemmRunner> runner(new GemmRunner(api));
  runner->logTuning_ = options.gemmTuneLog;
  INFER_CUBLAS_CHECK(api, api.cublasLtCreate(&runner->handle_));
  INFER_CU_CHECK(api, api.cuMemAlloc(&runner->workspace_, kWorkspaceBytes));
  runner->tuneCandidates_ = options.gemmTuneCandidates;
  if (options.gemmTuningCache)
    runner->cache_ = std::make_unique<GemmTuningCache>(
        *options.gemmTuningCache,
        device + ", cuBLASLt " + std::to_string(api.cublasLtGetVersion()));
  return runner;
}

std::string GemmRunner::cacheKey(const ShapeKey &bucket) {
  const auto &[type, k, n, tokens, transposed, bias, residual] = bucket;
  return std::string(art::elementTypeName(art::ElementType(type))) + " k" + std::to_string(k) +
         " n" + std::to_string(n) + " T" + std::to_string(tokens) + (transposed ? " nk" : " kn") +
         " bias" + std::to_string(int(bias)) + " residual" + std::to_string(int(residual));
}

GemmRunner::~GemmRunner() {
  for (auto &[key, plan] : plans_) {
    api_.cublasLtMatrixLayoutDestroy(plan.a);
    api_.cublasLtMatrixLayoutDestroy(plan.b);
    api_.cublasLtMatrixLayoutDestroy(plan.c);
    api_.cublasLtMatmulDescDestroy(plan.desc);
  }
  if (workspace_)
    api_.cuMemFree(workspace_);
  if (handle_)
    api_.cublasLtDestroy(handle_);
}

StatusOr<GemmRunner::Plan *> GemmRunner::plan(const exec::LaunchArgs &args, bool transposed) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required("input"));
  ASSIGN_OR_RETURN(const exec::View *weight, args.required("weight"));
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  const exec::View &out = args.outputs[0];
  ShapeKey key{int(out.type), k, n, args.tokens, transposed, args.operand("bias") != nullptr,
               args.operand("residual") != nullptr};
  auto found = plans_.find(key);
  if (found != plans_.end())
    return &found->second;
  if (input->type != out.type || weight->type != out.type)
    return args.error("needs input, weight and output of one type");
  if (input->elements != args.tokens * k || out.elements != args.tokens * n ||
      weight->elements != k * n)
    return args.error("operand sizes do not match k = " + std::to_string(k) + ", n = " +
                      std::to_string(n));
  ASSIGN_OR_RETURN(cudaDataType_t type, dataType(out.type));

  Plan plan;
  plan.transposed = transposed;
  plan.bias = args.operand("bias") != nullptr;
  plan.residual = args.operand("residual") != nullptr;
  INFER_CUBLAS_CHECK(api_, api_.cublasLtMatmulDescCreate(&plan.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t transA = transposed ? CUBLAS_OP_T : CUBLAS_OP_N, transB = CUBLAS_OP_N;
  INFER_CUBLAS_CHECK(api_, api_.cublasLtMatmulDescSetAttribute(
                               plan.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transA, sizeof(transA)));
  INFER_CUBLAS_CHECK(api_, api_.cublasLtMatmulDescSetAttribute(
                               plan.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transB, sizeof(transB)));
  if (plan.bias) {
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    INFER_CUBLAS_CHECK(api_, api_.cublasLtMatmulDescSetAttribute(
                                 plan.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                 sizeof(epilogue)));
  }
  // Column-major view: D (n x T, ld n) = op(A) (n x k) * B (k x T, ld k).
  uint64_t rows = static_cast<uint64_t>(args.tokens);
  if (transposed)
    INFER_CUBLAS_CHECK(api_, api_.cublasLtMatrixLayoutCreate(&plan.a, type, k, n, k));
  else
    INFER_CUBLAS_CHECK(api_, api_.cublasLtMatrixLayoutCreate(&plan.a, type, n, k, n));
  INFER_CUBLAS_CHECK(api_, api_.cublasLtMatrixLayoutCreate(&plan.b, type, k, rows, k));
  INFER_CUBLAS_CHECK(api_, api_.cublasLtMatrixLayoutCreate(&plan.c, type, n, rows, n));

  cublasLtMatmulPreference_t preference = nullptr;
  INFER_CUBLAS_CHECK(api_, api_.cublasLtMatmulPreferenceCreate(&preference));
  size_t workspace = kWorkspaceBytes;
  cublasStatus_t status = api_.cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace));
  std::vector<cublasLtMatmulHeuristicResult_t> heuristics(static_cast<size_t>(tuneCandidates_));
  int found_count = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = api_.cublasLtMatmulAlgoGetHeuristic(handle_, plan.desc, plan.a, plan.b, plan.c,
                                                 plan.c, preference, tuneCandidates_,
                                                 heuristics.data(), &found_count);
  api_.cublasLtMatmulPreferenceDestroy(preference);
  if (status != CUBLAS_STATUS_SUCCESS || found_count == 0) {
    api_.cublasLtMatrixLayoutDestroy(plan.a);
    api_.cublasLtMatrixLayoutDestroy(plan.b);
    api_.cublasLtMatrixLayoutDestroy(plan.c);
    api_.cublasLtMatmulDescDestroy(plan.desc);
    if (status != CUBLAS_STATUS_SUCCESS)
      return cublasError(api_, status, "cublasLtMatmulAlgoGetHeuristic");
    return args.error("cuBLASLt has no algorithm for " + std::to_string(args.tokens) + " x " +
                      std::to_string(k) + " x " + std::to_string(n));
  }
  plan.algo = heuristics[0].algo;
  ShapeKey bucket = key;
  std::get<3>(bucket) = powerOfTwoAtLeast(args.tokens);
  auto tuned = tuned_.find(bucket);
  if (tuned != tuned_.end()) {
    // Tuned at another T of this bucket: keep it where it is valid here.
    if (accepts(plan, tuned->second))
      plan.algo = tuned->second;
  } else if (std::optional<GemmAlgorithmBytes> kept = cache_ ? cache_->find(cacheKey(bucket))
                                                               : std::nullopt) {
    // Tuned by an earlier process: the same algorithm without timing, where
    // this cuBLASLt still accepts it for the shape.
    static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(GemmAlgorithmBytes));
    cublasLtMatmulAlgo_t algo;
    std::memcpy(&algo, kept->data(), sizeof algo);
    if (accepts(plan, algo))
      plan.algo = algo;
    tuned_[bucket] = plan.algo;
  } else {
    for (int i = 0; i < found_count; ++i)
      if (heuristics[i].state == CUBLAS_STATUS_SUCCESS)
        plan.candidates.push_back(heuristics[i].algo);
    if (plan.candidates.size() < 2)
      plan.candidates.clear();
  }
  return &plans_.emplace(key, plan).first->second;
}

bool GemmRunner::accepts(const Plan &plan, const cublasLtMatmulAlgo_t &algo) const {
  cublasLtMatmulHeuristicResult_t check{};
  return api_.cublasLtMatmulAlgoCheck(handle_, plan.desc, plan.a, plan.b, plan.c, plan.c, &algo,
                                      &check) == CUBLAS_STATUS_SUCCESS &&
         check.workspaceSize <= kWorkspaceBytes;
}

Status GemmRunner::matmul(const Plan &plan, const cublasLtMatmulAlgo_t &algo,
                          const exec::LaunchArgs &args, CUstream stream) {
  float alpha = 1.f, beta = plan.residual ? 1.f : 0.f;
  if (plan.bias) { // the plan is shared by every launch of its shape
    const void *bias = args.operand("bias")->data;
    INFER_CUBLAS_CHECK(api_, api_.cublasLtMatmulDescSetAttribute(
                                 plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                 sizeof(bias)));
  }
  const exec::View *residual = args.operand("residual");
  CUdeviceptr d = address(args.outputs[0]);
  CUdeviceptr c = residual ? address(*residual) : d;
  INFER_CUBLAS_CHECK(
      api_, api_.cublasLtMatmul(handle_, plan.desc, &alpha, args.operand("weight")->data, plan.a,
                                args.operand("input")->data, plan.b, &beta,
                                reinterpret_cast<const void *>(c), plan.c,
                                reinterpret_cast<void *>(d), plan.c, &algo,
                                reinterpret_cast<void *>(workspace_), kWorkspaceBytes,
                                reinterpret_cast<cudaStream_t>(stream)));
  return okStatus();
}

Status GemmRunner::tune(Plan &plan, const exec::LaunchArgs &args, CUstream stream) {
  // Each candidate writes the launch's output from its inputs (and residual,
  // which the output never aliases), so timing on the real operands is safe:
  // the launch itself runs after with the winner.
  CUevent start = nullptr, stop = nullptr;
  INFER_CU_CHECK(api_, api_.cuEventCreate(&start, CU_EVENT_DEFAULT));
  INFER_CU_CHECK(api_, api_.cuEventCreate(&stop, CU_EVENT_DEFAULT));
  float best = 0, heuristicFirst = 0;
  Status status = okStatus();
  for (const cublasLtMatmulAlgo_t &algo : plan.candidates) {
    status = matmul(plan, algo, args, stream); // warm up (and check it runs)
    if (!status.ok()) {
      status = okStatus(); // a candidate that fails is skipped
      continue;
    }
    api_.cuEventRecord(start, stream);
    for (int i = 0; i < kTuneRepeats && status.ok(); ++i)
      status = matmul(plan, algo, args, stream);
    api_.cuEventRecord(stop, stream);
    api_.cuEventSynchronize(stop);
    float ms = 0;
    api_.cuEventElapsedTime(&ms, start, stop);
    if (&algo == &plan.candidates.front())
      heuristicFirst = ms;
    if (status.ok() && (best == 0 || ms < best)) {
      best = ms;
      plan.algo = algo;
    }
  }
  const size_t timed = plan.candidates.size();
  api_.cuEventDestroy(start);
  api_.cuEventDestroy(stop);
  plan.candidates.clear();
  ShapeKey bucket{int(args.outputs[0].type),
                  args.intAttr("k", 0),
                  args.intAttr("n", 0),
                  powerOfTwoAtLeast(args.tokens),
                  plan.transposed,
                  plan.bias,
                  plan.residual};
  tuned_[bucket] = plan.algo;
  if (logTuning_)
    std::fprintf(stderr,
                 "gemm tuning: %s at T %lld: %zu candidates, fastest %.2f us a launch, the "
                 "heuristic's first %.2f us\n",
                 cacheKey(bucket).c_str(), static_cast<long long>(args.tokens), timed,
                 1e3 * best / kTuneRepeats, 1e3 * heuristicFirst / kTuneRepeats);
  if (cache_ && status.ok()) {
    GemmAlgorithmBytes bytes;
    std::memcpy(bytes.data(), &plan.algo, sizeof bytes);
    Status kept = cache_->remember(cacheKey(bucket), bytes);
    if (!kept.ok() && !cacheWarned_) {
      std::fprintf(stderr, "warning: GEMM tuning cache: %s (INFER_CACHE_DIR picks another "
                   "directory, INFER_GEMM_TUNING_CACHE=0 turns it off)\n", kept.message().c_str());
      cacheWarned_ = true;
    }
  }
  return status;
}

Status GemmRunner::run(const exec::LaunchArgs &args, CUstream stream) {
  return run(args, stream, args.boolAttr("transpose_weight", false));
}

Status GemmRunner::run(const exec::LaunchArgs &args, CUstream stream, bool transposed) {
  ASSIGN_OR_RETURN(Plan * plan, plan(args, transposed));
  if (!plan->candidates.empty())
    RETURN_IF_ERROR(tune(*plan, args, stream));
  return matmul(*plan, plan->algo, args, stream);
}

} // namespace infer::cuda
