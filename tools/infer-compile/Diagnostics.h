//===- Diagnostics.h - command-line rendering of MLIR diagnostics -*- C++ -*-===//
#ifndef INFER_TOOLS_INFER_COMPILE_DIAGNOSTICS_H
#define INFER_TOOLS_INFER_COMPILE_DIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace infer::tools {

/// Prints every diagnostic as one line on stderr, "FILE: error: message", with
/// the ONNX node name for diagnostics located at a node, and counts errors.
class CommandLineDiagnostics {
public:
  explicit CommandLineDiagnostics(mlir::MLIRContext &context);
  ~CommandLineDiagnostics();
  int errorCount() const { return errors; }

private:
  mlir::MLIRContext &context;
  mlir::DiagnosticEngine::HandlerID handler;
  int errors = 0;
};

} // namespace infer::tools

#endif
