//===- FuseHorizontal.cpp - FuseHorizontalPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_FUSEHORIZONTALPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct FuseHorizontalPass : public infer::graph::impl::FuseHorizontalPassBase<FuseHorizontalPass> {
  void runOnOperation() override {}
};

} // namespace
