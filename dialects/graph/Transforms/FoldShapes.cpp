//===- FoldShapes.cpp - FoldShapesPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_FOLDSHAPESPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct FoldShapesPass : public infer::graph::impl::FoldShapesPassBase<FoldShapesPass> {
  void runOnOperation() override {}
};

} // namespace
