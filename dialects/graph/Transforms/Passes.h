//===- Passes.h - graph dialect optimization passes -------------*- C++ -*-===//
#ifndef INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_H
#define INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_H

#include "dialects/graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace infer::graph {

#define GEN_PASS_DECL
#include "dialects/graph/Transforms/Passes.h.inc"

/// Pattern sets behind the raising passes, so pipelines can combine them.
void populateRaiseNormsPatterns(mlir::RewritePatternSet &patterns);
void populateRaiseLinearPatterns(mlir::RewritePatternSet &patterns);
void populateRaiseMlpPatterns(mlir::RewritePatternSet &patterns);
void populateAttachEpiloguesPatterns(mlir::RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "dialects/graph/Transforms/Passes.h.inc"

} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_TRANSFORMS_PASSES_H
