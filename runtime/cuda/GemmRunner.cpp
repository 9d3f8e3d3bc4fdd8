//===- GemmRunner.cpp - cuBLASLt matmul for exec GEMM launches ------------===//

#include "runtime/cuda/GemmRunner.h"

#include <cstring>

namespace infer::cuda {
namespace art = artifact;

std::string tuningDeviceKey(const std::string &deviceName, int multiprocessors) {
  return deviceName + ", " + std::to_string(multiprocessors) + " SMs";
}

const art::TuningRecords *tuningRecordsFor(const art::Manifest &manifest, const std::string &device,
                                           int64_t cublasLtVersion) {
  for (const art::TuningRecords &records : manifest.tuning())
    if (records.device() == device && records.cublaslt_version() == cublasLtVersion)
      return &records;
  return nullptr;
}

StatusOr<std::unique_ptr<GemmRunner>> GemmRunner::create(const CudaApi &api,
                                                         const art::TuningRecords *records) {
  std::unique_ptr<GemmRunner> runner(new GemmRunner(api));
  INFER_CUBLAS_CHECK(api, api.cublasLtCreate(&runner->handle_));
  INFER_CU_CHECK(api, api.cuMemAlloc(&runner->workspace_, kGemmWorkspaceBytes));
  if (records)
    for (const art::GemmTuningRecord &record : records->gemm()) {
      // ManifestChecks refused records whose algorithm is not 64 bytes.
      static_assert(sizeof(cublasLtMatmulAlgo_t) == 64);
      if (record.algorithm().size() != sizeof(cublasLtMatmulAlgo_t))
        continue;
      cublasLtMatmulAlgo_t algo;
      std::memcpy(&algo, record.algorithm().data(), sizeof algo);
      runner->records_[shapeOf(record).bucket()] = algo;
    }
  return runner;
}

GemmRunner::~GemmRunner() {
  plans_.clear(); // before the handle they were made with
  if (workspace_)
    api_.cuMemFree(workspace_);
  if (handle_)
    api_.cublasLtDestroy(handle_);
}

namespace {

/// The launch's GEMM shape: its output's type, k, n, the step's tokens, and
/// whether it has a bias and a residual.
GemmShape shapeOf(const exec::LaunchArgs &args, int64_t k, int64_t n, bool transposed, bool fp8) {
  GemmShape shape;
  shape.type = args.outputs[0].type;
  shape.k = k;
  shape.n = n;
  shape.tokens = args.tokens;
  shape.transposed = transposed;
  shape.bias = args.operand(art::ROLE_BIAS) != nullptr;
  shape.residual = args.operand(art::ROLE_RESIDUAL) != nullptr;
  shape.fp8 = fp8;
  return shape;
}

} // namespace

StatusOr<GemmRunner::Plan *> GemmRunner::plan(const exec::LaunchArgs &args, bool transposed) {
  ASSIGN_OR_RETURN(const exec::View *input, args.required(art::ROLE_INPUT));
  ASSIGN_OR_RETURN(const exec::View *weight, args.required(art::ROLE_WEIGHT));
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  const exec::View &out = args.outputs[0];
  const GemmShape shape = shapeOf(args, k, n, transposed, /*fp8=*/false);
  if (input->type != out.type || weight->type != out.type)
    return args.error("needs input, weight and output of one type");
  if (input->elements != args.tokens * k || out.elements != args.tokens * n ||
      weight->elements != k * n)
    return args.error("operand sizes do not match k = " + std::to_string(k) + ", n = " +
                      std::to_string(n));
  return planFor(args, shape);
}

StatusOr<GemmRunner::Plan *> GemmRunner::planFor(const exec::LaunchArgs &args,
                                                 const GemmShape &shape) {
  auto found = plans_.find(shape);
  if (found != plans_.end())
    return &found->second;
  auto created = GemmPlan::create(api_, handle_, shape);
  if (!created.ok())
    return args.error(created.status().message());
  GemmPlan descriptors = std::move(*created);
  cublasLtMatmulAlgo_t algo;
  auto record = records_.find(shape.bucket());
  if (record != records_.end() && descriptors.accepts(record->second)) {
    algo = record->second;
    ++tunedPlans_;
  } else {
    auto heuristics = descriptors.heuristics(kGemmHeuristicCandidates);
    if (!heuristics.ok())
      return args.error(heuristics.status().message());
    algo = heuristics->front();
    ++heuristicPlans_;
  }
  return &plans_.emplace(shape, Plan{std::move(descriptors), algo}).first->second;
}

Status GemmRunner::run(const exec::LaunchArgs &args, CUstream stream) {
  return run(args, stream, args.boolAttr("transpose_weight", false));
}

Status GemmRunner::runFp8(const exec::LaunchArgs &args, CUstream stream, const void *inputs,
                          const float *inputScales) {
  ASSIGN_OR_RETURN(const exec::View *q, args.required(art::ROLE_Q));
  ASSIGN_OR_RETURN(const exec::View *scales, args.required(art::ROLE_SCALES));
  ASSIGN_OR_RETURN(int64_t k, args.intAttr("k"));
  ASSIGN_OR_RETURN(int64_t n, args.intAttr("n"));
  const exec::View &out = args.outputs[0];
  if (q->type != art::ELEMENT_TYPE_U8 || q->elements != n * k ||
      scales->type != art::ELEMENT_TYPE_F32 || scales->elements != n ||
      out.elements != args.tokens * n)
    return args.error("needs E4M3 weights [n, k], f32 scales [n] and an output [T, n] for its "
                      "FP8 GEMM at k = " +
                      std::to_string(k) + ", n = " + std::to_string(n));
  ASSIGN_OR_RETURN(Plan * plan, planFor(args, shapeOf(args, k, n, /*transposed=*/true,
                                                      /*fp8=*/true)));
  const exec::View *residual = args.operand(art::ROLE_RESIDUAL);
  const exec::View *bias = args.operand(art::ROLE_BIAS);
  return plan->descriptors.runFp8(plan->algo, q->data, static_cast<const float *>(scales->data),
                                  inputs, inputScales, residual ? residual->data : nullptr,
                                  bias ? bias->data : nullptr, out.data, workspace_, stream);
}

Status GemmRunner::run(const exec::LaunchArgs &args, CUstream stream, bool transposed) {
  ASSIGN_OR_RETURN(Plan * plan, plan(args, transposed));
  const exec::View *residual = args.operand(art::ROLE_RESIDUAL);
  const exec::View *bias = args.operand(art::ROLE_BIAS);
  return plan->descriptors.run(plan->algo, args.operand(art::ROLE_WEIGHT)->data,
                               args.operand(art::ROLE_INPUT)->data,
                               residual ? residual->data : nullptr, bias ? bias->data : nullptr,
                               args.outputs[0].data, workspace_, stream);
}

} // namespace infer::cuda
