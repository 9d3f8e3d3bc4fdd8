//===- ElementwiseTest.cpp - interpreter tests: elementwise ops -----------===//
//
// Expected values are worked out by hand (or are textbook values of erf,
// tanh, exp) and written out; f32 results are compared within kTolerance.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace infer::test;
using infer::interp::Tensor;

namespace {

TEST(Elementwise, AddBroadcastsScalar) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x2xf32>, %b: tensor<f32>) -> tensor<2x2xf32> {
      %0 = graph.add %a, %b : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {Tensor::fromF32({2, 2}, {1, 2, 3, 4}), Tensor::fromF32({}, {10})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {11, 12, 13, 14});
}

TEST(Elementwise, AddBroadcastsRow) {
  auto results =
      runOk(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
            {Tensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::fromF32({3}, {10, 20, 30})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 3}, {11, 22, 33, 14, 25, 36});
}

TEST(Elementwise, MulBroadcastsColumn) {
  auto results =
      runOk(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x3xf32> {
      %0 = graph.mul %a, %b : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
            {Tensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::fromF32({2, 1}, {2, -1})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 3}, {2, 4, 6, -4, -5, -6});
}

TEST(Elementwise, SubBroadcastsBothSides) {
  // [2,1] - [1,3] -> [2,3]: out[i][j] = a[i] - b[j].
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x1xf32>, %b: tensor<1x3xf32>) -> tensor<2x3xf32> {
      %0 = graph.sub %a, %b : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
                       {Tensor::fromF32({2, 1}, {10, 20}), Tensor::fromF32({1, 3}, {1, 2, 3})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 3}, {9, 8, 7, 19, 18, 17});
}

TEST(Elementwise, AddExtendsRank) {
  // [2,1,2] + [3,1] -> [2,3,2]: out[i][j][k] = a[i][0][k] + b[j][0].
  auto results =
      runOk(R"mlir(
    func.func @main(%a: tensor<2x1x2xi64>, %b: tensor<3x1xi64>) -> tensor<?x?x?xi64> {
      %0 = graph.add %a, %b : (tensor<2x1x2xi64>, tensor<3x1xi64>) -> tensor<?x?x?xi64>
      return %0 : tensor<?x?x?xi64>
    })mlir",
            {Tensor::fromI64({2, 1, 2}, {1, 2, 3, 4}), Tensor::fromI64({3, 1}, {0, 10, 100})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {2, 3, 2}, {1, 2, 11, 12, 101, 102, 3, 4, 13, 14, 103, 104});
}

TEST(Elementwise, AddWithZeroSizedDim) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<0x3xf32>, %b: tensor<3xf32>) -> tensor<0x3xf32> {
      %0 = graph.add %a, %b : (tensor<0x3xf32>, tensor<3xf32>) -> tensor<0x3xf32>
      return %0 : tensor<0x3xf32>
    })mlir",
                       {Tensor::fromF32({0, 3}, {}), Tensor::fromF32({3}, {1, 2, 3})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {0, 3}, {});
}

TEST(Elementwise, IntegerDivisionTruncatesTowardZero) {
  auto results =
      runOk(R"mlir(
    func.func @main(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {
      %0 = graph.div %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
      return %0 : tensor<4xi64>
    })mlir",
            {Tensor::fromI64({4}, {7, -7, 7, -7}), Tensor::fromI64({4}, {2, 2, -2, -2})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {4}, {3, -3, -3, 3});
}

TEST(Elementwise, PowWithFloatAndIntegerExponents) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<3xf32>, %e: tensor<i64>, %f: tensor<3xf32>)
        -> (tensor<3xf32>, tensor<3xf32>) {
      %0 = graph.pow %a, %e : (tensor<3xf32>, tensor<i64>) -> tensor<3xf32>
      %1 = graph.pow %a, %f : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
      return %0, %1 : tensor<3xf32>, tensor<3xf32>
    })mlir",
                       {Tensor::fromF32({3}, {2, -3, 0.5}), Tensor::fromI64({}, {3}),
                        Tensor::fromF32({3}, {0.5, 2, -1})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {3}, {8, -27, 0.125});
  expectF32(results[1], {3}, {1.41421356f, 9, 2});
}

TEST(Elementwise, MaxAndMin) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<3xi64>, %b: tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>) {
      %0 = graph.max %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
      %1 = graph.min %a, %b : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
      return %0, %1 : tensor<3xi64>, tensor<3xi64>
    })mlir",
                       {Tensor::fromI64({3}, {1, 5, -2}), Tensor::fromI64({3}, {4, 5, -3})});
  ASSERT_EQ(results.size(), 2u);
  expectI64(results[0], {3}, {4, 5, -2});
  expectI64(results[1], {3}, {1, 5, -3});
}

TEST(Elementwise, ComparisonsOnF32AndI64) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<3xf32>, %b: tensor<f32>, %c: tensor<3xi64>, %d: tensor<3xi64>)
        -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
      %0 = graph.less %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
      %1 = graph.greater_or_equal %a, %b : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
      %2 = graph.equal %c, %d : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
      %3 = graph.less_or_equal %c, %d : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
      %4 = graph.greater %c, %d : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi1>
      return %0, %1, %2, %3, %4 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
    })mlir",
                       {Tensor::fromF32({3}, {1, 2, 3}), Tensor::fromF32({}, {2}),
                        Tensor::fromI64({3}, {1, 2, 3}), Tensor::fromI64({3}, {3, 2, 1})});
  ASSERT_EQ(results.size(), 5u);
  expectBool(results[0], {3}, {1, 0, 0});
  expectBool(results[1], {3}, {0, 1, 1});
  expectBool(results[2], {3}, {0, 1, 0});
  expectBool(results[3], {3}, {1, 1, 0});
  expectBool(results[4], {3}, {0, 0, 1});
}

TEST(Elementwise, AndOrNot) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<4xi1>, %b: tensor<4xi1>) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {
      %0 = graph.and %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
      %1 = graph.or %a, %b : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
      %2 = graph.not %a : (tensor<4xi1>) -> tensor<4xi1>
      return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
    })mlir",
                       {Tensor::fromBool({4}, {0, 0, 1, 1}), Tensor::fromBool({4}, {0, 1, 0, 1})});
  ASSERT_EQ(results.size(), 3u);
  expectBool(results[0], {4}, {0, 0, 0, 1});
  expectBool(results[1], {4}, {0, 1, 1, 1});
  expectBool(results[2], {4}, {1, 1, 0, 0});
}

TEST(Elementwise, WhereBroadcastsAllThreeOperands) {
  // cond [2,1], x scalar, y [1,3] -> [2,3].
  auto results = runOk(R"mlir(
    func.func @main(%c: tensor<2x1xi1>, %x: tensor<f32>, %y: tensor<1x3xf32>) -> tensor<?x?xf32> {
      %0 = graph.where %c, %x, %y : (tensor<2x1xi1>, tensor<f32>, tensor<1x3xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    })mlir",
                       {Tensor::fromBool({2, 1}, {1, 0}), Tensor::fromF32({}, {-1}),
                        Tensor::fromF32({1, 3}, {1, 2, 3})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 3}, {-1, -1, -1, 1, 2, 3});
}

TEST(Elementwise, CastRoundsAndTruncates) {
  auto results = runOk(R"mlir(
    func.func @main(%f: tensor<5xf32>, %i: tensor<2xi64>, %b: tensor<2xi1>)
        -> (tensor<5xi64>, tensor<5xi1>, tensor<2xf32>, tensor<2xf32>, tensor<2xi64>) {
      %0 = graph.cast %f : (tensor<5xf32>) -> tensor<5xi64>
      %1 = graph.cast %f : (tensor<5xf32>) -> tensor<5xi1>
      %2 = graph.cast %i : (tensor<2xi64>) -> tensor<2xf32>
      %3 = graph.cast %b : (tensor<2xi1>) -> tensor<2xf32>
      %4 = graph.cast %b : (tensor<2xi1>) -> tensor<2xi64>
      return %0, %1, %2, %3, %4 : tensor<5xi64>, tensor<5xi1>, tensor<2xf32>, tensor<2xf32>, tensor<2xi64>
    })mlir",
                       {Tensor::fromF32({5}, {2.7f, -2.7f, 0.5f, -0.0f, 3.0f}),
                        Tensor::fromI64({2}, {16777217, -5}), Tensor::fromBool({2}, {1, 0})});
  ASSERT_EQ(results.size(), 5u);
  expectI64(results[0], {5}, {2, -2, 0, 0, 3});
  expectBool(results[1], {5}, {1, 1, 1, 0, 1});
  // 2^24 + 1 is not representable in f32; it rounds to 2^24.
  expectF32(results[2], {2}, {16777216.0f, -5});
  expectF32(results[3], {2}, {1, 0});
  expectI64(results[4], {2}, {1, 0});
}

TEST(Elementwise, ClipWithBothAndOneBound) {
  auto results = runOk(
      R"mlir(
    func.func @main(%x: tensor<4xf32>, %lo: tensor<f32>, %hi: tensor<f32>)
        -> (tensor<4xf32>, tensor<4xf32>) {
      %0 = graph.clip %x min(%lo) max(%hi) : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<4xf32>
      %1 = graph.clip %x min(%lo) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      return %0, %1 : tensor<4xf32>, tensor<4xf32>
    })mlir",
      {Tensor::fromF32({4}, {-5, 0.5, 2, 9}), Tensor::fromF32({}, {0}), Tensor::fromF32({}, {1})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {4}, {0, 0.5, 1, 1});
  expectF32(results[1], {4}, {0, 0.5, 2, 9});
}

TEST(Elementwise, GeluExactAndTanh) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %0 = graph.gelu %x : (tensor<4xf32>) -> tensor<4xf32>
      %1 = graph.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
      return %0, %1 : tensor<4xf32>, tensor<4xf32>
    })mlir",
                       {Tensor::fromF32({4}, {-1, 0, 1, 2})});
  ASSERT_EQ(results.size(), 2u);
  // 0.5 x (1 + erf(x / sqrt 2)) with erf(1/sqrt 2) = 0.6826894921, erf(sqrt 2) = 0.9544997361.
  expectF32(results[0], {4}, {-0.15865525f, 0, 0.84134475f, 1.95449972f});
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  expectF32(results[1], {4}, {-0.15880801f, 0, 0.84119201f, 1.95459771f});
}

TEST(Elementwise, UnaryMath) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
        tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %0 = graph.sqrt %x : (tensor<2xf32>) -> tensor<2xf32>
      %1 = graph.reciprocal %x : (tensor<2xf32>) -> tensor<2xf32>
      %2 = graph.exp %x : (tensor<2xf32>) -> tensor<2xf32>
      %3 = graph.log %x : (tensor<2xf32>) -> tensor<2xf32>
      %4 = graph.sin %x : (tensor<2xf32>) -> tensor<2xf32>
      %5 = graph.cos %x : (tensor<2xf32>) -> tensor<2xf32>
      %6 = graph.tanh %x : (tensor<2xf32>) -> tensor<2xf32>
      return %0, %1, %2, %3, %4, %5, %6 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>,
          tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir",
                       {Tensor::fromF32({2}, {1, 4})});
  ASSERT_EQ(results.size(), 7u);
  expectF32(results[0], {2}, {1, 2});
  expectF32(results[1], {2}, {1, 0.25});
  expectF32(results[2], {2}, {2.71828183f, 54.5981500f});
  expectF32(results[3], {2}, {0, 1.38629436f});
  expectF32(results[4], {2}, {0.84147098f, -0.75680250f});
  expectF32(results[5], {2}, {0.54030231f, -0.65364362f});
  expectF32(results[6], {2}, {0.76159416f, 0.99932930f});
}

TEST(Elementwise, SignedUnaryOps) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3xf32>, %i: tensor<3xi64>) -> (tensor<3xf32>, tensor<3xf32>,
        tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xi64>) {
      %0 = graph.abs %x : (tensor<3xf32>) -> tensor<3xf32>
      %1 = graph.neg %x : (tensor<3xf32>) -> tensor<3xf32>
      %2 = graph.relu %x : (tensor<3xf32>) -> tensor<3xf32>
      %3 = graph.sigmoid %x : (tensor<3xf32>) -> tensor<3xf32>
      %4 = graph.erf %x : (tensor<3xf32>) -> tensor<3xf32>
      %5 = graph.abs %i : (tensor<3xi64>) -> tensor<3xi64>
      %6 = graph.neg %i : (tensor<3xi64>) -> tensor<3xi64>
      return %0, %1, %2, %3, %4, %5, %6 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>,
          tensor<3xf32>, tensor<3xf32>, tensor<3xi64>, tensor<3xi64>
    })mlir",
                       {Tensor::fromF32({3}, {-2, 0, 0.5}), Tensor::fromI64({3}, {-4, 0, 7})});
  ASSERT_EQ(results.size(), 7u);
  expectF32(results[0], {3}, {2, 0, 0.5});
  expectF32(results[1], {3}, {2, 0, -0.5});
  expectF32(results[2], {3}, {0, 0, 0.5});
  // 1 / (1 + e^2) = 0.1192029220, 1 / (1 + e^-0.5) = 0.6224593312.
  expectF32(results[3], {3}, {0.11920292f, 0.5f, 0.62245933f});
  expectF32(results[4], {3}, {-0.99532227f, 0, 0.52049988f});
  expectI64(results[5], {3}, {4, 0, 7});
  expectI64(results[6], {3}, {4, 0, -7});
}

TEST(Elementwise, IsNaNAndIdentity) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3xf32>, %i: tensor<2xi64>) -> (tensor<3xi1>, tensor<2xi64>) {
      %0 = graph.is_nan %x : (tensor<3xf32>) -> tensor<3xi1>
      %1 = graph.identity %i : (tensor<2xi64>) -> tensor<2xi64>
      return %0, %1 : tensor<3xi1>, tensor<2xi64>
    })mlir",
                       {Tensor::fromF32({3}, {1, nan, -INFINITY}), Tensor::fromI64({2}, {5, -6})});
  ASSERT_EQ(results.size(), 2u);
  expectBool(results[0], {3}, {0, 1, 0});
  expectI64(results[1], {2}, {5, -6});
}

TEST(Elementwise, ConstantsOfEveryKind) {
  // i32 and f64 constants are held as i64 and f32.
  auto results = runOk(R"mlir(
    func.func @main() -> (tensor<2x2xf32>, tensor<3xi64>, tensor<2xi1>, tensor<2xi32>, tensor<2xf64>) {
      %0 = graph.constant dense<1.5> : tensor<2x2xf32>
      %1 = graph.constant dense<[0, -1, 9223372036854775807]> : tensor<3xi64>
      %2 = graph.constant dense<[true, false]> : tensor<2xi1>
      %3 = graph.constant dense<[7, -8]> : tensor<2xi32>
      %4 = graph.constant dense<[0.25, -2.0]> : tensor<2xf64>
      return %0, %1, %2, %3, %4 : tensor<2x2xf32>, tensor<3xi64>, tensor<2xi1>, tensor<2xi32>, tensor<2xf64>
    })mlir");
  ASSERT_EQ(results.size(), 5u);
  expectF32(results[0], {2, 2}, {1.5, 1.5, 1.5, 1.5});
  expectI64(results[1], {3}, {0, -1, std::numeric_limits<int64_t>::max()});
  expectBool(results[2], {2}, {1, 0});
  expectI64(results[3], {2}, {7, -8});
  expectF32(results[4], {2}, {0.25, -2});
}

} // namespace
