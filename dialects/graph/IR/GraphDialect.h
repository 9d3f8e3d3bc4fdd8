//===- GraphDialect.h - graph dialect declaration ---------------*- C++ -*-===//
#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
#define INFER_DIALECTS_GRAPH_IR_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace infer::graph {
class GraphDialect;
/// A handle to a blob in the graph dialect's resource section (a weight).
using WeightHandle = mlir::DialectResourceBlobHandle<GraphDialect>;
} // namespace infer::graph

#include "dialects/graph/IR/GraphOpsDialect.h.inc"

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHDIALECT_H
