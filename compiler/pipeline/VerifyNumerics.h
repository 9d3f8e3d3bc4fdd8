//===- VerifyNumerics.h - per-stage numerical checks of the pipeline -*- C++ -*-===//
//
// `infer-compile --verify-numerics`: runs the reference interpreter on the
// imported graph and again after each pipeline stage, on the same inputs, and
// reports the error of each stage against the imported graph's outputs.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_PIPELINE_VERIFYNUMERICS_H
#define INFER_COMPILER_PIPELINE_VERIFYNUMERICS_H

#include "compiler/pipeline/Pipeline.h"
#include "dialects/graph/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace infer::pipeline {

struct StageError {
  std::string stage;
  double maxAbsError = 0;  // max |stage - imported| over every output element
  double maxRelError = 0;  // maxAbsError / max |imported|
  int64_t opCount = 0;     // ops in the function after the stage
};

/// Inputs for a function: random values for each argument (ids in range of
/// the tables they index), with dynamic dims set to small sizes.
llvm::Expected<std::vector<interp::Tensor>> randomInputs(mlir::ModuleOp module, uint64_t seed);

/// The default tolerance for a model: its lowest-precision float type sets it
/// (1e-4 for f32, 5e-3 for f16, 3e-2 for bf16, relative to the largest output
/// magnitude): a fused op rounds once where the original rounded per op.
double defaultTolerance(mlir::ModuleOp module);

/// Runs every stage on `module` (transforming it), checking the outputs after
/// each against those of the module as given. Prints the table to `os`.
/// Fails naming the first stage whose relative error exceeds `tolerance`, or
/// whose pass failed.
llvm::Expected<std::vector<StageError>>
verifyNumerics(mlir::ModuleOp module, const std::vector<PipelineStage> &stages,
               std::vector<interp::Tensor> inputs, double tolerance, llvm::raw_ostream &os);

} // namespace infer::pipeline

#endif
