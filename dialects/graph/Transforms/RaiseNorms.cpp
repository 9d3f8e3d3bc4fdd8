//===- RaiseNorms.cpp - RaiseNormsPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISENORMSPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct RaiseNormsPass : public infer::graph::impl::RaiseNormsPassBase<RaiseNormsPass> {
  void runOnOperation() override {}
};

} // namespace
