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

#include "mlir/Analysis/SliceAnalysis.h"
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
  // DeepSeek-V3's routing (graph.moe's scoring, score_bias, groups, scale).
  bool sigmoid = false;
  Value scoreBias;
  int64_t groups = 1, topkGroups = 1;
  double scale = 1.0;
};

/// DeepSeek-V3's router before its final top_k: sigmoid scores of the router
/// linear, plus a bias [experts] for the choice, and group-limited (a reshape
/// to [tokens, groups, experts / groups], a top_k of the groups). Fills
/// `match`'s router and routing fields; `weights` becomes the routing
/// weights (the scores the final top_k's ids gather).
bool matchSigmoidRouting(TopKOp topK, MoeMatch &match, Value &weights) {
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  options.filter = [](Operation *op) { return !isa<LinearOp>(op); }; // stop at the router
  if (Operation *def = topK.getInput().getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  if (slice.size() > 80)
    return false;
  std::optional<int64_t> experts = staticDim(topK.getInput(), 1);
  SigmoidOp sigmoid;
  for (Operation *op : slice)
    if (auto s = dyn_cast<SigmoidOp>(op))
      if (auto router = s.getInput().getDefiningOp<LinearOp>();
          router && !router.getBias() && !router.getResidual() && isWeight(router.getWeight()) &&
          staticDim(router.getResult(), -1) == experts) {
        if (sigmoid)
          return false;
        sigmoid = s;
        match.router = router;
      }
  if (!sigmoid || !experts)
    return false;
  match.sigmoid = true;
  for (Operation *user : sigmoid.getResult().getUsers()) {
    if (auto add = dyn_cast<AddOp>(user); add && slice.contains(add)) {
      Value other = add.getLhs() == sigmoid.getResult() ? add.getRhs() : add.getLhs();
      auto type = dyn_cast<RankedTensorType>(other.getType());
      if (type && type.getShape() == ArrayRef<int64_t>{*experts} &&
          isa_and_nonnull<WeightOp, ConstantOp>(other.getDefiningOp()))
        match.scoreBias = other;
    }
    if (auto gather = dyn_cast<GatherElementsOp>(user);
        gather && gather.getIndices() == topK.getIndices())
      weights = gather.getResult();
  }
  for (Operation *op : slice) {
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      auto type = cast<RankedTensorType>(reshape.getResult().getType());
      if (type.getRank() == 3 && !type.isDynamicDim(1) && !type.isDynamicDim(2) &&
          type.getDimSize(1) * type.getDimSize(2) == *experts && type.getDimSize(1) > 1)
        match.groups = type.getDimSize(1);
    }
    if (auto groupTopK = dyn_cast<TopKOp>(op); groupTopK && rankOf(groupTopK.getInput()) == 2)
      if (std::optional<SmallVector<int64_t>> k = getConstantInts(groupTopK.getK());
          k && k->size() == 1)
        match.topkGroups = (*k)[0];
  }
  if (match.groups == 1)
    match.topkGroups = 1;
  return bool(weights);
}

std::optional<MoeMatch> matchMoe(TopKOp topK) {
  MoeMatch match;
  std::optional<SmallVector<int64_t>> k = getConstantInts(topK.getK());
  if (!k || k->size() != 1)
    return std::nullopt;
  match.topK = (*k)[0];
  if (rankOf(topK.getInput()) != 2 || topK.getAxis() != 1)
    return std::nullopt;
  // The routing weights: the top-k softmax probabilities, or the sigmoid
  // scores the chosen ids gather.
  Value weights = topK.getValues();
  // A bf16/f16 model's softmax widened to f32 before the top_k (Qwen3-MoE's
  // softmax(..., dtype=torch.float) exports that way): the proof decides
  // whether the choices agree.
  Value probabilities = topK.getInput();
  if (auto widen = probabilities.getDefiningOp<CastOp>();
      widen && isa<FloatType>(getElementTypeOrSelf(widen.getInput().getType())) &&
      isa<FloatType>(getElementTypeOrSelf(widen.getResult().getType())))
    probabilities = widen.getInput();
  auto softmax = probabilities.getDefiningOp<SoftmaxOp>();
  auto router = softmax ? softmax.getInput().getDefiningOp<LinearOp>() : LinearOp();
  if (router && !router.getBias() && !router.getResidual() && isWeight(router.getWeight()))
    match.router = router;
  else if (weights = Value(); !matchSigmoidRouting(topK, match, weights))
    return std::nullopt;
  std::optional<int64_t> hidden = staticDim(match.router.getInput(), -1);
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
  // Normalized: weights / reduce_sum(weights) (+ a tiny epsilon).
  for (Operation *user : weights.getUsers())
    if (auto div = dyn_cast<DivOp>(user); div && div.getLhs() == weights) {
      Value denominator = div.getRhs();
      if (auto add = denominator.getDefiningOp<AddOp>())
        denominator = splatValue(add.getRhs()) ? add.getLhs() : add.getRhs();
      if (auto sum = denominator.getDefiningOp<ReduceSumOp>(); sum && sum.getInput() == weights)
        match.normalize = true;
    }
  // Scaled: a multiplication by a scalar constant on the way (DeepSeek-V3's
  // routed_scaling_factor).
  for (Operation *op : usersWithin(weights, 3))
    if (auto mul = dyn_cast<MulOp>(op))
      for (Value operand : mul->getOperands())
        if (std::optional<double> factor = splatValue(operand))
          match.scale = *factor;
  // The sum over the choices: the first reduce_sum downstream that is not the
  // normalization's.
  for (Operation *op : usersWithin(weights, 8))
    if (auto sum = dyn_cast<ReduceSumOp>(op); sum && sum.getInput() != weights) {
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
    // A bf16/f16 model may sum the experts' outputs in f32 and narrow after.
    if (output.getType() != x.getType() && output.hasOneUse())
      if (auto narrow = dyn_cast<CastOp>(*output.getUsers().begin());
          narrow && getElementTypeOrSelf(narrow.getResult().getType()) ==
                        getElementTypeOrSelf(x.getType()))
        output = narrow.getResult();
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
      Value moe = MoeOp::create(
          builder, loc, inputs[0].getType(), inputs[0], rows, inputs[2], inputs[3],
          match->scoreBias ? inputs[4] : Value(), builder.getI64IntegerAttr(match->topK),
          builder.getBoolAttr(match->normalize), builder.getStringAttr("silu"),
          builder.getStringAttr(match->sigmoid ? "sigmoid" : "softmax"),
          builder.getI64IntegerAttr(match->groups), builder.getI64IntegerAttr(match->topkGroups),
          builder.getF32FloatAttr(float(match->scale)));
      if (!flatten)
        return moe;
      return ReshapeOp::create(builder, loc, outType, moe,
                               i64Vector(builder, loc, {-1, outType.getDimSize(1)}),
                               builder.getBoolAttr(false));
    };
    SmallVector<Value> inputs = {x, match->router.getWeight(), match->gateUp, match->down};
    if (match->scoreBias)
      inputs.push_back(match->scoreBias);
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
