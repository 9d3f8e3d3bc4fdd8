//===- TestUtils.h - helpers for the interpreter unit tests -----*- C++ -*-===//
#ifndef INFER_TEST_UNIT_TESTUTILS_H
#define INFER_TEST_UNIT_TESTUTILS_H

#include "dialects/graph/Interpreter/Tensor.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace infer::test {

/// Every f32 comparison in these tests allows |actual - expected| <=
/// kTolerance * max(1, |expected|).
constexpr double kTolerance = 1e-6;

/// Parses `source` (MLIR text with graph and func ops) and runs its @main.
/// Parse and lookup failures come back as errors too.
llvm::Expected<std::vector<interp::Tensor>> runMlir(llvm::StringRef source,
                                                    llvm::ArrayRef<interp::Tensor> inputs = {});

/// Runs @main and fails the test if it returns an error.
std::vector<interp::Tensor> runOk(llvm::StringRef source,
                                  llvm::ArrayRef<interp::Tensor> inputs = {});

/// Runs @main, fails the test unless it returns an error, and returns the
/// message.
std::string runError(llvm::StringRef source, llvm::ArrayRef<interp::Tensor> inputs = {});

/// Checks dtype, shape and values (f32 within kTolerance).
void expectF32(const interp::Tensor &actual, const std::vector<int64_t> &shape,
               const std::vector<float> &values);
void expectI64(const interp::Tensor &actual, const std::vector<int64_t> &shape,
               const std::vector<int64_t> &values);
void expectBool(const interp::Tensor &actual, const std::vector<int64_t> &shape,
                const std::vector<uint8_t> &values);

} // namespace infer::test

#endif // INFER_TEST_UNIT_TESTUTILS_H
