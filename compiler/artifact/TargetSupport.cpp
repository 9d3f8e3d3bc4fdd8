//===- TargetSupport.cpp - what each backend can run, checked at compile time ===//

#include "compiler/artifact/TargetSupport.h"

#include "runtime/cpu/ElementwiseOps.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
namespace art = infer::artifact;

namespace {

LogicalResult checkProgram(Location loc, const art::ExecProgram &program, const char *which) {
  for (int i = 0; i < program.launches_size(); ++i) {
    const art::Launch &launch = program.launches(i);
    auto error = [&]() {
      return emitError(loc) << "--target cpu: " << which << " launch " << i << " ("
                            << art::Launch::Kind_Name(launch.kind()) << "): ";
    };
    if (launch.kind() == art::Launch::KIND_UNSPECIFIED || !art::Launch::Kind_IsValid(launch.kind()))
      return error() << "the cpu backend has no kernel of this kind";
    if (launch.kind() != art::Launch::ELEMENTWISE)
      continue;
    for (const art::RegionOp &op : launch.region().ops()) {
      if (!infer::cpu::runsElementwiseOp(op.name()))
        return error() << "the cpu backend cannot run '" << op.name()
                       << "' in an elementwise region (runtime/cpu/ElementwiseOps.h lists "
                          "what it runs)";
      for (const art::Attribute &attribute : op.attributes())
        if (attribute.value_case() == art::Attribute::kMlir)
          return error() << "the cpu backend cannot read attribute '" << attribute.name()
                         << "' of '" << op.name() << "' (" << attribute.mlir() << ")";
    }
  }
  return success();
}

} // namespace

LogicalResult infer::compiler::checkCpuTargetSupport(Location loc, const art::Manifest &manifest) {
  if (failed(checkProgram(loc, manifest.exec(), "forward program")))
    return failure();
  if (manifest.has_step() && failed(checkProgram(loc, manifest.step(), "step program")))
    return failure();
  return success();
}
