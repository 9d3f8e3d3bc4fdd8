//===- ReferenceRun.h - infer-compile --reference-run -----------*- C++ -*-===//
#ifndef INFER_TOOLS_INFER_COMPILE_REFERENCERUN_H
#define INFER_TOOLS_INFER_COMPILE_REFERENCERUN_H

#include "dialects/graph/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace infer::tools {

/// Reads "NAME=FILE.npy" bindings into the arguments of the module's one
/// function, in order; every input must be bound, and only inputs.
llvm::Expected<std::vector<interp::Tensor>> readInputs(mlir::ModuleOp module,
                                                       const std::vector<std::string> &inputs);

/// Runs the module's entry function on the reference interpreter. `inputs`
/// and `outputs` are "NAME=FILE.npy" bindings by ONNX value name; every
/// function input must be bound. Output files are written only when the whole
/// run succeeded.
llvm::Error referenceRun(mlir::ModuleOp module, const std::vector<std::string> &inputs,
                         const std::vector<std::string> &outputs);

} // namespace infer::tools

#endif
