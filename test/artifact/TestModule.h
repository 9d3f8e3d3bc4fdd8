//===- TestModule.h - the test model through the compiler's stages -*- C++ -*-===//
//
// What the artifact tests compile: INFER_TEST_MODEL (tiny-llama) imported and
// optimized as infer-compile does, and a module lowered to exec.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_TEST_ARTIFACT_TESTMODULE_H
#define INFER_TEST_ARTIFACT_TESTMODULE_H

#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/pipeline/Pipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <cstdint>

namespace infer::test {

/// INFER_TEST_MODEL imported and optimized; null if either step failed.
inline mlir::OwningOpRef<mlir::ModuleOp> optimizedTestModel(mlir::MLIRContext &context) {
  infer::import::ImportStats stats;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      infer::import::importOnnxFile(context, INFER_TEST_MODEL, &stats);
  if (!module)
    return nullptr;
  mlir::PassManager pm(&context);
  infer::pipeline::buildOptimizationPipeline(pm, infer::pipeline::PipelineOptions());
  if (mlir::failed(pm.run(*module)))
    return nullptr;
  return module;
}

/// A clone of `module` lowered to exec for `bound` tokens; null on failure.
inline mlir::OwningOpRef<mlir::ModuleOp> lowerToExec(mlir::ModuleOp module, int64_t bound) {
  mlir::OwningOpRef<mlir::ModuleOp> lowered = module.clone();
  mlir::PassManager pm(module.getContext());
  infer::pipeline::buildExecPipeline(pm, bound);
  if (mlir::failed(pm.run(*lowered)))
    return nullptr;
  return lowered;
}

} // namespace infer::test

#endif // INFER_TEST_ARTIFACT_TESTMODULE_H
