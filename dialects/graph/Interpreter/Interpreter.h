//===- Interpreter.h - reference interpreter for the graph dialect -*- C++ -*-===//
//
// Executes a func.func of graph ops on the CPU with ONNX semantics. It is the
// reference that importer output and compiled code are checked against, so it
// favours obviously right loops over speed.
//
// Element types: f32, i64 and i1 are computed as such; i32 values are held as
// i64 and f64 values as f32. bf16 and f16 values are held as f32 too, computed
// in f32, and rounded to their type (nearest even) wherever a value of that
// type is bound: "compute in fp32, store rounded", as PyTorch does on the CPU.
// Anything else (i8, f8, ...) is an error.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_INTERPRETER_INTERPRETER_H
#define INFER_DIALECTS_GRAPH_INTERPRETER_INTERPRETER_H

#include "dialects/graph/Interpreter/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <vector>

namespace mlir {
class Type;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace infer::interp {

/// Runs `func` (a func.func of graph ops ending in func.return) on `inputs`,
/// given in argument order, and returns its results in order.
///
/// Bad input never aborts: a wrong input count, dtype or shape, an op whose
/// operands violate its ONNX contract (shape mismatch, index out of range),
/// an unsupported element type, or a result that contradicts the op's static
/// result type is returned as an error naming the op and its location.
llvm::Expected<std::vector<Tensor>> runFunction(mlir::func::FuncOp func,
                                                llvm::ArrayRef<Tensor> inputs);

/// Caps the elements of every tensor the interpreter allocates on this thread
/// while it lives (nested caps keep the smaller). Compile-time evaluation
/// (the raising passes' proofs at batch 2, seq 17) needs small tensors only;
/// a larger one means the graph sizes a tensor from a value (a Range of a
/// huge constant), which must be a clean failure, not gigabytes.
class ScopedElementLimit {
public:
  explicit ScopedElementLimit(int64_t maxElements);
  ~ScopedElementLimit();
  ScopedElementLimit(const ScopedElementLimit &) = delete;
  ScopedElementLimit &operator=(const ScopedElementLimit &) = delete;

private:
  int64_t previous_;
};

/// Caps the elements of all results the interpreter computes on this thread
/// while it lives, summed over ops (nested caps keep the smaller remainder).
/// A proof runs a slice of the model at small batch and seq, yet its static
/// dims may still make every op large (a mutated model's sin over 2^28 values
/// took minutes): the run stops with an error once the sum passes the cap.
class ScopedWorkLimit {
public:
  explicit ScopedWorkLimit(int64_t maxElements);
  ~ScopedWorkLimit();
  ScopedWorkLimit(const ScopedWorkLimit &) = delete;
  ScopedWorkLimit &operator=(const ScopedWorkLimit &) = delete;

private:
  int64_t previous_, start_;
};

/// The DType that holds values of MLIR element type `elementType` (a tensor
/// type is looked through), or an error for types the interpreter lacks.
/// bf16 and f16 give F32: their inputs and outputs are f32 tensors.
llvm::Expected<DType> dtypeForType(mlir::Type type);

} // namespace infer::interp

#endif // INFER_DIALECTS_GRAPH_INTERPRETER_INTERPRETER_H
