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
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // MLIR's lexer stops at a NUL: the tools hand it MemoryBuffers, which end
  // in one, so the harness must too (without, it read past the input).
  std::string source(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(source.c_str(), size);
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
