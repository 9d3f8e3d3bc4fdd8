//===- ShapeTest.cpp - interpreter tests: shape and indexing ops ----------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace infer::test;
using infer::interp::Tensor;

namespace {

/// 0, 1, ..., n-1 as f32.
std::vector<float> iota(int64_t n) {
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i)
    values[i] = static_cast<float>(i);
  return values;
}

TEST(Shape, ShapeWithStartAndEnd) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
      %0 = graph.shape %x : (tensor<2x3x4xf32>) -> tensor<?xi64>
      %1 = graph.shape %x {start = -2 : i64} : (tensor<2x3x4xf32>) -> tensor<?xi64>
      %2 = graph.shape %x {start = 0 : i64, end = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<?xi64>
      %3 = graph.shape %x {start = 10 : i64} : (tensor<2x3x4xf32>) -> tensor<?xi64>
      return %0, %1, %2, %3 : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
    })mlir",
                       {Tensor(infer::interp::DType::F32, {2, 3, 4})});
  ASSERT_EQ(results.size(), 4u);
  expectI64(results[0], {3}, {2, 3, 4});
  expectI64(results[1], {2}, {3, 4});
  expectI64(results[2], {2}, {2, 3});
  expectI64(results[3], {0}, {});
}

TEST(Shape, IntegerShapeArithmeticChain) {
  // reshape(x, concat(unsqueeze(gather(shape(x), 0)), [-1])) flattens the
  // trailing dims: [2, 3, 2] -> [2, 6].
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<?x3x2xf32>) -> (tensor<?x?xf32>, tensor<2xi64>) {
      %s = graph.shape %x : (tensor<?x3x2xf32>) -> tensor<3xi64>
      %i = graph.constant dense<0> : tensor<i64>
      %d = graph.gather %s, %i {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
      %a = graph.constant dense<[0]> : tensor<1xi64>
      %u = graph.unsqueeze %d, %a : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
      %m = graph.constant dense<[-1]> : tensor<1xi64>
      %c = graph.concat %u, %m {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
      %r = graph.reshape %x, %c : (tensor<?x3x2xf32>, tensor<2xi64>) -> tensor<?x?xf32>
      return %r, %c : tensor<?x?xf32>, tensor<2xi64>
    })mlir",
                       {Tensor::fromF32({2, 3, 2}, iota(12))});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {2, 6}, iota(12));
  expectI64(results[1], {2}, {2, -1});
}

TEST(Shape, ReshapeCopiesZeroAndInfersMinusOne) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<2x12xf32>, tensor<4x3x2xf32>) {
      %s0 = graph.constant dense<[0, -1]> : tensor<2xi64>
      %0 = graph.reshape %x, %s0 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
      %s1 = graph.constant dense<[-1, 3, 2]> : tensor<3xi64>
      %1 = graph.reshape %x, %s1 : (tensor<2x3x4xf32>, tensor<3xi64>) -> tensor<4x3x2xf32>
      return %0, %1 : tensor<2x12xf32>, tensor<4x3x2xf32>
    })mlir",
                       {Tensor::fromF32({2, 3, 4}, iota(24))});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {2, 12}, iota(24));
  expectF32(results[1], {4, 3, 2}, iota(24));
}

TEST(Shape, ReshapeZeroWithAndWithoutAllowZero) {
  // With allowzero a 0 in the shape is a real zero-sized dim: [4, 0] -> [0, 4].
  // Without it a 0 copies the input dim: [0, 3] -> [0, 3] via shape [0, -1]
  // would be ambiguous, so use [0, 3].
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<4x0xf32>, %y: tensor<0x3xf32>) -> (tensor<0x4xf32>, tensor<?x?xf32>) {
      %s = graph.constant dense<[0, 4]> : tensor<2xi64>
      %0 = graph.reshape %x, %s {allowzero = true} : (tensor<4x0xf32>, tensor<2xi64>) -> tensor<0x4xf32>
      %t = graph.constant dense<[0, 3]> : tensor<2xi64>
      %1 = graph.reshape %y, %t : (tensor<0x3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
      return %0, %1 : tensor<0x4xf32>, tensor<?x?xf32>
    })mlir",
                       {Tensor::fromF32({4, 0}, {}), Tensor::fromF32({0, 3}, {})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {0, 4}, {});
  expectF32(results[1], {0, 3}, {});
}

TEST(Shape, ExpandBroadcastsBothWays) {
  // [3,1] expanded with [2,1,4] -> [2,3,4]; with [1] the input shape wins.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3x1xf32>) -> (tensor<?x?x?xf32>, tensor<3x1xf32>) {
      %s = graph.constant dense<[2, 1, 4]> : tensor<3xi64>
      %0 = graph.expand %x, %s : (tensor<3x1xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
      %t = graph.constant dense<[1]> : tensor<1xi64>
      %1 = graph.expand %x, %t : (tensor<3x1xf32>, tensor<1xi64>) -> tensor<3x1xf32>
      return %0, %1 : tensor<?x?x?xf32>, tensor<3x1xf32>
    })mlir",
                       {Tensor::fromF32({3, 1}, {1, 2, 3})});
  ASSERT_EQ(results.size(), 2u);
  std::vector<float> expected;
  for (int rep = 0; rep < 2; ++rep)
    for (float v : {1.0f, 2.0f, 3.0f})
      expected.insert(expected.end(), 4, v);
  expectF32(results[0], {2, 3, 4}, expected);
  expectF32(results[1], {3, 1}, {1, 2, 3});
}

TEST(Shape, Tile) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x2xi64>) -> tensor<?x?xi64> {
      %r = graph.constant dense<[2, 2]> : tensor<2xi64>
      %0 = graph.tile %x, %r : (tensor<2x2xi64>, tensor<2xi64>) -> tensor<?x?xi64>
      return %0 : tensor<?x?xi64>
    })mlir",
                       {Tensor::fromI64({2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {4, 4}, {1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4});
}

TEST(Shape, Flatten) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<1x24xf32>, tensor<6x4xf32>, tensor<24x1xf32>) {
      %0 = graph.flatten %x {axis = 0 : i64} : (tensor<2x3x4xf32>) -> tensor<1x24xf32>
      %1 = graph.flatten %x {axis = 2 : i64} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
      %2 = graph.flatten %x {axis = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<24x1xf32>
      return %0, %1, %2 : tensor<1x24xf32>, tensor<6x4xf32>, tensor<24x1xf32>
    })mlir",
                       {Tensor::fromF32({2, 3, 4}, iota(24))});
  ASSERT_EQ(results.size(), 3u);
  expectF32(results[0], {1, 24}, iota(24));
  expectF32(results[1], {6, 4}, iota(24));
  expectF32(results[2], {24, 1}, iota(24));
}

TEST(Shape, SqueezeAndUnsqueezeWithNegativeAxes) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x3x1xf32>) -> (tensor<1x3xf32>, tensor<3xf32>, tensor<1x3x1xf32>) {
      %a = graph.constant dense<[-1]> : tensor<1xi64>
      %0 = graph.squeeze %x axes(%a) : (tensor<1x3x1xf32>, tensor<1xi64>) -> tensor<1x3xf32>
      %1 = graph.squeeze %x : (tensor<1x3x1xf32>) -> tensor<3xf32>
      %b = graph.constant dense<[0, -1]> : tensor<2xi64>
      %2 = graph.unsqueeze %1, %b : (tensor<3xf32>, tensor<2xi64>) -> tensor<1x3x1xf32>
      return %0, %1, %2 : tensor<1x3xf32>, tensor<3xf32>, tensor<1x3x1xf32>
    })mlir",
                       {Tensor::fromF32({1, 3, 1}, {1, 2, 3})});
  ASSERT_EQ(results.size(), 3u);
  expectF32(results[0], {1, 3}, {1, 2, 3});
  expectF32(results[1], {3}, {1, 2, 3});
  expectF32(results[2], {1, 3, 1}, {1, 2, 3});
}

TEST(Shape, Transpose) {
  // out[i][j][k] = x[j][k][i] for perm [2, 0, 1] on x of shape [2, 3, 2].
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x2xi64>) -> tensor<2x2x3xi64> {
      %0 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x2xi64>) -> tensor<2x2x3xi64>
      return %0 : tensor<2x2x3xi64>
    })mlir",
                       {Tensor::fromI64({2, 3, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {2, 2, 3}, {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11});
}

TEST(Shape, TransposeLargeTiled) {
  // Past 2^16 elements a swap of the last two dims runs tile by tile in
  // parallel: every element where the definition puts it, at shapes that
  // are not multiples of the tile, for 8-, 4- and 1-byte elements.
  const int64_t batch = 3, rows = 130, cols = 197;
  std::vector<int64_t> values(size_t(batch * rows * cols));
  std::iota(values.begin(), values.end(), 0);
  std::vector<float> floats(values.begin(), values.end());
  auto results = runOk(
      R"mlir(
    func.func @main(%x: tensor<3x130x197xi64>, %y: tensor<3x130x197xf32>)
        -> (tensor<3x197x130xi64>, tensor<3x197x130xf32>, tensor<3x197x130xi1>, tensor<3x130x197xi1>) {
      %0 = graph.transpose %x {perm = array<i64: 0, 2, 1>} : (tensor<3x130x197xi64>) -> tensor<3x197x130xi64>
      %1 = graph.transpose %y {perm = array<i64: 0, 2, 1>} : (tensor<3x130x197xf32>) -> tensor<3x197x130xf32>
      %s = graph.sin %y : (tensor<3x130x197xf32>) -> tensor<3x130x197xf32>
      %z = graph.constant dense<0.0> : tensor<1xf32>
      %b = graph.greater %s, %z : (tensor<3x130x197xf32>, tensor<1xf32>) -> tensor<3x130x197xi1>
      %2 = graph.transpose %b {perm = array<i64: 0, 2, 1>} : (tensor<3x130x197xi1>) -> tensor<3x197x130xi1>
      return %0, %1, %2, %b : tensor<3x197x130xi64>, tensor<3x197x130xf32>, tensor<3x197x130xi1>, tensor<3x130x197xi1>
    })mlir",
      {Tensor::fromI64({batch, rows, cols}, values), Tensor::fromF32({batch, rows, cols}, floats)});
  ASSERT_EQ(results.size(), 4u);
  ASSERT_EQ(results[0].shape(), (std::vector<int64_t>{batch, cols, rows}));
  int64_t wrong = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t out = (b * cols + j) * rows + i, in = (b * rows + i) * cols + j;
        wrong += results[0].i64()[out] != in;
        wrong += results[1].f32()[out] != float(in);
        wrong += results[2].boolData()[out] != results[3].boolData()[in];
      }
  EXPECT_EQ(wrong, 0);
}

TEST(Shape, ConcatWithZeroSizedInputs) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<0x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2x1xf32>, %e: tensor<0xi64>)
        -> (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2xi64>) {
      %0 = graph.concat %a, %b, %a {axis = 0 : i64} : (tensor<0x2xf32>, tensor<2x2xf32>, tensor<0x2xf32>) -> tensor<2x2xf32>
      %1 = graph.concat %b, %c {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
      %k = graph.constant dense<[4, 5]> : tensor<2xi64>
      %2 = graph.concat %e, %k {axis = 0 : i64} : (tensor<0xi64>, tensor<2xi64>) -> tensor<2xi64>
      return %0, %1, %2 : tensor<2x2xf32>, tensor<2x3xf32>, tensor<2xi64>
    })mlir",
                       {Tensor::fromF32({0, 2}, {}), Tensor::fromF32({2, 2}, {1, 2, 3, 4}),
                        Tensor::fromF32({2, 1}, {9, 8}), Tensor::fromI64({0}, {})});
  ASSERT_EQ(results.size(), 3u);
  expectF32(results[0], {2, 2}, {1, 2, 3, 4});
  expectF32(results[1], {2, 3}, {1, 2, 9, 3, 4, 8});
  expectI64(results[2], {2}, {4, 5});
}

TEST(Shape, SplitUnevenWithoutSizes) {
  // 5 into 3 parts: ceil(5/3) = 2, so [2, 2, 1]; 4 into 3 parts: [2, 2, 0].
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<5xf32>, %y: tensor<4xf32>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<1xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
      %0:3 = graph.split %x {axis = 0 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<1xf32>)
      %1:3 = graph.split %y {axis = 0 : i64} : (tensor<4xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>)
      return %0#0, %0#1, %0#2, %1#0, %1#1, %1#2
          : tensor<2xf32>, tensor<2xf32>, tensor<1xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
    })mlir",
                       {Tensor::fromF32({5}, iota(5)), Tensor::fromF32({4}, iota(4))});
  ASSERT_EQ(results.size(), 6u);
  expectF32(results[0], {2}, {0, 1});
  expectF32(results[1], {2}, {2, 3});
  expectF32(results[2], {1}, {4});
  expectF32(results[3], {2}, {0, 1});
  expectF32(results[4], {2}, {2, 3});
  expectF32(results[5], {0}, {});
}

TEST(Shape, SplitRunsOutBeforeTheLastPart) {
  // 5 into 4 parts of ceil(5/4) = 2: [2, 2, 1, 0].
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
      %0:4 = graph.split %x {axis = 0 : i64} : (tensor<5xi64>) -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>)
      return %0#0, %0#1, %0#2, %0#3 : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
    })mlir",
                       {Tensor::fromI64({5}, {0, 1, 2, 3, 4})});
  ASSERT_EQ(results.size(), 4u);
  expectI64(results[0], {2}, {0, 1});
  expectI64(results[1], {2}, {2, 3});
  expectI64(results[2], {1}, {4});
  expectI64(results[3], {0}, {});
}

TEST(Shape, SplitWithSizesOnInnerAxis) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x4xi64>) -> (tensor<2x1xi64>, tensor<2x3xi64>) {
      %s = graph.constant dense<[1, 3]> : tensor<2xi64>
      %0:2 = graph.split %x split(%s) {axis = 1 : i64} : (tensor<2x4xi64>, tensor<2xi64>) -> (tensor<2x1xi64>, tensor<2x3xi64>)
      return %0#0, %0#1 : tensor<2x1xi64>, tensor<2x3xi64>
    })mlir",
                       {Tensor::fromI64({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})});
  ASSERT_EQ(results.size(), 2u);
  expectI64(results[0], {2, 1}, {0, 4});
  expectI64(results[1], {2, 3}, {1, 2, 3, 5, 6, 7});
}

// The Slice tests share one function: out = x[starts:ends:steps] on the
// given axes, with the index operands passed as inputs.
constexpr const char *kSlice1D = R"mlir(
    func.func @main(%x: tensor<10xf32>, %s: tensor<1xi64>, %e: tensor<1xi64>, %a: tensor<1xi64>,
                    %t: tensor<1xi64>) -> tensor<?xf32> {
      %0 = graph.slice %x, %s, %e, %a, %t
          : (tensor<10xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir";

std::vector<Tensor> slice1D(int64_t start, int64_t end, int64_t axis, int64_t step) {
  return runOk(kSlice1D, {Tensor::fromF32({10}, iota(10)), Tensor::fromI64({1}, {start}),
                          Tensor::fromI64({1}, {end}), Tensor::fromI64({1}, {axis}),
                          Tensor::fromI64({1}, {step})});
}

TEST(Shape, SliceClampsEndsToInt64Max) {
  auto results = slice1D(1, INT64_MAX, 0, 2);
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {5}, {1, 3, 5, 7, 9});
}

TEST(Shape, SliceReversesWithNegativeStep) {
  // start -1 is the last element; end INT64_MIN clamps to -1 (before the first).
  auto results = slice1D(-1, INT64_MIN, 0, -1);
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {10}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
}

TEST(Shape, SliceNegativeStrideAndClampedStart) {
  // start 100 clamps to 9 for a negative step: 9, 6, 3 (end 1 is exclusive).
  auto results = slice1D(100, 1, -1, -3);
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {3}, {9, 6, 3});
}

TEST(Shape, SliceClampsStartBelowZeroForNegativeStep) {
  // The spec clamps a start that is still negative after adding the dim to 0
  // for negative steps, so x[INT64_MIN:INT64_MIN:-1] is [x[0]] (ONNX Runtime
  // agrees; numpy, and so onnx.reference, gives an empty slice here).
  auto results = slice1D(INT64_MIN, INT64_MIN, 0, -1);
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1}, {0});
}

TEST(Shape, SliceProducesEmpty) {
  auto results = slice1D(3, 1, 0, 1);
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {0}, {});
}

TEST(Shape, SliceTwoAxesOfAMatrix) {
  // x[1:, ::-2] of a 3x4 matrix.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3x4xf32>) -> tensor<2x2xf32> {
      %s = graph.constant dense<[1, -1]> : tensor<2xi64>
      %e = graph.constant dense<[3, -9223372036854775808]> : tensor<2xi64>
      %a = graph.constant dense<[0, 1]> : tensor<2xi64>
      %t = graph.constant dense<[1, -2]> : tensor<2xi64>
      %0 = graph.slice %x, %s, %e, %a, %t
          : (tensor<3x4xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {Tensor::fromF32({3, 4}, iota(12))});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {7, 5, 11, 9});
}

TEST(Shape, GatherWithNegativeIndices) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3x2xf32>, %i: tensor<2xi64>, %j: tensor<2x2xi64>)
        -> (tensor<2x2xf32>, tensor<3x2x2xf32>) {
      %0 = graph.gather %x, %i {axis = 0 : i64} : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
      %1 = graph.gather %x, %j {axis = 1 : i64} : (tensor<3x2xf32>, tensor<2x2xi64>) -> tensor<3x2x2xf32>
      return %0, %1 : tensor<2x2xf32>, tensor<3x2x2xf32>
    })mlir",
                       {Tensor::fromF32({3, 2}, {0, 1, 10, 11, 20, 21}),
                        Tensor::fromI64({2}, {-1, 0}), Tensor::fromI64({2, 2}, {1, 0, -2, -1})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {2, 2}, {20, 21, 0, 1});
  // out[r][a][b] = x[r][j[a][b]], j = [[1, 0], [0, 1]] after wrapping.
  expectF32(results[1], {3, 2, 2}, {1, 0, 0, 1, 11, 10, 10, 11, 21, 20, 20, 21});
}

TEST(Shape, GatherScalarIndexDropsTheAxis) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3x2xi64>) -> tensor<2xi64> {
      %i = graph.constant dense<1> : tensor<i64>
      %0 = graph.gather %x, %i {axis = 0 : i64} : (tensor<3x2xi64>, tensor<i64>) -> tensor<2xi64>
      return %0 : tensor<2xi64>
    })mlir",
                       {Tensor::fromI64({3, 2}, {0, 1, 10, 11, 20, 21})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {2}, {10, 11});
}

TEST(Shape, GatherNDWithAndWithoutBatchDims) {
  // The ONNX GatherND examples 1 and 5, plus a negative index.
  auto results = runOk(
      R"mlir(
    func.func @main(%x: tensor<2x2xi64>, %i: tensor<2x2xi64>, %y: tensor<2x2x2xi64>, %j: tensor<2x1xi64>)
        -> (tensor<2xi64>, tensor<2x2xi64>) {
      %0 = graph.gather_nd %x, %i : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2xi64>
      %1 = graph.gather_nd %y, %j {batch_dims = 1 : i64} : (tensor<2x2x2xi64>, tensor<2x1xi64>) -> tensor<2x2xi64>
      return %0, %1 : tensor<2xi64>, tensor<2x2xi64>
    })mlir",
      {Tensor::fromI64({2, 2}, {0, 1, 2, 3}), Tensor::fromI64({2, 2}, {0, 0, -1, 1}),
       Tensor::fromI64({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), Tensor::fromI64({2, 1}, {1, 0})});
  ASSERT_EQ(results.size(), 2u);
  expectI64(results[0], {2}, {0, 3});
  expectI64(results[1], {2, 2}, {2, 3, 4, 5});
}

TEST(Shape, RangeI64IncludingEmptyAndNegativeDelta) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<i64>, %b: tensor<i64>, %c: tensor<i64>, %m: tensor<i64>)
        -> (tensor<?xi64>, tensor<?xi64>, tensor<?xi64>) {
      %0 = graph.range %a, %b, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
      %1 = graph.range %b, %a, %c : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
      %2 = graph.range %b, %a, %m : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
      return %0, %1, %2 : tensor<?xi64>, tensor<?xi64>, tensor<?xi64>
    })mlir",
                       {Tensor::fromI64({}, {1}), Tensor::fromI64({}, {8}),
                        Tensor::fromI64({}, {3}), Tensor::fromI64({}, {-3})});
  ASSERT_EQ(results.size(), 3u);
  expectI64(results[0], {3}, {1, 4, 7});
  expectI64(results[1], {0}, {});
  expectI64(results[2], {3}, {8, 5, 2});
}

TEST(Shape, RangeF32) {
  // ceil((1 - 0) / 0.25) = 4 elements; ceil((3 - 10) / -2) = 4 elements.
  auto results = runOk(R"mlir(
    func.func @main() -> (tensor<?xf32>, tensor<?xf32>) {
      %a = graph.constant dense<0.0> : tensor<f32>
      %b = graph.constant dense<1.0> : tensor<f32>
      %c = graph.constant dense<0.25> : tensor<f32>
      %0 = graph.range %a, %b, %c : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
      %d = graph.constant dense<10.0> : tensor<f32>
      %e = graph.constant dense<3.0> : tensor<f32>
      %f = graph.constant dense<-2.0> : tensor<f32>
      %1 = graph.range %d, %e, %f : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
      return %0, %1 : tensor<?xf32>, tensor<?xf32>
    })mlir");
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {4}, {0, 0.25, 0.5, 0.75});
  expectF32(results[1], {4}, {10, 8, 6, 4});
}

TEST(Shape, TriluUpperAndLowerWithK) {
  auto results =
      runOk(R"mlir(
    func.func @main(%x: tensor<3x3xi64>, %k: tensor<i64>)
        -> (tensor<3x3xi64>, tensor<3x3xi64>, tensor<3x3xi64>) {
      %0 = graph.trilu %x : (tensor<3x3xi64>) -> tensor<3x3xi64>
      %1 = graph.trilu %x {upper = false} : (tensor<3x3xi64>) -> tensor<3x3xi64>
      %2 = graph.trilu %x k(%k) {upper = false} : (tensor<3x3xi64>, tensor<i64>) -> tensor<3x3xi64>
      return %0, %1, %2 : tensor<3x3xi64>, tensor<3x3xi64>, tensor<3x3xi64>
    })mlir",
            {Tensor::fromI64({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), Tensor::fromI64({}, {-1})});
  ASSERT_EQ(results.size(), 3u);
  expectI64(results[0], {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expectI64(results[1], {3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9});
  expectI64(results[2], {3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0});
}

TEST(Shape, TriluUpperWithPositiveKOnBatch) {
  // upper, k = 1: keep j - i >= 1 in each 2x3 matrix.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x2x3xf32>) -> tensor<2x2x3xf32> {
      %k = graph.constant dense<1> : tensor<i64>
      %0 = graph.trilu %x k(%k) : (tensor<2x2x3xf32>, tensor<i64>) -> tensor<2x2x3xf32>
      return %0 : tensor<2x2x3xf32>
    })mlir",
                       {Tensor::fromF32({2, 2, 3}, iota(12))});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2, 3}, {0, 1, 2, 0, 0, 5, 0, 7, 8, 0, 0, 11});
}

TEST(Shape, ConstantOfShape) {
  auto results = runOk(R"mlir(
    func.func @main(%s: tensor<2xi64>, %e: tensor<1xi64>) -> (tensor<?x?xi64>, tensor<?xf32>) {
      %0 = graph.constant_of_shape %s {value = dense<7> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<?x?xi64>
      %1 = graph.constant_of_shape %e {value = dense<0.5> : tensor<1xf32>} : (tensor<1xi64>) -> tensor<?xf32>
      return %0, %1 : tensor<?x?xi64>, tensor<?xf32>
    })mlir",
                       {Tensor::fromI64({2}, {2, 3}), Tensor::fromI64({1}, {0})});
  ASSERT_EQ(results.size(), 2u);
  expectI64(results[0], {2, 3}, {7, 7, 7, 7, 7, 7});
  expectF32(results[1], {0}, {});
}

} // namespace
