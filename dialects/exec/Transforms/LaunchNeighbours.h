//===- LaunchNeighbours.h - what the kernel fusion passes ask ---*- C++ -*-===//
//
// Questions the fusion passes (GemmFusions.cpp, KvRotaryFusion.cpp) ask of a
// planned exec program before they let one kernel do a neighbouring launch's
// work: which launch is next to which (also the memory planner's question),
// who reads a buffer, whether two buffers share bytes at some step size, what
// type a value holds.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_EXEC_TRANSFORMS_LAUNCHNEIGHBOURS_H
#define INFER_DIALECTS_EXEC_TRANSFORMS_LAUNCHNEIGHBOURS_H

#include "dialects/exec/IR/ExecOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

namespace infer::exec {

/// The element type a buffer, weight or constant holds (a float weight as
/// the artifact stores it: in `weightType` when that is set); null if unknown.
inline mlir::Type elementTypeOf(mlir::Value value, mlir::Type weightType) {
  mlir::Operation *def = value.getDefiningOp();
  if (auto buffer = llvm::dyn_cast_or_null<BufferOp>(def))
    return buffer.getElementType();
  if (auto weight = llvm::dyn_cast_or_null<WeightOp>(def))
    if (auto shaped = llvm::dyn_cast<mlir::ShapedType>(weight.getTensorType())) {
      mlir::Type type = shaped.getElementType();
      return weightType && (type.isF32() || type.isBF16() || type.isF16()) ? weightType : type;
    }
  if (auto constant = llvm::dyn_cast_or_null<ConstantOp>(def))
    return constant.getValue().getShapedType().getElementType();
  return {};
}

/// Whether two planned arena buffers share no byte at T = 1 and T = last
/// (offsets and sizes are affine in T, so then at no T in between).
inline bool apartUpTo(mlir::Value a, mlir::Value b, int64_t last) {
  auto x = llvm::dyn_cast_or_null<BufferOp>(a.getDefiningOp());
  auto y = llvm::dyn_cast_or_null<BufferOp>(b.getDefiningOp());
  if (!x || !y || !x.getOffset() || !y.getOffset())
    return false;
  auto before = [](BufferOp first, BufferOp second, int64_t tokens) {
    return first.getOffset()->at(tokens) + first.getSize().at(tokens) <=
           second.getOffset()->at(tokens);
  };
  return (before(x, y, 1) && before(x, y, last)) || (before(y, x, 1) && before(y, x, last));
}

/// The launch before `op` in program order, skipping what is not a launch.
inline mlir::Operation *previousLaunch(mlir::Operation *op) {
  mlir::Operation *previous = op->getPrevNode();
  while (previous && llvm::isa<BufferOp, WeightOp, ConstantOp, InputOp, ArenaOp>(previous))
    previous = previous->getPrevNode();
  return previous;
}

/// The launch after `op` in program order, skipping what is not a launch.
inline mlir::Operation *nextLaunch(mlir::Operation *op) {
  mlir::Operation *next = op->getNextNode();
  while (next && llvm::isa<BufferOp, WeightOp, ConstantOp>(next))
    next = next->getNextNode();
  return next;
}

/// The arena's bound_tokens (the step size the planner planned up to), or 0
/// before planning.
inline int64_t plannedBound(ProgramOp program) {
  int64_t bound = 0;
  for (ArenaOp arena : program.getOps<ArenaOp>())
    if (std::optional<uint64_t> tokens = arena.getBoundTokens())
      bound = int64_t(*tokens);
  return bound;
}

/// Bytes of one element of `type` (an int or float type), 0 for others.
inline int elementBytesOf(mlir::Type type) {
  return type && type.isIntOrFloat() ? int((type.getIntOrFloatBitWidth() + 7) / 8) : 0;
}

/// Whether `value`'s only readers are `a` and `b` (no other launch, no program output).
inline bool onlyUsedBy(mlir::Value value, mlir::Operation *a, mlir::Operation *b) {
  return llvm::all_of(value.getUsers(),
                      [&](mlir::Operation *user) { return user == a || user == b; });
}

} // namespace infer::exec

#endif // INFER_DIALECTS_EXEC_TRANSFORMS_LAUNCHNEIGHBOURS_H
