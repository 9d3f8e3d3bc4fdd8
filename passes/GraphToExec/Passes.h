//===- Passes.h - graph to exec conversion ----------------------*- C++ -*-===//
#ifndef INFER_PASSES_GRAPHTOEXEC_PASSES_H
#define INFER_PASSES_GRAPHTOEXEC_PASSES_H

#include "dialects/exec/IR/ExecOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace infer {

#define GEN_PASS_DECL
#include "passes/GraphToExec/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/GraphToExec/Passes.h.inc"

} // namespace infer

#endif // INFER_PASSES_GRAPHTOEXEC_PASSES_H
