//===- ModelChecks.cpp - ONNX's validity rules, checked before import -----===//

#include "compiler/import/onnx/ModelChecks.h"

#include "compiler/import/onnx/NodeImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>

using namespace mlir;
using namespace infer::import;

namespace {

class StructureChecker {
public:
  StructureChecker(MLIRContext &context, StringRef path, const onnx::ModelProto &model)
      : context(context), path(path), model(model), graph(model.graph()) {}

  LogicalResult run() {
    checkIrVersion();
    if (graph.output_size() == 0)
      modelError() << "the graph has no outputs (an empty graph computes nothing)";
    checkNames();
    for (const auto &input : graph.input())
      checkType(input, "graph input");
    for (const auto &output : graph.output())
      checkType(output, "graph output");
    for (const auto &info : graph.value_info())
      checkType(info, "value_info of");
    return success(!failed);
  }

private:
  InFlightDiagnostic modelError() {
    failed = true;
    return emitError(FileLineColLoc::get(&context, path, 0, 0));
  }

  void checkIrVersion() {
    if (!model.has_ir_version()) {
      modelError() << "the model has no ir_version";
      return;
    }
    int64_t version = model.ir_version();
    if (version < kMinIrVersion || version > kMaxIrVersion)
      modelError() << "ir_version " << version << " is not one this compiler reads ("
                   << kMinIrVersion << " to " << kMaxIrVersion << ")";
  }

  /// Graph inputs and initializers are named once each; every value is
  /// written once: by one node output, or as a graph input or initializer.
  void checkNames() {
    llvm::StringSet<> inputs, initializers;
    for (const auto &input : graph.input()) {
      if (input.name().empty())
        modelError() << "a graph input has an empty name";
      else if (!inputs.insert(input.name()).second)
        modelError() << "graph input '" << input.name() << "' is declared twice";
    }
    for (const auto &init : graph.initializer()) {
      if (init.name().empty())
        modelError() << "an initializer has an empty name";
      else if (!initializers.insert(init.name()).second)
        modelError() << "initializer '" << init.name() << "' is declared twice";
    }
    llvm::StringMap<const onnx::NodeProto *> writer;
    for (const auto &node : graph.node()) {
      for (const auto &output : node.output()) {
        if (output.empty())
          continue;
        Location loc = NameLoc::get(StringAttr::get(&context, displayName(node)));
        auto error = [&]() -> InFlightDiagnostic {
          failed = true;
          return emitError(loc) << "node '" << displayName(node) << "' (" << node.op_type()
                                << ") writes '" << output << "', ";
        };
        if (inputs.contains(output))
          error() << "which is a graph input";
        else if (initializers.contains(output))
          error() << "which is an initializer";
        else if (auto [it, inserted] = writer.try_emplace(output, &node); !inserted)
          error() << "which node '" << displayName(*it->second) << "' (" << it->second->op_type()
                  << ") writes too (a value is written once)";
      }
    }
  }

  /// Dims are in [0, kMaxDimension]; static shapes hold at most kMaxElements.
  void checkType(const onnx::ValueInfoProto &info, StringRef what) {
    const onnx::TypeProto &type = info.type();
    if (!type.has_tensor_type() || !type.tensor_type().has_shape())
      return;
    int64_t elements = 1;
    bool allStatic = true;
    const auto &dims = type.tensor_type().shape().dim();
    if (dims.size() > kMaxRank) {
      modelError() << what << " '" << info.name() << "' has " << dims.size()
                   << " dimensions; a tensor has at most " << kMaxRank;
      return;
    }
    for (int i = 0; i < dims.size(); ++i) {
      if (!dims[i].has_dim_value()) {
        allStatic = false;
        continue;
      }
      int64_t dim = dims[i].dim_value();
      if (dim < 0 || dim > kMaxDimension) {
        modelError() << what << " '" << info.name() << "': dimension " << i << " is " << dim
                     << "; dimensions must lie in [0, " << kMaxDimension << "]";
        return;
      }
      if (dim != 0 && elements > kMaxElements / dim)
        elements = kMaxElements + 1;
      else
        elements *= dim;
    }
    if (allStatic && elements > kMaxElements)
      modelError() << what << " '" << info.name() << "' has more than 2^40 elements";
  }

  MLIRContext &context;
  StringRef path;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  bool failed = false;
};

/// The newest opset of the default domain libonnx has schemas for.
int64_t libonnxMaxOpset() {
  const auto &map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

} // namespace

LogicalResult infer::import::checkModelStructure(MLIRContext &context, StringRef path,
                                                 const onnx::ModelProto &model) {
  return StructureChecker(context, path, model).run();
}

std::optional<std::string> infer::import::onnxCheckerError(const onnx::NodeProto &node,
                                                           const onnx::ModelProto &model,
                                                           int64_t opset) {
  static const int64_t maxOpset = libonnxMaxOpset();
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
  if (!defaultDomain || opset > maxOpset)
    return std::nullopt;
  onnx::checker::CheckerContext context;
  // The node rules do not depend on the IR version past 3; libonnx refuses
  // versions newer than its own (8), which ours may be.
  context.set_ir_version(
      static_cast<int>(std::min<int64_t>(model.ir_version(), onnx::Version::IR_VERSION)));
  std::unordered_map<std::string, int> imports;
  for (const auto &entry : model.opset_import())
    imports[entry.domain()] = static_cast<int>(entry.version());
  imports[onnx::ONNX_DOMAIN] = static_cast<int>(opset);
  context.set_opset_imports(std::move(imports));
  onnx::checker::LexicalScopeContext scope;
  try {
    onnx::checker::check_node(node, context, scope);
  } catch (const std::exception &error) {
    std::string message = error.what();
    // libonnx appends "==> Context: Bad node spec ..." (the node as text).
    if (size_t context = message.find("\n\n==> Context:"); context != std::string::npos)
      message.resize(context);
    return message;
  }
  return std::nullopt;
}
