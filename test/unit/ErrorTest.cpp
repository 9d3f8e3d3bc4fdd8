//===- ErrorTest.cpp - interpreter tests: bad input gives errors ----------===//
//
// Every case here must come back as an llvm::Error naming the op (and its
// location when it has one) instead of crashing or returning garbage.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "dialects/graph/Interpreter/Interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace infer::test;
using infer::interp::DType;
using infer::interp::Tensor;
using ::testing::HasSubstr;

namespace {

constexpr const char *kAdd = R"mlir(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = graph.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir";

TEST(Errors, WrongInputCount) {
  std::string message = runError(kAdd, {Tensor::fromF32({2}, {1, 2})});
  EXPECT_THAT(message, HasSubstr("function 'main' takes 2 inputs but was given 1"));
}

TEST(Errors, InputDTypeAndShapeMismatch) {
  std::string dtype = runError(kAdd, {Tensor::fromI64({2}, {1, 2}), Tensor::fromF32({2}, {1, 2})});
  EXPECT_THAT(dtype, HasSubstr("input 0 is i64[2], which does not match its type tensor<2xf32>"));
  std::string shape =
      runError(kAdd, {Tensor::fromF32({2}, {1, 2}), Tensor::fromF32({3}, {1, 2, 3})});
  EXPECT_THAT(shape, HasSubstr("input 1 is f32[3], which does not match its type tensor<2xf32>"));
}

TEST(Errors, BroadcastMismatchNamesTheOpAndLocation) {
  std::string message = runError(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<?x?xf32> {
      %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<?x?xf32> loc("/model/Add_7")
      return %0 : tensor<?x?xf32>
    })mlir",
                                 {Tensor(DType::F32, {2, 3}), Tensor(DType::F32, {2})});
  EXPECT_THAT(message, HasSubstr("graph.add at \"/model/Add_7\": shapes [2, 3] and [2] are not "
                                 "broadcast-compatible"));
}

TEST(Errors, GatherIndexOutOfRange) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<3x2xf32>, %i: tensor<2xi64>) -> tensor<2x2xf32> {
      %0 = graph.gather %x, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                                 {Tensor(DType::F32, {3, 2}), Tensor::fromI64({2}, {0, -4})});
  EXPECT_THAT(message, HasSubstr("graph.gather"));
  EXPECT_THAT(message, HasSubstr("index -4 is out of range for axis 0 of size 3"));
}

TEST(Errors, GatherNDIndexOutOfRange) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2x2xf32>, %i: tensor<1x2xi64>) -> tensor<1xf32> {
      %0 = graph.gather_nd %x, %i : (tensor<2x2xf32>, tensor<1x2xi64>) -> tensor<1xf32>
      return %0 : tensor<1xf32>
    })mlir",
                                 {Tensor(DType::F32, {2, 2}), Tensor::fromI64({1, 2}, {0, 2})});
  EXPECT_THAT(message, HasSubstr("index 2 is out of range for data dim 1 of size 2"));
}

TEST(Errors, ReshapeSizeMismatch) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
      %s = graph.constant dense<[4, 2]> : tensor<2xi64>
      %0 = graph.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir",
                                 {Tensor(DType::F32, {2, 3})});
  EXPECT_THAT(message, HasSubstr("graph.reshape"));
  EXPECT_THAT(message, HasSubstr("cannot reshape [2, 3] (6 elements) to [4, 2] (8 elements)"));
}

TEST(Errors, ReshapeZeroWithoutAllowZeroCopiesTheDim) {
  // Without allowzero, [0, 4] on a [4, 0] input means [4, 4]: 16 != 0 elements.
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<4x0xf32>) -> tensor<?x?xf32> {
      %s = graph.constant dense<[0, 4]> : tensor<2xi64>
      %0 = graph.reshape %x, %s : (tensor<4x0xf32>, tensor<2xi64>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir",
                                 {Tensor(DType::F32, {4, 0})});
  EXPECT_THAT(message, HasSubstr("cannot reshape [4, 0] (0 elements) to [0, 4] (16 elements)"));
}

TEST(Errors, IntegerDivisionByZero) {
  std::string message = runError(R"mlir(
    func.func @main(%a: tensor<2xi64>, %b: tensor<2xi64>) -> tensor<2xi64> {
      %0 = graph.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
      return %0 : tensor<2xi64>
    })mlir",
                                 {Tensor::fromI64({2}, {1, 2}), Tensor::fromI64({2}, {1, 0})});
  EXPECT_THAT(message, HasSubstr("graph.div"));
  EXPECT_THAT(message, HasSubstr("integer division by zero"));
}

TEST(Errors, ResultContradictsDeclaredType) {
  // An importer bug: the declared result shape disagrees with the data.
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
      %s = graph.constant dense<[2, 3]> : tensor<2xi64>
      %0 = graph.reshape %x, %s : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<3x2xf32> loc("bad_reshape")
      return %0 : tensor<3x2xf32>
    })mlir",
                                 {Tensor(DType::F32, {2, 3})});
  EXPECT_THAT(message, HasSubstr("graph.reshape at \"bad_reshape\": result 0 is f32[2, 3], which "
                                 "does not match its type tensor<3x2xf32>"));
}

TEST(Errors, UnsupportedElementTypes) {
  std::string input = runError(R"mlir(
    func.func @main(%x: tensor<2xi8>) -> tensor<2xi8> {
      return %x : tensor<2xi8>
    })mlir",
                               {Tensor(DType::I64, {2})});
  EXPECT_THAT(input, HasSubstr("reference interpreter supports f32, i64, i1"));
  EXPECT_THAT(input, HasSubstr("got i8"));
  std::string constant = runError(R"mlir(
    func.func @main() -> tensor<2xf8E4M3FN> {
      %0 = graph.constant dense<1.0> : tensor<2xf8E4M3FN>
      return %0 : tensor<2xf8E4M3FN>
    })mlir");
  EXPECT_THAT(constant, HasSubstr("graph.constant"));
  EXPECT_THAT(constant, HasSubstr("reference interpreter supports f32, i64, i1"));
}

TEST(Errors, SplitSizesMustSumToTheDim) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<5xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
      %s = graph.constant dense<[2, 2]> : tensor<2xi64>
      %0:2 = graph.split %x split(%s) {axis = 0 : i64} : (tensor<5xf32>, tensor<2xi64>) -> (tensor<?xf32>, tensor<?xf32>)
      return %0#0, %0#1 : tensor<?xf32>, tensor<?xf32>
    })mlir",
                                 {Tensor(DType::F32, {5})});
  EXPECT_THAT(message, HasSubstr("split sizes [2, 2] sum to 4 but axis 0 of [5] has size 5"));
  // Sizes whose sum overflows int64 (fuzz round 21: UBSan signed overflow).
  std::string huge = runError(R"mlir(
    func.func @main(%x: tensor<5xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
      %s = graph.constant dense<[3, 9223372036854775807]> : tensor<2xi64>
      %0:2 = graph.split %x split(%s) {axis = 0 : i64} : (tensor<5xf32>, tensor<2xi64>) -> (tensor<?xf32>, tensor<?xf32>)
      return %0#0, %0#1 : tensor<?xf32>, tensor<?xf32>
    })mlir",
                              {Tensor(DType::F32, {5})});
  EXPECT_THAT(huge,
              HasSubstr("split sizes [3, 9223372036854775807] sum past axis 0 of [5] (size 5)"));
}

TEST(Errors, SliceStepZeroAndAxisOutOfRange) {
  constexpr const char *source = R"mlir(
    func.func @main(%x: tensor<4xf32>, %t: tensor<1xi64>, %a: tensor<1xi64>) -> tensor<?xf32> {
      %s = graph.constant dense<[0]> : tensor<1xi64>
      %e = graph.constant dense<[4]> : tensor<1xi64>
      %0 = graph.slice %x, %s, %e, %a, %t
          : (tensor<4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir";
  std::string step = runError(
      source, {Tensor(DType::F32, {4}), Tensor::fromI64({1}, {0}), Tensor::fromI64({1}, {0})});
  EXPECT_THAT(step, HasSubstr("slice step for axis 0 is 0"));
  std::string axis = runError(
      source, {Tensor(DType::F32, {4}), Tensor::fromI64({1}, {1}), Tensor::fromI64({1}, {-2})});
  EXPECT_THAT(axis, HasSubstr("axis -2 is out of range for rank 1"));
}

TEST(Errors, MatMulContractionMismatch) {
  std::string message = runError(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<?x?xf32> {
      %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir",
                                 {Tensor(DType::F32, {2, 3}), Tensor(DType::F32, {2, 2})});
  EXPECT_THAT(message, HasSubstr("cannot multiply [2, 3] by [2, 2]"));
}

TEST(Errors, SqueezeOfANonUnitDimAndDuplicateUnsqueezeAxes) {
  std::string squeeze = runError(R"mlir(
    func.func @main(%x: tensor<2x1xf32>) -> tensor<?xf32> {
      %a = graph.constant dense<[0]> : tensor<1xi64>
      %0 = graph.squeeze %x axes(%a) : (tensor<2x1xf32>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir",
                                 {Tensor(DType::F32, {2, 1})});
  EXPECT_THAT(squeeze, HasSubstr("cannot squeeze axis 0 of [2, 1]: its size is not 1"));
  std::string unsqueeze = runError(R"mlir(
    func.func @main(%x: tensor<2xf32>, %a: tensor<2xi64>) -> tensor<?x?x?xf32> {
      %0 = graph.unsqueeze %x, %a : (tensor<2xf32>, tensor<2xi64>) -> tensor<?x?x?xf32>
      return %0 : tensor<?x?x?xf32>
    })mlir",
                                   {Tensor(DType::F32, {2}), Tensor::fromI64({2}, {0, -3})});
  EXPECT_THAT(unsqueeze, HasSubstr("axis -3 appears twice"));
}

TEST(Errors, ConcatDimMismatchAndExpandIncompatible) {
  std::string concat = runError(R"mlir(
    func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x3xf32>) -> tensor<?x?xf32> {
      %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir",
                                {Tensor(DType::F32, {2, 2}), Tensor(DType::F32, {2, 3})});
  EXPECT_THAT(concat, HasSubstr("cannot concatenate f32[2, 3] with f32[2, 2] along axis 0"));
  std::string expand = runError(R"mlir(
    func.func @main(%x: tensor<3xf32>) -> tensor<?xf32> {
      %s = graph.constant dense<[4]> : tensor<1xi64>
      %0 = graph.expand %x, %s : (tensor<3xf32>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir",
                                {Tensor(DType::F32, {3})});
  EXPECT_THAT(expand, HasSubstr("shapes [3] and [4] are not broadcast-compatible"));
}

TEST(Errors, RangeWithZeroDeltaAndHugeConstantOfShape) {
  std::string range = runError(R"mlir(
    func.func @main() -> tensor<?xi64> {
      %a = graph.constant dense<0> : tensor<i64>
      %b = graph.constant dense<5> : tensor<i64>
      %c = graph.constant dense<0> : tensor<i64>
      %0 = graph.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
      return %0 : tensor<?xi64>
    })mlir");
  EXPECT_THAT(range, HasSubstr("delta is 0"));
  std::string huge = runError(R"mlir(
    func.func @main() -> tensor<?x?xf32> {
      %s = graph.constant dense<[4611686018427387904, 4]> : tensor<2xi64>
      %0 = graph.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<2xi64>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir");
  EXPECT_THAT(huge, HasSubstr("elements"));
  std::string negative = runError(R"mlir(
    func.func @main() -> tensor<?xf32> {
      %s = graph.constant dense<[-2]> : tensor<1xi64>
      %0 = graph.constant_of_shape %s {value = dense<0.0> : tensor<1xf32>} : (tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir");
  EXPECT_THAT(negative, HasSubstr("shape [-2] has a negative dim"));
}

TEST(Errors, EinsumLabelSizeMismatchAndCumSumAxis) {
  std::string einsum = runError(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x2xf32>) -> tensor<?x?xf32> {
      %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<2x2xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir",
                                {Tensor(DType::F32, {2, 3}), Tensor(DType::F32, {2, 2})});
  EXPECT_THAT(einsum, HasSubstr("label 'j' has sizes 3 and 2"));
  std::string cumsum = runError(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %a = graph.constant dense<1> : tensor<i64>
      %0 = graph.cumsum %x, %a : (tensor<2xf32>, tensor<i64>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir",
                                {Tensor(DType::F32, {2})});
  EXPECT_THAT(cumsum, HasSubstr("axis 1 is out of range for rank 1"));
}

TEST(Errors, FloatOnlyOpsRejectIntegers) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2xi64>) -> tensor<2xi64> {
      %0 = graph.exp %x : (tensor<2xi64>) -> tensor<2xi64>
      return %0 : tensor<2xi64>
    })mlir",
                                 {Tensor::fromI64({2}, {1, 2})});
  EXPECT_THAT(message, HasSubstr("graph.exp"));
  EXPECT_THAT(message, HasSubstr("Exp input must be f32, got i64"));
}

} // namespace

namespace {

constexpr const char *kRange = R"mlir(
    func.func @main(%limit: tensor<i64>) -> tensor<?xi64> {
      %zero = graph.constant dense<0> : tensor<i64>
      %one = graph.constant dense<1> : tensor<i64>
      %0 = graph.range %zero, %limit, %one : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
      return %0 : tensor<?xi64>
    })mlir";

TEST(Errors, ScopedElementLimitCapsDataShapedTensors) {
  // The raising passes' proofs cap what values may size (the onnx-import
  // fuzzer's Range of a huge constant allocated gigabytes); outside the
  // scope the interpreter's own bound holds again.
  {
    infer::interp::ScopedElementLimit limit(1000);
    std::string message = runError(kRange, {Tensor::fromI64({}, {1001})});
    EXPECT_THAT(message, HasSubstr("has more than 1000 elements"));
    infer::interp::ScopedElementLimit wider(1 << 20); // nested: the smaller cap stays
    EXPECT_THAT(runError(kRange, {Tensor::fromI64({}, {1001})}), HasSubstr("more than 1000"));
  }
  std::vector<Tensor> out = runOk(kRange, {Tensor::fromI64({}, {1001})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].numElements(), 1001);
}

// Results larger than any operand: a broadcast and a gather.
constexpr const char *kBroadcastCompare = R"mlir(
    func.func @main(%a: tensor<?x1xi64>, %b: tensor<1x?xi64>) -> tensor<?x?xi1> {
      %0 = graph.less_or_equal %a, %b : (tensor<?x1xi64>, tensor<1x?xi64>) -> tensor<?x?xi1>
      return %0 : tensor<?x?xi1>
    })mlir";
constexpr const char *kGatherRows = R"mlir(
    func.func @main(%t: tensor<2x?xf32>, %i: tensor<?xi64>) -> tensor<?x?xf32> {
      %0 = graph.gather %t, %i {axis = 0 : i64} : (tensor<2x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir";

TEST(Errors, ScopedElementLimitCapsResultsLargerThanOperands) {
  // The onnx-import fuzzer's LessOrEqual of two broadcast operands in a
  // rotary proof asked for a 3.4 TB result: the cap applies to every result
  // built larger than its operands, not only to shapes read from values.
  Tensor a(DType::I64, {100, 1}), b(DType::I64, {1, 100});
  Tensor table(DType::F32, {2, 100}), ids(DType::I64, {100});
  {
    infer::interp::ScopedElementLimit limit(1000);
    EXPECT_THAT(runError(kBroadcastCompare, {a, b}), HasSubstr("has more than 1000 elements"));
    EXPECT_THAT(runError(kGatherRows, {table, ids}), HasSubstr("has more than 1000 elements"));
  }
  std::vector<Tensor> out = runOk(kBroadcastCompare, {a, b});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].numElements(), 10000);
  EXPECT_EQ(runOk(kGatherRows, {table, ids})[0].numElements(), 10000);
}

} // namespace

namespace {

// Three ops of 1,000 elements each: 3,000 computed elements in all.
constexpr const char *kThreeOps = R"mlir(
    func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {
      %0 = graph.exp %x : (tensor<1000xf32>) -> tensor<1000xf32>
      %1 = graph.neg %0 : (tensor<1000xf32>) -> tensor<1000xf32>
      %2 = graph.exp %1 : (tensor<1000xf32>) -> tensor<1000xf32>
      return %2 : tensor<1000xf32>
    })mlir";

TEST(Errors, ScopedWorkLimitBoundsTheSumOfResults) {
  // Each value of a proof is small enough, but their sum must be bounded too
  // (a mutated model's proof computed sin over 2^28 values for minutes).
  Tensor x(DType::F32, {1000});
  {
    infer::interp::ScopedWorkLimit work(2999);
    std::string message = runError(kThreeOps, {x});
    EXPECT_THAT(message, HasSubstr("graph.exp"));
    EXPECT_THAT(message, HasSubstr("passed its bound on computed elements"));
  }
  {
    infer::interp::ScopedWorkLimit work(4500);
    EXPECT_EQ(runOk(kThreeOps, {x}).size(), 1u); // 3,000 spent, 1,500 left
    {
      infer::interp::ScopedWorkLimit inner(1 << 20); // nested: the outer remainder stays
      EXPECT_THAT(runError(kThreeOps, {x}), HasSubstr("passed its bound"));
    }
    // The inner scope's spending was charged here: nothing is left.
    EXPECT_THAT(runError(kThreeOps, {x}), HasSubstr("passed its bound"));
  }
  EXPECT_EQ(runOk(kThreeOps, {x}).size(), 1u); // no bound outside a scope
}

} // namespace

namespace {

TEST(Errors, SliceStepsAtTheInt64BoundsTakeOneElement) {
  // Steps of INT64_MAX / INT64_MIN (the fuzz corpus's overflow-slice-step-int64-max) take
  // the first element they reach; the sizes and strides must not overflow on the way.
  constexpr const char *kForward = R"mlir(
    func.func @main(%x: tensor<2x8xi64>) -> tensor<2x?xi64> {
      %start = graph.constant dense<1> : tensor<1xi64>
      %end = graph.constant dense<9223372036854775807> : tensor<1xi64>
      %axes = graph.constant dense<1> : tensor<1xi64>
      %0 = graph.slice %x, %start, %end, %axes, %end : (tensor<2x8xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xi64>
      return %0 : tensor<2x?xi64>
    })mlir";
  constexpr const char *kBackward = R"mlir(
    func.func @main(%x: tensor<2x8xi64>) -> tensor<2x?xi64> {
      %start = graph.constant dense<6> : tensor<1xi64>
      %end = graph.constant dense<-9223372036854775808> : tensor<1xi64>
      %axes = graph.constant dense<1> : tensor<1xi64>
      %0 = graph.slice %x, %start, %end, %axes, %end : (tensor<2x8xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xi64>
      return %0 : tensor<2x?xi64>
    })mlir";
  std::vector<int64_t> values(16);
  for (int64_t i = 0; i < 16; ++i)
    values[size_t(i)] = 100 + i;
  Tensor x = Tensor::fromI64({2, 8}, values);
  std::vector<Tensor> forward = runOk(kForward, {x});
  ASSERT_EQ(forward.size(), 1u);
  ASSERT_EQ(forward[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(forward[0].i64()[0], 101);
  EXPECT_EQ(forward[0].i64()[1], 109);
  std::vector<Tensor> backward = runOk(kBackward, {x});
  ASSERT_EQ(backward.size(), 1u);
  ASSERT_EQ(backward[0].shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(backward[0].i64()[0], 106);
  EXPECT_EQ(backward[0].i64()[1], 114);
}

} // namespace

namespace {

TEST(Errors, ScopedWorkLimitChargesSinAndCosMore) {
  // sin and cos of large arguments are slow (a range reduction per element):
  // 1,000 of them cost 16,000 against the bound.
  constexpr const char *kSin = R"mlir(
    func.func @main(%x: tensor<1000xf32>) -> tensor<1000xf32> {
      %0 = graph.sin %x : (tensor<1000xf32>) -> tensor<1000xf32>
      return %0 : tensor<1000xf32>
    })mlir";
  Tensor x(DType::F32, {1000});
  {
    infer::interp::ScopedWorkLimit work(15999);
    EXPECT_THAT(runError(kSin, {x}), HasSubstr("passed its bound on computed elements"));
  }
  infer::interp::ScopedWorkLimit work(16000);
  EXPECT_EQ(runOk(kSin, {x}).size(), 1u);
}

} // namespace
