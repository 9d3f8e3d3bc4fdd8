//===- AttachEpilogues.cpp - AttachEpiloguesPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_ATTACHEPILOGUESPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct AttachEpiloguesPass : public infer::graph::impl::AttachEpiloguesPassBase<AttachEpiloguesPass> {
  void runOnOperation() override {}
};

} // namespace
