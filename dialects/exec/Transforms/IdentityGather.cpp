//===- IdentityGather.cpp - logit-row gathers a decode step may skip ------===//
//
// Decides, on the planned step program, which exec.gather_rows a backend
// may skip in steps where it is the identity (`elidable`); Passes.td states
// the rule. The cuda backend only reads the attribute.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/IR/ExecOps.h"
#include "dialects/exec/Transforms/LaunchNeighbours.h"
#include "dialects/exec/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace infer::exec {
#define GEN_PASS_DEF_ELIDEIDENTITYGATHERPASS
#include "dialects/exec/Transforms/Passes.h.inc"
} // namespace infer::exec

using namespace mlir;
using namespace infer::exec;

namespace {

/// Whether no launch after `gather` names a buffer other than its input
/// that shares bytes with the input at some T up to `bound` (so none writes
/// over it), and the input holds the output's element type.
bool elidable(GatherRowsOp gather, int64_t bound) {
  Value input = gather.getInput();
  Type type = elementTypeOf(input, Type());
  if (bound <= 0 || !type || type != elementTypeOf(gather.getOut(), Type()))
    return false;
  for (Operation *later = nextLaunch(gather); later; later = nextLaunch(later))
    for (Value operand : later->getOperands())
      if (operand != input && isa_and_nonnull<BufferOp>(operand.getDefiningOp()) &&
          !apartUpTo(operand, input, bound))
        return false;
  return true;
}

struct ElideIdentityGatherPass
    : public infer::exec::impl::ElideIdentityGatherPassBase<ElideIdentityGatherPass> {
  using ElideIdentityGatherPassBase::ElideIdentityGatherPassBase;

  void runOnOperation() override {
    const int64_t bound = plannedBound(getOperation());
    Builder builder(&getContext());
    getOperation().walk([&](GatherRowsOp gather) {
      if (elidable(gather, bound))
        gather.setElidableAttr(builder.getBoolAttr(true));
      else
        gather.removeElidableAttr();
    });
  }
};

} // namespace
