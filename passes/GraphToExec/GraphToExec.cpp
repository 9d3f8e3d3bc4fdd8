//===- GraphToExec.cpp - lowers the optimized graph to an exec.program ----===//
//
// A straight translation of the entry function's block, op by op: each
// tensor a fused op computes gets an (unplanned) arena buffer and the op
// becomes its launch in destination-passing style. This is a walk rather than
// a set of conversion patterns because the result is a different kind of
// program (no SSA tensors, one arena) built in one pass over the block; the
// per-op lowering functions are the unit one would turn into patterns.
//
//===----------------------------------------------------------------------===//

#include "passes/GraphToExec/Passes.h"

#include "dialects/graph/IR/GraphOps.h"
#include "runtime/base/MoeWorkspace.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

namespace infer {
#define GEN_PASS_DEF_CONVERTGRAPHTOEXECPASS
#include "passes/GraphToExec/Passes.h.inc"
} // namespace infer

using namespace mlir;
using namespace infer;

namespace {

constexpr llvm::StringLiteral kSupported =
    "graph.embedding, rms_norm, layer_normalization, linear, quantized_linear, rotary, attention, "
    "gated_activation, moe, gather_features, reshape, slice (static, last axis), fusion_group, "
    "weight, pack_weights, quantize_weight, constant";

/// Lowers one function into one program.
class Lowering {
public:
  Lowering(func::FuncOp func, OpBuilder &builder, Type activationType)
      : func(func), builder(builder), activationType(activationType) {}

  LogicalResult run(exec::ProgramOp program);

private:
  /// The buffer holding `value` (weights and constants materialised on first use).
  FailureOr<Value> lookup(Location loc, Value value);
  FailureOr<SmallVector<Value>> lookupAll(Location loc, ValueRange values);
  /// A new arena buffer for `value`'s tensor.
  FailureOr<Value> allocate(Location loc, Value value);
  LogicalResult lower(Operation *op);
  /// graph.reshape / graph.slice as an exec.copy (only the data operand is
  /// a buffer; shapes and slice bounds are compile-time constants).
  LogicalResult lowerCopy(Operation *op);

  func::FuncOp func;
  OpBuilder &builder;
  /// The element type of float activation buffers, or null to keep the graph's.
  Type activationType;
  Value arena;
  llvm::DenseMap<Value, Value> buffers;
};

/// Bytes per element of a tensor element type.
std::optional<int64_t> elementBytes(Type type) {
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
  return std::nullopt;
}

/// How many leading dynamic dims count the tokens: 2 for [batch, seq, ...],
/// 1 for [batch * seq, static...] (the flattened tokens exporters write
/// around per-token ops: Qwen2-MoE's shared expert), 0 for anything else.
/// Either holds T = batch * seq rows.
int64_t tokenDims(ArrayRef<int64_t> shape) {
  if (shape.size() < 2 || !ShapedType::isDynamic(shape[0]))
    return 0;
  if (ShapedType::isDynamic(shape[1]))
    return 2;
  return llvm::none_of(shape.drop_front(), ShapedType::isDynamic) ? 1 : 0;
}

/// The size of a tensor: token-major ([batch, seq, static...] or flattened
/// [batch * seq, static...]) is `prod(static) * elem * T`; a fully static
/// tensor a constant.
bool isTokenMajor(ArrayRef<int64_t> shape) { return tokenDims(shape) > 0; }

/// The element type the buffer of a `type` value holds: a token-major float
/// tensor takes `activationType` when one is set (--dtype bf16/fp16: the
/// activations follow the weights, so GEMMs run on tensor cores), anything
/// else keeps its own (ids, static constants).
Type bufferElementType(RankedTensorType type, Type activationType) {
  if (activationType && isTokenMajor(type.getShape()) && isa<FloatType>(type.getElementType()))
    return activationType;
  return type.getElementType();
}

FailureOr<exec::AffineAttr> sizeOf(Location loc, Type type, Type activationType = {}) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  std::optional<int64_t> bytes =
      tensor ? elementBytes(bufferElementType(tensor, activationType)) : std::nullopt;
  if (!bytes)
    return emitError(loc) << "exec lowering: cannot size a value of type " << type;
  ArrayRef<int64_t> shape = tensor.getShape();
  int64_t leading = tokenDims(shape);
  bool tokenMajor = leading > 0;
  int64_t perElement = *bytes;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (int64_t(i) < leading)
      continue;
    if (ShapedType::isDynamic(dim))
      return emitError(loc) << "exec lowering: " << type
                            << " is neither [batch, seq, static dims...], [batch * seq, static "
                               "dims...] nor static";
    perElement *= dim;
  }
  MLIRContext *context = loc.getContext();
  return tokenMajor ? exec::AffineAttr::get(context, perElement, 0)
                    : exec::AffineAttr::get(context, 0, perElement);
}

int64_t lastDim(Value value) { return cast<RankedTensorType>(value.getType()).getShape().back(); }

FailureOr<Value> Lowering::allocate(Location loc, Value value) {
  FailureOr<exec::AffineAttr> size = sizeOf(loc, value.getType(), activationType);
  if (failed(size))
    return failure();
  auto type = cast<RankedTensorType>(value.getType());
  Value buffer = builder.create<exec::BufferOp>(
      loc, builder.getType<exec::BufferType>(), arena, /*offset=*/exec::AffineAttr(), *size,
      TypeAttr::get(bufferElementType(type, activationType)));
  buffers[value] = buffer;
  return buffer;
}

FailureOr<Value> Lowering::lookup(Location loc, Value value) {
  if (Value buffer = buffers.lookup(value))
    return buffer;
  Operation *def = value.getDefiningOp();
  Value buffer;
  if (isa_and_nonnull<graph::WeightOp, graph::PackWeightsOp, graph::QuantizeWeightOp>(def)) {
    // Stored by the artifact writer under this name.
    std::optional<std::string> name = graph::storedWeightName(value);
    if (!name)
      return def->emitError() << "exec lowering: operand " << value
                              << " is not a compile-time weight the artifact can store";
    buffer = builder.create<exec::WeightOp>(def->getLoc(), builder.getType<exec::BufferType>(),
                                            *name, value.getType());
  } else if (auto constant = dyn_cast_or_null<graph::ConstantOp>(def)) {
    buffer = builder.create<exec::ConstantOp>(constant.getLoc(), builder.getType<exec::BufferType>(),
                                               cast<ElementsAttr>(constant.getValue()));
  } else {
    // Anything else was lowered before its users, so it is an op we rejected.
    return emitError(loc) << "exec lowering: operand " << value << " has no buffer";
  }
  buffers[value] = buffer;
  return buffer;
}

FailureOr<SmallVector<Value>> Lowering::lookupAll(Location loc, ValueRange values) {
  SmallVector<Value> result;
  for (Value value : values) {
    FailureOr<Value> buffer = lookup(loc, value);
    if (failed(buffer))
      return failure();
    result.push_back(*buffer);
  }
  return result;
}

LogicalResult Lowering::lower(Operation *op) {
  Location loc = op->getLoc();
  // Weights and constants become exec ops where they are first used.
  if (isa<graph::WeightOp, graph::PackWeightsOp, graph::QuantizeWeightOp, graph::ConstantOp>(op))
    return success();
  if (isa<func::ReturnOp>(op))
    return success(); // handled by run()

  if (isa<graph::ReshapeOp, graph::SliceOp>(op))
    return lowerCopy(op);

  auto operands = lookupAll(loc, op->getOperands());
  if (failed(operands))
    return failure();
  auto optional = [&](Value graphValue) -> Value {
    return graphValue ? buffers.lookup(graphValue) : Value();
  };

  if (auto group = dyn_cast<graph::FusionGroupOp>(op)) {
    SmallVector<Value> outs;
    for (Value result : group.getResults()) {
      FailureOr<Value> out = allocate(loc, result);
      if (failed(out))
        return failure();
      outs.push_back(*out);
    }
    auto elementwise = builder.create<exec::ElementwiseOp>(loc, *operands, outs);
    elementwise.getBody().takeBody(group.getBody());
    Operation *yield = elementwise.getBody().front().getTerminator();
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPoint(yield);
    builder.create<exec::YieldOp>(yield->getLoc(), yield->getOperands());
    yield->erase();
    return success();
  }

  if (op->getNumResults() != 1)
    return op->emitError() << "exec lowering: '" << op->getName()
                           << "' is not supported (it lowers " << kSupported << ")";
  // Check support before allocating so the error names the op, not its type.
  if (!isa<graph::EmbeddingOp, graph::RmsNormOp, graph::LayerNormOp, graph::LinearOp,
           graph::QuantizedLinearOp, graph::RotaryOp, graph::AttentionOp, graph::GatedActivationOp,
           graph::MoeOp, graph::GatherFeaturesOp>(op))
    return op->emitError() << "exec lowering: '" << op->getName()
                           << "' is not supported (it lowers " << kSupported << ")";
  FailureOr<Value> out = allocate(loc, op->getResult(0));
  if (failed(out))
    return failure();

  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](graph::EmbeddingOp embed) {
        builder.create<exec::EmbeddingOp>(loc, optional(embed.getTable()), optional(embed.getIds()),
                                          optional(embed.getPositionTable()), /*position_ids=*/Value(), *out,
                                          lastDim(embed.getResult()), embed.getPositionOffset());
        return success();
      })
      .Case([&](graph::RmsNormOp norm) {
        builder.create<exec::RmsNormOp>(loc, optional(norm.getInput()), optional(norm.getWeight()),
                                        *out, lastDim(norm.getResult()), norm.getEpsilon(),
                                        norm.getWeightOffset());
        return success();
      })
      .Case([&](graph::LayerNormOp norm) -> LogicalResult {
        int64_t rank = cast<RankedTensorType>(norm.getInput().getType()).getRank();
        if (norm.getAxis() != rank - 1)
          return norm.emitError() << "exec lowering: graph.layer_normalization over axis "
                                  << norm.getAxis() << " (only the last axis is supported)";
        builder.create<exec::LayerNormOp>(loc, optional(norm.getInput()), optional(norm.getScale()),
                                          optional(norm.getBias()), *out,
                                          lastDim(norm.getResult()), norm.getEpsilon());
        return success();
      })
      .Case([&](graph::LinearOp linear) {
        builder.create<exec::GemmOp>(loc, optional(linear.getInput()), optional(linear.getWeight()),
                                     optional(linear.getBias()), optional(linear.getResidual()),
                                     *out, lastDim(linear.getInput()), lastDim(linear.getResult()),
                                     linear.getTransposeWeight(), /*prologue=*/nullptr,
                                     /*epilogue=*/nullptr, /*gemv_grid=*/nullptr,
                                     /*row_gemv_rows=*/nullptr, /*mma_gemv=*/nullptr);
        return success();
      })
      .Case([&](graph::QuantizedLinearOp linear) {
        builder.create<exec::QuantizedGemmOp>(
            loc, optional(linear.getInput()), optional(linear.getQ()), optional(linear.getScales()),
            optional(linear.getBias()), optional(linear.getResidual()),
            optional(linear.getInputScale()), optional(linear.getZeros()), *out,
            builder.getI64IntegerAttr(lastDim(linear.getInput())),
            builder.getI64IntegerAttr(lastDim(linear.getResult())),
            builder.getStringAttr(linear.getScheme()),
            builder.getI64IntegerAttr(int64_t(linear.getGroupSize())), /*mma_block_k=*/nullptr);
        return success();
      })
      .Case([&](graph::RotaryOp rotary) {
        builder.create<exec::RotaryOp>(
            loc, optional(rotary.getInput()), optional(rotary.getInvFreq()),
            optional(rotary.getCosCache()), optional(rotary.getSinCache()),
            optional(rotary.getPositions()), *out, rotary.getNumHeads(), rotary.getRotatedHeads(),
            rotary.getHeadDim(), rotary.getRotaryDim(), rotary.getInterleaved());
        return success();
      })
      .Case([&](graph::AttentionOp attention) {
        builder.create<exec::AttentionOp>(
            loc, *operands, *out, attention.getNumHeads(), attention.getNumKvHeads(),
            attention.getHeadDim(), attention.getScale(), attention.getCausal(),
            attention.getSoftcap(), attention.getWindow(), attention.getAlibi(),
            attention.getKCacheScale(), attention.getVCacheScale());
        return success();
      })
      .Case([&](graph::GatedActivationOp gated) {
        builder.create<exec::GatedActivationOp>(loc, *operands, *out, gated.getActivation(),
                                                lastDim(gated.getResult()));
        return success();
      })
      .Case([&](graph::MoeOp moe) {
        auto down = cast<RankedTensorType>(moe.getDown().getType());
        int64_t hidden = down.getDimSize(1), experts = down.getDimSize(0),
                inter = down.getDimSize(2);
        // Token-major like the activations: f32 words, a * T + b bytes.
        infer::moe::AffineBytes bytes =
            infer::moe::workspaceBytes(hidden, inter, experts, moe.getTopK());
        Value workspace = builder.create<exec::BufferOp>(
            loc, builder.getType<exec::BufferType>(), arena, /*offset=*/exec::AffineAttr(),
            exec::AffineAttr::get(builder.getContext(), bytes.perToken, bytes.fixed),
            TypeAttr::get(builder.getF32Type()));
        builder.create<exec::MoeOp>(loc, optional(moe.getInput()), optional(moe.getRouter()),
                                    optional(moe.getGateUp()), optional(moe.getDown()),
                                    optional(moe.getScoreBias()), workspace, *out, hidden, experts,
                                    inter, moe.getTopK(), moe.getNormalize(), moe.getScoring(),
                                    moe.getGroups(), moe.getTopkGroups(), moe.getScale());
        return success();
      })
      .Case([&](graph::GatherFeaturesOp gather) {
        // One copy per input, each writing the features the map takes from it.
        ArrayRef<int64_t> map = gather.getMap();
        const int64_t features = static_cast<int64_t>(map.size());
        int64_t base = 0;
        for (auto [input, buffer] : llvm::zip(gather.getInputs(), *operands)) {
          const int64_t width = lastDim(input);
          SmallVector<int64_t> local(features, -1);
          bool used = false;
          for (auto [f, source] : llvm::enumerate(map))
            if (source >= base && source < base + width) {
              local[f] = source - base;
              used = true;
            }
          base += width;
          if (!used)
            continue;
          // All of the row from one input, in order from an offset: a plain row copy.
          if (local.front() >= 0 && local.front() + features <= width &&
              llvm::all_of(llvm::enumerate(local), [&](auto entry) {
                return entry.value() == local.front() + int64_t(entry.index());
              })) {
            builder.create<exec::CopyOp>(loc, buffer, /*map=*/Value(), *out, width, local.front(),
                                         features);
            continue;
          }
          auto mapType = RankedTensorType::get({features}, builder.getI64Type());
          Value mapBuffer = builder.create<exec::ConstantOp>(
              loc, builder.getType<exec::BufferType>(),
              DenseIntElementsAttr::get(mapType, ArrayRef<int64_t>(local)));
          builder.create<exec::CopyOp>(loc, buffer, mapBuffer, *out, width, /*offset=*/0, features);
        }
        return success();
      })
      .Default([&](Operation *) { return failure(); });
}

/// The integers of a graph.constant operand, or nothing.
LogicalResult Lowering::lowerCopy(Operation *op) {
  Location loc = op->getLoc();
  Value data = op->getOperand(0), result = op->getResult(0);
  auto inType = cast<RankedTensorType>(data.getType());
  auto outType = cast<RankedTensorType>(result.getType());
  if (inType.getElementType() != outType.getElementType())
    return op->emitError() << "exec lowering: '" << op->getName() << "' changes the element type";
  int64_t inFeatures = 0, offset = 0, length = 0;
  if (isa<graph::ReshapeOp>(op)) {
    // A row-major reshape keeps the bytes: copy them whole.
    FailureOr<exec::AffineAttr> inSize = sizeOf(loc, inType), outSize = sizeOf(loc, outType);
    if (failed(inSize) || failed(outSize))
      return failure();
    if (*inSize != *outSize)
      return op->emitError() << "exec lowering: graph.reshape from " << inType << " to "
                             << outType << " changes the per-token size";
    inFeatures = length = outType.getShape().back();
    if (ShapedType::isDynamic(length) || length <= 0)
      return op->emitError() << "exec lowering: graph.reshape to " << outType
                             << " (the last dimension must be static)";
  } else {
    auto slice = cast<graph::SliceOp>(op);
    auto starts = graph::getConstantInts(slice.getStarts()), ends = graph::getConstantInts(slice.getEnds());
    auto axes = graph::getConstantInts(slice.getAxes()), steps = graph::getConstantInts(slice.getSteps());
    int64_t rank = inType.getRank();
    inFeatures = inType.getShape().back();
    if (!starts || !ends || !axes || !steps || axes->size() != 1 || starts->size() != 1 ||
        ends->size() != 1 || steps->size() != 1 || (*steps)[0] != 1 ||
        ((*axes)[0] != rank - 1 && (*axes)[0] != -1) || ShapedType::isDynamic(inFeatures) ||
        ShapedType::isDynamic(outType.getShape().back()))
      return op->emitError() << "exec lowering: graph.slice must be a constant unit-step slice "
                                "of one static last axis";
    auto clampIndex = [&](int64_t index) {
      if (index < 0)
        index += inFeatures;
      return std::clamp<int64_t>(index, 0, inFeatures);
    };
    offset = clampIndex((*starts)[0]);
    length = std::max<int64_t>(0, clampIndex((*ends)[0]) - offset);
    if (length != outType.getShape().back() || length == 0)
      return op->emitError() << "exec lowering: graph.slice of [" << offset << ", "
                             << offset + length << ") does not match its result " << outType;
    for (int64_t i = 0; i + 1 < rank; ++i)
      if (inType.getShape()[i] != outType.getShape()[i])
        return op->emitError() << "exec lowering: graph.slice changes a dimension other than "
                                  "the last";
  }
  FailureOr<Value> input = lookup(loc, data);
  if (failed(input))
    return failure();
  FailureOr<Value> out = allocate(loc, result);
  if (failed(out))
    return failure();
  builder.create<exec::CopyOp>(loc, *input, /*map=*/Value(), *out, inFeatures, offset, length);
  return success();
}

/// The name an entry argument or result is bound by.
std::string entryName(DictionaryAttr attrs, StringRef fallback, unsigned index) {
  if (auto name = attrs ? attrs.getAs<StringAttr>("graph.name") : StringAttr())
    return name.str();
  return (fallback + Twine(index)).str();
}

LogicalResult Lowering::run(exec::ProgramOp program) {
  Block &body = program.getBody().emplaceBlock();
  builder.setInsertionPointToStart(&body);
  arena = builder.create<exec::ArenaOp>(func.getLoc(), builder.getType<exec::ArenaType>(), exec::AffineAttr(), IntegerAttr(),
                                        IntegerAttr());
  for (BlockArgument arg : func.getArguments()) {
    FailureOr<Value> buffer = allocate(func.getLoc(), arg);
    if (failed(buffer))
      return failure();
    builder.create<exec::InputOp>(
        func.getLoc(), entryName(func.getArgAttrDict(arg.getArgNumber()), "input", arg.getArgNumber()),
        *buffer);
  }
  // A reshape copies bytes: the ops that only compute its target shape
  // (from graph.shape of the inputs: flattened [b*s, h] back to [b, s, h])
  // are not run.
  llvm::DenseSet<Operation *> shapeOnly;
  for (Operation &op : llvm::reverse(func.getBody().front())) {
    if (op.getNumResults() == 0 || op.use_empty() ||
        isa<graph::WeightOp, graph::PackWeightsOp, graph::QuantizeWeightOp>(op))
      continue;
    if (llvm::all_of(op.getUses(), [&](OpOperand &use) {
          return (isa<graph::ReshapeOp>(use.getOwner()) && use.getOperandNumber() == 1) ||
                 shapeOnly.contains(use.getOwner());
        }))
      shapeOnly.insert(&op);
  }
  for (Operation &op : func.getBody().front())
    if (!shapeOnly.contains(&op) && failed(lower(&op)))
      return failure();
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
    FailureOr<Value> buffer = lookup(ret.getLoc(), value);
    if (failed(buffer))
      return failure();
    builder.create<exec::OutputOp>(ret.getLoc(), entryName(func.getResultAttrDict(i), "output", i),
                                   *buffer);
  }
  builder.create<exec::ReturnOp>(ret.getLoc());
  return success();
}

struct ConvertGraphToExecPass
    : public infer::impl::ConvertGraphToExecPassBase<ConvertGraphToExecPass> {
  using ConvertGraphToExecPassBase::ConvertGraphToExecPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> entries;
    for (auto func : module.getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal())
        entries.push_back(func);
    if (entries.size() != 1) {
      module.emitError() << "exec lowering: expected one public entry function, found "
                         << entries.size();
      return signalPassFailure();
    }
    func::FuncOp func = entries.front();
    if (!func.getBody().hasOneBlock()) {
      func.emitError() << "exec lowering: the entry function must have one block";
      return signalPassFailure();
    }
    Type activation;
    if (activationType == "bf16")
      activation = BFloat16Type::get(&getContext());
    else if (activationType == "fp16")
      activation = Float16Type::get(&getContext());
    else if (activationType == "fp32")
      activation = Float32Type::get(&getContext());
    else if (!activationType.empty()) {
      module.emitError() << "exec lowering: activation-type must be fp32, bf16 or fp16, not '"
                         << activationType << "'";
      return signalPassFailure();
    }
    OpBuilder builder(func);
    auto program = builder.create<exec::ProgramOp>(func.getLoc(), func.getSymName());
    Lowering lowering(func, builder, activation);
    if (failed(lowering.run(program))) {
      program.erase();
      return signalPassFailure();
    }
    func.erase();
  }
};

} // namespace
