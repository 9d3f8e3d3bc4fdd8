//===- infer-opt.cpp - mlir-opt over infer's dialects and passes ----------===//
//
// The driver lit tests use: parses, verifies, runs passes and prints IR in any
// of infer's dialects. Its input is read as infer-compile reads .mlir files
// (compiler/pipeline/MlirSource.h): a regular file or stdin, text, nesting
// bounded before the parser runs; weight references must lie beside the file.
//
//===----------------------------------------------------------------------===//

#include "compiler/pipeline/MlirSource.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/exec/IR/ExecDialect.h"
#include "dialects/exec/Transforms/Passes.h"
#include "dialects/graph/IR/GraphDialect.h"
#include "dialects/graph/IR/GraphResources.h"
#include "dialects/graph/Transforms/Passes.h"
#include "passes/GraphToExec/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"

namespace {
/// The input's directory, for the dialect extension (a plain function) that
/// sets it on each context MlirOptMain makes.
std::string &weightDirectory() {
  static std::string directory;
  return directory;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  infer::graph::registerGraphTransformsPasses();
  infer::exec::registerExecTransformsPasses();
  infer::registerGraphToExecPasses();
  infer::pipeline::registerPipelines();
  mlir::DialectRegistry registry;
  registry.insert<infer::graph::GraphDialect, infer::exec::ExecDialect, mlir::func::FuncDialect>();
  auto [inputPath, outputPath] =
      mlir::registerAndParseCLIOptions(argc, argv, "infer optimizer driver\n", registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, inputPath, outputPath, registry));

  auto input = infer::pipeline::readMlirSource(inputPath);
  if (!input) {
    llvm::errs() << "error: " << llvm::toString(input.takeError()) << "\n";
    return 1;
  }
  if (auto problem = infer::pipeline::checkMlirSource((*input)->getBuffer())) {
    llvm::errs() << inputPath;
    if (problem->line)
      llvm::errs() << ":" << problem->line << ":" << problem->column;
    llvm::errs() << ": error: " << problem->message << "\n";
    return 1;
  }
  // As infer-compile: "file:" weight references resolve inside the input's
  // directory (the current one for stdin).
  std::string directory = inputPath == "-" ? "." : llvm::sys::path::parent_path(inputPath).str();
  weightDirectory() = directory.empty() ? "." : directory;
  registry.addExtension(+[](mlir::MLIRContext *context, infer::graph::GraphDialect *) {
    infer::graph::setWeightFileDirectory(context, weightDirectory());
  });
  std::string error;
  auto output = mlir::openOutputFile(outputPath, &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  if (mlir::failed(mlir::MlirOptMain(output->os(), std::move(*input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
