//===- ReferenceRun.cpp - infer-compile --reference-run -------------------===//

#include "tools/infer-compile/ReferenceRun.h"

#include "compiler/support/Npy.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using infer::interp::Tensor;

namespace {

llvm::Expected<llvm::StringMap<std::string>> parseBindings(const std::vector<std::string> &bindings,
                                                           llvm::StringRef flag) {
  llvm::StringMap<std::string> result;
  for (const std::string &binding : bindings) {
    auto [name, file] = llvm::StringRef(binding).split('=');
    if (name.empty() || file.empty())
      return llvm::createStringError(flag + " expects NAME=FILE.npy, got '" + binding + "'");
    if (!result.try_emplace(name, file.str()).second)
      return llvm::createStringError(flag + " binds '" + name + "' twice");
  }
  return result;
}

std::string valueName(func::FuncOp func, unsigned index, bool isResult) {
  auto attr = isResult ? func.getResultAttrOfType<StringAttr>(index, "graph.name")
                       : func.getArgAttrOfType<StringAttr>(index, "graph.name");
  if (attr)
    return attr.str();
  return (isResult ? "output" : "input") + std::to_string(index);
}

} // namespace

llvm::Expected<std::vector<Tensor>> infer::tools::readInputs(ModuleOp module,
                                                             const std::vector<std::string> &inputs) {
  auto funcs = llvm::to_vector(module.getOps<func::FuncOp>());
  if (funcs.size() != 1)
    return llvm::createStringError("the model must have exactly one function, found " +
                                   std::to_string(funcs.size()));
  func::FuncOp func = funcs.front();
  auto inputFiles = parseBindings(inputs, "--input");
  if (!inputFiles)
    return inputFiles.takeError();
  std::vector<Tensor> arguments;
  llvm::StringSet<> used;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = valueName(func, i, false);
    auto it = inputFiles->find(name);
    if (it == inputFiles->end())
      return llvm::createStringError("model input '" + name + "' has no --input " + name + "=FILE.npy");
    auto tensor = infer::support::readNpy(it->second);
    if (!tensor)
      return llvm::createStringError("--input " + name + ": " + llvm::toString(tensor.takeError()));
    arguments.push_back(std::move(*tensor));
    used.insert(name);
  }
  for (const auto &entry : *inputFiles)
    if (!used.contains(entry.getKey()))
      return llvm::createStringError("--input names '" + entry.getKey().str() +
                                     "', which is not an input of the model");
  return arguments;
}

llvm::Error infer::tools::referenceRun(ModuleOp module, const std::vector<std::string> &inputs,
                                       const std::vector<std::string> &outputs) {
  auto arguments = readInputs(module, inputs);
  if (!arguments)
    return arguments.takeError();
  func::FuncOp func = *module.getOps<func::FuncOp>().begin();
  auto outputFiles = parseBindings(outputs, "--output");
  if (!outputFiles)
    return outputFiles.takeError();

  llvm::StringMap<unsigned> resultIndex;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    resultIndex[valueName(func, i, true)] = i;
  for (const auto &entry : *outputFiles)
    if (!resultIndex.count(entry.getKey()))
      return llvm::createStringError("--output names '" + entry.getKey().str() +
                                     "', which is not an output of the model");

  auto results = infer::interp::runFunction(func, *arguments);
  if (!results)
    return results.takeError();

  // Write each output beside its destination first, then move them all into
  // place, so a failure leaves no partial output behind.
  std::vector<std::pair<std::string, std::string>> written;
  auto cleanup = [&] {
    for (auto &[temp, final] : written)
      llvm::sys::fs::remove(temp);
  };
  for (const auto &entry : *outputFiles) {
    std::string temp = entry.getValue() + ".tmp";
    if (llvm::Error error = infer::support::writeNpy(temp, (*results)[resultIndex[entry.getKey()]])) {
      cleanup();
      llvm::sys::fs::remove(temp);
      return llvm::createStringError("--output " + entry.getKey().str() + ": " +
                                     llvm::toString(std::move(error)));
    }
    written.emplace_back(temp, entry.getValue());
  }
  for (auto &[temp, final] : written)
    if (std::error_code ec = llvm::sys::fs::rename(temp, final)) {
      cleanup();
      return llvm::createStringError("cannot write '" + final + "': " + ec.message());
    }
  return llvm::Error::success();
}
