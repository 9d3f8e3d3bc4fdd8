//===- RaiseLinear.cpp - RaiseLinearPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISELINEARPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct RaiseLinearPass : public infer::graph::impl::RaiseLinearPassBase<RaiseLinearPass> {
  void runOnOperation() override {}
};

} // namespace
