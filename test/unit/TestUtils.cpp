//===- TestUtils.cpp - helpers for the interpreter unit tests -------------===//

#include "TestUtils.h"

#include "dialects/graph/IR/GraphDialect.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace infer;
using interp::DType;
using interp::Tensor;

llvm::Expected<std::vector<Tensor>> test::runMlir(llvm::StringRef source,
                                                  llvm::ArrayRef<Tensor> inputs) {
  mlir::MLIRContext context;
  context.loadDialect<graph::GraphDialect, mlir::func::FuncDialect>();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source, &context);
  if (!module)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "parse failed: " + diagnostics);
  auto main = module->lookupSymbol<mlir::func::FuncOp>("main");
  if (!main)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "no @main");
  return interp::runFunction(main, inputs);
}

std::vector<Tensor> test::runOk(llvm::StringRef source, llvm::ArrayRef<Tensor> inputs) {
  llvm::Expected<std::vector<Tensor>> results = runMlir(source, inputs);
  if (!results) {
    ADD_FAILURE() << "unexpected error: " << llvm::toString(results.takeError());
    return {};
  }
  return std::move(*results);
}

std::string test::runError(llvm::StringRef source, llvm::ArrayRef<Tensor> inputs) {
  llvm::Expected<std::vector<Tensor>> results = runMlir(source, inputs);
  if (results) {
    ADD_FAILURE() << "expected an error, got " << results->size() << " results";
    return "";
  }
  std::string message = llvm::toString(results.takeError());
  EXPECT_EQ(message.find("parse failed"), std::string::npos) << message;
  return message;
}

void test::expectF32(const Tensor &actual, const std::vector<int64_t> &shape,
                     const std::vector<float> &values) {
  ASSERT_EQ(actual.dtype(), DType::F32);
  ASSERT_EQ(actual.shape(), shape);
  ASSERT_EQ(actual.numElements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    double expected = values[i], got = actual.f32()[i];
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i;
      continue;
    }
    if (std::isinf(expected)) {
      EXPECT_EQ(got, expected) << "element " << i;
      continue;
    }
    EXPECT_NEAR(got, expected, kTolerance * std::max(1.0, std::fabs(expected))) << "element " << i;
  }
}

void test::expectI64(const Tensor &actual, const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &values) {
  ASSERT_EQ(actual.dtype(), DType::I64);
  ASSERT_EQ(actual.shape(), shape);
  EXPECT_EQ(std::vector<int64_t>(actual.i64(), actual.i64() + actual.numElements()), values);
}

void test::expectBool(const Tensor &actual, const std::vector<int64_t> &shape,
                      const std::vector<uint8_t> &values) {
  ASSERT_EQ(actual.dtype(), DType::Bool);
  ASSERT_EQ(actual.shape(), shape);
  EXPECT_EQ(std::vector<uint8_t>(actual.boolData(), actual.boolData() + actual.numElements()),
            values);
}
