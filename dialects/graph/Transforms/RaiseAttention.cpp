//===- RaiseAttention.cpp - rotary embeddings and attention → fused ops ---===//
//
// Both rewrites match loosely and prove themselves on the reference
// interpreter (Validation.h) before they change the graph:
//
//  rotary:    x*cos + rotate_half(x)*sin, x = heads of a token-major X
//             [b, s, h*d] (any reshape/transpose chain), cos/sin computed from
//             the positions 0..s-1 and an inv_freq constant
//         →   transpose(reshape(graph.rotary(X)))
//
//  partial:   concat(rope(x[..., :r]), x[..., r:]) (GPT-NeoX's rotary_pct)
//         →   the same with rotary_dim = r
//
//  scaled:    cos and sin times a constant m (YaRN's attention factor)
//         →   m * rotary(X), m then folded into attention's scale
//
//  attention: softmax(q·kᵀ·scale (+ mask)) · v with q, k, v heads of
//             token-major tensors or of one of the rank-4 layouts of
//             HeadsSource (GQA repeat-kv, K transposes, scales on q,
//             k or the scores, NaN guards), followed by the merge of heads
//             back to [b, s, h*d]
//         →   graph.attention(Q, K, V) {causal iff masked; window: a
//             sliding window's keys, read from the mask (AttentionMask.h)}
//             (v's heads narrower than q's and k's: widened before by a
//             graph.gather_features, the output narrowed after)
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Transforms/AttentionMask.h"
#include "dialects/graph/Transforms/MatchUtils.h"
#include "dialects/graph/Transforms/Passes.h"
#include "dialects/graph/Transforms/Validation.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

namespace infer::graph {
#define GEN_PASS_DEF_RAISEATTENTIONPASS
#include "dialects/graph/Transforms/Passes.h.inc"
} // namespace infer::graph

using namespace mlir;
using namespace infer::graph;

namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

/// One step of pure data movement (or a multiplication by a scalar constant,
/// which goes to `scale`) back from `value`; null when `value` is not one.
Value dataMovementStep(Value value, double *scale) {
  Operation *op = value.getDefiningOp();
  if (!op)
    return Value();
  if (isa<TransposeOp, ReshapeOp, UnsqueezeOp, SqueezeOp, ExpandOp>(op))
    return op->getOperand(0);
  if (scale && isa<MulOp>(op)) {
    auto parts =
        commutedOperands(op, [](Value v) { return splatValue(v).has_value(); });
    if (parts) {
      *scale *= *splatValue(parts->first);
      return parts->second;
    }
  }
  if (auto div = dyn_cast<DivOp>(op);
      scale && div && splatValue(div.getRhs())) {
    *scale /= *splatValue(div.getRhs());
    return div.getLhs();
  }
  return Value();
}

/// Follows pure data movement (and multiplications by scalar constants, whose
/// product goes to `scale`) back to the tensor it starts from.
Value dataMovementRoot(Value value, double *scale = nullptr) {
  while (Value previous = dataMovementStep(value, scale))
    value = previous;
  return value;
}

/// A token-major tensor [?, ?, features] with static features.
std::optional<int64_t> tokenMajorFeatures(Value value) {
  if (rankOf(value) != 3)
    return std::nullopt;
  return staticDim(value, 2);
}

/// Where the heads [b, h, s, d] a raised op reads come from, and how the
/// replacement makes them token-major [b, s, h*d]:
///
///   TokenMajor        [b, s, h*d]     as is
///   HeadsMajor        [b, h, s, d]    transpose(0, 2, 1, 3), reshape
///   TokenHeads        [b, s, h, d]    reshape
///   InterleavedSlice  Y [b, s, G, X] with the heads = split(Y or its transpose, axis 3)#i
///                     (GPT-NeoX's QKV, per head q|k|v; CodeGen's, per group of
///                     h/G heads q|v|k): slice h/G*d dims of Y at `offset`, reshape
///
/// The layout is read from which dims are static; validation proves it.
struct HeadsSource {
  enum Kind { TokenMajor, HeadsMajor, TokenHeads, InterleavedSlice };
  Value value; // the free input of the proof
  Kind kind = TokenMajor;
  int64_t heads = 0, headDim = 0, offset = 0;
  int64_t groups = 0; ///< InterleavedSlice: G (heads / G contiguous heads a group)
};

std::optional<HeadsSource> headsSource(Value root, int64_t headDim) {
  auto type = dyn_cast<RankedTensorType>(root.getType());
  if (!type || headDim <= 0)
    return std::nullopt;
  if (type.getRank() == 3) {
    std::optional<int64_t> features = tokenMajorFeatures(root);
    if (!features || *features % headDim)
      return std::nullopt;
    return HeadsSource{root, HeadsSource::TokenMajor, *features / headDim, headDim, 0};
  }
  if (type.getRank() != 4)
    return std::nullopt;
  bool headsMajor = !type.isDynamicDim(1) && type.isDynamicDim(2);
  bool tokenHeads = type.isDynamicDim(1) && !type.isDynamicDim(2);
  // A constant slice of the last axis of [b, s, G, X] (Falcon-40B's q, k and
  // v in each KV group, after FoldLayouts' SliceHeadsAsFeatures).
  if (auto slice = root.getDefiningOp<SliceOp>(); slice && tokenHeads) {
    std::optional<SmallVector<int64_t>> starts = getConstantInts(slice.getStarts()),
                                        axes = getConstantInts(slice.getAxes()),
                                        steps = getConstantInts(slice.getSteps());
    std::optional<int64_t> width = staticDim(root, 3);
    if (starts && axes && steps && axes->size() == 1 && ((*axes)[0] == 3 || (*axes)[0] == -1) &&
        (*steps)[0] == 1 && (*starts)[0] >= 0 && width && *width % headDim == 0) {
      int64_t groups = type.getDimSize(2);
      return HeadsSource{slice.getData(),
                         HeadsSource::InterleavedSlice,
                         groups * (*width / headDim),
                         headDim,
                         (*starts)[0],
                         groups};
    }
  }
  // One part of a split of [b, s, h, X] per head (q, k and v interleaved by
  // head: Persimmon, CodeGen), before or after the transpose to [b, h, s, X].
  if (auto split = root.getDefiningOp<SplitOp>(); split && split.getAxis() == 3) {
    auto transpose = split.getInput().getDefiningOp<TransposeOp>();
    Value perHead;
    if (headsMajor && transpose && transpose.getPerm() == ArrayRef<int64_t>{0, 2, 1, 3})
      perHead = transpose.getInput();
    else if (tokenHeads)
      perHead = split.getInput();
    unsigned index = cast<OpResult>(root).getResultNumber();
    int64_t offset = 0;
    for (unsigned i = 0; perHead && i < index; ++i) {
      std::optional<int64_t> size = staticDim(split.getResult(i), 3);
      if (!size)
        return std::nullopt;
      offset += *size;
    }
    std::optional<int64_t> width = staticDim(root, 3);
    if (perHead && width && *width % headDim == 0) {
      int64_t groups = type.getDimSize(headsMajor ? 1 : 2);
      return HeadsSource{
          perHead, HeadsSource::InterleavedSlice, groups * (*width / headDim), headDim, offset,
          groups};
    }
  }
  if (staticDim(root, 3) != headDim)
    return std::nullopt;
  if (headsMajor)
    return HeadsSource{root, HeadsSource::HeadsMajor, type.getDimSize(1), headDim, 0};
  if (tokenHeads)
    return HeadsSource{root, HeadsSource::TokenHeads, type.getDimSize(2), headDim, 0};
  return std::nullopt;
}

/// The heads source farthest back along `value`'s data movement that
/// headsSource accepts (the root first: GPT-BigCode's q is a reshape of one
/// part of a split [b, 1, s, h*d] that is no heads layout itself); the
/// scalar factors passed on the way go to `scale`.
std::optional<HeadsSource> headsSourceOf(Value value, int64_t headDim,
                                         double *scale = nullptr) {
  SmallVector<std::pair<Value, double>> chain = {{value, 1.0}};
  double product = 1.0;
  while (Value previous = dataMovementStep(chain.back().first, &product))
    chain.push_back({previous, product});
  for (auto [candidate, factor] : llvm::reverse(chain))
    if (std::optional<HeadsSource> source = headsSource(candidate, headDim)) {
      if (scale)
        *scale *= factor;
      else if (factor != 1.0)
        return std::nullopt; // a scaled source where no scale can be kept
      return source;
    }
  return std::nullopt;
}

/// `input` (the mapped HeadsSource::value) as token-major [b, s, h*d].
Value tokenMajor(OpBuilder &builder, Location loc, Value input, const HeadsSource &source) {
  if (source.kind == HeadsSource::TokenMajor)
    return input;
  Type element = cast<TensorType>(input.getType()).getElementType();
  auto headsType = RankedTensorType::get({kDynamic, kDynamic, source.heads, source.headDim}, element);
  Value heads = input;
  if (source.kind == HeadsSource::HeadsMajor)
    heads = TransposeOp::create(builder, loc, headsType, input,
                                builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
  else if (source.kind == HeadsSource::InterleavedSlice) {
    int64_t width = source.heads / source.groups * source.headDim;
    heads = SliceOp::create(
        builder, loc, RankedTensorType::get({kDynamic, kDynamic, source.groups, width}, element),
        input, i64Vector(builder, loc, {source.offset}),
        i64Vector(builder, loc, {source.offset + width}), i64Vector(builder, loc, {3}),
        i64Vector(builder, loc, {1}));
  }
  return ReshapeOp::create(
      builder, loc, RankedTensorType::get({kDynamic, kDynamic, source.heads * source.headDim}, element),
      heads, i64Vector(builder, loc, {0, 0, source.heads * source.headDim}), builder.getBoolAttr(false));
}

/// Splits token-major [b, s, h*d] into heads [b, h, s, d].
Value splitHeads(OpBuilder &builder, Location loc, Value tokens, int64_t heads, int64_t headDim,
                 bool headsMajor = true) {
  Type element = cast<TensorType>(tokens.getType()).getElementType();
  auto target = ConstantOp::create(
      builder, loc,
      DenseIntElementsAttr::get(RankedTensorType::get({4}, builder.getI64Type()),
                                ArrayRef<int64_t>{0, 0, heads, headDim}));
  auto split = ReshapeOp::create(builder, loc,
                                 RankedTensorType::get({kDynamic, kDynamic, heads, headDim}, element),
                                 tokens, target, builder.getBoolAttr(false));
  if (!headsMajor)
    return split;
  return TransposeOp::create(builder, loc,
                             RankedTensorType::get({kDynamic, heads, kDynamic, headDim}, element),
                             split, builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
}

/// Token-major [b, s, h*d] as heads each repeated `repeat` times in a row
/// (GQA's repeat_kv): [b, h*repeat, s, d], or [b, s, h*repeat, d].
Value repeatHeads(OpBuilder &builder, Location loc, Value tokens, int64_t heads, int64_t repeat,
                  int64_t headDim, bool headsMajor) {
  Type element = cast<TensorType>(tokens.getType()).getElementType();
  Value grouped = ReshapeOp::create(
      builder, loc, RankedTensorType::get({kDynamic, kDynamic, heads, 1, headDim}, element), tokens,
      i64Vector(builder, loc, {0, 0, heads, 1, headDim}), builder.getBoolAttr(false));
  Value repeated = ExpandOp::create(
      builder, loc, RankedTensorType::get({kDynamic, kDynamic, heads, repeat, headDim}, element),
      grouped, i64Vector(builder, loc, {1, 1, 1, repeat, 1}));
  Value split = ReshapeOp::create(
      builder, loc, RankedTensorType::get({kDynamic, kDynamic, heads * repeat, headDim}, element),
      repeated, i64Vector(builder, loc, {0, 0, heads * repeat, headDim}),
      builder.getBoolAttr(false));
  if (!headsMajor)
    return split;
  return TransposeOp::create(
      builder, loc, RankedTensorType::get({kDynamic, heads * repeat, kDynamic, headDim}, element),
      split, builder.getDenseI64ArrayAttr({0, 2, 1, 3}));
}

//===----------------------------------------------------------------------===//
// Rotary
//===----------------------------------------------------------------------===//

/// Float constants of `count` elements in the backward slice of `value`:
/// candidates for inv_freq.
SmallVector<DenseElementsAttr> frequencyCandidates(Value value, int64_t count) {
  SmallVector<DenseElementsAttr> candidates;
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.omitBlockArguments = true;
  if (Operation *def = value.getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  auto vectorType = RankedTensorType::get({count}, Float32Type::get(value.getContext()));
  // A sin/cos table [..., positions, k * count] (GPT-J's embed_positions):
  // row 1 holds sin(f) or cos(f) of each frequency, so asin / acos of each
  // chunk of `count` is a candidate (exact for f <= 1, which inv_freq is).
  auto tableCandidates = [&](ShapedType type, ArrayRef<float> data) {
    int64_t rank = type.getRank();
    if (rank < 2 || type.getDimSize(rank - 2) < 2 || type.getDimSize(rank - 1) % count != 0 ||
        !llvm::all_of(type.getShape().drop_back(2), [](int64_t d) { return d == 1; }))
      return;
    int64_t width = type.getDimSize(rank - 1);
    for (int64_t chunk = 0; chunk < width; chunk += count)
      for (bool isCos : {false, true}) {
        SmallVector<float> freqs;
        for (int64_t i = 0; i < count; ++i) {
          float v = data[width + chunk + i];
          if (!(v >= -1.0f && v <= 1.0f))
            return;
          freqs.push_back(isCos ? std::acos(v) : std::asin(v));
        }
        candidates.push_back(DenseElementsAttr::get(vectorType, ArrayRef<float>(freqs)));
      }
  };
  for (Operation *op : slice) {
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
          dense && dense.getElementType().isF32() && !dense.isSplat()) {
        if (dense.getNumElements() == count) {
          candidates.push_back(dense.reshape(vectorType));
        } else if (dense.getType().hasStaticShape()) {
          SmallVector<float> values(dense.getValues<float>());
          tableCandidates(dense.getType(), values);
        }
      }
    } else if (auto weight = dyn_cast<WeightOp>(op)) {
      // Larger models keep inv_freq as an initializer big enough to be a weight.
      auto type = cast<ShapedType>(weight.getType());
      ArrayRef<char> data = weight.getValue().getData();
      if (type.getElementType().isF32() && type.getNumElements() == count &&
          data.size() == size_t(count) * sizeof(float))
        candidates.push_back(DenseElementsAttr::getFromRawBuffer(vectorType, data));
      else if (type.hasStaticShape() && type.getElementType().isF32() &&
               data.size() == size_t(type.getNumElements()) * sizeof(float))
        tableCandidates(type, ArrayRef<float>(reinterpret_cast<const float *>(data.data()),
                                              type.getNumElements()));
    }
  }
  return candidates;
}

/// True when `value` is a signed permutation of x's elements built by slices,
/// negations, (un)squeezes, reshapes and concats: rotate_half(x) =
/// concat(-x[..., d/2:], x[..., :d/2]) (Llama) or GPT-J's rotate_every_two,
/// stack(-x[..., 1::2], x[..., ::2]).flatten(-2), of x or of the tensor x is
/// a reshape of (Falcon's one KV head). Which layout it is, and
/// that it is a rotation at all, the validation of the rewrite proves.
bool isRotationOf(Value value, Value x, int &negations, int depth = 0) {
  if (value == x || value == dataMovementRoot(x))
    return true;
  Operation *op = value.getDefiningOp();
  if (!op || depth > 12)
    return false;
  if (auto neg = dyn_cast<NegOp>(op))
    return ++negations, isRotationOf(neg.getInput(), x, negations, depth + 1);
  if (isa<SliceOp, UnsqueezeOp, SqueezeOp, ReshapeOp>(op))
    return isRotationOf(op->getOperand(0), x, negations, depth + 1);
  if (auto concat = dyn_cast<ConcatOp>(op))
    return llvm::all_of(concat.getInputs(), [&](Value input) {
      return isRotationOf(input, x, negations, depth + 1);
    });
  return false;
}

bool isRotateHalfOf(Value value, Value x) {
  int negations = 0;
  return value != x && isa_and_nonnull<ConcatOp, ReshapeOp>(value.getDefiningOp()) &&
         isRotationOf(value, x, negations) && negations == 1;
}

struct RotaryMatch {
  Value x, cos, sin;
};

std::optional<RotaryMatch> matchRotary(AddOp add) {
  for (auto [plain, rotated] : {std::make_pair(add.getLhs(), add.getRhs()),
                                std::make_pair(add.getRhs(), add.getLhs())}) {
    auto plainMul = plain.getDefiningOp<MulOp>();
    auto rotatedMul = rotated.getDefiningOp<MulOp>();
    if (!plainMul || !rotatedMul)
      continue;
    for (auto [x, cos] : {std::make_pair(plainMul.getLhs(), plainMul.getRhs()),
                          std::make_pair(plainMul.getRhs(), plainMul.getLhs())}) {
      for (auto [half, sin] : {std::make_pair(rotatedMul.getLhs(), rotatedMul.getRhs()),
                               std::make_pair(rotatedMul.getRhs(), rotatedMul.getLhs())}) {
        if (rankOf(x) == 4 && isRotateHalfOf(half, x))
          return RotaryMatch{x, cos, sin};
      }
    }
  }
  return std::nullopt;
}

/// Replaces `result` (rotary of the heads [b, h, s, d] `heads`, the first
/// `rotaryDim` dims of each head rotated) by graph.rotary, if proven.
/// Token-major [b, s, h*d] with each head's pairs (2i, 2i+1) moved apart to
/// (i, i + d/2): [..., x0, x1, x2, x3] → [..., x0, x2, x1, x3].
Value deinterleavePairs(OpBuilder &builder, Location loc, Value tokens, int64_t heads,
                        int64_t headDim) {
  Type element = cast<TensorType>(tokens.getType()).getElementType();
  Value pairs = ReshapeOp::create(
      builder, loc, RankedTensorType::get({kDynamic, kDynamic, heads, headDim / 2, 2}, element),
      tokens, i64Vector(builder, loc, {0, 0, heads, headDim / 2, 2}), builder.getBoolAttr(false));
  Value halves = TransposeOp::create(
      builder, loc, RankedTensorType::get({kDynamic, kDynamic, heads, 2, headDim / 2}, element),
      pairs, builder.getDenseI64ArrayAttr({0, 1, 2, 4, 3}));
  return ReshapeOp::create(builder, loc, tokens.getType(), halves,
                           i64Vector(builder, loc, {0, 0, heads * headDim}),
                           builder.getBoolAttr(false));
}

bool raiseRotaryAt(func::FuncOp func, Value result, Value headsValue, Value cos, int64_t rotaryDim,
                   bool pairSplit = false) {
  if (result.getType() != headsValue.getType())
    return false;
  // Heads [b, h, s, d], or [b, s, h, d] before the transpose (GPT-J).
  std::optional<int64_t> headDim = staticDim(headsValue, 3);
  if (!headDim || rotaryDim <= 0 || rotaryDim % 2 || rotaryDim > *headDim)
    return false;
  std::optional<HeadsSource> source = headsSourceOf(headsValue, *headDim);
  if (!source)
    return false;
  auto type = cast<RankedTensorType>(headsValue.getType());
  bool headsMajor = !type.isDynamicDim(1) && type.isDynamicDim(2);
  if (!headsMajor && !(type.isDynamicDim(1) && !type.isDynamicDim(2)))
    return false;
  // Rotated after a repeat of the KV heads (Falcon-40B's k): the rotary runs
  // on the source's heads and its result is repeated as they were.
  int64_t heads = source->heads, repeat = type.getDimSize(headsMajor ? 1 : 2) / heads;
  if (repeat < 1 || repeat * heads != type.getDimSize(headsMajor ? 1 : 2))
    return false;
  // YaRN scales cos and sin by its attention factor: the rotated heads are
  // scaled after the rotary (and RaiseAttention folds that into its scale).
  double tableScale = 1.0;
  (void)dataMovementRoot(cos, &tableScale);
  for (DenseElementsAttr invFreq : frequencyCandidates(cos, rotaryDim / 2)) {
    for (bool interleaved : {false, true}) {
      if (pairSplit && interleaved)
        continue;
      auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
        Value tokens = tokenMajor(builder, loc, inputs[0], *source);
        if (pairSplit)
          tokens = deinterleavePairs(builder, loc, tokens, heads, *headDim);
        Value freqs = ConstantOp::create(builder, loc, cast<ElementsAttr>(invFreq));
        Value rotated = RotaryOp::create(
            builder, loc, tokens.getType(), tokens, freqs, Value(), Value(), Value(),
            builder.getI64IntegerAttr(heads), builder.getI64IntegerAttr(heads),
            builder.getI64IntegerAttr(*headDim), builder.getI64IntegerAttr(rotaryDim),
            builder.getBoolAttr(interleaved));
        Value split = repeat == 1
                          ? splitHeads(builder, loc, rotated, heads, *headDim, headsMajor)
                          : repeatHeads(builder, loc, rotated, heads, repeat, *headDim, headsMajor);
        if (tableScale == 1.0)
          return split;
        auto scalar = RankedTensorType::get({}, cast<TensorType>(split.getType()).getElementType());
        Value factor = ConstantOp::create(
            builder, loc, DenseElementsAttr::get(scalar, builder.getFloatAttr(scalar.getElementType(), tableScale)));
        return MulOp::create(builder, loc, split.getType(), split, factor);
      };
      if (!validateReplacement(func, {source->value}, result, build))
        continue;
      OpBuilder builder(result.getDefiningOp());
      Value replacement = build(builder, result.getLoc(), ValueRange{source->value});
      if (replacement.getType() != result.getType())
        replacement = CastOp::create(builder, result.getLoc(), result.getType(), replacement);
      result.replaceAllUsesWith(replacement);
      return true;
    }
  }
  return false;
}

bool raiseRotary(func::FuncOp func, AddOp add) {
  std::optional<RotaryMatch> match = matchRotary(add);
  if (!match)
    return false;
  std::optional<int64_t> headDim = staticDim(match->x, 3);
  return headDim && raiseRotaryAt(func, add.getResult(), match->x, match->cos, *headDim);
}

/// concat(rope(x[..., :r]), x[..., r:]) on the last axis: a partial rotary of
/// x (GPT-NeoX, Phi-2).
bool raisePartialRotary(func::FuncOp func, ConcatOp concat) {
  if (concat.getInputs().size() != 2 || rankOf(concat.getResult()) != 4 ||
      concat.getAxis() != 3)
    return false;
  auto add = concat.getInputs()[0].getDefiningOp<AddOp>();
  auto pass = concat.getInputs()[1].getDefiningOp<SliceOp>();
  if (!add || !pass)
    return false;
  std::optional<RotaryMatch> match = matchRotary(add);
  auto rotatedPart = match ? match->x.getDefiningOp<SliceOp>() : SliceOp();
  if (!rotatedPart || rotatedPart.getData() != pass.getData())
    return false;
  std::optional<int64_t> rotaryDim = staticDim(match->x, 3);
  return rotaryDim && raiseRotaryAt(func, concat.getResult(), pass.getData(), match->cos, *rotaryDim);
}

/// `value` as x[..., start::2] (last axis, constant), or null.
Value strideTwoSliceOf(Value value, int64_t start) {
  auto slice = value.getDefiningOp<SliceOp>();
  if (!slice)
    return Value();
  std::optional<SmallVector<int64_t>> starts = getConstantInts(slice.getStarts()),
                                      axes = getConstantInts(slice.getAxes()),
                                      steps = getConstantInts(slice.getSteps());
  std::optional<int64_t> rank = rankOf(slice.getData());
  if (!starts || !axes || !steps || !rank || starts->size() != 1 || axes->size() != 1 ||
      steps->size() != 1 || (*starts)[0] != start || (*steps)[0] != 2 ||
      ((*axes)[0] != *rank - 1 && (*axes)[0] != -1))
    return Value();
  return slice.getData();
}

/// concat(e·cos - o·sin, o·cos + e·sin) with e = x[..., 0::2], o = x[..., 1::2]:
/// the rotary of x's pairs (2i, 2i+1), written as halves (DeepSeek-V3's
/// interleaved rope). It is the half-split rotary of x with its pairs moved
/// apart first, which is how it is raised.
bool raisePairSplitRotary(func::FuncOp func, ConcatOp concat) {
  if (concat.getInputs().size() != 2 || rankOf(concat.getResult()) != 4 || concat.getAxis() != 3)
    return false;
  auto sub = concat.getInputs()[0].getDefiningOp<SubOp>();
  auto add = concat.getInputs()[1].getDefiningOp<AddOp>();
  if (!sub || !add)
    return false;
  auto lhs = sub.getLhs().getDefiningOp<MulOp>();
  if (!lhs)
    return false;
  // e·cos: which operand of the first product is the even slice.
  for (auto [even, cos] :
       {std::make_pair(lhs.getLhs(), lhs.getRhs()), std::make_pair(lhs.getRhs(), lhs.getLhs())}) {
    Value x = strideTwoSliceOf(even, 0);
    if (!x || staticDim(x, 3) != 2 * staticDim(even, 3).value_or(-1))
      continue;
    std::optional<int64_t> rotaryDim = staticDim(x, 3);
    // The shape of the rest (o·sin, o·cos, e·sin) the proof checks.
    return rotaryDim && raiseRotaryAt(func, concat.getResult(), x, cos, *rotaryDim,
                                      /*pairSplit=*/true);
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

struct AttentionMatch {
  HeadsSource q, k, v;
  int64_t heads = 0, kvHeads = 0, headDim = 0;
  int64_t valueDim = 0; // v's head dim: headDim, or fewer (DeepSeek-V3's MLA: 128 of 192)
  double scale = 1.0;
  double softcap = 0.0;
  bool masked = false;
  Value mask;             // additive, shape-only (null with only a fill)
  WhereOp fill;           // masked_fill(cond, -big) around the scores (MPT), or null
  Value output;           // token-major [b, s, heads * valueDim] the rewrite replaces
};

/// The value the heads output `o` [b, h, s, d] is merged into: token-major
/// [b, s, h*d], or flattened [b*s, h*d] (exporters of Conv1D-style models).
Value mergedHeads(Value o, int64_t features) {
  if (!o.hasOneUse())
    return Value();
  // [b*h, s, d] batches (BLOOM) are split back to [b, h, s, d] first.
  if (auto split = dyn_cast<ReshapeOp>(*o.getUsers().begin());
      split && rankOf(o) == 3 && rankOf(split.getResult()) == 4 && split.getResult().hasOneUse())
    o = split.getResult();
  auto transpose = dyn_cast<TransposeOp>(*o.getUsers().begin());
  if (!transpose || transpose.getPerm() != ArrayRef<int64_t>{0, 2, 1, 3} ||
      !transpose.getResult().hasOneUse())
    return Value();
  auto reshape = dyn_cast<ReshapeOp>(*transpose.getResult().getUsers().begin());
  if (!reshape || staticDim(reshape.getResult(), -1) != features ||
      (rankOf(reshape.getResult()) != 3 && rankOf(reshape.getResult()) != 2))
    return Value();
  return reshape.getResult();
}

std::optional<AttentionMatch> matchAttention(func::FuncOp func, SoftmaxOp softmax) {
  AttentionMatch match;
  if (rankOf(softmax.getInput()) != 4 || softmax.getAxis() != 3)
    return std::nullopt;
  // Output side: [where(is_nan(p), 0, p)] · v, then merged heads.
  Value probs = softmax.getResult();
  for (Operation *user : probs.getUsers())
    if (auto where = dyn_cast<WhereOp>(user)) {
      auto isNan = where.getCondition().getDefiningOp<IsNaNOp>();
      if (!isNan || isNan.getInput() != probs || !isSplat(where.getX(), 0.0) || where.getY() != probs)
        return std::nullopt;
      probs = where.getResult();
      break;
    }
  if (!probs.hasOneUse())
    return std::nullopt;
  // BLOOM multiplies [b*h, s, t] batches (baddbmm / bmm): the probabilities
  // are merged to rank 3 first.
  if (auto merged = dyn_cast<ReshapeOp>(*probs.getUsers().begin());
      merged && rankOf(merged.getResult()) == 3 && merged.getResult().hasOneUse())
    probs = merged.getResult();
  auto pv = dyn_cast<MatMulOp>(*probs.getUsers().begin());
  if (!pv || pv.getLhs() != probs)
    return std::nullopt;

  // Scores: [masked_fill(] [softcap(] q·kᵀ [* scale] [)] [+ mask] [)].
  Value scores = softmax.getInput();
  if (auto where = scores.getDefiningOp<WhereOp>()) {
    std::optional<double> fill = splatValue(where.getX());
    if (fill && *fill <= -1e4 && evaluateShapeOnly(func, where.getCondition(), 1, 2)) {
      match.fill = where;
      match.masked = true;
      scores = where.getY();
    }
  }
  // (q·kᵀ + mask) · c (CodeGen scales after adding its mask): c goes to the
  // scale, and the mask is read scaled by it.
  double scale = 1.0;
  if (Value scaled = dataMovementRoot(scores, &scale);
      scale != 1.0 && scaled.getDefiningOp<AddOp>())
    scores = scaled;
  else
    scale = 1.0;
  if (auto add = scores.getDefiningOp<AddOp>()) {
    bool added = false;
    for (auto [s, m] : {std::make_pair(add.getLhs(), add.getRhs()),
                        std::make_pair(add.getRhs(), add.getLhs())}) {
      if (s.getDefiningOp<MatMulOp>() || s.getDefiningOp<MulOp>() || s.getDefiningOp<DivOp>() ||
          s.getDefiningOp<ReshapeOp>()) {
        if (!evaluateShapeOnly(func, m, 1, 2))
          continue;
        scores = s, match.mask = m, match.masked = true, added = true;
        break;
      }
    }
    if (!added)
      return std::nullopt;
    if (scale != 1.0) {
      // Built beside the softmax for reading; erased once unused.
      OpBuilder builder(softmax);
      auto type = cast<RankedTensorType>(match.mask.getType());
      auto scalar = RankedTensorType::get({}, type.getElementType());
      Value factor = ConstantOp::create(
          builder, softmax.getLoc(),
          DenseElementsAttr::get(scalar, builder.getFloatAttr(type.getElementType(), scale)));
      match.mask = MulOp::create(builder, softmax.getLoc(), type, match.mask, factor);
    }
  }
  if (auto capMul = scores.getDefiningOp<MulOp>()) {
    auto parts = commutedOperands(capMul, [](Value v) { return splatValue(v).has_value(); });
    auto tanh = parts ? parts->second.getDefiningOp<TanhOp>() : TanhOp();
    if (tanh) {
      match.softcap = *splatValue(parts->first);
      Value inner = tanh.getInput();
      if (auto div = inner.getDefiningOp<DivOp>(); div && isSplat(div.getRhs(), match.softcap))
        scores = div.getLhs();
      else if (Value x = commutedOperands(inner.getDefiningOp(), [&](Value v) {
                           return isSplat(v, 1.0 / match.softcap);
                         }).value_or(std::make_pair(Value(), Value())).second)
        scores = x;
      else
        return std::nullopt;
    }
  }
  // BLOOM's batched scores: reshape([b*h, s, t] scores + ALiBi [b*h, 1, t]),
  // the ALiBi read as [b, h, 1, t] with the mask.
  if (auto batched = dataMovementRoot(scores).getDefiningOp<AddOp>();
      batched && rankOf(batched.getResult()) == 3 && rankOf(scores) == 4) {
    std::optional<int64_t> heads = staticDim(scores, 1);
    for (auto [s, m] : {std::make_pair(batched.getLhs(), batched.getRhs()),
                        std::make_pair(batched.getRhs(), batched.getLhs())}) {
      if (!heads || rankOf(m) != 3 || staticDim(m, 1) != 1 || !evaluateShapeOnly(func, m, 1, 2))
        continue;
      OpBuilder builder(softmax);
      Location loc = softmax.getLoc();
      auto type = cast<RankedTensorType>(m.getType());
      Value perHead =
          ReshapeOp::create(builder, loc, type.clone({kDynamic, *heads, kDynamic}), m,
                            i64Vector(builder, loc, {-1, *heads, 0}), builder.getBoolAttr(false));
      Value bias = UnsqueezeOp::create(builder, loc, type.clone({kDynamic, *heads, 1, kDynamic}),
                                       perHead, i64Vector(builder, loc, {2}));
      if (match.mask) {
        auto maskType =
            RankedTensorType::get(SmallVector<int64_t>(4, kDynamic), type.getElementType());
        bias = AddOp::create(builder, loc, maskType, match.mask, bias);
      }
      match.mask = bias, match.masked = true;
      scores = s;
      break;
    }
  }
  Value product = dataMovementRoot(scores, &scale);
  auto qk = product.getDefiningOp<MatMulOp>();
  if (!qk || (rankOf(qk.getLhs()) != 4 && rankOf(qk.getLhs()) != 3))
    return std::nullopt;
  bool batched = rankOf(qk.getLhs()) == 3;
  std::optional<int64_t> heads =
      batched ? staticDim(softmax.getInput(), 1) : staticDim(qk.getLhs(), 1);
  std::optional<int64_t> headDim = staticDim(qk.getLhs(), batched ? 2 : 3);
  std::optional<int64_t> valueDim = staticDim(pv.getRhs(), batched ? 2 : 3);
  if (!heads || !headDim || !valueDim || *valueDim > *headDim)
    return std::nullopt;
  std::optional<HeadsSource> q = headsSourceOf(qk.getLhs(), *headDim, &scale);
  std::optional<HeadsSource> k = headsSourceOf(qk.getRhs(), *headDim, &scale);
  std::optional<HeadsSource> v = headsSourceOf(pv.getRhs(), *valueDim);
  if (!q || !k || !v || q->heads != *heads || k->heads != v->heads || *heads % k->heads)
    return std::nullopt;
  match.q = *q, match.k = *k, match.v = *v;
  match.heads = *heads;
  match.headDim = *headDim;
  match.valueDim = *valueDim;
  match.kvHeads = k->heads;
  match.scale = scale;
  match.output = mergedHeads(pv.getResult(), *heads * *valueDim);
  if (!match.output)
    return std::nullopt;
  return match;
}

/// The additive mask the scores get: `mask`, or a masked_fill's
/// where(cond, fill, mask or 0), built beside the softmax for reading (and
/// erased once unused).
Value combinedMask(const AttentionMatch &match) {
  WhereOp fill = match.fill;
  if (!fill)
    return match.mask;
  OpBuilder builder(fill);
  Location loc = fill.getLoc();
  Type element = cast<TensorType>(fill.getType()).getElementType();
  Value additive = match.mask;
  if (!additive)
    additive = ConstantOp::create(
        builder, loc, DenseElementsAttr::get(RankedTensorType::get({}, element), 0.0f));
  int64_t rank = *rankOf(fill.getResult());
  auto type = RankedTensorType::get(SmallVector<int64_t>(rank, kDynamic), element);
  return WhereOp::create(builder, loc, type, fill.getCondition(), fill.getX(), additive);
}

/// Each of `heads` heads of `width` features of token-major `tokens` as
/// `dim` features: its first min(width, dim), then (when dim > width) its
/// own features again from the first.
Value resizeHeads(OpBuilder &builder, Location loc, Value tokens, int64_t heads, int64_t width,
                  int64_t dim) {
  SmallVector<int64_t> map;
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t d = 0; d < dim; ++d)
      map.push_back(h * width + d % width);
  auto type = cast<RankedTensorType>(tokens.getType());
  return GatherFeaturesOp::create(builder, loc, type.clone({kDynamic, kDynamic, heads * dim}),
                                  tokens, builder.getDenseI64ArrayAttr(map));
}

void eraseDeadOps(func::FuncOp func);

bool raiseAttention(func::FuncOp func, SoftmaxOp softmax) {
  std::optional<AttentionMatch> match = matchAttention(func, softmax);
  if (!match)
    return false;
  // The mask becomes `causal` and `window`, read from its values at a length
  // past its window; validation checks the rest at short lengths.
  int64_t window = 0;
  double alibi = 0.0;
  if (match->masked) {
    std::optional<CausalMask> mask = readCausalMask(func, combinedMask(*match));
    eraseDeadOps(func);
    if (!mask)
      return false;
    window = mask->window;
    // A bias per head must be ALiBi's slopes, head by head, times one factor.
    if (!mask->slopes.empty()) {
      std::vector<double> expected = alibiSlopes(match->heads);
      if (mask->slopes.size() != expected.size())
        return false;
      alibi = mask->slopes.front() / expected.front();
      for (auto [read, slope] : llvm::zip_equal(mask->slopes, expected))
        if (std::abs(read - alibi * slope) > 1e-4 * std::abs(alibi * slope))
          return false;
    }
  }
  Type resultType = match->output.getType();
  int64_t features = match->heads * match->valueDim;
  Type element = cast<TensorType>(resultType).getElementType();
  bool narrowValues = match->valueDim < match->headDim;
  auto build = [&](OpBuilder &builder, Location loc, ValueRange inputs) -> Value {
    SmallVector<Value> tokens = {tokenMajor(builder, loc, inputs[0], match->q),
                                 tokenMajor(builder, loc, inputs[1], match->k),
                                 tokenMajor(builder, loc, inputs[2], match->v)};
    // Narrower values are widened to the keys' head dim, which attention and
    // the KV cache have one of. Output lane d reads only v's lane d, so the
    // extra lanes (v's own features again: no fill needed) are dropped after.
    if (narrowValues)
      tokens[2] =
          resizeHeads(builder, loc, tokens[2], match->kvHeads, match->valueDim, match->headDim);
    Value attention = AttentionOp::create(
        builder, loc,
        RankedTensorType::get({kDynamic, kDynamic, match->heads * match->headDim}, element), tokens,
        builder.getI64IntegerAttr(match->heads), builder.getI64IntegerAttr(match->kvHeads),
        builder.getI64IntegerAttr(match->headDim), builder.getF32FloatAttr(match->scale),
        builder.getBoolAttr(match->masked), builder.getF32FloatAttr(match->softcap),
        builder.getI64IntegerAttr(window), builder.getF32FloatAttr(float(alibi)),
        /*k_cache_scale=*/builder.getF32FloatAttr(0), /*v_cache_scale=*/builder.getF32FloatAttr(0));
    if (narrowValues)
      attention =
          resizeHeads(builder, loc, attention, match->heads, match->headDim, match->valueDim);
    if (rankOf(match->output) == 3)
      return attention;
    // The model flattens tokens for its output projection; so does this.
    auto target = ConstantOp::create(
        builder, loc,
        DenseIntElementsAttr::get(RankedTensorType::get({2}, builder.getI64Type()),
                                  ArrayRef<int64_t>{-1, features}));
    return ReshapeOp::create(builder, loc, resultType, attention, target, builder.getBoolAttr(false));
  };
  SmallVector<Value> inputs = {match->q.value, match->k.value, match->v.value};
  if (!validateReplacement(func, inputs, match->output, build))
    return false;
  Operation *outputOp = match->output.getDefiningOp();
  OpBuilder builder(outputOp);
  Value attention = build(builder, softmax.getLoc(), inputs);
  if (attention.getType() != match->output.getType())
    attention = CastOp::create(builder, softmax.getLoc(), match->output.getType(), attention);
  match->output.replaceAllUsesWith(attention);
  return true;
}

void eraseDeadOps(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op != func.getOperation() && isOpTriviallyDead(op))
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead)) {
      op->erase();
      changed = true;
    }
  }
}

struct RaiseAttentionPass : public infer::graph::impl::RaiseAttentionPassBase<RaiseAttentionPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Partial rotaries first: their rotated part alone is a full rotary of
    // fewer dims, which the add walk would otherwise raise.
    SmallVector<ConcatOp> concats;
    func.walk([&](ConcatOp concat) { concats.push_back(concat); });
    for (ConcatOp concat : concats)
      if (!raisePartialRotary(func, concat))
        (void)raisePairSplitRotary(func, concat);
    eraseDeadOps(func);
    SmallVector<AddOp> adds;
    func.walk([&](AddOp add) { adds.push_back(add); });
    for (AddOp add : adds)
      (void)raiseRotary(func, add);
    eraseDeadOps(func);
    SmallVector<SoftmaxOp> softmaxes;
    func.walk([&](SoftmaxOp softmax) { softmaxes.push_back(softmax); });
    for (SoftmaxOp softmax : softmaxes)
      (void)raiseAttention(func, softmax);
    eraseDeadOps(func);
  }
};

} // namespace
