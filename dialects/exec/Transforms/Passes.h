//===- Passes.h - exec dialect passes ---------------------------*- C++ -*-===//
#ifndef INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_H
#define INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_H

#include "dialects/exec/IR/ExecOps.h"
#include "runtime/cuda/abi/GemvGeometry.h"

#include "mlir/Pass/Pass.h"

namespace infer::exec {

#define GEN_PASS_DECL
#include "dialects/exec/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/exec/Transforms/Passes.h.inc"

} // namespace infer::exec

#endif // INFER_DIALECTS_EXEC_TRANSFORMS_PASSES_H
