//===- FoldShapes.cpp - FoldShapesPass: fold shape arithmetic -------------===//
//
// Uses ShapeAnalysis (symbolic dims and small int64 values) to replace shape
// computations by constants: fully known integer tensors become
// graph.constant, Reshape and Expand targets become constants whose 0 / 1 /
// -1 entries refer to the input's dims, and Reshape / Expand / Slice /
// Squeeze ops that provably return their input disappear.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/FoldLayouts.h"
#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/ShapeAnalysis.h"
#include "dialects/graph/Transforms/Validation.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace infer::graph {
#define GEN_PASS_DEF_FOLDSHAPESPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

using Polys = SmallVector<SymPoly>;

/// True when `user` takes any ranked operand type of the right element type:
/// a graph op that does not tie operand and result types and has no region
/// or successor whose types would have to follow.
bool acceptsAnyOperandType(Operation *user) {
  return isa<GraphDialect>(user->getDialect()) && user->getNumRegions() == 0 &&
         !user->hasTrait<OpTrait::IsTerminator>() &&
         !user->hasTrait<OpTrait::SameOperandsAndResultType>() &&
         !user->hasTrait<OpTrait::SameOperandsAndResultShape>() &&
         !user->hasTrait<OpTrait::SameTypeOperands>();
}

/// True when every use of `from` can read `to` instead. Graph ops take any
/// ranked tensor of the right element type, so `to` may carry different
/// (compatible) static dims, except where an op ties its operand and result
/// types or the value leaves the graph dialect.
bool canReplaceWith(Value from, Value to) {
  if (from.getType() == to.getType())
    return true;
  auto fromType = dyn_cast<RankedTensorType>(from.getType());
  auto toType = dyn_cast<RankedTensorType>(to.getType());
  if (!fromType || !toType || fromType.getElementType() != toType.getElementType() ||
      failed(verifyCompatibleShape(fromType, toType)))
    return false;
  return llvm::all_of(from.getUsers(), acceptsAnyOperandType);
}

/// True when `shape` is already a graph.constant holding `entries`.
bool isConstantTarget(Value shape, ArrayRef<int64_t> entries) {
  auto constant = shape.getDefiningOp<ConstantOp>();
  if (!constant)
    return false;
  auto values = constant.getValue().tryGetValues<APInt>();
  if (!values || static_cast<size_t>(constant.getValue().getNumElements()) != entries.size())
    return false;
  size_t i = 0;
  for (APInt v : *values)
    if (v.getSExtValue() != entries[i++])
      return false;
  return true;
}

/// Replaces any graph op whose integer results are fully known constants.
struct FoldKnownIntegers : RewritePattern {
  FoldKnownIntegers(MLIRContext *context, ShapeAnalysis &analysis)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, context), analysis(analysis) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<GraphDialect>(op->getDialect()) || isa<ConstantOp, WeightOp>(op) ||
        op->getNumResults() == 0 || op->getNumRegions() != 0 || !isPure(op))
      return failure();
    SmallVector<DenseElementsAttr> attrs;
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || !type.hasStaticShape() || !type.getElementType().isSignlessInteger())
        return failure();
      std::optional<Polys> elements = analysis.getElements(result);
      if (!elements)
        return failure();
      unsigned width = type.getElementType().getIntOrFloatBitWidth();
      SmallVector<APInt> values;
      for (const SymPoly &p : *elements) {
        std::optional<int64_t> c = p.getConstant();
        if (!c)
          return failure();
        values.push_back(APInt(width, static_cast<uint64_t>(*c), /*isSigned=*/width != 1,
                               /*implicitTrunc=*/true));
      }
      attrs.push_back(DenseElementsAttr::get(type, values));
    }
    SmallVector<Value> constants;
    for (DenseElementsAttr attr : attrs)
      constants.push_back(ConstantOp::create(rewriter, op->getLoc(), cast<ElementsAttr>(attr)));
    rewriter.replaceOp(op, constants);
    return success();
  }

  ShapeAnalysis &analysis;
};

/// Reshape: drop it when it returns its input's shape, else make its target a
/// constant.
///
/// Every entry is chosen from the *output* dim O[i] the analysis proves,
/// and the new op always has allowzero = false:
///   O[i] a constant k > 0     -> k
///   O[i] equal to input dim i -> 0 (copy)
///   one remaining entry       -> -1, when the other output dims are provably
///                                non-zero, so that the inferred size is
///                                numel / prod(others) = O[i].
///
/// Why dropping allowzero is exact: the exporters set allowzero = 1 on
/// reshapes whose target they build from Shape ops, e.g. [batch, seq, 4, 16]
/// for an input [batch, seq, 64]. Under allowzero = 1 a target entry is the
/// size itself, even when it is 0; under allowzero = 0 a literal 0 copies the
/// input's dim. We only write a literal 0 where the output dim is *proven
/// equal* to the input dim at that position, so "copy" yields that same
/// value — also when it is 0 at runtime (an empty batch). Constant entries
/// other than 0 and -1 mean the same under both settings, and a constant
/// output dim of 0 is never written (it would turn into a copy).
struct FoldReshape : OpRewritePattern<ReshapeOp> {
  FoldReshape(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context), analysis(analysis) {}

  LogicalResult matchAndRewrite(ReshapeOp op, PatternRewriter &rewriter) const override {
    std::optional<Polys> in = analysis.getDims(op.getData());
    std::optional<Polys> out = analysis.getDims(op.getResult());
    if (!in || !out)
      return rewriter.notifyMatchFailure(op, "unranked");
    if (*in == *out && canReplaceWith(op.getResult(), op.getData())) {
      rewriter.replaceOp(op, op.getData());
      return success();
    }
    std::optional<Polys> target = analysis.getElements(op.getShape());
    if (target && llvm::all_of(*target, [](const SymPoly &p) { return p.isConstant(); }) &&
        (!op.getAllowzero() || llvm::none_of(*target, [](const SymPoly &p) {
          return p.getConstant() == 0;
        })))
      return rewriter.notifyMatchFailure(op, "target is already constant");
    std::optional<SmallVector<int64_t>> entries =
        reshapeTarget(analysis, *in, *out);
    if (!entries)
      return rewriter.notifyMatchFailure(op,
                                         "the output dims are not expressible");
    if (isConstantTarget(op.getShape(), *entries) && !op.getAllowzero())
      return rewriter.notifyMatchFailure(op, "already folded");
    Value newTarget = i64Vector(rewriter, op.getLoc(), *entries);
    rewriter.modifyOpInPlace(op, [&] {
      op.getShapeMutable().assign(newTarget);
      op.setAllowzero(false);
    });
    return success();
  }

  ShapeAnalysis &analysis;
};

/// Expand: drop it when it returns its input, else make its target a constant
/// with 1 wherever the output dim is the input's own (no broadcast there) and
/// the constant output dim elsewhere.
struct FoldExpand : OpRewritePattern<ExpandOp> {
  FoldExpand(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context), analysis(analysis) {}

  LogicalResult matchAndRewrite(ExpandOp op, PatternRewriter &rewriter) const override {
    std::optional<Polys> in = analysis.getDims(op.getInput());
    std::optional<Polys> out = analysis.getDims(op.getResult());
    std::optional<Polys> target = analysis.getElements(op.getShape());
    if (!in || !out)
      return rewriter.notifyMatchFailure(op, "unranked");
    if (*in == *out && canReplaceWith(op.getResult(), op.getInput())) {
      rewriter.replaceOp(op, op.getInput());
      return success();
    }
    if (!target)
      return rewriter.notifyMatchFailure(op, "target length unknown");
    int64_t n = in->size(), m = target->size(), r = out->size();
    if (r != std::max(n, m))
      return rewriter.notifyMatchFailure(op, "rank mismatch");
    SmallVector<int64_t> entries;
    for (int64_t j = 0; j < m; ++j) {
      int64_t k = j + (r - m), ii = k - (r - n);
      const SymPoly &o = (*out)[k];
      if (ii >= 0 && o == (*in)[ii])
        entries.push_back(1);
      else if (std::optional<int64_t> c = o.getConstant())
        entries.push_back(*c);
      else
        return rewriter.notifyMatchFailure(op, "broadcasts to a symbolic dim");
    }
    if (isConstantTarget(op.getShape(), entries))
      return rewriter.notifyMatchFailure(op, "already folded");
    Value shape = i64Vector(rewriter, op.getLoc(), entries);
    rewriter.modifyOpInPlace(op, [&] { op.getShapeMutable().assign(shape); });
    return success();
  }

  ShapeAnalysis &analysis;
};

/// Slice that takes every element of every sliced axis (from 0, step 1).
struct FoldWholeSlice : OpRewritePattern<SliceOp> {
  FoldWholeSlice(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context), analysis(analysis) {}

  LogicalResult matchAndRewrite(SliceOp op, PatternRewriter &rewriter) const override {
    std::optional<Polys> in = analysis.getDims(op.getData());
    std::optional<Polys> out = analysis.getDims(op.getResult());
    std::optional<Polys> starts = analysis.getElements(op.getStarts());
    std::optional<Polys> steps = analysis.getElements(op.getSteps());
    if (!in || !out || !starts || !steps || *in != *out)
      return rewriter.notifyMatchFailure(op, "not provably the whole tensor");
    // Same sizes is not enough: a step of -1 reverses.
    for (const SymPoly &s : *starts)
      if (s.getConstant() != 0)
        return rewriter.notifyMatchFailure(op, "start is not 0");
    for (const SymPoly &s : *steps)
      if (s.getConstant() != 1)
        return rewriter.notifyMatchFailure(op, "step is not 1");
    if (!canReplaceWith(op.getResult(), op.getData()))
      return rewriter.notifyMatchFailure(op, "a user needs the result type");
    rewriter.replaceOp(op, op.getData());
    return success();
  }

  ShapeAnalysis &analysis;
};

/// Squeeze that removes no dim.
struct FoldIdentitySqueeze : OpRewritePattern<SqueezeOp> {
  FoldIdentitySqueeze(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context), analysis(analysis) {}

  LogicalResult matchAndRewrite(SqueezeOp op, PatternRewriter &rewriter) const override {
    std::optional<Polys> in = analysis.getDims(op.getInput());
    std::optional<Polys> out = analysis.getDims(op.getResult());
    if (!in || !out || *in != *out || !canReplaceWith(op.getResult(), op.getInput()))
      return rewriter.notifyMatchFailure(op, "not an identity");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }

  ShapeAnalysis &analysis;
};

/// Writes the dims the analysis proves constant into dynamic result dims.
struct RefineResultTypes : RewritePattern {
  RefineResultTypes(MLIRContext *context, ShapeAnalysis &analysis)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context), analysis(analysis) {}

  LogicalResult matchAndRewrite(Operation *op, PatternRewriter &rewriter) const override {
    if (!isa<GraphDialect>(op->getDialect()) || isa<ConstantOp, WeightOp>(op) ||
        !acceptsAnyOperandType(op))
      return failure();
    SmallVector<std::pair<Value, Type>> refined;
    for (Value result : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(result.getType());
      if (!type || type.hasStaticShape())
        continue;
      std::optional<Polys> dims = analysis.getDims(result);
      if (!dims || static_cast<int64_t>(dims->size()) != type.getRank())
        continue;
      SmallVector<int64_t> shape(type.getShape());
      bool changed = false;
      for (int64_t i = 0; i < type.getRank(); ++i) {
        std::optional<int64_t> c = (*dims)[i].getConstant();
        if (type.isDynamicDim(i) && c && *c >= 0) {
          shape[i] = *c;
          changed = true;
        }
      }
      if (changed && llvm::all_of(result.getUsers(), acceptsAnyOperandType))
        refined.emplace_back(result, type.clone(shape));
    }
    if (refined.empty())
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      for (auto &[value, type] : refined)
        value.setType(type);
    });
    return success();
  }

  ShapeAnalysis &analysis;
};

struct FoldShapesPass : public infer::graph::impl::FoldShapesPassBase<FoldShapesPass> {
  using FoldShapesPassBase::FoldShapesPassBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    ShapeAnalysis analysis(func, assumeNonEmpty);
    RewritePatternSet patterns(&getContext());
    populateFoldShapesPatterns(patterns, analysis);
    // The analysis is keyed by Value: every erasure must reach the listener,
    // so no folding or constant hoisting behind its back.
    ShapeAnalysisListener listener(analysis);
    GreedyRewriteConfig config;
    config.setListener(&listener);
    config.enableFolding(false);
    config.enableConstantCSE(false);
    if (failed(applyPatternsGreedily(func, std::move(patterns), config)))
      return signalPassFailure();
  }
};

/// Whether transposing by `second` after `first` gives the input back.
bool undoes(ArrayRef<int64_t> second, ArrayRef<int64_t> first) {
  if (first.size() != second.size())
    return false;
  for (size_t i = 0; i < second.size(); ++i)
    if (second[i] < 0 || second[i] >= int64_t(first.size()) || first[second[i]] != int64_t(i))
      return false;
  return true;
}

/// torch.onnx writes `slice_scatter` (DeepSeek-V3's query and key built from
/// their halves) as the data and the update transposed so the axis comes
/// first, a graph.scatter_nd of a contiguous index range, and the result
/// transposed back. A chain of those whose ranges tile the whole axis is the
/// updates concatenated along it: the data is overwritten everywhere.
struct SliceScattersAsConcat : OpRewritePattern<TransposeOp> {
  SliceScattersAsConcat(MLIRContext *context, ShapeAnalysis &analysis)
      : OpRewritePattern(context), analysis(analysis) {}

  LogicalResult matchAndRewrite(TransposeOp back, PatternRewriter &rewriter) const override {
    ArrayRef<int64_t> inverse = back.getPerm();
    std::optional<ArrayRef<int64_t>> perm;
    std::vector<std::pair<int64_t, Value>> pieces; // (first index, the update before its transpose)
    Value current = back.getInput();
    int64_t extent = 0;
    while (auto scatter = current.getDefiningOp<ScatterNDOp>()) {
      if (scatter.getReduction() != "none" || !scatter->hasOneUse())
        return failure();
      auto data = dyn_cast<RankedTensorType>(scatter.getData().getType());
      auto indices = dyn_cast<RankedTensorType>(scatter.getIndices().getType());
      auto update = scatter.getUpdates().getDefiningOp<TransposeOp>();
      if (!data || data.getRank() == 0 || data.isDynamicDim(0) || !indices ||
          !indices.hasStaticShape() || indices.getRank() != 2 || indices.getDimSize(1) != 1 ||
          !update || (perm && update.getPerm() != *perm))
        return failure();
      perm = update.getPerm();
      extent = data.getDimSize(0);
      std::optional<std::vector<int64_t>> values = indexValues(scatter.getIndices());
      if (!values || values->empty())
        return failure();
      int64_t first = values->front();
      for (auto [i, value] : llvm::enumerate(*values))
        if (value != first + int64_t(i))
          return failure();
      pieces.push_back({first, update.getInput()});
      current = scatter.getData();
      // Between two slice_scatters the exporter transposes back and forth.
      if (auto again = current.getDefiningOp<TransposeOp>())
        if (auto undone = again.getInput().getDefiningOp<TransposeOp>())
          if (again->hasOneUse() && undone->hasOneUse() &&
              isa_and_nonnull<ScatterNDOp>(undone.getInput().getDefiningOp()) &&
              undoes(again.getPerm(), undone.getPerm()))
            current = undone.getInput();
    }
    if (pieces.empty() || !undoes(inverse, *perm))
      return failure();
    // Disjoint ranges that cover [0, extent), in order.
    llvm::sort(pieces, [](const auto &a, const auto &b) { return a.first < b.first; });
    int64_t next = 0;
    SmallVector<Value> inputs;
    for (auto [first, update] : pieces) {
      auto type = cast<RankedTensorType>(update.getType());
      int64_t axis = (*perm)[0];
      if (first != next || type.isDynamicDim(axis))
        return failure();
      next += type.getDimSize(axis);
      inputs.push_back(update);
    }
    if (next != extent)
      return failure();
    rewriter.replaceOpWithNewOp<ConcatOp>(back, back.getType(), inputs,
                                          rewriter.getI64IntegerAttr((*perm)[0]));
    return success();
  }

  /// The values of constant indices: from the analysis, else (a range whose
  /// type was refined after the analysis saw it) evaluated at two sizes.
  std::optional<std::vector<int64_t>> indexValues(Value indices) const {
    std::vector<int64_t> values;
    if (std::optional<Polys> known = analysis.getElements(indices)) {
      for (const SymPoly &p : *known) {
        std::optional<int64_t> c = p.getConstant();
        if (!c)
          return std::nullopt;
        values.push_back(*c);
      }
      return values;
    }
    auto func = indices.getParentRegion()->getParentOfType<func::FuncOp>();
    std::optional<ShapeOnlyValue> small = evaluateShapeOnly(func, indices, 1, 2);
    std::optional<ShapeOnlyValue> large = evaluateShapeOnly(func, indices, 2, 5);
    if (!small || !large || small->values != large->values)
      return std::nullopt;
    for (double v : small->values)
      values.push_back(int64_t(v));
    return values;
  }

  ShapeAnalysis &analysis;
};

} // namespace

void infer::graph::populateFoldShapesPatterns(RewritePatternSet &patterns,
                                              ShapeAnalysis &analysis) {
  patterns.add<FoldKnownIntegers, FoldReshape, FoldExpand, FoldWholeSlice, FoldIdentitySqueeze,
               SliceScattersAsConcat, RefineResultTypes>(patterns.getContext(), analysis);
  populateFoldLayoutPatterns(patterns, analysis);
}
