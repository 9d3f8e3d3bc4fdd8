//===- Interpreter.cpp - reference interpreter for the graph dialect ------===//
//
// Walks the function body once, in order, dispatching on the op class. Each
// op's operands are looked up in an environment of computed Tensors, the
// kernel runs, and the result is checked against the op's declared type
// before it is bound. A value is dropped after its last use. A fusion group's
// region runs the same way, in an environment of its own.
//
// bf16 and f16 values are held as f32 and computed in f32; every value bound
// to a bf16/f16-typed SSA value (function argument or op result) is rounded to
// that type right there, so kernels never see the narrow types.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/Interpreter.h"

#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/Kernels.h"
#include "dialects/graph/Interpreter/LowPrecision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Parallel.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace infer::interp;
using namespace infer::interp::kernels;
namespace graph = infer::graph;

namespace {

using Results = std::vector<Tensor>;

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// The part of a location worth showing: the ONNX node name for a NameLoc,
/// file:line:col for a file location, nothing for an unknown one.
std::string locationText(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return "\"" + name.getName().str() + "\"";
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().strref() + ":" + llvm::Twine(file.getLine()) + ":" +
            llvm::Twine(file.getColumn()))
        .str();
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return locationText(call.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    std::string text;
    for (Location part : fused.getLocations()) {
      std::string partText = locationText(part);
      if (!partText.empty())
        text += (text.empty() ? "" : ", ") + partText;
    }
    return text;
  }
  return "";
}

/// "graph.reshape at "/model/Reshape_1": <message>".
llvm::Error opError(Operation *op, const llvm::Twine &message) {
  std::string where = locationText(op->getLoc());
  std::string prefix = op->getName().getStringRef().str();
  if (!where.empty())
    prefix += " at " + where;
  return llvm::createStringError(llvm::inconvertibleErrorCode(), prefix + ": " + message);
}

/// The 16-bit float format whose values `type` (or its element type) holds,
/// if it is bf16 or f16.
std::optional<HalfFormat> halfFormatOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (element.isBF16())
    return HalfFormat::BF16;
  if (element.isF16())
    return HalfFormat::F16;
  return std::nullopt;
}

/// Rounds an f32-held tensor to the precision of `type` when that is bf16 or
/// f16 ("store rounded"); leaves everything else alone.
void roundToType(Tensor &tensor, Type type) {
  std::optional<HalfFormat> format = halfFormatOf(type);
  if (format && tensor.dtype() == DType::F32)
    roundAllTo(*format, llvm::MutableArrayRef<float>(tensor.f32(), tensor.numElements()));
}

/// Decodes little-endian bytes holding `count` elements of `elementType`
/// (booleans one byte each) into a Tensor of `shape`.
llvm::Expected<Tensor> decodeBytes(Type elementType, llvm::ArrayRef<int64_t> shape,
                                   llvm::ArrayRef<char> bytes) {
  if (elementType.isUnsignedInteger(8)) { // quantized weights' bytes, held as i64
    if (llvm::Error error = checkElements(shape))
      return std::move(error);
    Tensor out(DType::I64, Shape(shape.begin(), shape.end()));
    if (static_cast<int64_t>(bytes.size()) != out.numElements())
      return kernelError("holds " + llvm::Twine(bytes.size()) + " bytes but " + formatShape(shape) +
                         " of ui8 needs " + llvm::Twine(out.numElements()));
    for (int64_t i = 0; i < out.numElements(); ++i)
      out.i64()[i] = static_cast<uint8_t>(bytes[i]);
    return out;
  }
  llvm::Expected<DType> dtype = dtypeForType(elementType);
  if (!dtype)
    return dtype.takeError();
  int64_t width = elementType.isInteger(1) ? 1 : (elementType.getIntOrFloatBitWidth() / 8);
  if (llvm::Error error = checkElements(shape))
    return std::move(error);
  Tensor out(*dtype, Shape(shape.begin(), shape.end()));
  int64_t expected = out.numElements() * width;
  if (static_cast<int64_t>(bytes.size()) != expected)
    return kernelError("holds " + llvm::Twine(bytes.size()) + " bytes but " + formatShape(shape) +
                       " of " + typeString(elementType) + " needs " + llvm::Twine(expected));
  const char *src = bytes.data();
  int64_t n = out.numElements();
  // Element-wise memcpy: weight bytes come from an mmap and may be unaligned.
  if (std::optional<HalfFormat> format = halfFormatOf(elementType)) {
    constexpr int64_t kChunk = 1 << 20; // weights of billions of elements: in parallel
    float *dst = out.f32();
    llvm::parallelFor(0, (n + kChunk - 1) / kChunk, [&](size_t chunk) {
      for (int64_t i = int64_t(chunk) * kChunk, end = std::min(n, i + kChunk); i < end; ++i) {
        uint16_t bits;
        std::memcpy(&bits, src + i * 2, 2);
        dst[i] = decodeHalf(*format, bits);
      }
    });
  } else if (elementType.isF64()) {
    for (int64_t i = 0; i < n; ++i) {
      double value;
      std::memcpy(&value, src + i * 8, 8);
      out.f32()[i] = float(value);
    }
  } else if (elementType.isInteger(32)) {
    for (int64_t i = 0; i < n; ++i) {
      int32_t value;
      std::memcpy(&value, src + i * 4, 4);
      out.i64()[i] = value;
    }
  } else if (*dtype == DType::Bool) {
    for (int64_t i = 0; i < n; ++i)
      out.boolData()[i] = src[i] != 0;
  } else if (n > 0) {
    std::memcpy(out.rawData(), src, expected);
  }
  return out;
}

/// A Tensor holding the value of a constant attribute.
llvm::Expected<Tensor> tensorFromElements(ElementsAttr attr) {
  ShapedType type = attr.getShapedType();
  if (!type.hasStaticShape())
    return kernelError("constant has a dynamic type " + typeString(type));
  Type element = type.getElementType();
  llvm::Expected<DType> dtype = dtypeForType(element);
  if (!dtype)
    return dtype.takeError();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return kernelError("constant's resource blob is missing");
    return decodeBytes(element, type.getShape(), blob->getData());
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return kernelError("unsupported constant attribute kind");
  if (llvm::Error error = checkElements(type.getShape()))
    return std::move(error);
  Tensor out(*dtype, Shape(type.getShape().begin(), type.getShape().end()));
  int64_t i = 0;
  if (element.isF32()) {
    for (float value : dense.getValues<float>())
      out.f32()[i++] = value;
  } else if (element.isF64()) {
    for (double value : dense.getValues<double>())
      out.f32()[i++] = float(value);
  } else if (std::optional<HalfFormat> format = halfFormatOf(element)) {
    for (const APFloat &value : dense.getValues<APFloat>())
      out.f32()[i++] = decodeHalf(*format, uint16_t(value.bitcastToAPInt().getZExtValue()));
  } else if (element.isInteger(1)) {
    for (bool value : dense.getValues<bool>())
      out.boolData()[i++] = value;
  } else if (element.isInteger(32)) {
    for (int32_t value : dense.getValues<int32_t>())
      out.i64()[i++] = value;
  } else {
    for (int64_t value : dense.getValues<int64_t>())
      out.i64()[i++] = value;
  }
  return out;
}

llvm::Expected<Tensor> tensorFromWeight(graph::WeightAttr attr) {
  ShapedType type = attr.getType();
  std::string key = attr.getHandle().getKey().str();
  if (!type.hasStaticShape())
    return kernelError("weight '" + key + "' has a dynamic type " + typeString(type));
  llvm::Expected<Tensor> tensor =
      decodeBytes(type.getElementType(), type.getShape(), attr.getData());
  if (!tensor)
    return kernelError("weight '" + key + "' " + llvm::toString(tensor.takeError()));
  return tensor;
}

/// Checks a computed tensor against the static type of the value it binds.
/// bf16 and f16 types match f32 tensors, which is how they are held.
llvm::Error checkAgainstType(const Tensor &tensor, Type type, const llvm::Twine &what) {
  // ui8 values exist only inside a graph: graph.quantize_weight's bytes, held
  // as i64 (dtypeForType, which says what a model's inputs may be, refuses it).
  llvm::Expected<DType> dtype = getElementTypeOrSelf(type).isUnsignedInteger(8)
                                    ? llvm::Expected<DType>(DType::I64)
                                    : dtypeForType(type);
  if (!dtype)
    return kernelError(what + ": " + llvm::toString(dtype.takeError()));
  bool matches = tensor.dtype() == *dtype;
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    matches &= ranked.getRank() == tensor.rank();
    for (int64_t d = 0; matches && d < ranked.getRank(); ++d)
      matches = ranked.isDynamicDim(d) || ranked.getDimSize(d) == tensor.shape()[d];
  }
  if (matches)
    return llvm::Error::success();
  return kernelError(what + " is " + dtypeName(tensor.dtype()) + tensor.shapeString() +
                     ", which does not match its type " + typeString(type));
}

/// Runs the ops of one block in order. Blocks are isolated from above (a
/// function body, a fusion group's region), so each run has its own
/// environment: the block arguments and the values its ops define.
class BlockRunner {
public:
  /// Binds `arguments` to the block arguments, runs the ops, and returns the
  /// operands of the terminator (func.return or graph.yield). `what` names
  /// the block in errors ("function 'main'").
  llvm::Expected<Results> run(Block &block, llvm::ArrayRef<Tensor> arguments,
                              const llvm::Twine &what);

private:
  llvm::Error runOp(Operation &op);
  llvm::Error materialize(Value value);
  llvm::Expected<Results> evaluate(Operation *op);
  llvm::Expected<Results> runFusionGroup(graph::FusionGroupOp op);
  const Tensor &in(Value value) const { return env.find(value)->second; }
  const Tensor *optional(Value value) const { return value ? &in(value) : nullptr; }
  std::vector<const Tensor *> all(ValueRange values) const;
  void bind(Value value, Tensor tensor);
  void release(Operation *op);

  llvm::DenseMap<Value, Tensor> env;
  llvm::DenseMap<Value, unsigned> usesLeft;
  /// Weights not yet decoded: each is decoded before its first user runs and
  /// freed after its last, so a model of billions of weights never holds
  /// them all as f32 at once (they lead the function).
  llvm::DenseMap<Value, Operation *> pendingWeights;
};

llvm::Expected<Results> one(llvm::Expected<Tensor> tensor) {
  if (!tensor)
    return tensor.takeError();
  Results results;
  results.push_back(std::move(*tensor));
  return results;
}

std::vector<const Tensor *> BlockRunner::all(ValueRange values) const {
  std::vector<const Tensor *> tensors;
  for (Value value : values)
    tensors.push_back(&in(value));
  return tensors;
}

void BlockRunner::bind(Value value, Tensor tensor) {
  unsigned uses = static_cast<unsigned>(std::distance(value.use_begin(), value.use_end()));
  if (uses == 0)
    return; // dead value: computed (so errors surface) but not kept
  usesLeft[value] = uses;
  env[value] = std::move(tensor);
}

void BlockRunner::release(Operation *op) {
  for (Value operand : op->getOperands()) {
    auto it = usesLeft.find(operand);
    if (it != usesLeft.end() && --it->second == 0) {
      env.erase(operand);
      usesLeft.erase(it);
    }
  }
}

/// What one result element of `op` costs against a ScopedWorkLimit: sin and
/// cos of large arguments take a slow range reduction (~100 ns an element).
int64_t workPerElement(Operation *op) { return isa<graph::SinOp, graph::CosOp>(op) ? 16 : 1; }

llvm::Expected<Results> BlockRunner::run(Block &block, llvm::ArrayRef<Tensor> arguments,
                                         const llvm::Twine &what) {
  std::string name = what.str();
  if (arguments.size() != block.getNumArguments())
    return kernelError(name + " takes " + llvm::Twine(block.getNumArguments()) +
                       " inputs but was given " + llvm::Twine(arguments.size()));
  for (auto [index, arg] : llvm::enumerate(block.getArguments())) {
    if (llvm::Error error = checkAgainstType(arguments[index], arg.getType(),
                                             name + " input " + llvm::Twine(index)))
      return std::move(error);
    Tensor argument = arguments[index];
    roundToType(argument, arg.getType());
    bind(arg, std::move(argument));
  }
  for (Operation &op : block) {
    if (isa<graph::WeightOp>(op) && !op.use_empty()) {
      pendingWeights[op.getResult(0)] = &op;
      continue;
    }
    for (Value operand : op.getOperands())
      if (llvm::Error error = materialize(operand))
        return std::move(error);
    for (Value operand : op.getOperands())
      if (!env.count(operand))
        return opError(&op, "operand is not defined by an earlier op in " + name);
    if (isa<func::ReturnOp, graph::YieldOp>(op)) {
      Results results;
      for (Value operand : op.getOperands())
        results.push_back(in(operand));
      return results;
    }
    if (llvm::Error error = runOp(op))
      return std::move(error);
  }
  return kernelError(name + " does not end in func.return or graph.yield");
}

llvm::Error BlockRunner::materialize(Value value) {
  auto pending = pendingWeights.find(value);
  if (pending == pendingWeights.end())
    return llvm::Error::success();
  Operation *weight = pending->second;
  pendingWeights.erase(pending);
  return runOp(*weight);
}

llvm::Error BlockRunner::runOp(Operation &op) {
  llvm::Expected<Results> results = evaluate(&op);
  if (!results)
    return opError(&op, llvm::toString(results.takeError()));
  if (results->size() != op.getNumResults())
    return opError(&op, "produced " + llvm::Twine(results->size()) + " results, expected " +
                            llvm::Twine(op.getNumResults()));
  for (auto [index, result] : llvm::enumerate(op.getResults())) {
    if (llvm::Error error = chargeWork((*results)[index].numElements() * workPerElement(&op)))
      return opError(&op, llvm::toString(std::move(error)));
    if (llvm::Error error =
            checkAgainstType((*results)[index], result.getType(), "result " + llvm::Twine(index)))
      return opError(&op, llvm::toString(std::move(error)));
    // The one place results are narrowed: kernels compute in f32. A weight's
    // values were decoded from its own type and need none.
    if (!isa<graph::WeightOp>(op))
      roundToType((*results)[index], result.getType());
    bind(result, std::move((*results)[index]));
  }
  release(&op);
  return llvm::Error::success();
}

/// A fusion group is isolated from above: its region runs in a fresh
/// environment with the operands bound to the block arguments.
llvm::Expected<Results> BlockRunner::runFusionGroup(graph::FusionGroupOp op) {
  Region &body = op.getBody();
  if (!body.hasOneBlock())
    return kernelError("body must have exactly one block");
  Results inputs;
  for (Value input : op.getInputs())
    inputs.push_back(in(input));
  return BlockRunner().run(body.front(), inputs, "the fusion group body");
}

llvm::Expected<Results> BlockRunner::evaluate(Operation *op) {
  auto unaryOp = [&](Value input, UnaryKind kind) { return one(unary(kind, in(input))); };
  auto binaryOp = [&](Operation *o, BinaryKind kind) {
    return one(binary(kind, in(o->getOperand(0)), in(o->getOperand(1))));
  };
  auto reduceOp = [&](auto o, ReduceKind kind) {
    return one(reduce(kind, in(o.getInput()), optional(o.getAxes()), o.getKeepdims(),
                      o.getNoopWithEmptyAxes()));
  };
  using namespace graph;
  return llvm::TypeSwitch<Operation *, llvm::Expected<Results>>(op)
      // Constants and weights.
      .Case([&](ConstantOp o) { return one(tensorFromElements(o.getValue())); })
      .Case([&](WeightOp o) { return one(tensorFromWeight(o.getValue())); })
      .Case([&](ConstantOfShapeOp o) -> llvm::Expected<Results> {
        llvm::Expected<Tensor> value = tensorFromElements(o.getValue());
        if (!value)
          return value.takeError();
        return one(constantOfShape(in(o.getShape()), *value));
      })
      // Elementwise.
      .Case([&](NegOp o) { return unaryOp(o.getInput(), UnaryKind::Neg); })
      .Case([&](AbsOp o) { return unaryOp(o.getInput(), UnaryKind::Abs); })
      .Case([&](SqrtOp o) { return unaryOp(o.getInput(), UnaryKind::Sqrt); })
      .Case([&](ReciprocalOp o) { return unaryOp(o.getInput(), UnaryKind::Reciprocal); })
      .Case([&](ExpOp o) { return unaryOp(o.getInput(), UnaryKind::Exp); })
      .Case([&](LogOp o) { return unaryOp(o.getInput(), UnaryKind::Log); })
      .Case([&](SinOp o) { return unaryOp(o.getInput(), UnaryKind::Sin); })
      .Case([&](CosOp o) { return unaryOp(o.getInput(), UnaryKind::Cos); })
      .Case([&](TanhOp o) { return unaryOp(o.getInput(), UnaryKind::Tanh); })
      .Case([&](ErfOp o) { return unaryOp(o.getInput(), UnaryKind::Erf); })
      .Case([&](SigmoidOp o) { return unaryOp(o.getInput(), UnaryKind::Sigmoid); })
      .Case([&](ReluOp o) { return unaryOp(o.getInput(), UnaryKind::Relu); })
      .Case([&](IdentityOp o) { return unaryOp(o.getInput(), UnaryKind::Identity); })
      .Case([&](NotOp o) { return unaryOp(o.getInput(), UnaryKind::Not); })
      .Case([&](IsNaNOp o) { return one(isNaN(in(o.getInput()))); })
      .Case([&](GeluOp o) -> llvm::Expected<Results> {
        if (o.getApproximate() != "none" && o.getApproximate() != "tanh")
          return kernelError("approximate must be \"none\" or \"tanh\"");
        return one(gelu(in(o.getInput()), o.getApproximate() == "tanh"));
      })
      .Case([&](CastOp o) -> llvm::Expected<Results> {
        llvm::Expected<DType> to = dtypeForType(o.getType());
        if (!to)
          return to.takeError();
        return one(cast(in(o.getInput()), *to));
      })
      .Case([&](ClipOp o) {
        return one(clip(in(o.getInput()), optional(o.getMin()), optional(o.getMax())));
      })
      .Case([&](AddOp o) { return binaryOp(o, BinaryKind::Add); })
      .Case([&](SubOp o) { return binaryOp(o, BinaryKind::Sub); })
      .Case([&](MulOp o) { return binaryOp(o, BinaryKind::Mul); })
      .Case([&](DivOp o) { return binaryOp(o, BinaryKind::Div); })
      .Case([&](PowOp o) { return binaryOp(o, BinaryKind::Pow); })
      .Case([&](MaxOp o) { return binaryOp(o, BinaryKind::Max); })
      .Case([&](MinOp o) { return binaryOp(o, BinaryKind::Min); })
      .Case([&](AndOp o) { return binaryOp(o, BinaryKind::And); })
      .Case([&](OrOp o) { return binaryOp(o, BinaryKind::Or); })
      .Case([&](EqualOp o) { return binaryOp(o, BinaryKind::Equal); })
      .Case([&](LessOp o) { return binaryOp(o, BinaryKind::Less); })
      .Case([&](LessOrEqualOp o) { return binaryOp(o, BinaryKind::LessOrEqual); })
      .Case([&](GreaterOp o) { return binaryOp(o, BinaryKind::Greater); })
      .Case([&](GreaterOrEqualOp o) { return binaryOp(o, BinaryKind::GreaterOrEqual); })
      .Case([&](WhereOp o) { return one(where(in(o.getCondition()), in(o.getX()), in(o.getY()))); })
      // Shape manipulation.
      .Case([&](ShapeOp o) { return one(shapeOf(in(o.getInput()), o.getStart(), o.getEnd())); })
      .Case([&](ReshapeOp o) {
        return one(reshape(in(o.getData()), in(o.getShape()), o.getAllowzero()));
      })
      .Case([&](ExpandOp o) { return one(expand(in(o.getInput()), in(o.getShape()))); })
      .Case([&](TileOp o) { return one(tile(in(o.getInput()), in(o.getRepeats()))); })
      .Case([&](FlattenOp o) { return one(flatten(in(o.getInput()), o.getAxis())); })
      .Case([&](SqueezeOp o) { return one(squeeze(in(o.getInput()), optional(o.getAxes()))); })
      .Case([&](UnsqueezeOp o) { return one(unsqueeze(in(o.getInput()), in(o.getAxes()))); })
      .Case([&](TransposeOp o) { return one(transpose(in(o.getInput()), o.getPerm())); })
      .Case([&](ConcatOp o) { return one(concat(all(o.getInputs()), o.getAxis())); })
      // Packed weights are a concatenation (transposed with `transpose`),
      // whatever the artifact writer does later.
      .Case([&](PackWeightsOp o) -> llvm::Expected<Results> {
        llvm::Expected<Tensor> packed = concat(all(o.getWeights()), o.getAxis());
        if (!packed || !o.getTranspose())
          return one(std::move(packed));
        return one(transpose(*packed, {1, 0}));
      })
      .Case([&](SplitOp o) {
        return split(in(o.getInput()), optional(o.getSplit()), o.getAxis(), o.getNumResults());
      })
      .Case([&](SliceOp o) {
        return one(slice(in(o.getData()), in(o.getStarts()), in(o.getEnds()), in(o.getAxes()),
                         in(o.getSteps())));
      })
      .Case(
          [&](GatherOp o) { return one(gather(in(o.getData()), in(o.getIndices()), o.getAxis())); })
      .Case([&](TopKOp o) -> llvm::Expected<Results> {
        const Tensor &k = in(o.getK());
        if (k.dtype() != DType::I64 || k.numElements() != 1)
          return kernelError("top_k: k must be one int64");
        return topK(in(o.getInput()), k.i64()[0], o.getAxis());
      })
      .Case([&](GatherElementsOp o) {
        return one(gatherElements(in(o.getData()), in(o.getIndices()), o.getAxis()));
      })
      .Case([&](ScatterNDOp o) {
        return one(
            scatterND(in(o.getData()), in(o.getIndices()), in(o.getUpdates()), o.getReduction()));
      })
      .Case([&](ScatterElementsOp o) {
        return one(scatterElements(in(o.getData()), in(o.getIndices()), in(o.getUpdates()),
                                   o.getAxis(), o.getReduction()));
      })
      .Case([&](GatherNDOp o) {
        return one(gatherND(in(o.getData()), in(o.getIndices()), o.getBatchDims()));
      })
      .Case([&](RangeOp o) {
        return one(range(in(o.getStart()), in(o.getLimit()), in(o.getDelta())));
      })
      .Case(
          [&](TriluOp o) { return one(trilu(in(o.getInput()), optional(o.getK()), o.getUpper())); })
      // Reductions, normalisation, scans.
      .Case([&](ReduceMeanOp o) { return reduceOp(o, ReduceKind::Mean); })
      .Case([&](ReduceSumOp o) { return reduceOp(o, ReduceKind::Sum); })
      .Case([&](ReduceMaxOp o) { return reduceOp(o, ReduceKind::Max); })
      .Case([&](SoftmaxOp o) { return one(softmax(in(o.getInput()), o.getAxis())); })
      .Case([&](LayerNormOp o) {
        return one(layerNorm(in(o.getInput()), in(o.getScale()), optional(o.getBias()), o.getAxis(),
                             o.getEpsilon().convertToFloat()));
      })
      .Case([&](CumSumOp o) {
        return one(cumSum(in(o.getInput()), in(o.getAxis()), o.getExclusive(), o.getReverse()));
      })
      // Contractions.
      .Case([&](MatMulOp o) { return one(matmul(in(o.getLhs()), in(o.getRhs()))); })
      .Case([&](GemmOp o) {
        return one(gemm(in(o.getA()), in(o.getB()), optional(o.getC()),
                        o.getAlpha().convertToFloat(), o.getBeta().convertToFloat(), o.getTransA(),
                        o.getTransB()));
      })
      .Case([&](EinsumOp o) { return one(einsum(o.getEquation(), all(o.getInputs()))); })
      // Fused LLM ops.
      .Case([&](RmsNormOp o) {
        return one(rmsNorm(in(o.getInput()), in(o.getWeight()), o.getEpsilon().convertToFloat(),
                           o.getWeightOffset().convertToFloat()));
      })
      .Case([&](LinearOp o) {
        return one(linear(in(o.getInput()), in(o.getWeight()), optional(o.getBias()),
                          optional(o.getResidual()), o.getTransposeWeight()));
      })
      .Case([&](QuantizeWeightOp o) {
        return quantizeWeight(in(o.getWeight()), optional(o.getInputScale()), optional(o.getClip()),
                              o.getScheme(), int64_t(o.getGroupSize()), o.getTranspose());
      })
      .Case([&](QuantizedLinearOp o) {
        return one(quantizedLinear(in(o.getInput()), in(o.getQ()), in(o.getScales()),
                                   optional(o.getBias()), optional(o.getResidual()),
                                   optional(o.getInputScale()), optional(o.getZeros()),
                                   o.getScheme(), int64_t(o.getGroupSize())));
      })
      .Case([&](DequantizeOp o) {
        return one(dequantize(in(o.getQ()), in(o.getScales()), optional(o.getZeros()),
                              o.getScheme(), int64_t(o.getGroupSize()), o.getTranspose()));
      })
      // I64Attr getters return uint64_t; the kernels check the signed values.
      .Case([&](RotaryOp o) {
        RotaryConfig config{int64_t(o.getNumHeads()), int64_t(o.getRotatedHeads()),
                            int64_t(o.getHeadDim()), int64_t(o.getRotaryDim()), o.getInterleaved()};
        RotaryTables tables{optional(o.getInvFreq()), optional(o.getCosCache()),
                            optional(o.getSinCache())};
        return one(rotary(in(o.getInput()), optional(o.getPositions()), tables, config));
      })
      .Case([&](MoeOp o) {
        MoeRouting routing{int64_t(o.getTopK()),        o.getNormalize(),
                           o.getScoring() == "sigmoid", int64_t(o.getGroups()),
                           int64_t(o.getTopkGroups()),  o.getScale().convertToDouble()};
        return one(moe(in(o.getInput()), in(o.getRouter()), in(o.getGateUp()), in(o.getDown()),
                       optional(o.getScoreBias()), routing));
      })
      .Case([&](AttentionOp o) {
        AttentionConfig config{int64_t(o.getNumHeads()),
                               int64_t(o.getNumKvHeads()),
                               int64_t(o.getHeadDim()),
                               o.getScale().convertToFloat(),
                               o.getCausal(),
                               o.getSoftcap().convertToFloat(),
                               int64_t(o.getWindow()),
                               o.getAlibi().convertToFloat(),
                               o.getKCacheScale().convertToFloat(),
                               o.getVCacheScale().convertToFloat()};
        return one(attention(all(o.getInputs()), config));
      })
      .Case([&](GatherFeaturesOp o) { return one(gatherFeatures(all(o.getInputs()), o.getMap())); })
      .Case([&](GatedActivationOp o) {
        return one(gatedActivation(all(o.getInputs()), o.getActivation()));
      })
      .Case([&](EmbeddingOp o) {
        return one(embedding(in(o.getTable()), in(o.getIds()), optional(o.getPositionTable()),
                             int64_t(o.getPositionOffset())));
      })
      .Case([&](FusionGroupOp o) { return runFusionGroup(o); })
      .Default([&](Operation *) -> llvm::Expected<Results> {
        return kernelError("the reference interpreter does not support this op");
      });
}

} // namespace

llvm::Expected<DType> infer::interp::dtypeForType(Type type) {
  Type element = getElementTypeOrSelf(type);
  // bf16 and f16 are held as f32 and rounded where they are bound.
  if (element.isF32() || element.isF64() || element.isBF16() || element.isF16())
    return DType::F32;
  if (element.isSignlessInteger(1))
    return DType::Bool;
  if (element.isSignlessInteger(64) || element.isSignlessInteger(32) ||
      element.isSignedInteger(64) || element.isSignedInteger(32))
    return DType::I64;
  return kernelError("reference interpreter supports f32, i64, i1 (and i32 held as i64; f64, "
                     "bf16, f16 held as f32), got " +
                     typeString(element));
}

llvm::Expected<std::vector<Tensor>> infer::interp::runFunction(func::FuncOp func,
                                                               llvm::ArrayRef<Tensor> inputs) {
  std::string name = ("function '" + func.getSymName() + "'").str();
  if (func.isExternal())
    return kernelError(name + " has no body");
  if (!func.getBody().hasOneBlock())
    return kernelError(name + " has more than one block");
  return BlockRunner().run(func.getBody().front(), inputs, name);
}
