//===- VerifyNumerics.cpp - per-stage numerical checks of the pipeline ----===//

#include "compiler/pipeline/VerifyNumerics.h"

#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace infer;
using interp::DType;
using interp::Tensor;

namespace {

/// The number of rows of the tables an integer argument indexes (Gather or
/// Embedding of a static table), so random ids stay in range.
int64_t indexBound(BlockArgument argument) {
  int64_t bound = 0;
  for (Operation *user : argument.getUsers()) {
    Value table;
    int64_t axis = 0;
    if (auto gather = dyn_cast<graph::GatherOp>(user); gather && gather.getIndices() == argument)
      table = gather.getData(), axis = gather.getAxis();
    else if (auto embedding = dyn_cast<graph::EmbeddingOp>(user))
      table = embedding.getTable();
    auto type = table ? dyn_cast<RankedTensorType>(table.getType()) : RankedTensorType();
    if (type && axis < type.getRank() && !type.isDynamicDim(axis))
      bound = bound == 0 ? type.getDimSize(axis) : std::min(bound, type.getDimSize(axis));
  }
  return bound > 0 ? bound : 2;
}

double maxAbs(const Tensor &tensor) {
  double result = 0;
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    result = std::max(result, std::fabs(tensor.dtype() == DType::F32 ? double(tensor.f32()[i])
                                        : tensor.dtype() == DType::I64 ? double(tensor.i64()[i])
                                                                      : double(tensor.boolData()[i])));
  return result;
}

/// Max abs difference; infinity when shapes or types differ.
double maxDifference(const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return INFINITY;
  double result = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double x = a.dtype() == DType::F32 ? a.f32()[i] : a.dtype() == DType::I64 ? a.i64()[i] : a.boolData()[i];
    double y = b.dtype() == DType::F32 ? b.f32()[i] : b.dtype() == DType::I64 ? b.i64()[i] : b.boolData()[i];
    if (std::isnan(x) != std::isnan(y))
      return INFINITY;
    if (!std::isnan(x))
      result = std::max(result, std::fabs(x - y));
  }
  return result;
}

int64_t countOps(func::FuncOp func) {
  int64_t count = 0;
  func.walk([&](Operation *op) { count += op != func.getOperation(); });
  return count;
}

} // namespace

double pipeline::defaultTolerance(ModuleOp module) {
  double tolerance = 1e-4;
  module.walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      Type element = getElementTypeOrSelf(type);
      if (element.isBF16())
        tolerance = std::max(tolerance, 3e-2);
      else if (element.isF16())
        tolerance = std::max(tolerance, 5e-3);
    }
  });
  return tolerance;
}

llvm::Expected<std::vector<Tensor>> pipeline::randomInputs(ModuleOp module, uint64_t seed) {
  func::FuncOp func = pipeline::singleFunction(module);
  if (!func)
    return llvm::createStringError("--verify-numerics needs a module with exactly one function");
  std::mt19937_64 rng(seed);
  // Dynamic dims get small sizes; dims that share an ONNX name share a size.
  llvm::StringMap<int64_t> namedSizes;
  const int64_t sizes[] = {2, 7, 5, 3};
  auto sizeFor = [&](StringRef name) {
    if (name.empty())
      return int64_t(3);
    auto [it, inserted] = namedSizes.try_emplace(name, 0);
    if (inserted)
      it->second = sizes[std::min<size_t>(namedSizes.size() - 1, 3)];
    return it->second;
  };
  std::vector<Tensor> inputs;
  for (BlockArgument argument : func.getArguments()) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type)
      return llvm::createStringError("input " + std::to_string(argument.getArgNumber()) +
                                     " has no rank; give its values with --input");
    auto names = func.getArgAttrOfType<ArrayAttr>(argument.getArgNumber(), "graph.dims");
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      StringRef name;
      if (names && d < (int64_t)names.size())
        if (auto text = dyn_cast<StringAttr>(names[d]))
          name = text.getValue();
      shape.push_back(type.isDynamicDim(d) ? sizeFor(name) : type.getDimSize(d));
    }
    // Random inputs are for models of small static dims; a [1, 2^30] input
    // is given with --input (whose size the caller chose) or not at all.
    constexpr int64_t kMaxRandomElements = int64_t(1) << 26;
    int64_t elements = 1;
    for (int64_t dim : shape) {
      if (dim != 0 && elements > kMaxRandomElements / dim)
        return llvm::createStringError("input " + std::to_string(argument.getArgNumber()) + " " +
                                       llvm::formatv("{0}", type).str() +
                                       " would have more than 2^26 random values; give "
                                       "its values with --input");
      elements *= dim;
    }
    llvm::Expected<DType> dtype = interp::dtypeForType(type.getElementType());
    if (!dtype)
      return dtype.takeError();
    Tensor tensor(*dtype, shape);
    if (*dtype == DType::F32) {
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        tensor.f32()[i] = dist(rng);
    } else if (*dtype == DType::I64) {
      std::uniform_int_distribution<int64_t> dist(0, indexBound(argument) - 1);
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        tensor.i64()[i] = dist(rng);
    } else {
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        tensor.boolData()[i] = rng() & 1;
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

llvm::Expected<std::vector<pipeline::StageError>>
pipeline::verifyNumerics(ModuleOp module, const std::vector<PipelineStage> &stages,
                         std::vector<Tensor> inputs, double tolerance, llvm::raw_ostream &os) {
  func::FuncOp func = pipeline::singleFunction(module);
  if (!func)
    return llvm::createStringError("--verify-numerics needs a module with exactly one function");
  auto reference = interp::runFunction(func, inputs);
  if (!reference)
    return llvm::createStringError("--verify-numerics: the imported graph does not run: " +
                                   llvm::toString(reference.takeError()));
  double magnitude = 0;
  for (const Tensor &output : *reference)
    magnitude = std::max(magnitude, maxAbs(output));

  os << llvm::format("%-22s %8s %14s %14s   (tolerance %.1e)\n", "stage", "ops", "max abs err",
                     "max rel err", tolerance);
  os << llvm::format("%-22s %8lld %14s %14s\n", "imported", (long long)countOps(func), "(reference)", "");
  std::vector<StageError> rows;
  for (const PipelineStage &stage : stages) {
    PassManager pm(module.getContext());
    stage.addPasses(pm);
    if (failed(pm.run(module)))
      return llvm::createStringError("--verify-numerics: stage '" + stage.name + "' failed");
    func = pipeline::singleFunction(module);
    auto outputs = interp::runFunction(func, inputs);
    if (!outputs)
      return llvm::createStringError("--verify-numerics: after stage '" + stage.name +
                                     "' the graph does not run: " + llvm::toString(outputs.takeError()));
    StageError row{stage.name, 0, 0, countOps(func)};
    if (outputs->size() != reference->size())
      row.maxAbsError = INFINITY;
    for (size_t i = 0; i < std::min(outputs->size(), reference->size()); ++i)
      row.maxAbsError = std::max(row.maxAbsError, maxDifference((*outputs)[i], (*reference)[i]));
    row.maxRelError = magnitude > 0 ? row.maxAbsError / magnitude : row.maxAbsError;
    os << llvm::format("%-22s %8lld %14.3g %14.3g%s\n", row.stage.c_str(), (long long)row.opCount,
                       row.maxAbsError, row.maxRelError,
                       stage.approximates ? "   (approximates: not held to the tolerance; "
                                            "--calibration measures it)"
                                          : "");
    rows.push_back(row);
    if (stage.approximates) {
      reference = std::move(outputs);
      continue;
    }
    if (!(row.maxRelError <= tolerance))
      return llvm::createStringError(
          llvm::formatv("--verify-numerics: stage '{0}' changed the outputs: max relative error "
                        "{1:e} exceeds the tolerance {2:e}",
                        stage.name, row.maxRelError, tolerance)
              .str());
  }
  return rows;
}
