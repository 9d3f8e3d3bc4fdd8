//===- WeightTest.cpp - interpreter tests: graph.weight -------------------===//
//
// Weight ops are built with the C++ API (not parsed) so the tests exercise
// the bytes a resource holds rather than its textual form.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "dialects/graph/IR/GraphDialect.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"
#include "dialects/graph/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

using namespace infer;
using namespace infer::test;
using interp::Tensor;
using ::testing::HasSubstr;

namespace {

class WeightTest : public ::testing::Test {
protected:
  WeightTest() { context.loadDialect<graph::GraphDialect, mlir::func::FuncDialect>(); }

  /// Adds a weight of `type` holding `bytes` to a function returning all
  /// weights added so far.
  void addWeight(llvm::StringRef name, mlir::RankedTensorType type, const std::string &bytes) {
    auto data = std::make_unique<char[]>(bytes.size());
    std::memcpy(data.get(), bytes.data(), bytes.size());
    graph::WeightHandle handle =
        graph::insertOwnedWeight(&context, name, std::move(data), bytes.size());
    weights.push_back({type, handle});
  }

  llvm::Expected<std::vector<Tensor>> run() {
    mlir::OpBuilder builder(&context);
    mlir::Location loc = mlir::NameLoc::get(builder.getStringAttr("weights"));
    module = mlir::ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    llvm::SmallVector<mlir::Type> types;
    for (auto &[type, handle] : weights)
      types.push_back(type);
    auto func =
        mlir::func::FuncOp::create(builder, loc, "main", builder.getFunctionType({}, types));
    builder.setInsertionPointToStart(func.addEntryBlock());
    llvm::SmallVector<mlir::Value> values;
    for (auto &[type, handle] : weights)
      values.push_back(graph::WeightOp::create(builder, loc, type,
                                               graph::WeightAttr::get(&context, type, handle)));
    mlir::func::ReturnOp::create(builder, loc, values);
    return interp::runFunction(func, {});
  }

  template <typename T> static std::string bytesOf(std::vector<T> values) {
    return std::string(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(T));
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<std::pair<mlir::RankedTensorType, graph::WeightHandle>> weights;
};

TEST_F(WeightTest, ReadsEverySupportedElementType) {
  mlir::Builder b(&context);
  addWeight("w.f32", mlir::RankedTensorType::get({2, 2}, b.getF32Type()),
            bytesOf<float>({1, -2, 0.5f, 3}));
  addWeight("w.i64", mlir::RankedTensorType::get({2}, b.getI64Type()), bytesOf<int64_t>({5, -1}));
  // Booleans are one byte each; any nonzero byte is true.
  addWeight("w.bool", mlir::RankedTensorType::get({3}, b.getI1Type()),
            std::string("\x01\x00\x02", 3));
  // i32 and f64 are held as i64 and f32.
  addWeight("w.i32", mlir::RankedTensorType::get({2}, b.getI32Type()), bytesOf<int32_t>({-7, 8}));
  addWeight("w.f64", mlir::RankedTensorType::get({1}, b.getF64Type()), bytesOf<double>({0.25}));
  auto results = run();
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 5u);
  expectF32((*results)[0], {2, 2}, {1, -2, 0.5, 3});
  expectI64((*results)[1], {2}, {5, -1});
  expectBool((*results)[2], {3}, {1, 0, 1});
  expectI64((*results)[3], {2}, {-7, 8});
  expectF32((*results)[4], {1}, {0.25});
}

TEST_F(WeightTest, SizeMismatchIsAnError) {
  mlir::Builder b(&context);
  addWeight("short", mlir::RankedTensorType::get({3}, b.getF32Type()), bytesOf<float>({1, 2}));
  auto results = run();
  ASSERT_FALSE(static_cast<bool>(results));
  std::string message = llvm::toString(results.takeError());
  EXPECT_THAT(message, HasSubstr("graph.weight at \"weights\""));
  EXPECT_THAT(message, HasSubstr("weight 'short' holds 8 bytes but [3] of f32 needs 12"));
}

TEST_F(WeightTest, UnsupportedElementTypeIsAnError) {
  // bf16/f16 weights are read (LowPrecisionTest); 8-bit floats are not.
  mlir::Builder b(&context);
  addWeight("fp8", mlir::RankedTensorType::get({1}, b.getType<mlir::Float8E4M3FNType>()),
            std::string(1, '\0'));
  auto results = run();
  ASSERT_FALSE(static_cast<bool>(results));
  EXPECT_THAT(llvm::toString(results.takeError()),
              HasSubstr("reference interpreter supports f32, i64, i1"));
}

} // namespace
