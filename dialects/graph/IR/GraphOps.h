//===- GraphOps.h - graph dialect ops and attributes ------------*- C++ -*-===//
#ifndef INFER_DIALECTS_GRAPH_IR_GRAPHOPS_H
#define INFER_DIALECTS_GRAPH_IR_GRAPHOPS_H

#include "dialects/graph/IR/GraphDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_ATTRDEF_CLASSES
#include "dialects/graph/IR/GraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/graph/IR/GraphOps.h.inc"

namespace infer::graph {
/// The int64 elements of a graph.constant (shape vectors, axes), if `value` is one.
std::optional<llvm::SmallVector<int64_t>> getConstantInts(mlir::Value value);

/// The name the artifact stores a compile-time weight under, which the exec
/// program refers to it by: a graph.weight's key; "a+b+c" for a
/// graph.pack_weights of a, b and c; "<source>:int4g32" and
/// "<source>:int4g32:scales" for a graph.quantize_weight's q and scales.
/// nullopt for other values (and packs of anything but graph.weight).
std::optional<std::string> storedWeightName(mlir::Value value);
} // namespace infer::graph

#endif // INFER_DIALECTS_GRAPH_IR_GRAPHOPS_H
