//===- ElementwiseOps.h - the region ops the cpu backend runs ---*- C++ -*-===//
//
// The graph ops an exec.elementwise region may hold (what
// GroupElementwise.cpp puts in a fusion group: float elementwise ops, the
// reductions it absorbs and scalar constants) and whether the cpu backend's
// ElementwiseKernel.cpp runs each. Header only, so the compiler can ask
// (a --target cpu compile refuses a region op this list does not name).
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_CPU_ELEMENTWISEOPS_H
#define INFER_RUNTIME_CPU_ELEMENTWISEOPS_H

#include <string_view>

namespace infer::cpu {

/// Every region op ElementwiseKernel.cpp interprets, by its MLIR name.
inline constexpr std::string_view kElementwiseOps[] = {
    "graph.constant",
    // Unary.
    "graph.neg",
    "graph.abs",
    "graph.sqrt",
    "graph.reciprocal",
    "graph.exp",
    "graph.log",
    "graph.sin",
    "graph.cos",
    "graph.tanh",
    "graph.erf",
    "graph.sigmoid",
    "graph.relu",
    "graph.identity",
    "graph.cast",
    "graph.gelu",
    // Binary, numpy broadcasting.
    "graph.add",
    "graph.sub",
    "graph.mul",
    "graph.div",
    "graph.pow",
    "graph.max",
    "graph.min",
    // Others.
    "graph.clip",
    "graph.where",
    "graph.reduce_mean",
    "graph.reduce_sum",
    "graph.reduce_max",
};

/// Whether the cpu backend runs region op `name` (e.g. "graph.tanh").
/// graph.clip with exactly one of its two bounds also needs the region op's
/// `operandSegmentSizes` attribute to say which one it is.
constexpr bool runsElementwiseOp(std::string_view name) {
  for (std::string_view op : kElementwiseOps)
    if (op == name)
      return true;
  return false;
}

} // namespace infer::cpu

#endif // INFER_RUNTIME_CPU_ELEMENTWISEOPS_H
