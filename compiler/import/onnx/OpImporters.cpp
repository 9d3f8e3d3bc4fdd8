//===- OpImporters.cpp - the table of supported ONNX ops ------------------===//

#include "compiler/import/onnx/OpImporters.h"

using namespace infer::import;

const llvm::StringMap<NodeImportFn> &infer::import::nodeImporters() {
  static const llvm::StringMap<NodeImportFn> table = [] {
    llvm::StringMap<NodeImportFn> result;
    addElementwiseImporters(result);
    addShapeImporters(result);
    addComputeImporters(result);
    addFusedImporters(result);
    addQuantizedImporters(result);
    return result;
  }();
  return table;
}
