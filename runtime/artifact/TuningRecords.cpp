//===- TuningRecords.cpp - GEMM tuning records: shapes, buckets, report --===//

#include "runtime/artifact/TuningRecords.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace infer::artifact {

int64_t powerOfTwoAtLeast(int64_t value) {
  int64_t bucket = 1;
  while (bucket < value)
    bucket *= 2;
  return bucket;
}

GemmShape GemmShape::bucket() const {
  GemmShape rounded = *this;
  rounded.tokens = powerOfTwoAtLeast(tokens);
  return rounded;
}

std::string GemmShape::key() const {
  return std::string(elementTypeName(type)) + " k" + std::to_string(k) + " n" + std::to_string(n) +
         (tokens > 0 ? " T" + std::to_string(tokens) : std::string()) +
         (transposed ? " nk" : " kn") + " bias" + std::to_string(int(bias)) + " residual" +
         std::to_string(int(residual)) + (fp8 ? " fp8" : "");
}

GemmShape shapeOf(const GemmTuningRecord &record) {
  GemmShape shape;
  shape.type = record.element_type();
  shape.k = record.k();
  shape.n = record.n();
  shape.tokens = record.tokens();
  shape.transposed = record.transposed();
  shape.bias = record.bias();
  shape.residual = record.residual();
  return shape;
}

GemmTuningRecord recordOf(const GemmShape &shape) {
  GemmTuningRecord record;
  record.set_element_type(shape.type);
  record.set_k(shape.k);
  record.set_n(shape.n);
  record.set_tokens(shape.tokens);
  record.set_transposed(shape.transposed);
  record.set_bias(shape.bias);
  record.set_residual(shape.residual);
  return record;
}

namespace {

bool hasRole(const Launch &launch, OperandRole role) {
  for (const Operand &operand : launch.operands())
    if (operand.role() == role)
      return true;
  return false;
}

/// The GEMMs of `program` whose records are `cuda` (may be null), by shape.
void addUses(const ExecProgram &program, const google::protobuf::RepeatedPtrField<CudaLaunch> *cuda,
             bool counted, std::map<GemmShape, int> &uses) {
  for (int i = 0; i < program.launches_size(); ++i) {
    const Launch &launch = program.launches(i);
    const bool dequantized = launch.kind() == Launch::QUANTIZED_GEMM && cuda && i < cuda->size() &&
                             cuda->Get(i).has_dequantize();
    if ((launch.kind() != Launch::GEMM && !dequantized) || launch.outputs_size() == 0 ||
        launch.outputs(0) >= uint32_t(program.buffers_size()))
      continue;
    GemmShape shape;
    shape.type = program.buffers(int(launch.outputs(0))).element_type();
    shape.k = intAttribute(launch, "k", 0);
    shape.n = intAttribute(launch, "n", 0);
    shape.transposed = dequantized || boolAttribute(launch, "transpose_weight");
    shape.bias = hasRole(launch, artifact::ROLE_BIAS);
    shape.residual = hasRole(launch, artifact::ROLE_RESIDUAL);
    uses[shape] += counted ? 1 : 0;
  }
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

std::string padded(std::string text, size_t width, bool right = true) {
  if (text.size() < width)
    text = right ? std::string(width - text.size(), ' ') + text
                 : text + std::string(width - text.size(), ' ');
  return text;
}

} // namespace

std::vector<GemmUse> gemmUses(const Manifest &manifest) {
  std::map<GemmShape, int> uses;
  const bool hasStep = manifest.has_step();
  if (manifest.has_exec())
    addUses(manifest.exec(), manifest.has_cuda() ? &manifest.cuda().launches() : nullptr, !hasStep,
            uses);
  if (hasStep)
    addUses(manifest.step(), manifest.has_cuda() ? &manifest.cuda().step_launches() : nullptr, true,
            uses);
  std::vector<GemmUse> result;
  for (const auto &[shape, launches] : uses)
    result.push_back({shape, launches});
  return result;
}

std::vector<int64_t> tokenBuckets(const Manifest &manifest) {
  int64_t largest = manifest.options().max_batch_tokens();
  if (manifest.has_exec())
    largest = std::max(largest, manifest.exec().arena().bound_tokens());
  std::vector<int64_t> buckets;
  for (int64_t tokens = 1; tokens <= powerOfTwoAtLeast(largest); tokens *= 2)
    buckets.push_back(tokens);
  return buckets;
}

std::vector<GemmShape> gemmBuckets(const Manifest &manifest) {
  const std::vector<int64_t> buckets = tokenBuckets(manifest);
  std::vector<GemmShape> shapes;
  for (const GemmUse &use : gemmUses(manifest))
    for (int64_t tokens : buckets) {
      shapes.push_back(use.shape);
      shapes.back().tokens = tokens;
    }
  return shapes;
}

Status checkTuningRecords(const TuningRecords &records) {
  const std::string where = "tuning records for '" + records.device() + "': ";
  std::set<GemmShape> seen;
  for (const GemmTuningRecord &record : records.gemm()) {
    const GemmShape shape = shapeOf(record);
    if (record.algorithm().size() != 64)
      return dataLossError(where + shape.key() + " has an algorithm of " +
                           std::to_string(record.algorithm().size()) + " bytes, not 64");
    if (shape.type != ELEMENT_TYPE_F32 && shape.type != ELEMENT_TYPE_BF16 &&
        shape.type != ELEMENT_TYPE_F16)
      return dataLossError(where + "a record of " + elementTypeName(shape.type) +
                           ", which cuBLASLt does not run here");
    constexpr int64_t kMax = int64_t(1) << 24;
    if (shape.k < 1 || shape.k > kMax || shape.n < 1 || shape.n > kMax || shape.tokens < 1 ||
        shape.tokens > kMax || powerOfTwoAtLeast(shape.tokens) != shape.tokens)
      return dataLossError(where + "a record of k " + std::to_string(shape.k) + ", n " +
                           std::to_string(shape.n) + ", tokens " + std::to_string(shape.tokens) +
                           " (k and n 1 to 2^24, tokens a power of two)");
    if (!std::isfinite(record.tuned_us()) || !std::isfinite(record.heuristic_us()) ||
        record.tuned_us() < 0 || record.heuristic_us() < 0)
      return dataLossError(where + shape.key() + " has times that are not finite and >= 0");
    if (!seen.insert(shape).second)
      return dataLossError(where + shape.key() + " appears twice");
  }
  return okStatus();
}

std::string tuningReport(const Manifest &manifest, const TuningRecords &records) {
  std::map<GemmShape, int> launches;
  for (const GemmUse &use : gemmUses(manifest))
    launches[use.shape] = use.launches;
  std::string text = "GEMM tuning records for " + records.device() + " (cuBLASLt " +
                     std::to_string(records.cublaslt_version()) +
                     "): " + std::to_string(records.gemm_size()) + "\n";
  text += "  " + padded("shape", 44, false) + padded("launches", 9) + padded("heuristic us", 14) +
          padded("tuned us", 10) + padded("speedup", 9) + padded("timed", 7) + "\n";
  // Per bucket: the GEMM time of one step of that size, summed over launches.
  std::map<int64_t, std::pair<double, double>> perStep;
  for (const GemmTuningRecord &record : records.gemm()) {
    GemmShape shape = shapeOf(record);
    const int64_t tokens = shape.tokens;
    shape.tokens = 0;
    const int count = launches.count(shape) ? launches[shape] : 0;
    text += "  " + padded(shapeOf(record).key(), 44, false) + padded(std::to_string(count), 9) +
            padded(fixed(record.heuristic_us(), 2), 14) + padded(fixed(record.tuned_us(), 2), 10) +
            padded(record.tuned_us() > 0 ? fixed(record.heuristic_us() / record.tuned_us(), 2) + "x"
                                         : std::string("-"),
                   9) +
            padded(std::to_string(record.candidates()), 7) + "\n";
    perStep[tokens].first += count * record.heuristic_us();
    perStep[tokens].second += count * record.tuned_us();
  }
  text += "  per step, every GEMM launch of the program at that size on cuBLASLt (decode steps "
          "run the GEMV kernels the IR chose where it has them):\n";
  text += "  " + padded("tokens", 8) + padded("heuristic us", 14) + padded("tuned us", 10) +
          padded("saved", 8) + "\n";
  for (const auto &[tokens, times] : perStep)
    text += "  " + padded(std::to_string(tokens), 8) + padded(fixed(times.first, 1), 14) +
            padded(fixed(times.second, 1), 10) +
            padded(times.first > 0 ? fixed(100.0 * (1 - times.second / times.first), 1) + "%"
                                   : std::string("-"),
                   8) +
            "\n";
  return text;
}

} // namespace infer::artifact
