//===- ReductionTest.cpp - interpreter tests: reductions, norms, scans ----===//

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace infer::test;
using infer::interp::Tensor;

namespace {

Tensor matrix23() { return Tensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(Reduction, SumKeepDims) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
      %a = graph.constant dense<[1]> : tensor<1xi64>
      %0 = graph.reduce_sum %x axes(%a) {keepdims = true} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2x1xf32>
      return %0 : tensor<2x1xf32>
    })mlir",
                       {matrix23()});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 1}, {6, 15});
}

TEST(Reduction, MeanOverNegativeAxisWithoutKeepDims) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2xf32> {
      %a = graph.constant dense<[-1]> : tensor<1xi64>
      %0 = graph.reduce_mean %x axes(%a) {keepdims = false} : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    })mlir",
                       {matrix23()});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2}, {2, 5});
}

TEST(Reduction, MeanOverTwoNonAdjacentAxes) {
  // x[i][j][k] = 4i + 2j + k; the mean over i and k for j = 0 is
  // (0 + 1 + 4 + 5) / 4 and for j = 1 is (2 + 3 + 6 + 7) / 4.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x2x2xf32>) -> tensor<1x2x1xf32> {
      %a = graph.constant dense<[0, -1]> : tensor<2xi64>
      %0 = graph.reduce_mean %x axes(%a) : (tensor<2x2x2xf32>, tensor<2xi64>) -> tensor<1x2x1xf32>
      return %0 : tensor<1x2x1xf32>
    })mlir",
                       {Tensor::fromF32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1, 2, 1}, {2.5, 4.5});
}

TEST(Reduction, MaxWithoutAxesReducesEverything) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
      %0 = graph.reduce_max %x : (tensor<2x3xf32>) -> tensor<1x1xf32>
      return %0 : tensor<1x1xf32>
    })mlir",
                       {Tensor::fromF32({2, 3}, {1, -2, 9, 4, 5, -6})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1, 1}, {9});
}

TEST(Reduction, EmptyAxesReduceAllOrNothing) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>) {
      %a = graph.constant dense<> : tensor<0xi64>
      %0 = graph.reduce_sum %x axes(%a) {keepdims = false} : (tensor<2x3xf32>, tensor<0xi64>) -> tensor<f32>
      %1 = graph.reduce_sum %x axes(%a) {noop_with_empty_axes = true} : (tensor<2x3xf32>, tensor<0xi64>) -> tensor<2x3xf32>
      return %0, %1 : tensor<f32>, tensor<2x3xf32>
    })mlir",
                       {matrix23()});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {}, {21});
  expectF32(results[1], {2, 3}, {1, 2, 3, 4, 5, 6});
}

TEST(Reduction, SumOfI64) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xi64>) -> (tensor<3xi64>, tensor<2xi64>) {
      %a = graph.constant dense<[0]> : tensor<1xi64>
      %0 = graph.reduce_sum %x axes(%a) {keepdims = false} : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<3xi64>
      %b = graph.constant dense<[1]> : tensor<1xi64>
      %1 = graph.reduce_max %x axes(%b) {keepdims = false} : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2xi64>
      return %0, %1 : tensor<3xi64>, tensor<2xi64>
    })mlir",
                       {Tensor::fromI64({2, 3}, {1, 2, 3, 4, 5, -6})});
  ASSERT_EQ(results.size(), 2u);
  expectI64(results[0], {3}, {5, 7, -3});
  expectI64(results[1], {2}, {3, 5});
}

TEST(Reduction, OverZeroSizedDimGivesIdentity) {
  // Sum over nothing is 0, Max is -inf, Mean is NaN (0 / 0).
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x0xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
      %a = graph.constant dense<[1]> : tensor<1xi64>
      %0 = graph.reduce_sum %x axes(%a) {keepdims = false} : (tensor<2x0xf32>, tensor<1xi64>) -> tensor<2xf32>
      %1 = graph.reduce_max %x axes(%a) {keepdims = false} : (tensor<2x0xf32>, tensor<1xi64>) -> tensor<2xf32>
      %2 = graph.reduce_mean %x axes(%a) {keepdims = false} : (tensor<2x0xf32>, tensor<1xi64>) -> tensor<2xf32>
      return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
    })mlir",
                       {Tensor::fromF32({2, 0}, {})});
  ASSERT_EQ(results.size(), 3u);
  float inf = std::numeric_limits<float>::infinity();
  float nan = std::numeric_limits<float>::quiet_NaN();
  expectF32(results[0], {2}, {0, 0});
  expectF32(results[1], {2}, {-inf, -inf});
  expectF32(results[2], {2}, {nan, nan});
}

TEST(Reduction, SoftmaxSubtractsTheMax) {
  // softmax([1, 2, 3]) = e^(x - 3) / (e^-2 + e^-1 + 1); a row of 1000s would
  // overflow exp without the max subtraction and must give 1/3 each.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = graph.softmax %x {axis = 1 : i64} : tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
                       {Tensor::fromF32({2, 3}, {1, 2, 3, 1000, 1000, 1000})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 3},
            {0.09003057f, 0.24472847f, 0.66524096f, 1.0f / 3, 1.0f / 3, 1.0f / 3});
}

TEST(Reduction, SoftmaxOnOuterAxis) {
  // Along axis 0: [0, ln 3] -> [1/4, 3/4] in each column.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
      %0 = graph.softmax %x {axis = 0 : i64} : tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {Tensor::fromF32({2, 2}, {0, 5, 1.09861229f, 5})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {0.25, 0.5, 0.75, 0.5});
}

TEST(Reduction, LayerNormWithBias) {
  // Row [1, 2, 3]: mean 2, variance 2/3, so the normalised row is
  // [-1, 0, 1] / sqrt(2/3 + 1e-5) = [-1.22473569, 0, 1.22473569].
  // Row [4, 4, 4] normalises to zeros, leaving the bias.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
      %0 = graph.layer_normalization %x, %s bias(%b) {axis = 1 : i64, epsilon = 1.0e-05 : f32}
          : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })mlir",
                       {Tensor::fromF32({2, 3}, {1, 2, 3, 4, 4, 4}),
                        Tensor::fromF32({3}, {1, 2, 1}), Tensor::fromF32({3}, {0.5, 1, -0.5})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 3}, {-0.72473569f, 1, 0.72473569f, 0.5, 1, -0.5});
}

TEST(Reduction, LayerNormOverTwoAxesWithoutBias) {
  // [1, 3, 5, 7]: mean 4, variance 5; (x - 4) / sqrt 5, last element scaled by 2.
  auto results =
      runOk(R"mlir(
    func.func @main(%x: tensor<1x2x2xf32>, %s: tensor<2x2xf32>) -> tensor<1x2x2xf32> {
      %0 = graph.layer_normalization %x, %s {axis = 1 : i64, epsilon = 0.0 : f32}
          : (tensor<1x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2xf32>
      return %0 : tensor<1x2x2xf32>
    })mlir",
            {Tensor::fromF32({1, 2, 2}, {1, 3, 5, 7}), Tensor::fromF32({2, 2}, {1, 1, 1, 2})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1, 2, 2}, {-1.34164079f, -0.44721360f, 0.44721360f, 2.68328157f});
}

TEST(Reduction, CumSumFlags) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
      %a = graph.constant dense<0> : tensor<i64>
      %0 = graph.cumsum %x, %a : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
      %1 = graph.cumsum %x, %a {exclusive = true} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
      %2 = graph.cumsum %x, %a {reverse = true} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
      %3 = graph.cumsum %x, %a {exclusive = true, reverse = true} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32>
      return %0, %1, %2, %3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
    })mlir",
                       {Tensor::fromF32({4}, {1, 2, 3, 4})});
  ASSERT_EQ(results.size(), 4u);
  expectF32(results[0], {4}, {1, 3, 6, 10});
  expectF32(results[1], {4}, {0, 1, 3, 6});
  expectF32(results[2], {4}, {10, 9, 7, 4});
  expectF32(results[3], {4}, {9, 7, 4, 0});
}

TEST(Reduction, CumSumI64AlongNegativeAxis) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3xi64>, %a: tensor<1xi64>) -> tensor<2x3xi64> {
      %0 = graph.cumsum %x, %a : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2x3xi64>
      return %0 : tensor<2x3xi64>
    })mlir",
                       {Tensor::fromI64({2, 3}, {1, 2, 3, 4, 5, 6}), Tensor::fromI64({1}, {-1})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {2, 3}, {1, 3, 6, 4, 9, 15});
}

} // namespace
