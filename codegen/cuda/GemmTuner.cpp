//===- GemmTuner.cpp - cuBLASLt algorithms timed at compile time ----------===//

#include "codegen/cuda/GemmTuner.h"

#include "runtime/cuda/GemmPlan.h"
#include "runtime/cuda/GemmRunner.h"

#include "runtime/base/LowPrecision.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>

namespace infer::codegen {
namespace art = artifact;
using cuda::CudaApi;

namespace {

/// Each candidate runs for at least this long per timing (so a launch of a
/// few microseconds is timed over many), in at most kMaxRepeats launches.
constexpr double kTimedMicroseconds = 1000;
constexpr int kMaxRepeats = 200;
constexpr int kRounds = 5;
/// The heuristic's first stays unless another is this much faster alone: a
/// gain of a few percent measured alone did not hold inside a step
/// (bench/results/gpu/2026-12-06c-h100-tune.md: llama3-8b's gate/up at 2,048
/// tokens, 2.1% faster alone, made the TTFT 7% slower), and noise alone
/// does not swap algorithms (and bits) between compiles.
constexpr double kMinGain = 0.05;

/// 16 MiB of random values in [-1, 1) of `type` (a fixed seed: the same
/// operands at every compile).
std::vector<unsigned char> randomPattern(art::ElementType type) {
  const size_t element = art::elementSize(type);
  std::vector<unsigned char> bytes(size_t(16) << 20);
  std::mt19937 random(2024);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (size_t offset = 0; offset + element <= bytes.size(); offset += element) {
    const float value = uniform(random);
    if (type == art::ELEMENT_TYPE_F32) {
      std::memcpy(&bytes[offset], &value, 4);
      continue;
    }
    const uint16_t bits =
        type == art::ELEMENT_TYPE_BF16 ? lowp::bf16FromFloat(value) : lowp::f16FromFloat(value);
    std::memcpy(&bytes[offset], &bits, 2);
  }
  return bytes;
}

/// The GPU, its stream and the operands every timing shares.
class Bench {
public:
  static StatusOr<std::unique_ptr<Bench>> create(const CudaApi &api) {
    std::unique_ptr<Bench> bench(new Bench(api));
    INFER_CU_CHECK(api, api.cuDeviceGet(&bench->device_, 0));
    INFER_CU_CHECK(api, api.cuDevicePrimaryCtxRetain(&bench->context_, bench->device_));
    INFER_CU_CHECK(api, api.cuCtxSetCurrent(bench->context_));
    INFER_CU_CHECK(api, api.cuStreamCreate(&bench->stream_, CU_STREAM_NON_BLOCKING));
    INFER_CU_CHECK(api, api.cuEventCreate(&bench->start_, CU_EVENT_DEFAULT));
    INFER_CU_CHECK(api, api.cuEventCreate(&bench->stop_, CU_EVENT_DEFAULT));
    INFER_CUBLAS_CHECK(api, api.cublasLtCreate(&bench->handle_));
    INFER_CU_CHECK(api, api.cuMemAlloc(&bench->workspace_, cuda::kGemmWorkspaceBytes));
    char name[256] = {};
    INFER_CU_CHECK(api, api.cuDeviceGetName(name, sizeof name, bench->device_));
    int multiprocessors = 0;
    INFER_CU_CHECK(api, api.cuDeviceGetAttribute(&multiprocessors,
                                                 CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                                 bench->device_));
    bench->deviceKey_ = cuda::tuningDeviceKey(name, multiprocessors);
    return bench;
  }
  ~Bench() {
    for (CUdeviceptr buffer : {weight_, input_, out_, residual_, bias_, workspace_})
      if (buffer)
        api_.cuMemFree(buffer);
    if (handle_)
      api_.cublasLtDestroy(handle_);
    for (CUevent event : {start_, stop_})
      if (event)
        api_.cuEventDestroy(event);
    if (stream_)
      api_.cuStreamDestroy(stream_);
    if (context_)
      api_.cuDevicePrimaryCtxRelease(device_);
  }

  /// Operands for every shape of `shapes` at its tokens, filled with random
  /// values in [-1, 1) of each shape's type: a tensor core's power, and so
  /// the clock it holds, depends on the bits it multiplies, and a model's
  /// activations and weights are not a constant pattern.
  Status allocate(const std::vector<art::GemmShape> &shapes) {
    uint64_t weight = 0, input = 0, out = 0, bias = 0;
    std::set<art::ElementType> types;
    for (const art::GemmShape &shape : shapes) {
      const uint64_t element = art::elementSize(shape.type);
      weight = std::max(weight, uint64_t(shape.k * shape.n) * element);
      input = std::max(input, uint64_t(shape.tokens * shape.k) * element);
      out = std::max(out, uint64_t(shape.tokens * shape.n) * element);
      bias = std::max(bias, uint64_t(shape.n) * element);
      types.insert(shape.type);
    }
    size_t freeBytes = 0, totalBytes = 0;
    INFER_CU_CHECK(api_, api_.cuMemGetInfo(&freeBytes, &totalBytes));
    const uint64_t needed = weight + input + 2 * out + bias;
    if (needed + (256u << 20) > freeBytes)
      return resourceExhaustedError("tuning needs " + std::to_string(needed >> 20) +
                                    " MiB of GPU memory for the largest "
                                    "GEMM's operands; " +
                                    std::to_string(freeBytes >> 20) +
                                    " MiB are free (lower "
                                    "--max-batch-tokens)");
    // One type's values for all (a program's GEMMs share one type; were they
    // several, another type's reading of the bytes is finite all the same).
    const std::vector<unsigned char> pattern = randomPattern(*types.begin());
    for (auto [buffer, bytes] :
         {std::pair{&weight_, weight}, std::pair{&input_, input}, std::pair{&out_, out},
          std::pair{&residual_, out}, std::pair{&bias_, bias}}) {
      bytes = std::max<uint64_t>(bytes, 256);
      INFER_CU_CHECK(api_, api_.cuMemAlloc(buffer, bytes));
      for (uint64_t offset = 0; offset < bytes; offset += pattern.size())
        INFER_CU_CHECK(api_, api_.cuMemcpyHtoD(*buffer + offset, pattern.data(),
                                               std::min<uint64_t>(pattern.size(), bytes - offset)));
    }
    return okStatus();
  }

  /// Microseconds one launch of `algo` takes in `launches` launches back to
  /// back (an error when it fails to run).
  StatusOr<double> time(const cuda::GemmPlan &plan, const cublasLtMatmulAlgo_t &algo,
                        int launches) {
    INFER_CU_CHECK(api_, api_.cuEventRecord(start_, stream_));
    for (int i = 0; i < launches; ++i)
      RETURN_IF_ERROR(plan.run(algo, ptr(weight_), ptr(input_), ptr(residual_), ptr(bias_),
                               ptr(out_), workspace_, stream_));
    INFER_CU_CHECK(api_, api_.cuEventRecord(stop_, stream_));
    INFER_CU_CHECK(api_, api_.cuEventSynchronize(stop_));
    float ms = 0;
    INFER_CU_CHECK(api_, api_.cuEventElapsedTime(&ms, start_, stop_));
    return 1e3 * ms / launches;
  }

  const CudaApi &api() const { return api_; }
  cublasLtHandle_t handle() const { return handle_; }
  const std::string &deviceKey() const { return deviceKey_; }

private:
  explicit Bench(const CudaApi &api) : api_(api) {}
  static void *ptr(CUdeviceptr value) { return reinterpret_cast<void *>(value); }
  const CudaApi &api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  cublasLtHandle_t handle_ = nullptr;
  CUdeviceptr workspace_ = 0, weight_ = 0, input_ = 0, out_ = 0, residual_ = 0, bias_ = 0;
  std::string deviceKey_;
};

/// The record of `shape`: each heuristic candidate that runs is timed in
/// kRounds rounds, the candidates in turn within a round (so a clock or
/// temperature drift during the tuning weighs on all alike), and its median
/// round counts; the fastest is kept.
StatusOr<art::GemmTuningRecord> tuneShape(Bench &bench, const art::GemmShape &shape) {
  ASSIGN_OR_RETURN(cuda::GemmPlan plan, cuda::GemmPlan::create(bench.api(), bench.handle(), shape));
  ASSIGN_OR_RETURN(std::vector<cublasLtMatmulAlgo_t> candidates,
                   plan.heuristics(cuda::kGemmHeuristicCandidates));
  // Warm up each (a candidate that fails to run is passed over) and learn
  // how many launches make kTimedMicroseconds.
  std::vector<size_t> running;
  std::vector<int> launches;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!bench.time(plan, candidates[i], 1).ok())
      continue;
    StatusOr<double> once = bench.time(plan, candidates[i], 1);
    if (!once.ok())
      continue;
    running.push_back(i);
    launches.push_back(
        std::clamp(int(std::ceil(kTimedMicroseconds / std::max(*once, 1.0))), 3, kMaxRepeats));
  }
  if (running.empty())
    return internalError("no cuBLASLt candidate for " + shape.key() + " ran");
  std::vector<std::vector<double>> rounds(running.size());
  for (int round = 0; round < kRounds; ++round)
    for (size_t j = 0; j < running.size(); ++j) {
      ASSIGN_OR_RETURN(double us, bench.time(plan, candidates[running[j]], launches[j]));
      rounds[j].push_back(us);
    }
  std::vector<double> median(running.size());
  for (size_t j = 0; j < running.size(); ++j) {
    std::sort(rounds[j].begin(), rounds[j].end());
    median[j] = rounds[j][rounds[j].size() / 2];
  }
  size_t best = 0;
  for (size_t j = 1; j < running.size(); ++j)
    if (median[j] < median[best])
      best = j;
  // The heuristic's first (running[0] when it ran) stays unless another is
  // kMinGain faster.
  const bool firstRan = running[0] == 0;
  if (firstRan && median[best] > median[0] * (1 - kMinGain))
    best = 0;
  art::GemmTuningRecord record = art::recordOf(shape);
  const cublasLtMatmulAlgo_t &winner = candidates[running[best]];
  record.set_algorithm(std::string(reinterpret_cast<const char *>(&winner), sizeof winner));
  record.set_tuned_us(median[best]);
  record.set_heuristic_us(firstRan ? median[0] : median[best]);
  record.set_candidates(int(running.size()));
  return record;
}

std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", value);
  return text;
}

} // namespace

StatusOr<art::TuningRecords> tuneGemms(const art::Manifest &manifest, TuningDatabase *database,
                                       const std::function<void(const std::string &)> &progress) {
  StatusOr<const CudaApi *> api = cuda::loadCudaApi();
  if (!api.ok())
    return failedPreconditionError(kNoGpuToTune + (" (" + api.status().message() + ")"));
  ASSIGN_OR_RETURN(std::unique_ptr<Bench> bench, Bench::create(**api));
  const int64_t version = int64_t((*api)->cublasLtGetVersion());
  art::TuningRecords records;
  records.set_device(bench->deviceKey());
  records.set_cublaslt_version(version);

  std::vector<art::GemmShape> pending;
  for (const art::GemmShape &shape : art::gemmBuckets(manifest))
    if (const art::GemmTuningRecord *kept =
            database ? database->find(bench->deviceKey(), version, shape) : nullptr)
      *records.add_gemm() = *kept;
    else
      pending.push_back(shape);
  if (!pending.empty())
    RETURN_IF_ERROR(bench->allocate(pending));
  progress("tuning " + std::to_string(pending.size()) + " GEMM shape buckets on " +
           bench->deviceKey() + " (cuBLASLt " + std::to_string(version) + "; " +
           std::to_string(records.gemm_size()) + " from the tuning database)");
  for (size_t i = 0; i < pending.size(); ++i) {
    ASSIGN_OR_RETURN(art::GemmTuningRecord record, tuneShape(*bench, pending[i]));
    progress("  " + pending[i].key() + ": " + fixed(record.tuned_us()) + " us (heuristic " +
             fixed(record.heuristic_us()) + " us, " + std::to_string(record.candidates()) +
             " timed)");
    if (database)
      database->add(bench->deviceKey(), version, record);
    *records.add_gemm() = std::move(record);
  }
  // One order whatever came from where: records sorted by shape.
  std::sort(records.mutable_gemm()->begin(), records.mutable_gemm()->end(),
            [](const art::GemmTuningRecord &a, const art::GemmTuningRecord &b) {
              return art::shapeOf(a) < art::shapeOf(b);
            });
  return records;
}

} // namespace infer::codegen
