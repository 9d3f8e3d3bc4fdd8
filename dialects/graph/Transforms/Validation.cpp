//===- Validation.cpp - check a rewrite by running both sides -------------===//

#include "dialects/graph/Transforms/Validation.h"

#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>

using namespace mlir;
using namespace infer;
using namespace infer::graph;
using interp::DType;
using interp::Tensor;

namespace {

/// The most elements a tensor whose shape comes from data (Range, Expand, Tile,
/// ConstantOfShape) may have in a proof or a shape-only evaluation: 2^27 (a
/// [1, 1, 11585, 11585] mask). probeFits bounds what the types say; this
/// bounds what the values say, so a graph that sizes a tensor from a huge
/// constant fails the proof instead of allocating gigabytes (the
/// onnx-import fuzzer's OOM inputs of 2026-12-05).
constexpr int64_t kMaxDataShapedElements = int64_t(1) << 27;

/// The elements a proof (both probes at every size) or a shape-only
/// evaluation may compute in all, beyond 16 per element of the model's
/// weights it reads (a weight transposed in each of the 8 runs; an MoE proof
/// gathers each routed expert's weights). Each value already fits
/// kMaxProbeElements; this bounds their sum, which a mutated model's static
/// dims made minutes of sin over 2^28-element values. The test models'
/// largest proof computes 4 * 10^5 (sin and cos count 16 an element).
constexpr int64_t kMaxProofWork = int64_t(1) << 25;

/// The ops `root` depends on, stopping at `stops` (free inputs) and block
/// arguments, in topological order; empty when the slice is too large.
llvm::SetVector<Operation *> sliceOf(Value root, llvm::ArrayRef<Value> stops, size_t limit) {
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitBlockArguments = true;
  llvm::DenseSet<Value> stopSet(stops.begin(), stops.end());
  options.filter = [&](Operation *op) {
    return llvm::none_of(op->getResults(), [&](Value v) { return stopSet.contains(v); });
  };
  if (Operation *def = root.getDefiningOp())
    (void)getBackwardSlice(def, &slice, options);
  if (slice.size() > limit)
    slice.clear();
  return slice;
}

/// Sizes for the dynamic dims of `type`: batch, then seq, then seq again.
std::optional<std::vector<int64_t>> concreteShape(Type type, int64_t batch, int64_t seq) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked)
    return std::nullopt;
  std::vector<int64_t> shape;
  int dynamicSeen = 0;
  for (int64_t dim : ranked.getShape())
    shape.push_back(ShapedType::isDynamic(dim) ? (dynamicSeen++ == 0 ? batch : seq) : dim);
  return shape;
}

/// The most elements a probe may hold in one value (1 GiB of f32). Probes
/// run at small batch and seq, but a model's static dims (a [1, 2^20] input)
/// and the masks built from them are taken as they are: past this a probe is
/// not run (the rewrite is not made, the shape stays unknown) rather than
/// allocating terabytes.
constexpr int64_t kMaxProbeElements = int64_t(1) << 28;
/// A free input that is a weight of the model may be larger (an MoE layer's
/// experts: Qwen3-30B-A3B's gate_up is 2^28.6 elements): its size is backed by
/// the model's own bytes (a folded constant's is not: a splat can be any size). Values of the probe
/// may then be as large as the largest such input.
constexpr int64_t kMaxWeightProbeElements = int64_t(1) << 31;

bool isModelData(Value value) {
  return isa_and_nonnull<WeightOp, PackWeightsOp>(value.getDefiningOp());
}

/// kMaxProofWork plus 16 elements per element of the model's weights among
/// `inputs` (saturating).
int64_t proofWork(ArrayRef<Value> inputs) {
  int64_t work = kMaxProofWork;
  for (Value input : inputs) {
    auto type = dyn_cast<ShapedType>(input.getType());
    if (!isModelData(input) || !type || !type.hasStaticShape())
      continue;
    const int64_t elements = type.getNumElements();
    if (elements > (std::numeric_limits<int64_t>::max() - work) / 16)
      return std::numeric_limits<int64_t>::max() - 1;
    work += 16 * elements;
  }
  return work;
}

/// Whether every value of `probe`, run on arguments of `shapes`, fits
/// kMaxProbeElements by its type. A dynamic dim counts as the probe's batch
/// or seq, or as the largest static dim of an integer argument (token ids,
/// positions: what ranges and masks are built from) when that is larger.
bool probeFits(func::FuncOp probe, const std::vector<std::vector<int64_t>> &shapes, int64_t batch,
               int64_t seq, const std::vector<bool> &modelData = {}) {
  int64_t largest = std::max(batch, seq);
  int64_t maxElements = kMaxProbeElements;
  for (auto [i, argument, shape] : llvm::enumerate(probe.getArguments(), shapes)) {
    const int64_t limit =
        i < modelData.size() && modelData[i] ? kMaxWeightProbeElements : kMaxProbeElements;
    int64_t elements = 1;
    for (int64_t dim : shape) {
      if (dim != 0 && elements > limit / dim)
        return false;
      elements *= dim;
    }
    maxElements = std::max(maxElements, elements);
    auto type = cast<ShapedType>(argument.getType());
    if (type.hasRank() && type.getElementType().isInteger())
      for (int64_t dim : type.getShape())
        if (!ShapedType::isDynamic(dim))
          largest = std::max(largest, dim);
  }
  WalkResult walk = probe.walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      auto ranked = dyn_cast<RankedTensorType>(type);
      if (!ranked)
        continue;
      int64_t elements = 1;
      for (int64_t dim : ranked.getShape()) {
        int64_t size = ShapedType::isDynamic(dim) ? largest : dim;
        if (size != 0 && elements > maxElements / size)
          return WalkResult::interrupt();
        elements *= size;
      }
    }
    return WalkResult::advance();
  });
  return !walk.wasInterrupted();
}

std::optional<Tensor> randomTensor(Type type, const std::vector<int64_t> &shape, std::mt19937 &rng,
                                   bool zero) {
  auto dtype = interp::dtypeForType(cast<TensorType>(type).getElementType());
  if (!dtype) {
    llvm::consumeError(dtype.takeError());
    return std::nullopt;
  }
  Tensor tensor(*dtype, shape);
  if (*dtype != DType::F32 || zero)
    return tensor;
  // Uniform in [-1, 1) from splitmix64 seeded by `rng`: an expert layer's
  // weights are 10^8-10^9 values, where mt19937 per value took seconds.
  uint64_t state = (uint64_t(rng()) << 32) | rng();
  float *data = tensor.f32();
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    data[i] = float(int64_t(z >> 40) - (int64_t(1) << 23)) * (1.0f / float(1 << 23));
  }
  return tensor;
}

/// A function: (function args..., free inputs...) -> value, holding clones of
/// the slice. Built in `scratch`.
func::FuncOp buildProbe(ModuleOp scratch, func::FuncOp func, ArrayRef<Value> inputs,
                        const llvm::SetVector<Operation *> &slice, Value root,
                        const ReplacementBuilder *replacement) {
  OpBuilder builder(scratch.getBodyRegion());
  SmallVector<Type> argTypes(func.getArgumentTypes());
  for (Value input : inputs)
    argTypes.push_back(input.getType());
  Type resultType = root.getType();
  auto probe = func::FuncOp::create(builder, func.getLoc(), "probe",
                                    builder.getFunctionType(argTypes, {resultType}));
  Block *entry = probe.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    mapping.map(func.getArgument(i), entry->getArgument(i));
  for (auto [i, input] : llvm::enumerate(inputs))
    mapping.map(input, entry->getArgument(func.getNumArguments() + i));
  Value result;
  if (replacement) {
    SmallVector<Value> mapped;
    for (Value input : inputs)
      mapped.push_back(mapping.lookup(input));
    result = (*replacement)(builder, func.getLoc(), mapped);
  } else {
    for (Operation *op : slice)
      builder.clone(*op, mapping);
    result = mapping.lookupOrNull(root);
  }
  if (!result)
    return func::FuncOp();
  func::ReturnOp::create(builder, func.getLoc(), result);
  return probe;
}

double maxAbsDifference(const Tensor &a, const Tensor &b, double &magnitude) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double x = a.dtype() == DType::F32 ? a.f32()[i] : a.dtype() == DType::I64 ? a.i64()[i] : a.boolData()[i];
    double y = b.dtype() == DType::F32 ? b.f32()[i] : b.dtype() == DType::I64 ? b.i64()[i] : b.boolData()[i];
    if (std::isnan(x) || std::isnan(y))
      return INFINITY;
    magnitude = std::max(magnitude, std::fabs(x));
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

/// The original rounds to its element type after every op and a fused
/// replacement once, so low-precision graphs differ by a few units in the
/// last place: a bf16 step is 2^-8 of the magnitude, an f16 step 2^-11.
/// Structural mistakes (a wrong scale, mask or layout) are far larger.
double toleranceFor(Type type, double tolerance) {
  Type element = cast<TensorType>(type).getElementType();
  if (element.isBF16())
    return std::max(tolerance, 1.0 / 16);
  if (element.isF16())
    return std::max(tolerance, 1.0 / 128);
  return tolerance;
}

/// Proofs already run in this process, by the text of both probes and the
/// options. A proof's outcome depends on nothing else (fixed seeds, free
/// inputs drawn by type), so the layers of a model, whose probes differ only
/// in which weights they read, are proven once: an MoE layer's proof draws a
/// GB of random expert weights.
class ProofCache {
public:
  std::optional<bool> find(const std::string &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = proofs_.find(key);
    return it == proofs_.end() ? std::nullopt : std::optional<bool>(it->second);
  }
  void insert(const std::string &key, bool proven) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (proofs_.size() >= kMaxEntries)
      proofs_.clear();
    proofs_[key] = proven;
  }

private:
  static constexpr size_t kMaxEntries = 4096;
  std::mutex mutex_;
  std::map<std::string, bool> proofs_;
};

ProofCache &proofCache() {
  static ProofCache cache;
  return cache;
}

/// The cache key of a proof, or "" when the probes' text is too large to keep.
std::string proofKey(func::FuncOp before, func::FuncOp after, const ValidationOptions &options) {
  constexpr size_t kMaxKeyBytes = size_t(1) << 20;
  std::string key;
  llvm::raw_string_ostream os(key);
  before.print(os);
  after.print(os);
  for (auto [batch, seq] : options.sizes)
    os << " " << batch << "x" << seq;
  os << " tol " << llvm::format("%a", options.tolerance);
  os.flush();
  return key.size() <= kMaxKeyBytes ? key : std::string();
}

bool runProof(func::FuncOp func, ArrayRef<Value> inputs, Value original, func::FuncOp before,
              func::FuncOp after, const ValidationOptions &options);

} // namespace

bool infer::graph::validateReplacement(func::FuncOp func, ArrayRef<Value> inputs, Value original,
                                       const ReplacementBuilder &build,
                                       const ValidationOptions &options) {
  llvm::SetVector<Operation *> slice = sliceOf(original, inputs, options.maxSliceOps);
  if (slice.empty())
    return false;
  interp::ScopedElementLimit limit(kMaxDataShapedElements);
  interp::ScopedWorkLimit work(proofWork(inputs));
  MLIRContext *context = func.getContext();
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(UnknownLoc::get(context));
  func::FuncOp before = buildProbe(*scratch, func, inputs, slice, original, nullptr);
  func::FuncOp after = buildProbe(*scratch, func, inputs, slice, original, &build);
  if (!before || !after)
    return false;
  std::string key = proofKey(before, after, options);
  if (!key.empty())
    if (std::optional<bool> proven = proofCache().find(key))
      return *proven;
  bool proven = runProof(func, inputs, original, before, after, options);
  if (!key.empty())
    proofCache().insert(key, proven);
  return proven;
}

namespace {

bool runProof(func::FuncOp func, ArrayRef<Value> inputs, Value original, func::FuncOp before,
              func::FuncOp after, const ValidationOptions &options) {
  std::mt19937 rng(1234);
  std::vector<bool> modelData(func.getNumArguments(), false);
  for (Value input : inputs)
    modelData.push_back(isModelData(input));
  // Inputs of static shape (weights) are drawn once for every size.
  std::vector<std::optional<Tensor>> staticInputs(inputs.size());
  for (auto [batch, seq] : options.sizes) {
    std::vector<std::vector<int64_t>> shapes;
    SmallVector<Value> values(func.getArguments().begin(), func.getArguments().end());
    values.append(inputs.begin(), inputs.end());
    for (Value value : values) {
      auto shape = concreteShape(value.getType(), batch, seq);
      if (!shape)
        return false;
      shapes.push_back(std::move(*shape));
    }
    if (!probeFits(before, shapes, batch, seq, modelData) ||
        !probeFits(after, shapes, batch, seq, modelData))
      return false;
    std::vector<Tensor> arguments;
    for (BlockArgument argument : func.getArguments()) {
      auto shape = concreteShape(argument.getType(), batch, seq);
      auto tensor = shape ? randomTensor(argument.getType(), *shape, rng, /*zero=*/true) : std::nullopt;
      if (!tensor)
        return false;
      arguments.push_back(std::move(*tensor));
    }
    for (auto [i, input] : llvm::enumerate(inputs)) {
      if (staticInputs[i]) {
        arguments.push_back(std::move(*staticInputs[i])); // moved back after the runs
        continue;
      }
      auto shape = concreteShape(input.getType(), batch, seq);
      auto tensor = shape ? randomTensor(input.getType(), *shape, rng, /*zero=*/false) : std::nullopt;
      if (!tensor)
        return false;
      arguments.push_back(std::move(*tensor));
    }
    auto want = interp::runFunction(before, arguments);
    auto got = interp::runFunction(after, arguments);
    if (!want || !got) {
      if (!want)
        llvm::consumeError(want.takeError());
      if (!got)
        llvm::consumeError(got.takeError());
      return false;
    }
    double magnitude = 1.0;
    double difference = maxAbsDifference((*want)[0], (*got)[0], magnitude);
    if (!(difference <= toleranceFor(original.getType(), options.tolerance) * magnitude))
      return false;
    for (auto [i, input] : llvm::enumerate(inputs))
      if (staticInputs[i] || cast<ShapedType>(input.getType()).hasStaticShape())
        staticInputs[i] = std::move(arguments[func.getNumArguments() + i]);
  }
  return true;
}

} // namespace

namespace {

/// Runs `root`'s `slice` once at (batch, seq): the function's arguments zero,
/// the free `inputs` set to `values` (f32 data of their shapes at that size).
std::optional<Tensor> evaluateOnce(func::FuncOp func, ArrayRef<Value> inputs,
                                   ArrayRef<std::vector<float>> values,
                                   const llvm::SetVector<Operation *> &slice, Value root,
                                   int64_t batch, int64_t seq) {
  if (values.size() != inputs.size())
    return std::nullopt;
  interp::ScopedElementLimit limit(kMaxDataShapedElements);
  interp::ScopedWorkLimit work(kMaxProofWork);
  OwningOpRef<ModuleOp> scratch = ModuleOp::create(UnknownLoc::get(func.getContext()));
  func::FuncOp probe = buildProbe(*scratch, func, inputs, slice, root, nullptr);
  if (!probe)
    return std::nullopt;
  SmallVector<Value> all(func.getArguments().begin(), func.getArguments().end());
  all.append(inputs.begin(), inputs.end());
  std::vector<std::vector<int64_t>> shapes;
  for (Value value : all) {
    auto shape = concreteShape(value.getType(), batch, seq);
    if (!shape)
      return std::nullopt;
    shapes.push_back(std::move(*shape));
  }
  if (!probeFits(probe, shapes, batch, seq))
    return std::nullopt;
  std::mt19937 rng(0);
  std::vector<Tensor> arguments;
  for (auto [i, value] : llvm::enumerate(all)) {
    if (i < func.getNumArguments()) {
      auto tensor = randomTensor(value.getType(), shapes[i], rng, /*zero=*/true);
      if (!tensor)
        return std::nullopt;
      arguments.push_back(std::move(*tensor));
      continue;
    }
    const std::vector<float> &data = values[i - func.getNumArguments()];
    int64_t elements = 1;
    for (int64_t dim : shapes[i])
      elements *= dim;
    auto dtype = interp::dtypeForType(cast<TensorType>(value.getType()).getElementType());
    if (!dtype) {
      llvm::consumeError(dtype.takeError());
      return std::nullopt;
    }
    if (*dtype != DType::F32 || elements != static_cast<int64_t>(data.size()))
      return std::nullopt;
    arguments.push_back(Tensor::fromF32(shapes[i], data));
  }
  auto result = interp::runFunction(probe, arguments);
  if (!result) {
    llvm::consumeError(result.takeError());
    return std::nullopt;
  }
  return std::move((*result)[0]);
}

} // namespace

std::optional<ShapeOnlyValue> infer::graph::evaluateShapeOnly(func::FuncOp func, Value value,
                                                              int64_t batch, int64_t seq) {
  llvm::SetVector<Operation *> slice = sliceOf(value, {}, 400);
  if (slice.empty())
    return std::nullopt;
  // The value may depend on the arguments' shapes but not on their values:
  // data dependence flows through every op except graph.shape.
  llvm::DenseSet<Value> dataDependent(func.getArguments().begin(), func.getArguments().end());
  for (Operation *op : slice) {
    if (isa<ShapeOp>(op))
      continue;
    if (llvm::any_of(op->getOperands(), [&](Value v) { return dataDependent.contains(v); }))
      dataDependent.insert(op->result_begin(), op->result_end());
  }
  if (dataDependent.contains(value))
    return std::nullopt;
  std::optional<Tensor> tensor = evaluateOnce(func, {}, {}, slice, value, batch, seq);
  if (!tensor)
    return std::nullopt;
  ShapeOnlyValue out{tensor->shape(), {}};
  for (int64_t i = 0; i < tensor->numElements(); ++i)
    out.values.push_back(tensor->dtype() == DType::F32   ? tensor->f32()[i]
                         : tensor->dtype() == DType::I64 ? double(tensor->i64()[i])
                                                         : double(tensor->boolData()[i]));
  return out;
}

std::optional<std::vector<double>>
infer::graph::evaluateWithInputs(func::FuncOp func, ArrayRef<Value> inputs,
                                 ArrayRef<std::vector<float>> values, Value root) {
  llvm::SetVector<Operation *> slice = sliceOf(root, inputs, 600);
  if (slice.empty())
    return std::nullopt;
  std::optional<Tensor> tensor = evaluateOnce(func, inputs, values, slice, root, 1, 1);
  if (!tensor || tensor->dtype() != DType::F32)
    return std::nullopt;
  return std::vector<double>(tensor->f32(), tensor->f32() + tensor->numElements());
}
