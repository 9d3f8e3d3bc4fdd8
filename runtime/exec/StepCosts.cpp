//===- StepCosts.cpp - the GEMM bytes and FLOPs of a step -----------------===//

#include "runtime/exec/StepCosts.h"

#include "runtime/artifact/ArtifactFormat.h"
#include "runtime/exec/ProgramIO.h"

#include <algorithm>

namespace infer::exec {
namespace art = artifact;

StepCosts stepCosts(const art::Manifest &manifest, const art::ExecProgram &program) {
  StepCosts costs;
  for (const art::Launch &launch : program.launches()) {
    const bool quantized = launch.kind() == art::Launch::QUANTIZED_GEMM;
    if (launch.kind() != art::Launch::GEMM && !quantized)
      continue;
    // A quantized GEMM streams its quantized bytes and their scales.
    for (const art::Operand &operand : launch.operands())
      if ((operand.role() == art::ROLE_WEIGHT ||
           (quantized && (operand.role() == art::ROLE_Q || operand.role() == art::ROLE_SCALES))) &&
          operand.ref().target_case() == art::Ref::kWeight &&
          int(operand.ref().weight()) < manifest.weights_size())
        costs.gemmWeightBytes += int64_t(manifest.weights(int(operand.ref().weight())).size());
    int64_t macs = art::intAttribute(launch, "k", 0) * art::intAttribute(launch, "n", 0);
    (runsPerLogitRow(program, launch) ? costs.macsPerLogitRow : costs.macsPerToken) += macs;
  }
  return costs;
}

double stepFloorSeconds(const StepCosts &costs, int64_t tokens, int64_t logitRows) {
  double bytes = double(costs.gemmWeightBytes);
  double flops = 2.0 * (double(costs.macsPerToken) * double(tokens) +
                        double(costs.macsPerLogitRow) * double(logitRows));
  return std::max(bytes / kHbmBytesPerSecond, flops / kDenseFlopsPerSecond);
}

} // namespace infer::exec
