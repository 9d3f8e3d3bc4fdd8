//===- ContractionTest.cpp - interpreter tests: MatMul, Gemm, Einsum ------===//

#include "TestUtils.h"

#include <gtest/gtest.h>

using namespace infer::test;
using infer::interp::Tensor;

namespace {

// A = [[1, 2, 3], [4, 5, 6]], B = [[7, 8], [9, 10], [11, 12]];
// A B = [[58, 64], [139, 154]].
Tensor matrixA() { return Tensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6}); }
Tensor matrixB() { return Tensor::fromF32({3, 2}, {7, 8, 9, 10, 11, 12}); }

TEST(Contraction, MatMul2D) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
      %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {matrixA(), matrixB()});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {58, 64, 139, 154});
}

TEST(Contraction, MatMulPromotesVectors) {
  // [1,2,3] B = [58, 64]; A [1,0,-1] = [-2, -2]; [1,2,3] . [4,5,6] = 32.
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %u: tensor<3xf32>, %v: tensor<3xf32>, %w: tensor<3xf32>)
        -> (tensor<2xf32>, tensor<2xf32>, tensor<f32>) {
      %0 = graph.matmul %u, %b : (tensor<3xf32>, tensor<3x2xf32>) -> tensor<2xf32>
      %1 = graph.matmul %a, %v : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
      %2 = graph.matmul %u, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
      return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<f32>
    })mlir",
                       {matrixA(), matrixB(), Tensor::fromF32({3}, {1, 2, 3}),
                        Tensor::fromF32({3}, {1, 0, -1}), Tensor::fromF32({3}, {4, 5, 6})});
  ASSERT_EQ(results.size(), 3u);
  expectF32(results[0], {2}, {58, 64});
  expectF32(results[1], {2}, {-2, -2});
  expectF32(results[2], {}, {32});
}

TEST(Contraction, MatMulBroadcastsBatchDims) {
  // Batch [2,1] against [3] -> [2,3]: out[i][j] = a_i c_j + b_i d_j with
  // lhs[i] = [[a_i, b_i]] = [[1, 2]], [[3, 4]] and rhs[j] = [[c_j], [d_j]] =
  // [[1],[0]], [[0],[1]], [[1],[1]].
  auto results = runOk(
      R"mlir(
    func.func @main(%a: tensor<2x1x1x2xf32>, %b: tensor<3x2x1xf32>, %c: tensor<2x2x2xf32>, %d: tensor<2x1xf32>)
        -> (tensor<2x3x1x1xf32>, tensor<2x2x1xf32>) {
      %0 = graph.matmul %a, %b : (tensor<2x1x1x2xf32>, tensor<3x2x1xf32>) -> tensor<2x3x1x1xf32>
      %1 = graph.matmul %c, %d : (tensor<2x2x2xf32>, tensor<2x1xf32>) -> tensor<2x2x1xf32>
      return %0, %1 : tensor<2x3x1x1xf32>, tensor<2x2x1xf32>
    })mlir",
      {Tensor::fromF32({2, 1, 1, 2}, {1, 2, 3, 4}), Tensor::fromF32({3, 2, 1}, {1, 0, 0, 1, 1, 1}),
       Tensor::fromF32({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Tensor::fromF32({2, 1}, {1, 1})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {2, 3, 1, 1}, {1, 2, 3, 3, 4, 7});
  expectF32(results[1], {2, 2, 1}, {3, 7, 11, 15});
}

TEST(Contraction, MatMulI64) {
  auto results =
      runOk(R"mlir(
    func.func @main(%a: tensor<2x2xi64>, %b: tensor<2x2xi64>) -> tensor<2x2xi64> {
      %0 = graph.matmul %a, %b : (tensor<2x2xi64>, tensor<2x2xi64>) -> tensor<2x2xi64>
      return %0 : tensor<2x2xi64>
    })mlir",
            {Tensor::fromI64({2, 2}, {1, 2, 3, 4}), Tensor::fromI64({2, 2}, {5, 6, 7, 8})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {2, 2}, {19, 22, 43, 50});
}

TEST(Contraction, GemmTransposesAlphaBetaAndRowBias) {
  // A is stored K x M = [[1,2],[3,4],[5,6]], B is stored N x K = [[1,0,1],[0,1,0]].
  // A^T B^T = [[6, 3], [8, 4]]; 0.5 * that + 2 * [10, 20] = [[23, 41.5], [24, 42]].
  auto results =
      runOk(R"mlir(
    func.func @main(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>, %c: tensor<2xf32>) -> tensor<2x2xf32> {
      %0 = graph.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32, transA = true, transB = true}
          : (tensor<3x2xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
            {Tensor::fromF32({3, 2}, {1, 2, 3, 4, 5, 6}),
             Tensor::fromF32({2, 3}, {1, 0, 1, 0, 1, 0}), Tensor::fromF32({2}, {10, 20})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {23, 41.5, 24, 42});
}

TEST(Contraction, GemmWithColumnBiasAndWithout) {
  // [[1,2],[3,4]] [[1,1],[1,1]] = [[3,3],[7,7]]; plus the column [[1],[2]].
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2x1xf32>)
        -> (tensor<2x2xf32>, tensor<2x2xf32>) {
      %0 = graph.gemm %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %1 = graph.gemm %a, %b, %c : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
      return %0, %1 : tensor<2x2xf32>, tensor<2x2xf32>
    })mlir",
                       {Tensor::fromF32({2, 2}, {1, 2, 3, 4}),
                        Tensor::fromF32({2, 2}, {1, 1, 1, 1}), Tensor::fromF32({2, 1}, {1, 2})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {2, 2}, {3, 3, 7, 7});
  expectF32(results[1], {2, 2}, {4, 4, 9, 9});
}

TEST(Contraction, EinsumMatrixProduct) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
      %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {matrixA(), matrixB()});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {58, 64, 139, 154});
}

TEST(Contraction, EinsumAttentionScores) {
  // Head 0: Q = I, so Q K^T = K^T = [[1,3],[2,4]]. Head 1: K = I, so Q K^T = Q.
  auto results = runOk(R"mlir(
    func.func @main(%q: tensor<1x2x2x2xf32>, %k: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
      %0 = graph.einsum %q, %k {equation = "bhqd,bhkd->bhqk"}
          : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
      return %0 : tensor<1x2x2x2xf32>
    })mlir",
                       {Tensor::fromF32({1, 2, 2, 2}, {1, 0, 0, 1, 1, 2, 3, 4}),
                        Tensor::fromF32({1, 2, 2, 2}, {1, 2, 3, 4, 1, 0, 0, 1})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1, 2, 2, 2}, {1, 3, 2, 4, 1, 2, 3, 4});
}

TEST(Contraction, EinsumThreeOperandsDiagonalsAndSums) {
  // x^T A y = 1 (1 - 2) + 2 (3 - 4) = -3; diag A = [1, 4]; trace 5; A^T; sum 10.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2xf32>, %a: tensor<2x2xf32>, %y: tensor<2xf32>)
        -> (tensor<f32>, tensor<2xf32>, tensor<f32>, tensor<2x2xf32>, tensor<f32>) {
      %0 = graph.einsum %x, %a, %y {equation = "i,ij,j->"} : (tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<f32>
      %1 = graph.einsum %a {equation = "ii->i"} : (tensor<2x2xf32>) -> tensor<2xf32>
      %2 = graph.einsum %a {equation = "ii->"} : (tensor<2x2xf32>) -> tensor<f32>
      %3 = graph.einsum %a {equation = "ij->ji"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
      %4 = graph.einsum %a {equation = "ij->"} : (tensor<2x2xf32>) -> tensor<f32>
      return %0, %1, %2, %3, %4 : tensor<f32>, tensor<2xf32>, tensor<f32>, tensor<2x2xf32>, tensor<f32>
    })mlir",
                       {Tensor::fromF32({2}, {1, 2}), Tensor::fromF32({2, 2}, {1, 2, 3, 4}),
                        Tensor::fromF32({2}, {1, -1})});
  ASSERT_EQ(results.size(), 5u);
  expectF32(results[0], {}, {-3});
  expectF32(results[1], {2}, {1, 4});
  expectF32(results[2], {}, {5});
  expectF32(results[3], {2, 2}, {1, 3, 2, 4});
  expectF32(results[4], {}, {10});
}

TEST(Contraction, EinsumOverZeroSizedSum) {
  // Contracting over an empty dim gives zeros.
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x0xi64>, %b: tensor<0x3xi64>) -> tensor<2x3xi64> {
      %0 = graph.einsum %a, %b {equation = "ij,jk->ik"} : (tensor<2x0xi64>, tensor<0x3xi64>) -> tensor<2x3xi64>
      return %0 : tensor<2x3xi64>
    })mlir",
                       {Tensor::fromI64({2, 0}, {}), Tensor::fromI64({0, 3}, {})});
  ASSERT_EQ(results.size(), 1u);
  expectI64(results[0], {2, 3}, {0, 0, 0, 0, 0, 0});
}

} // namespace
