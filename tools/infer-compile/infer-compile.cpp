//===- infer-compile.cpp - the infer compiler driver ----------------------===//
//
//   infer-compile MODEL.{onnx,onnxtext,mlir} --emit=graph
//   infer-compile MODEL.onnx --check
//   infer-compile MODEL --reference-run --input NAME=IN.npy --output NAME=OUT.npy
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"
#include "dialects/graph/IR/GraphDialect.h"
#include "tools/infer-compile/Diagnostics.h"
#include "tools/infer-compile/ReferenceRun.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

using namespace mlir;

namespace {

struct Options {
  std::string model;
  std::string emit;
  bool check = false;
  bool referenceRun = false;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

OwningOpRef<ModuleOp> loadModel(MLIRContext &context, const Options &options,
                                infer::import::ImportStats *stats) {
  llvm::StringRef path = options.model;
  if (path.ends_with(".mlir")) {
    infer::import::registerImportDialects(context);
    std::string error;
    auto file = openInputFile(path, &error);
    if (!file) {
      llvm::errs() << "error: " << error << "\n";
      return nullptr;
    }
    // The source manager must outlive parsing only: locations keep file names.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, &context);
  }
  if (path.ends_with(".onnx") || path.ends_with(".onnxtext"))
    return infer::import::importOnnxFile(context, path, stats);
  emitError(UnknownLoc::get(&context))
      << "'" << path << "': expected a .onnx, .onnxtext or .mlir file";
  return nullptr;
}

int run(const Options &options) {
  MLIRContext context;
  infer::tools::CommandLineDiagnostics diagnostics(context);

  infer::import::ImportStats stats;
  OwningOpRef<ModuleOp> module = loadModel(context, options, &stats);
  if (!module) {
    if (options.check)
      llvm::errs() << options.model << ": not supported (see the errors above)\n";
    return 1;
  }
  if (failed(verify(*module)))
    return 1;

  if (options.check) {
    llvm::outs() << options.model << ": supported";
    if (stats.nodes)
      llvm::outs() << " (" << stats.nodes << " nodes, opset " << stats.opsetVersion << ", "
                   << stats.initializers << " initializers)";
    llvm::outs() << "\n";
    return 0;
  }
  if (options.referenceRun) {
    if (llvm::Error error = infer::tools::referenceRun(*module, options.inputs, options.outputs)) {
      llvm::errs() << "error: " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    return 0;
  }
  if (options.emit == "graph") {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  llvm::errs() << "error: nothing to do: give --emit=graph, --check or --reference-run\n";
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"infer-compile: compiles ONNX models exported from PyTorch for LLM inference"};
  Options options;
  app.add_option("model", options.model, "MODEL.onnx, MODEL.onnxtext (ONNX text syntax) or an .mlir file")
      ->required();
  app.add_option("--emit", options.emit, "print the IR after this stage to stdout")
      ->check(CLI::IsMember({"graph"}));
  app.add_flag("--check", options.check,
               "list every unsupported op or attribute; exit 1 if there is any");
  app.add_flag("--reference-run", options.referenceRun,
               "run the graph on the CPU reference interpreter (fp32, int64, bool)");
  app.add_option("--input", options.inputs, "NAME=FILE.npy: a model input for --reference-run");
  app.add_option("--output", options.outputs, "NAME=FILE.npy: where --reference-run writes an output");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    return app.exit(error);
  }
  if ((options.check + options.referenceRun + !options.emit.empty()) > 1) {
    llvm::errs() << "error: --emit, --check and --reference-run are exclusive\n";
    return 2;
  }
  return run(options);
}
