//===- infer-opt.cpp - mlir-opt over infer's dialects and passes ----------===//
//
// The driver lit tests use: parses, verifies, runs passes and prints IR in any
// of infer's dialects.
//
//===----------------------------------------------------------------------===//

#include "dialects/exec/IR/ExecDialect.h"
#include "dialects/exec/Transforms/Passes.h"
#include "dialects/graph/IR/GraphDialect.h"
#include "passes/GraphToExec/Passes.h"
#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  infer::graph::registerGraphTransformsPasses();
  infer::exec::registerExecTransformsPasses();
  infer::registerGraphToExecPasses();
  infer::pipeline::registerPipelines();
  mlir::DialectRegistry registry;
  registry.insert<infer::graph::GraphDialect, infer::exec::ExecDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "infer optimizer driver\n", registry));
}
