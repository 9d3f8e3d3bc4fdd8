//===- infer-opt.cpp - mlir-opt over infer's dialects and passes ----------===//
//
// The driver lit tests use: parses, verifies, runs passes and prints IR in any
// of infer's dialects.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/IR/GraphDialect.h"
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
  infer::pipeline::registerPipelines();
  mlir::DialectRegistry registry;
  registry.insert<infer::graph::GraphDialect, mlir::func::FuncDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "infer optimizer driver\n", registry));
}
