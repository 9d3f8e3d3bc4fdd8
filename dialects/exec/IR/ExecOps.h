//===- ExecOps.h - exec dialect types, attributes and ops -------*- C++ -*-===//
#ifndef INFER_DIALECTS_EXEC_IR_EXECOPS_H
#define INFER_DIALECTS_EXEC_IR_EXECOPS_H

#include "dialects/exec/IR/ExecDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_TYPEDEF_CLASSES
#include "dialects/exec/IR/ExecOpsTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/exec/IR/ExecOpsAttrs.h.inc"

namespace infer::exec {
/// A launch writes `out`, which must be an `exec.buffer` (an arena range,
/// never a weight or a constant).
llvm::LogicalResult verifyLaunchOutput(mlir::Operation *op, mlir::Value out);
/// Whether a launch's operand group `name` (LaunchOpInterface) is the buffers
/// it writes (`out`; an elementwise launch's `outs`) rather than an operand role.
inline bool isWrittenGroup(llvm::StringRef name) { return name == "out" || name == "outs"; }
} // namespace infer::exec

#include "dialects/exec/IR/ExecInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/exec/IR/ExecOps.h.inc"

#endif // INFER_DIALECTS_EXEC_IR_EXECOPS_H
