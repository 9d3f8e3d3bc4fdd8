//===- RaiseMlp.cpp - RaiseMlpPass (skeleton, being written) ----------===//

#include "dialects/graph/Transforms/Passes.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISEMLPPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct RaiseMlpPass : public infer::graph::impl::RaiseMlpPassBase<RaiseMlpPass> {
  void runOnOperation() override {}
};

} // namespace
