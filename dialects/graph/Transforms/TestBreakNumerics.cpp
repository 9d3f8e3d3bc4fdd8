//===- TestBreakNumerics.cpp - a deliberately wrong rewrite for tests -----===//

#include "dialects/graph/Transforms/Passes.h"

#include "mlir/IR/TypeUtilities.h"

namespace infer::graph {
#define GEN_PASS_DEF_TESTBREAKNUMERICSPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

struct TestBreakNumericsPass
    : public infer::graph::impl::TestBreakNumericsPassBase<TestBreakNumericsPass> {
  void runOnOperation() override {
    AddOp first;
    getOperation().walk([&](AddOp add) {
      if (!first && isa<FloatType>(getElementTypeOrSelf(add.getType())))
        first = add;
    });
    if (!first)
      return;
    OpBuilder builder(first);
    auto sub = SubOp::create(builder, first.getLoc(), first.getType(), first.getLhs(), first.getRhs());
    first.replaceAllUsesWith(sub.getResult());
    first.erase();
  }
};

} // namespace
