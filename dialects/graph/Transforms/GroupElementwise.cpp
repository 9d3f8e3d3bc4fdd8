//===- GroupElementwise.cpp - elementwise clusters → graph.fusion_group ---===//
//
// Each elementwise op takes in the elementwise ops (and reductions) that feed
// only it, recursively: the clusters are trees, so they are always convex (no
// path leaves a cluster and comes back) and each becomes one kernel. Scalar
// constants move into the group; everything else is an operand.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace infer::graph {
#define GEN_PASS_DEF_GROUPELEMENTWISEPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

bool isElementwise(Operation *op) {
  return isa<NegOp, AbsOp, SqrtOp, ReciprocalOp, ExpOp, LogOp, SinOp, CosOp, TanhOp, ErfOp, SigmoidOp,
             ReluOp, IdentityOp, GeluOp, ClipOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp,
             WhereOp, CastOp>(op);
}

bool isReduction(Operation *op) { return isa<ReduceMeanOp, ReduceSumOp, ReduceMaxOp>(op); }

bool producesFloat(Operation *op) {
  return op->getNumResults() == 1 && isa<FloatType>(getElementTypeOrSelf(op->getResult(0).getType()));
}

bool isScalarConstant(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  return constant && cast<ShapedType>(constant.getType()).getNumElements() == 1;
}

/// The ops of the tree rooted at `root` (callers sort them into block order).
/// A worklist, not recursion: a chain of 100,000 elementwise ops is one tree.
void collectTree(Operation *root, llvm::SetVector<Operation *> &tree) {
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    tree.insert(op);
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != root->getBlock() || !operand.hasOneUse() ||
          !producesFloat(producer) || !(isElementwise(producer) || isReduction(producer)))
        continue;
      worklist.push_back(producer);
    }
  }
}

void groupTree(Operation *root) {
  llvm::SetVector<Operation *> tree;
  collectTree(root, tree);
  SmallVector<Operation *> ops(tree.begin(), tree.end());
  llvm::sort(ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  llvm::SetVector<Value> inputs;
  for (Operation *op : ops)
    for (Value operand : op->getOperands())
      if (!tree.contains(operand.getDefiningOp()) && !isScalarConstant(operand))
        inputs.insert(operand);

  OpBuilder builder(root);
  auto group = FusionGroupOp::create(builder, root->getLoc(), root->getResultTypes(),
                                     inputs.getArrayRef());
  Block *body = builder.createBlock(&group.getBody());
  IRMapping mapping;
  for (Value input : inputs)
    mapping.map(input, body->addArgument(input.getType(), input.getLoc()));
  builder.setInsertionPointToStart(body);
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (!mapping.contains(operand) && isScalarConstant(operand))
        mapping.map(operand, builder.clone(*operand.getDefiningOp())->getResult(0));
    builder.clone(*op, mapping);
  }
  YieldOp::create(builder, root->getLoc(), ValueRange{mapping.lookup(root->getResult(0))});
  root->getResult(0).replaceAllUsesWith(group.getResult(0));
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

struct GroupElementwisePass
    : public infer::graph::impl::GroupElementwisePassBase<GroupElementwisePass> {
  void runOnOperation() override {
    // Roots: float elementwise ops that are not absorbed by their consumer.
    SmallVector<Operation *> roots;
    for (Operation &op : getOperation().getBody().front()) {
      if (!isElementwise(&op) || !producesFloat(&op))
        continue;
      Value result = op.getResult(0);
      bool absorbed = result.hasOneUse() && isElementwise(*result.getUsers().begin()) &&
                      producesFloat(*result.getUsers().begin());
      if (!absorbed)
        roots.push_back(&op);
    }
    for (Operation *root : roots)
      groupTree(root);
  }
};

} // namespace
