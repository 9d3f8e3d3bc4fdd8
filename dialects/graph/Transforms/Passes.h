//===- Passes.h - graph dialect optimization passes -------------*- C++ -*-===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_H

#include "dialects/graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace infer::graph {

#define GEN_PASS_DECL
#include "dialects/graph/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/graph/Transforms/Passes.h.inc"

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_H
