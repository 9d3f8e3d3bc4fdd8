//===- ExecOps.cpp - exec dialect op verifiers ----------------------------===//

#include "dialects/exec/IR/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace infer::exec;

LogicalResult infer::exec::verifyLaunchOutput(Operation *op, Value out) {
  if (!out.getDefiningOp<BufferOp>())
    return op->emitOpError() << "writes a buffer that is not an exec.buffer of the arena";
  return success();
}

#include "dialects/exec/IR/ExecInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "dialects/exec/IR/ExecOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

ArenaOp ProgramOp::getArena() {
  for (Operation &op : getBody().front())
    if (auto arena = dyn_cast<ArenaOp>(op))
      return arena;
  return nullptr;
}

LogicalResult ProgramOp::verify() {
  Block &block = getBody().front();
  unsigned arenas = 0;
  for (Operation &op : block)
    arenas += isa<ArenaOp>(op);
  if (arenas != 1)
    return emitOpError() << "needs exactly one exec.arena, found " << arenas;
  if (block.empty() || !isa<ReturnOp>(block.back()))
    return emitOpError() << "must end with exec.return";
  return success();
}

//===----------------------------------------------------------------------===//
// BufferOp
//===----------------------------------------------------------------------===//

LogicalResult BufferOp::verify() {
  auto arena = getArena().getDefiningOp<ArenaOp>();
  if (!arena)
    return emitOpError() << "arena operand must be an exec.arena";
  if (!getOffset() || !arena.getSize() || !arena.getBoundTokens())
    return success();
  // A planned buffer must lie inside the arena at the bound (and, since
  // all three are affine, at every T up to it when the per-token terms fit).
  int64_t bound = *arena.getBoundTokens();
  int64_t end = getOffset()->at(bound) + getSize().at(bound);
  if (end > arena.getSize()->at(bound))
    return emitOpError() << "ends at byte " << end << " at T = " << bound
                         << ", past the arena's " << arena.getSize()->at(bound) << " bytes";
  return success();
}

//===----------------------------------------------------------------------===//
// ElementwiseOp
//===----------------------------------------------------------------------===//

LogicalResult ElementwiseOp::verify() {
  if (getOuts().empty())
    return emitOpError() << "needs at least one output buffer";
  for (Value out : getOuts())
    if (failed(verifyLaunchOutput(getOperation(), out)))
      return failure();
  return success();
}

LogicalResult ElementwiseOp::verifyRegions() {
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError() << "region has " << block.getNumArguments() << " arguments for "
                         << getInputs().size() << " inputs";
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError() << "region must end with exec.yield";
  if (yield.getValues().size() != getOuts().size())
    return emitOpError() << "yields " << yield.getValues().size() << " values for "
                         << getOuts().size() << " output buffers";
  return success();
}
