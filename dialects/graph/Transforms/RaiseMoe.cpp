//===- RaiseMoe.cpp - top-k routing and batched experts → graph.moe -------===//
//
// The exporters write a mixture-of-experts MLP (Mixtral, Qwen-MoE) as: router
// linear → softmax → top_k; the expert ids gather each expert's weights
// (gather_nd of [experts, ...] tensors) for a batched matmul per (token,
// choice); the routing weights (divided by their sum when normalized) scale
// the experts' outputs, summed over the k choices. The match starts at
// graph.top_k and only collects the pieces; validation proves the rewrite.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/Validation.h"

#include "llvm/ADT/SetVector.h"

namespace infer::graph {
#define GEN_PASS_DEF_RAISEMOEPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

/// The ops reachable from `value` through at most `depth` uses.
SmallVector<Operation *> usersWithin(Value value, int depth) {
  llvm::SetVector<Operation *> seen;
  SmallVector<std::pair<Value, int>> work = {{value, 0}};
  while (!work.empty()) {
    auto [current, level] = work.pop_back_val();
    if (level >= depth)
      continue;
    for (Operation *user : current.getUsers())
      if (seen.insert(user))
        for (Value result : user->getResults())
          work.push_back({result, level + 1});
  }
  return SmallVector<Operation *>(seen.begin(), seen.end());
}

struct MoeMatch {
  LinearOp router;    // logits = router(x)
  Value gateUp, down; // [experts, 2 * inter, hidden], [experts, hidden, inter]
  Value output;       // the sum over the k choices
  int64_t topK = 0;
  bool normalize = false;
};

std::optional<MoeMatch> matchMoe(TopKOp topK) {
  MoeMatch match;
  std::optional<SmallVector<int64_t>> k = getConstantInts(topK.getK());
  if (!k || k->size() != 1)
    return std::nullopt;
  match.topK = (*k)[0];
  auto softmax = topK.getInput().getDefiningOp<SoftmaxOp>();
  auto router = softmax ? softmax.getInput().getDefiningOp<LinearOp>() : LinearOp();
  if (!router || router.getBias() || router.getResidual() || !isWeight(router.getWeight()) ||
      rankOf(topK.getInput()) != 2 || topK.getAxis() != 1)
    return std::nullopt;
  match.router = router;
  std::optional<int64_t> hidden = staticDim(router.getInput(), -1);
  // The experts' weights, gathered by the chosen ids.
  for (Operation *op : usersWithin(topK.getIndices(), 5))
    if (auto gather = dyn_cast<GatherNDOp>(op)) {
      Value data = gather.getData();
      auto type = dyn_cast<RankedTensorType>(data.getType());
      if (!type || type.getRank() != 3 || !type.hasStaticShape() || !isWeight(data))
        return std::nullopt;
      if (type.getDimSize(2) == hidden && !match.gateUp)
        match.gateUp = data;
      else if (type.getDimSize(1) == hidden && !match.down)
        match.down = data;
    }
  if (!match.gateUp || !match.down)
    return std::nullopt;
  // Normalized: values / reduce_sum(values).
  for (Operation *user : topK.getValues().getUsers())
    if (auto div = dyn_cast<DivOp>(user); div && div.getLhs() == topK.getValues())
      if (auto sum = div.getRhs().getDefiningOp<ReduceSumOp>();
          sum && sum.getInput() == topK.getValues())
        match.normalize = true;
  // The sum over the choices: the first reduce_sum downstream that is not the
  // normalization's.
  for (Operation *op : usersWithin(topK.getValues(), 8))
    if (auto sum = dyn_cast<ReduceSumOp>(op); sum && sum.getInput() != topK.getValues()) {
      match.output = sum.getResult();
      break;
    }
  if (!match.output)
    return std::nullopt;
  return match;
}

/// The router's `weight` as [experts, hidden] (a linear's untransposed
/// weight is [hidden, experts]).
Value routerRows(OpBuilder &builder, Location loc, LinearOp router, Value weight) {
  if (router.getTransposeWeight())
    return weight;
  auto type = cast<RankedTensorType>(weight.getType());
  return PackWeightsOp::create(builder, loc, type.clone({type.getDimSize(1), type.getDimSize(0)}),
                               ValueRange{weight}, builder.getI64IntegerAttr(0),
                               builder.getUnitAttr());
}

bool raiseMoe(func::FuncOp func, TopKOp topK) {
  std::optional<MoeMatch> match = matchMoe(topK);
  if (!match)
    return false;
  // The tokens the experts read: the router's input or what it is a reshape
  // of ([b, s, h] before the flattening to [b*s, h]); the output the same
  // shape (the sum, or its reshape back).
  SmallVector<Value> candidates = {match->router.getInput()};
  if (auto reshape = match->router.getInput().getDefiningOp<ReshapeOp>())
    candidates.push_back(reshape.getData());
  for (Value x : candidates) {
    Value output = match->output;
    if (output.getType() != x.getType() && output.hasOneUse())
      if (auto back = dyn_cast<ReshapeOp>(*output.getUsers().begin()))
        output = back.getResult();
    // Else the experts' sum stays flattened [b*s, hidden] (Qwen2-MoE adds its
    // shared expert there): the replacement is reshaped to it.
    auto outType = cast<RankedTensorType>(output.getType());
    bool flatten = output.getType() != x.getType();
    if (flatten && (outType.getRank() != 2 || outType.isDynamicDim(1) ||
                    outType.getElementType() != cast<TensorType>(x.getType()).getElementType()))
      continue;
    // The weights are free inputs too: the proof holds for any weights.
    auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
      Value rows = routerRows(builder, loc, match->router, inputs[1]);
      Value moe =
          MoeOp::create(builder, loc, inputs[0].getType(), inputs[0], rows, inputs[2], inputs[3],
                        builder.getI64IntegerAttr(match->topK),
                        builder.getBoolAttr(match->normalize), builder.getStringAttr("silu"));
      if (!flatten)
        return moe;
      return ReshapeOp::create(builder, loc, outType, moe,
                               i64Vector(builder, loc, {-1, outType.getDimSize(1)}),
                               builder.getBoolAttr(false));
    };
    SmallVector<Value> inputs = {x, match->router.getWeight(), match->gateUp, match->down};
    // Few tokens: the exported form gathers each token's experts' weights
    // ([tokens * top_k, 2 * inter, hidden]), a GB a token at real sizes.
    ValidationOptions options;
    options.sizes = {{1, 1}, {1, 3}, {2, 2}};
    if (!validateReplacement(func, inputs, output, build, options))
      continue;
    OpBuilder builder(output.getDefiningOp());
    output.replaceAllUsesWith(build(builder, output.getLoc(), inputs));
    return true;
  }
  return false;
}

struct RaiseMoePass : public infer::graph::impl::RaiseMoePassBase<RaiseMoePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<TopKOp> topKs;
    func.walk([&](TopKOp op) { topKs.push_back(op); });
    for (TopKOp topK : topKs)
      (void)raiseMoe(func, topK);
  }
};

} // namespace
