//===- GroupElementwise.cpp - GroupElementwisePass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_GROUPELEMENTWISEPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct GroupElementwisePass : public infer::graph::impl::GroupElementwisePassBase<GroupElementwisePass> {
  void runOnOperation() override {}
};

} // namespace
