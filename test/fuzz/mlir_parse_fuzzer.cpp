//===- mlir_parse_fuzzer.cpp - libFuzzer target for .mlir input -----------===//
//
// The path infer-compile and infer-opt take for a .mlir model: the source
// check (MlirSource.h: text, nesting depth), MLIR's parser with the graph and
// exec dialects' verifiers, then the optimization pipeline on what parses.
// Weight references ("file:...") resolve in an empty directory of the
// fuzzer's own, so none can be read.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/MlirSource.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/IR/GraphResources.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (infer::pipeline::checkMlirSource(text))
    return 0;
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
  infer::import::registerImportDialects(context);
  infer::graph::setWeightFileDirectory(&context, "/nonexistent-infer-fuzz");
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!module)
    return 0;
  mlir::PassManager pm(&context);
  infer::pipeline::buildOptimizationPipeline(pm, infer::pipeline::PipelineOptions());
  (void)pm.run(*module);
  return 0;
}
