//===- RaiseFeatureGather.cpp - token-wise data movement → gather_features -===//
//
// Data movement between token-major tensors that is more than a reshape or a
// last-axis slice (transposes to heads and back, per-head concats, a shared
// key expanded over the heads, strided slices) is replaced by one
// graph.gather_features per value a compute op reads. Which input feature
// each output feature is comes from running the movement on the reference
// interpreter with the features' indices as data (in base-16 digits, exact
// in any float type); validation proves the rewrite at several sizes, which
// also rejects movement that mixes tokens.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/Validation.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace infer::graph {
#define GEN_PASS_DEF_RAISEFEATUREGATHERPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

bool isMovement(Operation *op) {
  return isa_and_nonnull<ReshapeOp, TransposeOp, ConcatOp, ExpandOp, SliceOp, SplitOp, SqueezeOp,
                         UnsqueezeOp>(op);
}

/// The most features a row may have here: the map and each evaluation's data
/// are this large (a real model's widest movement is ~10^5 features).
constexpr int64_t kMaxFeatures = int64_t(1) << 20;

/// [?, ?, F] or [?, F] with F static: the rows are the tokens.
std::optional<int64_t> tokenFeatures(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || (type.getRank() != 2 && type.getRank() != 3) ||
      !isa<FloatType>(type.getElementType()))
    return std::nullopt;
  for (int64_t d = 0; d + 1 < type.getRank(); ++d)
    if (!type.isDynamicDim(d))
      return std::nullopt;
  std::optional<int64_t> features = staticDim(value, type.getRank() - 1);
  if (!features || *features <= 0 || *features > kMaxFeatures)
    return std::nullopt;
  return features;
}

/// Dynamic dims (the tokens) first, then static ones: a layout the exec
/// lowering keeps in rows ([b, s, h, d] is; [b, 1, s, d] is not).
bool isTokenRows(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.getRank() < 2 || !type.isDynamicDim(0))
    return false;
  bool staticSeen = false;
  for (int64_t dim : type.getShape()) {
    if (!ShapedType::isDynamic(dim))
      staticSeen = true;
    else if (staticSeen)
      return false;
  }
  return true;
}

/// A slice the exec lowering copies as it is: constant, unit step, last axis.
bool isRowSlice(SliceOp slice) {
  std::optional<SmallVector<int64_t>> axes = getConstantInts(slice.getAxes()),
                                      steps = getConstantInts(slice.getSteps());
  int64_t rank = rankOf(slice.getData()).value_or(-2);
  return axes && steps && axes->size() == 1 && steps->size() == 1 && (*steps)[0] == 1 &&
         ((*axes)[0] == rank - 1 || (*axes)[0] == -1);
}

struct Movement {
  SmallVector<Value> leaves; // token-major values a compute op made, in first-seen order
  bool needsGather = false;  // more than reshapes and row slices
};

/// The token-major leaves `root`'s data movement starts from, or nullopt when
/// a leaf is not token-major like `root` (or the walk is too large).
std::optional<Movement> movementOf(Value root) {
  Movement movement;
  llvm::SetVector<Value> leaves;
  SmallVector<Value> work = {root};
  llvm::DenseSet<Operation *> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    Operation *op = value.getDefiningOp();
    if (!isMovement(op)) {
      if (!tokenFeatures(value) || rankOf(value) != rankOf(root))
        return std::nullopt;
      leaves.insert(value);
      continue;
    }
    if (!seen.insert(op).second)
      continue;
    if (seen.size() > 64)
      return std::nullopt;
    if (!isa<ReshapeOp, SliceOp>(op) || !isTokenRows(value))
      movement.needsGather = true;
    if (auto slice = dyn_cast<SliceOp>(op); slice && !isRowSlice(slice))
      movement.needsGather = true;
    if (auto concat = dyn_cast<ConcatOp>(op)) {
      for (Value input : llvm::reverse(concat.getInputs()))
        work.push_back(input);
    } else {
      work.push_back(op->getOperand(0));
    }
  }
  movement.leaves.assign(leaves.begin(), leaves.end());
  return movement;
}

/// map[f] for each feature of `root`: which feature of the leaves'
/// concatenation it is, read from runs of the movement on index digits.
std::optional<SmallVector<int64_t>> featureMap(func::FuncOp func, Value root,
                                               ArrayRef<Value> leaves) {
  constexpr int64_t kBase = 16;
  int64_t total = 0;
  for (Value leaf : leaves)
    total += *tokenFeatures(leaf);
  if (total > kMaxFeatures)
    return std::nullopt;
  int64_t features = *tokenFeatures(root);
  SmallVector<int64_t> map(features, 0);
  for (int64_t scale = 1; scale < total; scale *= kBase) {
    std::vector<std::vector<float>> values;
    int64_t base = 0;
    for (Value leaf : leaves) {
      std::vector<float> digits;
      for (int64_t f = 0; f < *tokenFeatures(leaf); ++f)
        digits.push_back(float((base + f) / scale % kBase));
      base += digits.size();
      values.push_back(std::move(digits));
    }
    std::optional<std::vector<double>> out = evaluateWithInputs(func, leaves, values, root);
    if (!out || static_cast<int64_t>(out->size()) != features)
      return std::nullopt;
    for (int64_t f = 0; f < features; ++f) {
      double digit = (*out)[f];
      if (!(digit >= 0 && digit < kBase) || digit != std::floor(digit))
        return std::nullopt;
      map[f] += static_cast<int64_t>(digit) * scale;
    }
  }
  return map;
}

bool raiseAt(func::FuncOp func, Value root) {
  std::optional<Movement> movement = movementOf(root);
  if (!movement || !movement->needsGather || movement->leaves.empty())
    return false;
  std::optional<SmallVector<int64_t>> map = featureMap(func, root, movement->leaves);
  if (!map)
    return false;
  auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
    return GatherFeaturesOp::create(builder, loc, root.getType(), inputs,
                                    builder.getDenseI64ArrayAttr(*map));
  };
  if (!validateReplacement(func, movement->leaves, root, build))
    return false;
  OpBuilder builder(root.getContext());
  builder.setInsertionPointAfterValue(root);
  root.replaceAllUsesWith(build(builder, root.getLoc(), movement->leaves));
  return true;
}

/// linear(reshape(x)) where the reshape only inserts unit dims into
/// token-major x ([b, s, F] → [b, 1, s, F]: MLA's compressed KV) as
/// unsqueeze(linear(x)), so the projection reads and writes token rows.
bool hoistUnitDims(func::FuncOp func, LinearOp linear) {
  auto reshape = linear.getInput().getDefiningOp<ReshapeOp>();
  if (!reshape || linear.getResidual())
    return false;
  Value x = reshape.getData();
  auto xType = dyn_cast<RankedTensorType>(x.getType());
  auto inType = cast<RankedTensorType>(reshape.getResult().getType());
  auto outType = cast<RankedTensorType>(linear.getResult().getType());
  if (!tokenFeatures(x) || xType.getRank() != 3 || inType.getRank() <= 3)
    return false;
  // The reshape's dims without the inserted 1s are x's: [?, ?, F].
  SmallVector<int64_t> axes, kept;
  for (auto [i, dim] : llvm::enumerate(inType.getShape())) {
    if (dim == 1 && kept.size() < 2)
      axes.push_back(i);
    else
      kept.push_back(dim);
  }
  if (kept.size() != 3 || !ShapedType::isDynamic(kept[0]) || !ShapedType::isDynamic(kept[1]) ||
      kept[2] != xType.getDimSize(2))
    return false;
  auto rowsType =
      RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic, outType.getShape().back()},
                            outType.getElementType());
  auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
    Value rows = LinearOp::create(builder, loc, rowsType, inputs[0], inputs[1],
                                  inputs.size() > 2 ? inputs[2] : Value(), Value(),
                                  linear.getTransposeWeightAttr());
    return UnsqueezeOp::create(builder, loc, outType, rows, i64Vector(builder, loc, axes));
  };
  SmallVector<Value> inputs = {x, linear.getWeight()};
  if (linear.getBias())
    inputs.push_back(linear.getBias());
  if (!validateReplacement(func, inputs, linear.getResult(), build))
    return false;
  OpBuilder builder(linear);
  linear.getResult().replaceAllUsesWith(build(builder, linear.getLoc(), inputs));
  linear.erase();
  return true;
}

struct RaiseFeatureGatherPass
    : public infer::graph::impl::RaiseFeatureGatherPassBase<RaiseFeatureGatherPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<LinearOp> linears;
    func.walk([&](LinearOp linear) { linears.push_back(linear); });
    for (LinearOp linear : linears)
      (void)hoistUnitDims(func, linear);
    // Roots: token-major results of movement that something else reads.
    SmallVector<Value> roots;
    func.walk([&](Operation *op) {
      if (!isMovement(op))
        return;
      for (Value result : op->getResults())
        if (tokenFeatures(result) &&
            llvm::any_of(result.getUsers(), [](Operation *user) { return !isMovement(user); }))
          roots.push_back(result);
    });
    for (Value root : roots)
      (void)raiseAt(func, root);
  }
};

} // namespace
