//===- AttachEpilogues.cpp - residual adds into the GEMM epilogue ---------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace infer::graph {
#define GEN_PASS_DEF_ATTACHEPILOGUESPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// add(linear(x, W), r), r of the result's type → linear(x, W) residual(r).
struct AttachResidual : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    for (auto [product, residual] : {std::make_pair(op.getLhs(), op.getRhs()),
                                     std::make_pair(op.getRhs(), op.getLhs())}) {
      auto linear = product.getDefiningOp<LinearOp>();
      // One use: the add is the only reader, so the residual cannot depend on it.
      if (!linear || linear.getResidual() || !linear->hasOneUse() ||
          residual.getType() != op.getType() || linear.getType() != op.getType())
        continue;
      rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), linear.getInput(), linear.getWeight(),
                                            linear.getBias(), residual,
                                            linear.getTransposeWeightAttr());
      rewriter.eraseOp(linear);
      return success();
    }
    return rewriter.notifyMatchFailure(op, "not a residual add after a linear");
  }
};

struct AttachEpiloguesPass : public infer::graph::impl::AttachEpiloguesPassBase<AttachEpiloguesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateAttachEpiloguesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void infer::graph::populateAttachEpiloguesPatterns(RewritePatternSet &patterns) {
  patterns.add<AttachResidual>(patterns.getContext());
}
