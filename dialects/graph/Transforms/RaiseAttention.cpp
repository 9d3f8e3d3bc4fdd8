//===- RaiseAttention.cpp - RaiseAttentionPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISEATTENTIONPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct RaiseAttentionPass : public infer::graph::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  void runOnOperation() override {}
};

} // namespace
