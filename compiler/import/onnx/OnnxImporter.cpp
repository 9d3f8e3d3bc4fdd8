//===- OnnxImporter.cpp - ONNX model → graph dialect ----------------------===//
//
// Loads the protobuf (or ONNX text), orders the nodes, turns initializers into
// weights, and hands each node to its import function (OpImporters*.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"

#include "compiler/import/onnx/ModelChecks.h"
#include "compiler/import/onnx/NodeImporter.h"
#include "compiler/import/onnx/TensorData.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>
#include <onnx/defs/parser.h>
#include <onnx/shape_inference/implementation.h>

#include <queue>
#include <fstream>
#include <sstream>

using namespace mlir;
using namespace infer::import;
namespace graph = infer::graph;

namespace {

/// Opsets of the default domain that the importer knows the semantics of.
constexpr int64_t kMinOpset = 7;
constexpr int64_t kMaxOpset = 25;

/// Keeps ops whose operand is not importable from cascading errors: their
/// results become this placeholder, and the import fails at the end anyway.
Value placeholder(OpBuilder &builder, Location loc) {
  return UnrealizedConversionCastOp::create(builder, loc, UnrankedTensorType::get(builder.getF32Type()),
                                          ValueRange())
      .getResult(0);
}

class GraphImporter {
public:
  GraphImporter(MLIRContext &context, StringRef path, std::optional<StringRef> buffer = std::nullopt)
      : context(context), path(path.str()), buffer(buffer) {
    modelDirectory = llvm::sys::path::parent_path(path).str();
    if (modelDirectory.empty())
      modelDirectory = ".";
  }

  OwningOpRef<ModuleOp> run(ImportStats *stats);

private:
  LogicalResult load();
  LogicalResult parseBinary(const char *data, uint64_t size);
  void runShapeInference();
  LogicalResult checkOpsets();
  /// Orders nodes so that every input is defined first; reports cycles and
  /// undefined inputs.
  LogicalResult orderNodes(std::vector<const onnx::NodeProto *> &order);
  InFlightDiagnostic modelError() { return emitError(FileLineColLoc::get(&context, path, 0, 0)); }
  ArrayAttr dimNames(const onnx::TypeProto &type);
  void importNode(OpBuilder &builder, const onnx::NodeProto &node);

  MLIRContext &context;
  std::string path;
  std::string modelDirectory;
  std::optional<StringRef> buffer;
  onnx::ModelProto model;
  int64_t opset = 0;
  llvm::StringMap<Value> values;
  llvm::StringMap<Type> declaredTypes;
  bool failed = false;
  ImportStats statistics;
};

LogicalResult GraphImporter::load() {
  if (buffer)
    return parseBinary(buffer->data(), buffer->size());
  auto file = graph::MappedFile::open(path);
  if (!file) {
    modelError() << llvm::toString(file.takeError());
    return failure();
  }
  if (StringRef(path).ends_with(".onnxtext")) {
    std::string text((*file)->data(), (*file)->size());
    // libonnx's text parser reports most errors by status but throws from std::stof/stol on
    // out-of-range literals (1e39, 2^64).
    std::string error;
    try {
      onnx::OnnxParser parser(text.c_str());
      auto status = parser.Parse(model);
      if (!status.IsOK())
        error = status.ErrorMessage();
    } catch (const std::exception &e) {
      error = std::string("a literal is out of range (") + e.what() + ")";
    }
    if (!error.empty()) {
      modelError() << "not a valid ONNX text model: " << error;
      return failure();
    }
    return success();
  }
  return parseBinary((*file)->data(), (*file)->size());
}

LogicalResult GraphImporter::parseBinary(const char *data, uint64_t size) {
  if (size > static_cast<uint64_t>(INT32_MAX)) {
    modelError() << "model file is larger than protobuf's 2 GB limit; export the weights as "
                    "external data (.onnx.data)";
    return failure();
  }
  if (size == 0 || !model.ParseFromArray(data, static_cast<int>(size))) {
    modelError() << "not a valid ONNX model: the protobuf could not be parsed (truncated or "
                    "not an .onnx file)";
    return failure();
  }
  if (!model.has_graph()) {
    modelError() << "the ONNX model has no graph";
    return failure();
  }
  return success();
}

LogicalResult GraphImporter::checkOpsets() {
  for (const auto &entry : model.opset_import()) {
    if (entry.domain().empty() || entry.domain() == "ai.onnx")
      opset = entry.version();
  }
  if (opset == 0 && model.opset_import_size() == 0)
    opset = kMinOpset; // ONNX: a missing opset_import means opset 1; be lenient.
  if (opset < kMinOpset || opset > kMaxOpset) {
    modelError() << "unsupported opset " << opset << " of the default ONNX domain (supported: "
                 << kMinOpset << " to " << kMaxOpset << ")";
    return failure();
  }
  statistics.opsetVersion = opset;
  return success();
}

/// Fills in value_info for models exported without it (the TorchScript
/// exporter). ONNX's own inference is best-effort here: errors only mean some
/// values stay without a rank.
/// Whether a shape input (ConstantOfShape's, Reshape's or Expand's) is
/// declared longer than kMaxRank: ONNX's inference would build a result type
/// of that many dims (2^31 took 24 GB); the importer refuses the node itself.
static bool hasOverlongShapeInput(const onnx::GraphProto &graph) {
  llvm::StringMap<int64_t> declaredLength;
  for (const auto &info : graph.input()) {
    const auto &type = info.type();
    if (type.has_tensor_type() && type.tensor_type().has_shape() &&
        type.tensor_type().shape().dim_size() == 1 &&
        type.tensor_type().shape().dim(0).has_dim_value())
      declaredLength[info.name()] = type.tensor_type().shape().dim(0).dim_value();
  }
  for (const auto &node : graph.node()) {
    const int shapeInput = node.op_type() == "ConstantOfShape"                         ? 0
                           : node.op_type() == "Reshape" || node.op_type() == "Expand" ? 1
                                                                                       : -1;
    if (shapeInput < 0 || node.input_size() <= shapeInput)
      continue;
    auto found = declaredLength.find(node.input(shapeInput));
    if (found != declaredLength.end() && found->second > kMaxRank)
      return true;
  }
  return false;
}

void GraphImporter::runShapeInference() {
  if (model.graph().value_info_size() > 0 || opset > 17 || hasOverlongShapeInput(model.graph()))
    return;
  try {
    // Only well-formed models go to shape inference (see above).
    onnx::checker::check_model(model);
  } catch (const std::exception &) {
    return;
  }
  try {
    onnx::ShapeInferenceOptions options{/*check_type=*/false, /*error_mode=*/0,
                                        /*enable_data_propagation=*/true};
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &) {
    // Keep whatever was inferred before the failure.
  }
}

LogicalResult GraphImporter::orderNodes(std::vector<const onnx::NodeProto *> &order) {
  const auto &graphProto = model.graph();
  const int count = graphProto.node_size();
  llvm::StringSet<> available;
  for (const auto &input : graphProto.input())
    available.insert(input.name());
  for (const auto &init : graphProto.initializer())
    available.insert(init.name());
  available.insert("");

  llvm::StringMap<int> producer;
  for (int i = 0; i < count; ++i)
    for (const auto &output : graphProto.node(i).output())
      if (!output.empty())
        producer[output] = i;

  // Kahn's algorithm; the min-heap keeps the file order wherever it is valid.
  std::vector<int> missing(count, 0);
  std::vector<std::vector<int>> consumers(count);
  for (int i = 0; i < count; ++i) {
    llvm::StringSet<> seen;
    for (const auto &input : graphProto.node(i).input()) {
      if (available.contains(input) || !seen.insert(input).second)
        continue;
      auto it = producer.find(input);
      if (it == producer.end()) {
        const auto &node = graphProto.node(i);
        emitError(NameLoc::get(StringAttr::get(&context, displayName(node))))
            << "node '" << displayName(node) << "' (" << node.op_type() << ") uses '" << input
            << "', which no node, graph input or initializer defines";
        return failure();
      }
      ++missing[i];
      consumers[it->second].push_back(i);
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < count; ++i)
    if (missing[i] == 0)
      ready.push(i);
  std::vector<bool> done(count, false);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    done[i] = true;
    order.push_back(&graphProto.node(i));
    for (int consumer : consumers[i])
      if (--missing[consumer] == 0)
        ready.push(consumer);
  }
  if (static_cast<int>(order.size()) == count)
    return success();

  // Name only the nodes on a cycle, not those merely downstream of one: walk
  // producers back from an unfinished node until a node repeats.
  int current = 0;
  while (done[current])
    ++current;
  std::vector<int> path;
  std::vector<int> position(count, -1);
  while (position[current] < 0) {
    position[current] = static_cast<int>(path.size());
    path.push_back(current);
    for (const auto &input : graphProto.node(current).input()) {
      auto it = producer.find(input);
      if (!available.contains(input) && it != producer.end() && !done[it->second]) {
        current = it->second;
        break;
      }
    }
  }
  // `path` runs against the data flow; print the cycle along it.
  auto diag = modelError() << "the graph has a cycle through nodes";
  auto describe = [&](int index) {
    const auto &node = graphProto.node(index);
    diag << " '" << displayName(node) << "' (" << node.op_type() << ")";
  };
  describe(path[position[current]]);
  for (size_t k = path.size() - 1; k > static_cast<size_t>(position[current]); --k)
    describe(path[k]);
  return failure();
}

ArrayAttr GraphImporter::dimNames(const onnx::TypeProto &type) {
  SmallVector<Attribute> names;
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return ArrayAttr();
  bool any = false;
  for (const auto &dim : type.tensor_type().shape().dim()) {
    names.push_back(StringAttr::get(&context, dim.dim_param()));
    any |= !dim.dim_param().empty();
  }
  return any ? ArrayAttr::get(&context, names) : ArrayAttr();
}

void GraphImporter::importNode(OpBuilder &builder, const onnx::NodeProto &node) {
  SmallVector<Value> inputs;
  bool inputsValid = true;
  for (const auto &name : node.input()) {
    Value value = name.empty() ? Value() : values.lookup(name);
    if (value && value.getDefiningOp<UnrealizedConversionCastOp>())
      inputsValid = false;
    inputs.push_back(value);
  }
  SmallVector<Type> outputTypes;
  for (const auto &name : node.output())
    outputTypes.push_back(declaredTypes.lookup(name));

  NodeImporter importer(builder, node, opset, inputs, outputTypes);
  SmallVector<Value> results;
  LogicalResult result = failure();
  bool knownDomain = node.domain().empty() || node.domain() == "ai.onnx";
  const auto &table = nodeImporters();
  const std::string key = knownDomain ? node.op_type() : node.domain() + "." + node.op_type();
  auto it = table.find(key);
  if (it == table.end()) {
    importer.error() << "unsupported op '" << key << "'";
  } else if (!inputsValid) {
    // An input already failed; its error was reported. Still check this
    // node's attributes so --check lists everything, but drop the errors that
    // only follow from the failed input (unknown ranks and types).
    ScopedDiagnosticHandler onlyAttributeErrors(&context, [](Diagnostic &diag) {
      std::string message = diag.str(); // a temporary: a StringRef to it dangles
      bool attributeError = message.find("attribute '") != std::string::npos ||
                            message.find(" takes ") != std::string::npos;
      return success(!attributeError);
    });
    (void)it->second(importer, results);
    results.clear();
  } else {
    result = it->second(importer, results);
    if (importer.reportedError())
      result = failure();
    // libonnx's node rules, where its schemas know the opset: a backstop
    // behind the importer's own checks, whose errors are clearer.
    if (succeeded(result)) {
      if (std::optional<std::string> invalid = onnxCheckerError(node, model, opset)) {
        importer.error() << "not valid ONNX: " << *invalid;
        result = failure();
      }
    }
  }
  if (mlir::failed(result))
    failed = true;
  for (int i = 0; i < node.output_size(); ++i) {
    if (node.output(i).empty())
      continue;
    Value value = (succeeded(result) && i < static_cast<int>(results.size())) ? results[i] : Value();
    if (!value) {
      if (succeeded(result)) {
        importer.error() << "output " << i << " ('" << node.output(i)
                         << "') is not supported by the importer";
        failed = true;
      }
      value = placeholder(builder, importer.loc);
    }
    values[node.output(i)] = value;
  }
}

OwningOpRef<ModuleOp> GraphImporter::run(ImportStats *stats) {
  if (mlir::failed(load()) || mlir::failed(checkOpsets()) ||
      mlir::failed(checkModelStructure(context, path, model)))
    return nullptr;
  // Undefined values and cycles are reported before ONNX's shape inference
  // sees the graph: it crashes on some malformed graphs (found by fuzzing).
  std::vector<const onnx::NodeProto *> order;
  if (mlir::failed(orderNodes(order)))
    return nullptr;
  runShapeInference();
  const auto &graphProto = model.graph();
  for (const auto &info : graphProto.value_info())
    if (Type type = convertTensorType(&context, info.type()))
      declaredTypes[info.name()] = type;
  for (const auto &output : graphProto.output())
    if (Type type = convertTensorType(&context, output.type()))
      declaredTypes[output.name()] = type;


  Location moduleLoc = FileLineColLoc::get(&context, path, 0, 0);
  OwningOpRef<ModuleOp> module = ModuleOp::create(moduleLoc);
  OpBuilder builder(&context);
  builder.setInsertionPointToEnd(module->getBody());

  // Function signature: graph inputs that are not initializers.
  llvm::StringSet<> initializerNames;
  for (const auto &init : graphProto.initializer())
    initializerNames.insert(init.name());
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  for (const auto &input : graphProto.input()) {
    if (initializerNames.contains(input.name()))
      continue;
    Type type = convertTensorType(&context, input.type());
    if (!type) {
      modelError() << "graph input '" << input.name()
                   << "' has an unsupported type (expected a tensor of a numeric or bool type)";
      return nullptr;
    }
    argTypes.push_back(type);
    args.push_back(&input);
  }
  std::string name = graphProto.name().empty() ? "main" : graphProto.name();
  auto func = func::FuncOp::create(builder, moduleLoc, name,
                                           builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [index, input] : llvm::enumerate(args)) {
    values[input->name()] = entry->getArgument(index);
    func.setArgAttr(index, "graph.name", builder.getStringAttr(input->name()));
    if (ArrayAttr dims = dimNames(input->type()))
      func.setArgAttr(index, "graph.dims", dims);
  }
  builder.setInsertionPointToStart(entry);

  // Initializers; `model` is ours, so raw_data can move into the resources.
  auto &mutableGraph = *model.mutable_graph();
  for (auto &init : *mutableGraph.mutable_initializer()) {
    Location loc = NameLoc::get(builder.getStringAttr(init.name()));
    auto value = materializeTensor(builder, loc, init, modelDirectory, &statistics.weightBytes);
    if (!value) {
      modelError() << "initializer " << llvm::toString(value.takeError());
      failed = true;
      values[init.name()] = placeholder(builder, loc);
      continue;
    }
    values[init.name()] = *value;
    ++statistics.initializers;
  }

  for (const onnx::NodeProto *node : order)
    importNode(builder, *node);
  statistics.nodes = static_cast<int64_t>(order.size());

  SmallVector<Value> results;
  for (const auto &output : graphProto.output()) {
    Value value = values.lookup(output.name());
    if (!value) {
      modelError() << "graph output '" << output.name() << "' is not produced by any node";
      return nullptr;
    }
    results.push_back(value);
  }
  func::ReturnOp::create(builder, moduleLoc, results);
  // Drop what the import left unused (initializers replaced by normalised
  // copies, Dropout's training flag, initializers no node reads).
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry->getOperations())))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setType(builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [index, output] : llvm::enumerate(graphProto.output())) {
    func.setResultAttr(index, "graph.name", builder.getStringAttr(output.name()));
    if (ArrayAttr dims = dimNames(output.type()))
      func.setResultAttr(index, "graph.dims", dims);
  }
  if (stats)
    *stats = statistics;
  if (failed)
    return nullptr;
  return module;
}

} // namespace

void infer::import::registerImportDialects(MLIRContext &context) {
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
}

OwningOpRef<ModuleOp> infer::import::importOnnxBuffer(MLIRContext &context, StringRef bytes,
                                                      StringRef bufferName, ImportStats *stats) {
  registerImportDialects(context);
  GraphImporter importer(context, bufferName, bytes);
  return importer.run(stats);
}

OwningOpRef<ModuleOp> infer::import::importOnnxFile(MLIRContext &context, StringRef path,
                                                    ImportStats *stats) {
  registerImportDialects(context);
  GraphImporter importer(context, path);
  return importer.run(stats);
}
