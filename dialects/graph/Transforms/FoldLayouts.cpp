//===- FoldLayouts.cpp ----------------------------------------------------===//

#include "dialects/graph/Transforms/FoldLayouts.h"

#include "dialects/graph/Transforms/MatchUtils.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace infer::graph;

/// The constant Reshape target (allowzero = false) that turns dims `in`
/// into `out`: constants, 0 where the output dim is proven equal to the
/// input's at that position, at most one -1 (inferable: the other output
/// dims are positive); nullopt when `out` has no such target.
std::optional<SmallVector<int64_t>>
infer::graph::reshapeTarget(ShapeAnalysis &analysis, ArrayRef<SymPoly> in,
                            ArrayRef<SymPoly> out) {
  SmallVector<int64_t> entries;
  int64_t unresolved = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    const SymPoly &o = out[i];
    std::optional<int64_t> c = o.getConstant();
    if (c && *c > 0) {
      entries.push_back(*c);
    } else if (i < in.size() && o == in[i]) {
      entries.push_back(0);
    } else if (unresolved < 0 && !c) {
      unresolved = int64_t(i);
      entries.push_back(-1);
    } else {
      return std::nullopt;
    }
  }
  for (size_t i = 0; unresolved >= 0 && i < out.size(); ++i)
    if (int64_t(i) != unresolved && !analysis.isPositive(out[i]))
      return std::nullopt;
  return entries;
}

namespace {

using Polys = SmallVector<SymPoly>;

/// True when transposing a tensor of `shape` by `perm` moves only dims of
/// static size 1: the other dims keep their order, and so do the elements.
bool movesOnlyUnitDims(ArrayRef<int64_t> perm, ArrayRef<int64_t> shape) {
  int64_t previous = -1;
  for (int64_t axis : perm) {
    if (shape[axis] == 1)
      continue;
    if (axis < previous)
      return false;
    previous = axis;
  }
  return true;
}

/// Reshape, Squeeze, Unsqueeze, and Transposes that move only dims of static
/// size 1: each keeps the elements in row-major order.
bool keepsElementOrder(Operation *op) {
  if (isa<ReshapeOp, UnsqueezeOp, SqueezeOp>(op))
    return true;
  auto transpose = dyn_cast<TransposeOp>(op);
  auto type = transpose
                  ? dyn_cast<RankedTensorType>(transpose.getInput().getType())
                  : RankedTensorType();
  return type && movesOnlyUnitDims(transpose.getPerm(), type.getShape());
}

/// A unit-dim Transpose, or an order-keeping op of an order-keeping op,
/// becomes one Reshape of the chain's input (exporters' unsqueeze / split /
/// reshape / transpose chains around a fused QKV then cancel to the parts).
struct FlattenOrderKeepingChain : RewritePattern {
  FlattenOrderKeepingChain(MLIRContext *context, ShapeAnalysis &analysis)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context),
        analysis(analysis) {}

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 || !keepsElementOrder(op))
      return rewriter.notifyMatchFailure(op, "reorders elements");
    Value input = op->getOperand(0);
    Operation *inner = input.getDefiningOp();
    if (inner && inner->getNumResults() == 1 && keepsElementOrder(inner))
      input = inner->getOperand(0);
    else if (!isa<TransposeOp>(op))
      return rewriter.notifyMatchFailure(op, "no chain");
    std::optional<Polys> in = analysis.getDims(input);
    std::optional<Polys> out = analysis.getDims(op->getResult(0));
    std::optional<SmallVector<int64_t>> target =
        in && out ? reshapeTarget(analysis, *in, *out) : std::nullopt;
    if (!target)
      return rewriter.notifyMatchFailure(op,
                                         "the output dims are not expressible");
    Value shape = i64Vector(rewriter, op->getLoc(), *target);
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op->getResult(0).getType(),
                                           input, shape,
                                           rewriter.getBoolAttr(false));
    return success();
  }

  ShapeAnalysis &analysis;
};

/// split(unsqueeze(x), last axis) → unsqueeze(split(x, last axis)) for each
/// part, when the unsqueeze leaves the last axis x's own.
struct SplitBeforeUnsqueeze : OpRewritePattern<SplitOp> {
  SplitBeforeUnsqueeze(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context) {}

  LogicalResult matchAndRewrite(SplitOp op,
                                PatternRewriter &rewriter) const override {
    auto unsqueeze = op.getInput().getDefiningOp<UnsqueezeOp>();
    auto inputType =
        unsqueeze ? dyn_cast<RankedTensorType>(unsqueeze.getInput().getType())
                  : RankedTensorType();
    auto type = dyn_cast<RankedTensorType>(op.getInput().getType());
    std::optional<SmallVector<int64_t>> axes =
        unsqueeze ? getConstantInts(unsqueeze.getAxes()) : std::nullopt;
    if (!inputType || !type || !axes || inputType.getRank() == 0)
      return rewriter.notifyMatchFailure(op,
                                         "not a split of a ranked unsqueeze");
    int64_t rank = type.getRank();
    if (int64_t(op.getAxis()) != rank - 1 && int64_t(op.getAxis()) != -1)
      return rewriter.notifyMatchFailure(op, "not along the last axis");
    for (int64_t axis : *axes)
      if (axis == rank - 1 || axis == -1)
        return rewriter.notifyMatchFailure(op,
                                           "the unsqueeze adds the last axis");
    SmallVector<Type> partTypes;
    for (Value result : op.getResults()) {
      auto resultType = dyn_cast<RankedTensorType>(result.getType());
      if (!resultType)
        return rewriter.notifyMatchFailure(op, "unranked part");
      SmallVector<int64_t> shape(inputType.getShape());
      shape.back() = resultType.getShape().back();
      partTypes.push_back(inputType.clone(shape));
    }
    auto split = SplitOp::create(
        rewriter, op.getLoc(), partTypes, unsqueeze.getInput(), op.getSplit(),
        rewriter.getI64IntegerAttr(inputType.getRank() - 1));
    SmallVector<Value> parts;
    for (auto [part, result] :
         llvm::zip_equal(split.getResults(), op.getResults()))
      parts.push_back(UnsqueezeOp::create(
          rewriter, op.getLoc(), result.getType(), part, unsqueeze.getAxes()));
    rewriter.replaceOp(op, parts);
    return success();
  }
};

/// gather_nd(data, [[i]]) (one constant index into dim 0, Falcon's
/// `fused_qkv[..., -2, :]` after a transpose) → slice(data, i : i + 1 on
/// axis 0): both are [1, data dims 1..].
struct GatherNdOneIndex : OpRewritePattern<GatherNDOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherNDOp op,
                                PatternRewriter &rewriter) const override {
    auto indicesType = dyn_cast<RankedTensorType>(op.getIndices().getType());
    std::optional<SmallVector<int64_t>> index =
        getConstantInts(op.getIndices());
    std::optional<int64_t> dim = staticDim(op.getData(), 0);
    if (op.getBatchDims() != 0 || !indicesType ||
        indicesType.getShape() != ArrayRef<int64_t>{1, 1} || !index || !dim)
      return rewriter.notifyMatchFailure(
          op, "not one constant index into a static dim 0");
    int64_t i = (*index)[0] < 0 ? (*index)[0] + *dim : (*index)[0];
    if (i < 0 || i >= *dim)
      return rewriter.notifyMatchFailure(op, "index out of range");
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<SliceOp>(
        op, op.getType(), op.getData(), i64Vector(rewriter, loc, {i}),
        i64Vector(rewriter, loc, {i + 1}), i64Vector(rewriter, loc, {0}),
        i64Vector(rewriter, loc, {1}));
    return success();
  }
};

/// slice(transpose(x, perm), axes) → transpose(slice(x, perm[axes])) when
/// that transpose only moves unit dims: the slice moves to the projection's
/// own layout.
struct SliceBeforeTranspose : OpRewritePattern<SliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getData().getDefiningOp<TransposeOp>();
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    std::optional<SmallVector<int64_t>> axes = getConstantInts(op.getAxes());
    if (!transpose || !resultType || !axes)
      return rewriter.notifyMatchFailure(
          op, "not a slice of a transpose on constant axes");
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t rank = int64_t(perm.size());
    SmallVector<int64_t> sourceAxes;
    for (int64_t axis : *axes) {
      int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a >= rank)
        return rewriter.notifyMatchFailure(op, "axis out of range");
      sourceAxes.push_back(perm[a]);
    }
    SmallVector<int64_t> shape(rank);
    for (int64_t j = 0; j < rank; ++j)
      shape[perm[j]] = resultType.getDimSize(j);
    // Only where the slice leaves the transpose moving unit dims alone (it
    // then disappears); elsewhere the transpose stays where matchers see it.
    if (!movesOnlyUnitDims(perm, shape))
      return rewriter.notifyMatchFailure(op, "the transpose would still reorder elements");
    Location loc = op.getLoc();
    Value sliced =
        SliceOp::create(rewriter, loc, resultType.clone(shape),
                        transpose.getInput(), op.getStarts(), op.getEnds(),
                        i64Vector(rewriter, loc, sourceAxes), op.getSteps());
    rewriter.replaceOpWithNewOp<TransposeOp>(op, op.getType(), sliced,
                                             transpose.getPermAttr());
    return success();
  }
};

/// slice(reshape(x [..., H*D] → [..., H, D]), axis of H, a : b) →
/// reshape(slice(x, last axis, a*D : b*D) → [..., b - a, D]): a range of
/// heads is a range of the projection's features. With groups,
/// [..., G*H*D] → [..., G, H, D] (Falcon-40B's q, k, v per KV group), the
/// slice is of x as [..., G, H*D].
struct SliceHeadsAsFeatures : OpRewritePattern<SliceOp> {
  SliceHeadsAsFeatures(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context), analysis(analysis) {}
  LogicalResult matchAndRewrite(SliceOp op,
                                PatternRewriter &rewriter) const override {
    auto reshape = op.getData().getDefiningOp<ReshapeOp>();
    std::optional<SmallVector<int64_t>> starts =
                                            getConstantInts(op.getStarts()),
                                        ends = getConstantInts(op.getEnds()),
                                        axes = getConstantInts(op.getAxes()),
                                        steps = getConstantInts(op.getSteps());
    if (!reshape || !starts || !ends || !axes || !steps || axes->size() != 1 ||
        (*steps)[0] != 1)
      return rewriter.notifyMatchFailure(
          op, "not a constant unit-step slice of a reshape");
    auto source = dyn_cast<RankedTensorType>(reshape.getData().getType());
    auto heads = dyn_cast<RankedTensorType>(reshape.getType());
    std::optional<Polys> in = analysis.getDims(reshape.getData());
    std::optional<Polys> mid = analysis.getDims(reshape.getResult());
    if (!source || !heads || !in || !mid ||
        (heads.getRank() != source.getRank() + 1 && heads.getRank() != source.getRank() + 2))
      return rewriter.notifyMatchFailure(op, "not a split of the last axis");
    // [..., G*H*D] → [..., G, H, D] (Falcon-40B's QKV groups): the groups
    // stay an axis, [..., G, H*D], and the slice is within each group.
    int64_t groups =
        heads.getRank() - source.getRank() == 2 ? heads.getDimSize(source.getRank() - 1) : 0;
    int64_t rank = heads.getRank() - 1, axis = (*axes)[0] < 0 ? (*axes)[0] + rank + 1 : (*axes)[0];
    int64_t h = heads.getDimSize(rank - 1), d = heads.getDimSize(rank);
    if (axis != rank - 1 || ShapedType::isDynamic(h) || ShapedType::isDynamic(d) ||
        ShapedType::isDynamic(groups) ||
        source.getDimSize(source.getRank() - 1) != (groups ? groups : 1) * h * d)
      return rewriter.notifyMatchFailure(op, "not a slice of the heads axis");
    for (int64_t i = 0; i + 1 < source.getRank(); ++i)
      if ((*in)[i] != (*mid)[i])
        return rewriter.notifyMatchFailure(op,
                                           "the reshape changes a leading dim");
    int64_t begin = (*starts)[0] < 0 ? (*starts)[0] + h : (*starts)[0];
    int64_t end = std::min((*ends)[0] < 0 ? (*ends)[0] + h : (*ends)[0], h);
    if (begin < 0 || end <= begin)
      return rewriter.notifyMatchFailure(op, "empty or out-of-range slice");
    Value data = reshape.getData();
    if (groups) {
      SmallVector<int64_t> grouped(source.getShape().drop_back());
      SmallVector<int64_t> target(grouped.size(), 0);
      grouped.append({groups, h * d});
      target.append({groups, h * d});
      data =
          ReshapeOp::create(rewriter, op.getLoc(), source.clone(grouped), data,
                            i64Vector(rewriter, op.getLoc(), target), rewriter.getBoolAttr(false));
      source = cast<RankedTensorType>(data.getType());
    }
    SmallVector<int64_t> partShape(source.getShape());
    partShape.back() = (end - begin) * d;
    Location loc = op.getLoc();
    Value part =
        SliceOp::create(rewriter, loc, source.clone(partShape), data,
                        i64Vector(rewriter, loc, {begin * d}), i64Vector(rewriter, loc, {end * d}),
                        i64Vector(rewriter, loc, {rank - 1}), i64Vector(rewriter, loc, {1}));
    SmallVector<int64_t> target;
    for (int64_t i = 0; i + 1 < rank; ++i)
      target.push_back(0);
    target.append({end - begin, d});
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), part,
                                           i64Vector(rewriter, loc, target),
                                           rewriter.getBoolAttr(false));
    return success();
  }
  ShapeAnalysis &analysis;
};

/// gather(data, scalar constant i, axis a) with static dims from a on (the
/// interleaved [q k v] heads of Falcon-RW and BLOOM) → the same elements as
/// a slice of the last axis: reshape(slice(reshape(data → [dims before a,
/// D']), last axis, i*D : (i+1)*D)) with D the dims after a, D' all from a.
struct GatherAsLastAxisSlice : OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GatherOp op, PatternRewriter &rewriter) const override {
    auto dataType = dyn_cast<RankedTensorType>(op.getData().getType());
    auto indicesType = dyn_cast<RankedTensorType>(op.getIndices().getType());
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    std::optional<SmallVector<int64_t>> index = getConstantInts(op.getIndices());
    if (!dataType || !indicesType || indicesType.getRank() != 0 || !index || !resultType)
      return rewriter.notifyMatchFailure(op, "not a gather of one constant index");
    int64_t rank = dataType.getRank(), axis = int64_t(op.getAxis());
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis >= rank || ShapedType::isDynamic(dataType.getDimSize(axis)))
      return rewriter.notifyMatchFailure(op, "dynamic gathered axis");
    int64_t count = dataType.getDimSize(axis), inner = 1;
    for (int64_t i = axis + 1; i < rank; ++i) {
      if (dataType.isDynamicDim(i))
        return rewriter.notifyMatchFailure(op, "dynamic dims after the axis");
      inner *= dataType.getDimSize(i);
    }
    int64_t i = (*index)[0] < 0 ? (*index)[0] + count : (*index)[0];
    if (i < 0 || i >= count || (axis + 1 == rank && rank == 1))
      return rewriter.notifyMatchFailure(op, "index out of range");
    SmallVector<int64_t> mergedShape(dataType.getShape().take_front(axis)), target(axis, 0);
    mergedShape.push_back(count * inner);
    target.push_back(count * inner);
    Location loc = op.getLoc();
    Value merged = ReshapeOp::create(rewriter, loc, dataType.clone(mergedShape), op.getData(),
                                     i64Vector(rewriter, loc, target), rewriter.getBoolAttr(false));
    mergedShape.back() = inner;
    Value part = SliceOp::create(rewriter, loc, dataType.clone(mergedShape), merged,
                                 i64Vector(rewriter, loc, {i * inner}),
                                 i64Vector(rewriter, loc, {(i + 1) * inner}),
                                 i64Vector(rewriter, loc, {axis}), i64Vector(rewriter, loc, {1}));
    SmallVector<int64_t> resultTarget(axis, 0);
    for (int64_t d = axis + 1; d < rank; ++d)
      resultTarget.push_back(dataType.getDimSize(d));
    rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), part,
                                           i64Vector(rewriter, loc, resultTarget),
                                           rewriter.getBoolAttr(false));
    return success();
  }
};

} // namespace

void infer::graph::populateFoldLayoutPatterns(RewritePatternSet &patterns,
                                              ShapeAnalysis &analysis) {
  patterns.add<FlattenOrderKeepingChain, SplitBeforeUnsqueeze,
               SliceHeadsAsFeatures>(patterns.getContext(), analysis);
  patterns.add<GatherNdOneIndex, SliceBeforeTranspose, GatherAsLastAxisSlice>(
      patterns.getContext());
}
