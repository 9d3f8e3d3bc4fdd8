//===- GraphFusedOps.cpp - verifiers of the raised LLM ops ----------------===//

#include "dialects/graph/IR/GraphOps.h"

#include <cmath>
#include <cstdint>

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace infer::graph;

namespace {

/// The static size of the last dim of `value`, if known.
std::optional<int64_t> lastDim(Value value) {
  auto ranked = dyn_cast<RankedTensorType>(value.getType());
  if (!ranked || ranked.getRank() == 0 || ranked.isDynamicDim(ranked.getRank() - 1))
    return std::nullopt;
  return ranked.getShape().back();
}

bool isActivation(StringRef name) {
  return name == "silu" || name == "gelu" || name == "gelu_tanh";
}

} // namespace

LogicalResult LinearOp::verify() {
  auto weight = dyn_cast<RankedTensorType>(getWeight().getType());
  if (!weight || weight.getRank() != 2)
    return emitOpError() << "weight must be a rank-2 tensor, got " << getWeight().getType();
  int64_t k = weight.getDimSize(getTransposeWeight() ? 1 : 0);
  int64_t n = weight.getDimSize(getTransposeWeight() ? 0 : 1);
  std::optional<int64_t> inputK = lastDim(getInput());
  if (inputK && !ShapedType::isDynamic(k) && *inputK != k)
    return emitOpError() << "input has " << *inputK << " features but the weight expects " << k;
  std::optional<int64_t> outputN = lastDim(getResult());
  if (outputN && !ShapedType::isDynamic(n) && *outputN != n)
    return emitOpError() << "result has " << *outputN << " features but the weight gives " << n;
  if (getBias())
    if (std::optional<int64_t> biasN = lastDim(getBias());
        biasN && !ShapedType::isDynamic(n) && *biasN != n)
      return emitOpError() << "bias has " << *biasN << " entries but the weight gives " << n;
  return success();
}

LogicalResult RotaryOp::verify() {
  // I64Attr getters return uint64_t: read the attributes as signed values so
  // that negative ones fail the range checks.
  int64_t numHeads = getNumHeads(), rotatedHeads = getRotatedHeads();
  int64_t headDim = getHeadDim(), rotaryDim = getRotaryDim();
  if (numHeads <= 0 || headDim <= 0)
    return emitOpError() << "num_heads and head_dim must be positive";
  if (rotatedHeads < 0 || rotatedHeads > numHeads)
    return emitOpError() << "rotated_heads must lie in [0, num_heads]";
  if (rotaryDim <= 0 || rotaryDim > headDim || rotaryDim % 2 != 0)
    return emitOpError() << "rotary_dim must be even and in (0, head_dim]";
  if (std::optional<int64_t> features = lastDim(getInput());
      features && *features != numHeads * headDim)
    return emitOpError() << "input has " << *features << " features, not num_heads * head_dim = "
                         << numHeads * headDim;
  Value cosCache = getCosCache(), sinCache = getSinCache();
  if (bool(cosCache) != bool(sinCache))
    return emitOpError() << "takes the cos and sin caches together";
  if (bool(getInvFreq()) == bool(cosCache))
    return emitOpError() << "takes inv_freq or caches(cos, sin), not "
                         << (cosCache ? "both" : "neither");
  if (Value invFreq = getInvFreq()) {
    if (std::optional<int64_t> freqs = lastDim(invFreq); freqs && *freqs != rotaryDim / 2)
      return emitOpError() << "inv_freq has " << *freqs << " entries, not rotary_dim / 2 = "
                           << rotaryDim / 2;
    return success();
  }
  if (cosCache.getType() != sinCache.getType())
    return emitOpError() << "cos cache " << cosCache.getType() << " and sin cache "
                         << sinCache.getType() << " must have the same type";
  if (std::optional<int64_t> columns = lastDim(cosCache); columns && *columns != rotaryDim / 2)
    return emitOpError() << "caches have " << *columns << " columns, not rotary_dim / 2 = "
                         << rotaryDim / 2;
  // [max_position, rotary_dim / 2] is read at each token's position;
  // [batch or 1, seq, rotary_dim / 2] holds each token's row already.
  if (auto ranked = dyn_cast<RankedTensorType>(cosCache.getType())) {
    if (ranked.getRank() != 2 && ranked.getRank() != 3)
      return emitOpError() << "caches must be [max_position, rotary_dim / 2] or "
                              "[batch, seq, rotary_dim / 2], got rank "
                           << ranked.getRank();
    if (ranked.getRank() == 3 && getPositions())
      return emitOpError() << "per-token [batch, seq, rotary_dim / 2] caches take no positions";
  }
  return success();
}

LogicalResult AttentionOp::verify() {
  size_t count = getInputs().size();
  if (count != 1 && count != 3)
    return emitOpError() << "takes a packed qkv operand or q, k and v, got " << count << " operands";
  // Signed reads of the I64Attrs, as in RotaryOp::verify.
  int64_t numHeads = getNumHeads(), numKvHeads = getNumKvHeads(), headDim = getHeadDim();
  if (numHeads <= 0 || numKvHeads <= 0 || headDim <= 0)
    return emitOpError() << "num_heads, num_kv_heads and head_dim must be positive";
  if (numHeads % numKvHeads != 0)
    return emitOpError() << "num_heads (" << numHeads << ") must be a multiple of num_kv_heads ("
                         << numKvHeads << ")";
  int64_t qFeatures = numHeads * headDim;
  int64_t kvFeatures = numKvHeads * headDim;
  if (count == 1) {
    if (std::optional<int64_t> packed = lastDim(getInputs()[0]);
        packed && *packed != qFeatures + 2 * kvFeatures)
      return emitOpError() << "packed qkv has " << *packed << " features, expected "
                           << qFeatures + 2 * kvFeatures;
  } else {
    int64_t expected[3] = {qFeatures, kvFeatures, kvFeatures};
    for (int i = 0; i < 3; ++i)
      if (std::optional<int64_t> features = lastDim(getInputs()[i]); features && *features != expected[i])
        return emitOpError() << "operand " << i << " has " << *features << " features, expected "
                             << expected[i];
  }
  if (std::optional<int64_t> out = lastDim(getResult()); out && *out != qFeatures)
    return emitOpError() << "result has " << *out << " features, expected " << qFeatures;
  // The kernels take these as float and int: a NaN, an infinity or a
  // window past 2^31 - 1 keys would be computed with silently (a NaN softcap
  // fails every comparison).
  const float softcap = getSoftcap().convertToFloat(), alibi = getAlibi().convertToFloat(),
              scale = getScale().convertToFloat();
  if (!std::isfinite(softcap) || softcap < 0)
    return emitOpError() << "softcap " << softcap
                         << " is not supported (a finite, non-negative cap; 0 is none)";
  if (!std::isfinite(alibi))
    return emitOpError() << "alibi " << alibi << " is not supported (a finite bias factor)";
  if (!std::isfinite(scale))
    return emitOpError() << "scale " << scale << " is not supported (a finite factor)";
  if (int64_t window = int64_t(getWindow());
      window < 0 || window > INT32_MAX || (window > 0 && !getCausal()))
    return emitOpError()
           << "window " << window
           << " is not supported (a sliding window is a positive count of keys, below 2^31, "
              "of causal attention)";
  return success();
}

LogicalResult MoeOp::verify() {
  if (getActivation() != "silu")
    return emitOpError() << "activation must be \"silu\", got \"" << getActivation() << "\"";
  auto router = dyn_cast<RankedTensorType>(getRouter().getType());
  auto gateUp = dyn_cast<RankedTensorType>(getGateUp().getType());
  auto down = dyn_cast<RankedTensorType>(getDown().getType());
  if (!router || !gateUp || !down || !router.hasStaticShape() || !gateUp.hasStaticShape() ||
      !down.hasStaticShape() || router.getRank() != 2 || gateUp.getRank() != 3 ||
      down.getRank() != 3)
    return emitOpError() << "router, gate_up and down must be static [experts, hidden], "
                            "[experts, 2 * inter, hidden] and [experts, hidden, inter]";
  int64_t experts = router.getDimSize(0), hidden = router.getDimSize(1), inter = down.getDimSize(2);
  if (gateUp.getShape() != ArrayRef<int64_t>{experts, 2 * inter, hidden} ||
      down.getShape() != ArrayRef<int64_t>{experts, hidden, inter})
    return emitOpError() << "gate_up " << gateUp << " and down " << down << " do not match router "
                         << router;
  if (std::optional<int64_t> features = lastDim(getInput()); features && *features != hidden)
    return emitOpError() << "input has " << *features << " features, the router " << hidden;
  if (int64_t(getTopK()) < 1 || int64_t(getTopK()) > experts)
    return emitOpError() << "top_k " << int64_t(getTopK()) << " is outside [1, " << experts << "]";
  if (getScoring() != "softmax" && getScoring() != "sigmoid")
    return emitOpError() << "scoring must be \"softmax\" or \"sigmoid\", got \"" << getScoring()
                         << "\"";
  const int64_t groups = int64_t(getGroups()), topkGroups = int64_t(getTopkGroups());
  if (groups < 1 || experts % groups != 0 || topkGroups < 1 || topkGroups > groups ||
      (groups > 1 && int64_t(getTopK()) > topkGroups * (experts / groups)))
    return emitOpError() << "groups " << groups << " and topk_groups " << topkGroups
                         << " must split " << experts << " experts evenly and leave top_k "
                         << int64_t(getTopK()) << " eligible";
  if (!std::isfinite(getScale().convertToDouble()))
    return emitOpError() << "scale must be finite";
  if (Value bias = getScoreBias()) {
    auto type = dyn_cast<RankedTensorType>(bias.getType());
    if (!type || type.getShape() != ArrayRef<int64_t>{experts})
      return emitOpError() << "score_bias must be [" << experts << "], got " << bias.getType();
  }
  return success();
}

LogicalResult GatedActivationOp::verify() {
  if (!isActivation(getActivation()))
    return emitOpError() << "activation must be \"silu\", \"gelu\" or \"gelu_tanh\", got \""
                         << getActivation() << "\"";
  size_t count = getInputs().size();
  if (count != 1 && count != 2)
    return emitOpError() << "takes gate_up or gate and up, got " << count << " operands";
  std::optional<int64_t> out = lastDim(getResult());
  if (count == 1) {
    std::optional<int64_t> packed = lastDim(getInputs()[0]);
    if (packed && *packed % 2 != 0)
      return emitOpError() << "packed gate_up has an odd number of features (" << *packed << ")";
    if (packed && out && *packed != 2 * *out)
      return emitOpError() << "result has " << *out << " features, expected half of " << *packed;
  } else {
    std::optional<int64_t> gate = lastDim(getInputs()[0]), up = lastDim(getInputs()[1]);
    if (gate && up && *gate != *up)
      return emitOpError() << "gate has " << *gate << " features but up has " << *up;
    if (gate && out && *gate != *out)
      return emitOpError() << "result has " << *out << " features, expected " << *gate;
  }
  return success();
}

LogicalResult GatherFeaturesOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "takes at least one input";
  auto result = cast<RankedTensorType>(getResult().getType());
  int64_t total = 0;
  for (auto [i, input] : llvm::enumerate(getInputs())) {
    auto type = dyn_cast<RankedTensorType>(input.getType());
    if (!type || type.getRank() != result.getRank() || type.getRank() < 2)
      return emitOpError() << "input #" << i << " must be ranked like the result (rank >= 2)";
    if (type.getElementType() != result.getElementType())
      return emitOpError() << "input #" << i << " has element type " << type.getElementType()
                           << ", the result " << result.getElementType();
    for (int64_t d = 0; d + 1 < type.getRank(); ++d)
      if (!ShapedType::isDynamic(type.getDimSize(d)) &&
          !ShapedType::isDynamic(result.getDimSize(d)) &&
          type.getDimSize(d) != result.getDimSize(d))
        return emitOpError() << "input #" << i << " differs from the result in dim " << d;
    std::optional<int64_t> features = lastDim(input);
    if (!features)
      return emitOpError() << "input #" << i << " has a dynamic last dim";
    total += *features;
  }
  std::optional<int64_t> out = lastDim(getResult());
  if (!out || *out != static_cast<int64_t>(getMap().size()))
    return emitOpError() << "map has " << getMap().size() << " entries for a result of "
                         << (out ? std::to_string(*out) : std::string("?")) << " features";
  for (int64_t source : getMap())
    if (source < 0 || source >= total)
      return emitOpError() << "map entry " << source << " is outside the inputs' " << total
                           << " features";
  return success();
}

LogicalResult FusionGroupOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments() << " arguments for "
                         << getInputs().size() << " operands";
  for (auto [argument, input] : llvm::zip(body.getArguments(), getInputs()))
    if (argument.getType() != input.getType())
      return emitOpError() << "body argument type " << argument.getType()
                           << " does not match operand type " << input.getType();
  // Runs before the implicit-terminator trait's check, so the last op may be
  // anything (or missing, in the generic form).
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError() << "body must end in graph.yield";
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields types that do not match the results";
  return success();
}

LogicalResult PackWeightsOp::verify() {
  if (getWeights().empty())
    return emitOpError() << "needs at least one weight";
  auto resultType = cast<RankedTensorType>(getType());
  // The concatenation's shape: the result's, or its reverse when transposed.
  SmallVector<int64_t> packed(resultType.getShape());
  StringRef packedName = "the result";
  if (getTranspose()) {
    if (resultType.getRank() != 2)
      return emitOpError() << "transpose needs rank-2 weights, got rank " << resultType.getRank();
    std::reverse(packed.begin(), packed.end());
    packedName = "the result's transpose";
  }
  int64_t rank = resultType.getRank();
  int64_t axis = getAxis();
  if (axis < 0 || axis >= rank)
    return emitOpError() << "axis " << axis << " is out of range for rank " << rank;
  int64_t total = 0;
  for (Value weight : getWeights()) {
    auto type = cast<RankedTensorType>(weight.getType());
    if (type.getRank() != rank || type.getElementType() != resultType.getElementType())
      return emitOpError() << "weights must share the result's rank and element type";
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && type.getDimSize(d) != packed[d])
        return emitOpError() << "weights differ from " << packedName << " in dim " << d;
    total += type.getDimSize(axis);
  }
  if (total != packed[axis])
    return emitOpError() << "packed dim is " << packed[axis] << ", weights add up to " << total;
  return success();
}

namespace {

/// The quantized weight's shape checks shared by quantize_weight, dequantize
/// and quantized_linear: `q`, `scales` and optional `zeros` of a [n, k] weight.
LogicalResult verifyQuantized(Operation *op, StringRef scheme, int64_t group, int64_t n, int64_t k,
                              Type q, Type scales, Type zeros = Type()) {
  auto qType = dyn_cast<RankedTensorType>(q);
  auto scaleType = dyn_cast<RankedTensorType>(scales);
  if (!qType || !qType.getElementType().isUnsignedInteger(8))
    return op->emitOpError() << "q must be a ui8 tensor, got " << q;
  if (!scaleType || !scaleType.getElementType().isF32())
    return op->emitOpError() << "scales must be an f32 tensor, got " << scales;
  bool grouped = scheme == "int4" || scheme == "int8";
  if (scheme == "int4" && (group <= 0 || group % 2 || k % group))
    return op->emitOpError() << "int4 group_size " << group << " must be even and divide k = " << k;
  if (scheme == "int8" && (group <= 0 || k % group))
    return op->emitOpError() << "int8 group_size " << group << " must divide k = " << k;
  if ((scheme == "fp8" || scheme == "fp8-weight") && group != 0)
    return op->emitOpError() << scheme << " has one scale a row: group_size must be 0";
  if (!grouped && scheme != "fp8" && scheme != "fp8-weight")
    return op->emitOpError() << "unknown scheme '" << scheme
                             << "' (expected int4, fp8, int8 or fp8-weight)";
  SmallVector<int64_t> qShape = {n, scheme == "int4" ? k / 2 : k};
  SmallVector<int64_t> scaleShape =
      grouped ? SmallVector<int64_t>{n, k / group} : SmallVector<int64_t>{n};
  if (qType.getShape() != ArrayRef<int64_t>(qShape))
    return op->emitOpError() << "q of a [" << n << ", " << k << "] " << scheme << " weight must be "
                             << RankedTensorType::get(qShape, qType.getElementType()) << ", got "
                             << q;
  if (scaleType.getShape() != ArrayRef<int64_t>(scaleShape))
    return op->emitOpError() << "scales of a [" << n << ", " << k << "] " << scheme
                             << " weight must be "
                             << RankedTensorType::get(scaleShape, scaleType.getElementType())
                             << ", got " << scales;
  if (zeros && !grouped)
    return op->emitOpError() << scheme << " weights have no zero points";
  if (zeros && zeros != scales)
    return op->emitOpError() << "zeros must be shaped as the scales, " << scales << ", got "
                             << zeros;
  return success();
}

/// An input_scale is an f32 [k].
LogicalResult verifyInputScale(Operation *op, Value scale, int64_t k) {
  if (!scale)
    return success();
  auto type = cast<RankedTensorType>(scale.getType());
  if (type.getRank() != 1 || type.getDimSize(0) != k || !type.getElementType().isF32())
    return op->emitOpError() << "input_scale must be tensor<" << k << "xf32>, got " << type;
  return success();
}

} // namespace

LogicalResult QuantizeWeightOp::verify() {
  auto weight = cast<RankedTensorType>(getWeight().getType());
  if (weight.getRank() != 2 || !weight.hasStaticShape() || !isa<FloatType>(weight.getElementType()))
    return emitOpError() << "weight must be a static rank-2 float tensor, got " << weight;
  int64_t n = weight.getDimSize(getTranspose() ? 1 : 0);
  int64_t k = weight.getDimSize(getTranspose() ? 0 : 1);
  if (failed(verifyQuantized(*this, getScheme(), static_cast<int64_t>(getGroupSize()), n, k,
                             getQ().getType(), getScales().getType())))
    return failure();
  if (Value clip = getClip()) {
    auto type = cast<RankedTensorType>(clip.getType());
    const int64_t groups = getGroupSize() ? k / int64_t(getGroupSize()) : 0;
    if (getScheme() != "int4" || type.getRank() != 2 || type.getDimSize(0) != n ||
        type.getDimSize(1) != groups || !type.getElementType().isF32())
      return emitOpError() << "clip must be an int4 weight's tensor<" << n << "x" << groups
                           << "xf32>, got " << type << " for scheme " << getScheme();
  }
  return verifyInputScale(*this, getInputScale(), k);
}

LogicalResult DequantizeOp::verify() {
  auto weight = cast<RankedTensorType>(getResult().getType());
  if (weight.getRank() != 2 || !weight.hasStaticShape() || !isa<FloatType>(weight.getElementType()))
    return emitOpError() << "result must be a static rank-2 float tensor, got " << weight;
  int64_t n = weight.getDimSize(getTranspose() ? 1 : 0);
  int64_t k = weight.getDimSize(getTranspose() ? 0 : 1);
  return verifyQuantized(*this, getScheme(), static_cast<int64_t>(getGroupSize()), n, k,
                         getQ().getType(), getScales().getType(),
                         getZeros() ? getZeros().getType() : Type());
}

LogicalResult QuantizedLinearOp::verify() {
  auto scales = dyn_cast<RankedTensorType>(getScales().getType());
  auto q = dyn_cast<RankedTensorType>(getQ().getType());
  if (!scales || !q || scales.getRank() < 1 || q.getRank() != 2)
    return emitOpError() << "q must be rank 2 and scales ranked";
  int64_t n = q.getDimSize(0);
  int64_t k = getScheme() == "int4" ? q.getDimSize(1) * 2 : q.getDimSize(1);
  if (failed(verifyQuantized(*this, getScheme(), static_cast<int64_t>(getGroupSize()), n, k, q,
                             scales, getZeros() ? getZeros().getType() : Type())))
    return failure();
  if (std::optional<int64_t> inputK = lastDim(getInput()); inputK && *inputK != k)
    return emitOpError() << "input has " << *inputK << " features but the weight expects " << k;
  if (std::optional<int64_t> outputN = lastDim(getResult()); outputN && *outputN != n)
    return emitOpError() << "result has " << *outputN << " features but the weight gives " << n;
  if (getBias())
    if (std::optional<int64_t> biasN = lastDim(getBias()); biasN && *biasN != n)
      return emitOpError() << "bias has " << *biasN << " entries but the weight gives " << n;
  return verifyInputScale(*this, getInputScale(), k);
}

std::optional<std::string> infer::graph::storedWeightName(Value value) {
  Operation *op = value.getDefiningOp();
  if (auto weight = dyn_cast_or_null<WeightOp>(op))
    return weight.getValue().getHandle().getKey().str();
  if (auto pack = dyn_cast_or_null<PackWeightsOp>(op)) {
    std::string name;
    for (auto [i, operand] : llvm::enumerate(pack.getWeights())) {
      auto source = operand.getDefiningOp<WeightOp>();
      if (!source)
        return std::nullopt;
      name += (i ? "+" : "") + source.getValue().getHandle().getKey().str();
    }
    return name;
  }
  if (auto quantize = dyn_cast_or_null<QuantizeWeightOp>(op)) {
    std::optional<std::string> source = storedWeightName(quantize.getWeight());
    if (!source)
      return std::nullopt;
    std::string name = *source + ":" + quantize.getScheme().str();
    if (quantize.getGroupSize())
      name += "g" + std::to_string(quantize.getGroupSize());
    return value == quantize.getScales() ? name + ":scales" : name;
  }
  return std::nullopt;
}
