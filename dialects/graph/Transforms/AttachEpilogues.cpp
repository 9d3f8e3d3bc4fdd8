//===- AttachEpilogues.cpp - residual adds into the GEMM epilogue ---------===//
//
//   add(linear(x, W), r)                 → linear(x, W) residual(r)
//   add(add(linear(a, Wa), linear(m, Wm)), r)      (GPT-NeoX's parallel residual)
//                                        → linear(m, Wm) residual(linear(a, Wa) residual(r))
//
//===----------------------------------------------------------------------===//

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

/// A linear whose result only the add reads, with no residual yet, of the
/// add's type.
LinearOp freeLinear(Value value, AddOp add) {
  auto linear = value.getDefiningOp<LinearOp>();
  if (!linear || linear.getResidual() || !linear->hasOneUse() || linear.getType() != add.getType())
    return LinearOp();
  return linear;
}

/// For add(add(linear, linear), r): the inner add, both linears (earlier
/// first) and r.
struct ParallelResidual {
  AddOp inner;
  LinearOp first, second;
  Value residual;
};

std::optional<ParallelResidual> matchParallelResidual(AddOp op) {
  for (auto [sum, residual] : {std::make_pair(op.getLhs(), op.getRhs()),
                               std::make_pair(op.getRhs(), op.getLhs())}) {
    auto inner = sum.getDefiningOp<AddOp>();
    if (!inner || !inner->hasOneUse() || inner.getType() != op.getType() ||
        residual.getType() != op.getType())
      continue;
    LinearOp a = freeLinear(inner.getLhs(), inner), b = freeLinear(inner.getRhs(), inner);
    if (!a || !b || a == b)
      continue;
    if (b->isBeforeInBlock(a))
      std::swap(a, b);
    return ParallelResidual{inner, a, b, residual};
  }
  return std::nullopt;
}

/// add(add(linear, linear), r) → two linears chained through their residuals:
/// both epilogues take one add each, where the inner add alone would leave
/// the outer one (r) as a separate kernel.
struct AttachParallelResidual : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    std::optional<ParallelResidual> match = matchParallelResidual(op);
    if (!match)
      return rewriter.notifyMatchFailure(op, "not add(add(linear, linear), r)");
    // Built at the outer add: r and both linears' operands dominate it.
    auto first = LinearOp::create(rewriter, match->first.getLoc(), op.getType(),
                                  match->first.getInput(), match->first.getWeight(),
                                  match->first.getBias(), match->residual,
                                  match->first.getTransposeWeightAttr());
    rewriter.replaceOpWithNewOp<LinearOp>(op, op.getType(), match->second.getInput(),
                                          match->second.getWeight(), match->second.getBias(),
                                          first.getResult(), match->second.getTransposeWeightAttr());
    rewriter.eraseOp(match->inner);
    rewriter.eraseOp(match->first);
    rewriter.eraseOp(match->second);
    return success();
  }
};

/// add(linear(x, W), r), r of the result's type → linear(x, W) residual(r).
struct AttachResidual : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op, PatternRewriter &rewriter) const override {
    // The inner add of a parallel residual is left to AttachParallelResidual.
    if (op->hasOneUse())
      if (auto outer = dyn_cast<AddOp>(*op->getUsers().begin()))
        if (std::optional<ParallelResidual> parallel = matchParallelResidual(outer);
            parallel && parallel->inner == op)
          return rewriter.notifyMatchFailure(op, "inner add of a parallel residual");
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
  patterns.add<AttachResidual, AttachParallelResidual>(patterns.getContext());
}
