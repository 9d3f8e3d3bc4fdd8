//===- FusedTest.cpp - interpreter tests: the fused LLM ops ---------------===//
//
// Each fused op is checked against the same computation spelled with the
// primitive graph ops (RMSNorm as Pow/ReduceMean/Sqrt/..., attention as
// MatMul/Softmax with explicitly repeated KV heads and an explicit -inf mask,
// RoPE as Slice/Neg/Concat/Mul/Add), run by the interpreter in the same
// function, within kFusedTolerance. Small hand-computed cases pin the
// semantics the references could share a mistake about, and the bad-input
// cases must come back as errors naming the op.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

using namespace infer::test;
using infer::interp::DType;
using infer::interp::Tensor;
using ::testing::HasSubstr;

namespace {

/// Fused ops round at other points than their primitive spelling (a fused
/// kernel accumulates in double and rounds once), so results agree to a few
/// f32 ulps, not exactly: |fused - reference| <= 1e-5 * max(1, |reference|).
constexpr double kFusedTolerance = 1e-5;

/// Deterministic values in [lo, hi) from a 64-bit LCG, so failures reproduce.
Tensor randomF32(std::vector<int64_t> shape, uint64_t seed, float lo = -1, float hi = 1) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  std::vector<float> values(count);
  uint64_t state = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (float &value : values) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    value = lo + (hi - lo) * float(state >> 40) / float(1 << 24);
  }
  return Tensor::fromF32(std::move(shape), std::move(values));
}

void expectClose(const Tensor &actual, const Tensor &expected) {
  ASSERT_EQ(actual.dtype(), DType::F32);
  ASSERT_EQ(expected.dtype(), DType::F32);
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    double want = expected.f32()[i];
    EXPECT_NEAR(actual.f32()[i], want, kFusedTolerance * std::max(1.0, std::fabs(want)))
        << "element " << i;
  }
}

void expectIdentical(const Tensor &actual, const Tensor &expected) {
  ASSERT_EQ(actual.shape(), expected.shape());
  for (int64_t i = 0; i < actual.numElements(); ++i)
    EXPECT_EQ(actual.f32()[i], expected.f32()[i]) << "element " << i;
}

/// Replaces each `${NAME}` in `text` with vars[NAME].
std::string fill(std::string text, const std::map<std::string, std::string> &vars) {
  for (const auto &[name, value] : vars) {
    std::string key = "${" + name + "}";
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at))
      text.replace(at, key.size(), value);
  }
  return text;
}

//===----------------------------------------------------------------------===//
// rms_norm
//===----------------------------------------------------------------------===//

// y = x * 1/sqrt(mean(x^2) + eps) * (w + offset), spelled with primitives.
constexpr const char *kRmsNorm = R"mlir(
  func.func @main(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
    %fused = graph.rms_norm %x, %w {epsilon = 1.0e-05 : f32${ATTR}}
        : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
    %two = graph.constant dense<2.0> : tensor<f32>
    %sq = graph.pow %x, %two : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
    %axes = graph.constant dense<[-1]> : tensor<1xi64>
    %ms = graph.reduce_mean %sq axes(%axes) {keepdims = true} : (tensor<2x3x8xf32>, tensor<1xi64>) -> tensor<2x3x1xf32>
    %eps = graph.constant dense<1.0e-05> : tensor<f32>
    %var = graph.add %ms, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
    %rms = graph.sqrt %var : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
    %inv = graph.reciprocal %rms : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
    %n = graph.mul %x, %inv : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
    %offset = graph.constant dense<${OFFSET}> : tensor<f32>
    %gamma = graph.add %w, %offset : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
    %ref = graph.mul %n, %gamma : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
    return %fused, %ref : tensor<2x3x8xf32>, tensor<2x3x8xf32>
  })mlir";

TEST(Fused, RmsNormMatchesPrimitives) {
  auto results = runOk(fill(kRmsNorm, {{"ATTR", ""}, {"OFFSET", "0.0"}}),
                       {randomF32({2, 3, 8}, 1, -3, 3), randomF32({8}, 2)});
  ASSERT_EQ(results.size(), 2u);
  expectClose(results[0], results[1]);
}

TEST(Fused, RmsNormGemmaWeightOffset) {
  auto results =
      runOk(fill(kRmsNorm, {{"ATTR", ", weight_offset = 1.0 : f32"}, {"OFFSET", "1.0"}}),
            {randomF32({2, 3, 8}, 3, -3, 3), randomF32({8}, 4, -0.5, 0.5)});
  ASSERT_EQ(results.size(), 2u);
  expectClose(results[0], results[1]);
}

TEST(Fused, RmsNormByHand) {
  // x = [2, -2, 2, -2]: rms = 2, so y = x / 2 * w; with offset 1, * (w + 1).
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x4xf32>, %w: tensor<4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
      %0 = graph.rms_norm %x, %w {epsilon = 0.0 : f32} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
      %1 = graph.rms_norm %x, %w {epsilon = 0.0 : f32, weight_offset = 1.0 : f32}
          : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
      return %0, %1 : tensor<1x4xf32>, tensor<1x4xf32>
    })mlir",
                       {Tensor::fromF32({1, 4}, {2, -2, 2, -2}), Tensor::fromF32({4}, {1, 2, 3, 4})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {1, 4}, {1, -2, 3, -4});
  expectF32(results[1], {1, 4}, {2, -3, 4, -5});
}

//===----------------------------------------------------------------------===//
// linear
//===----------------------------------------------------------------------===//

TEST(Fused, LinearMatchesMatMulAndAdd) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>, %w: tensor<4x5xf32>, %wt: tensor<5x4xf32>, %b: tensor<5xf32>,
                    %r: tensor<2x3x5xf32>)
        -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>,
            tensor<2x3x5xf32>, tensor<2x3x5xf32>) {
      %f1 = graph.linear %x, %w bias(%b) residual(%r)
          : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
      %f2 = graph.linear %x, %wt {transpose_weight = true} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3x5xf32>
      %f3 = graph.linear %x, %wt residual(%r) {transpose_weight = true}
          : (tensor<2x3x4xf32>, tensor<5x4xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
      %mm = graph.matmul %x, %w : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
      %mb = graph.add %mm, %b : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
      %r1 = graph.add %mb, %r : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
      %wtt = graph.transpose %wt {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
      %r2 = graph.matmul %x, %wtt : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
      %r3 = graph.add %r2, %r : (tensor<2x3x5xf32>, tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
      return %f1, %f2, %f3, %r1, %r2, %r3 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>,
          tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<2x3x5xf32>
    })mlir",
                       {randomF32({2, 3, 4}, 10), randomF32({4, 5}, 11), randomF32({5, 4}, 12),
                        randomF32({5}, 13), randomF32({2, 3, 5}, 14)});
  ASSERT_EQ(results.size(), 6u);
  for (int i = 0; i < 3; ++i)
    expectClose(results[i], results[i + 3]);
}

TEST(Fused, LinearByHand) {
  // [1, 2] [[1, 2, 3], [4, 5, 6]] = [9, 12, 15]; + bias [1, 1, 1]. The same
  // weight stored [N, K] with transpose_weight gives the same product.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x2xf32>, %w: tensor<2x3xf32>, %wt: tensor<3x2xf32>, %b: tensor<3xf32>)
        -> (tensor<1x3xf32>, tensor<1x3xf32>) {
      %0 = graph.linear %x, %w bias(%b) : (tensor<1x2xf32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
      %1 = graph.linear %x, %wt {transpose_weight = true} : (tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<1x3xf32>
      return %0, %1 : tensor<1x3xf32>, tensor<1x3xf32>
    })mlir",
                       {Tensor::fromF32({1, 2}, {1, 2}), Tensor::fromF32({2, 3}, {1, 2, 3, 4, 5, 6}),
                        Tensor::fromF32({3, 2}, {1, 4, 2, 5, 3, 6}),
                        Tensor::fromF32({3}, {1, 1, 1})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {1, 3}, {10, 13, 16});
  expectF32(results[1], {1, 3}, {9, 12, 15});
}

//===----------------------------------------------------------------------===//
// rotary
//===----------------------------------------------------------------------===//

TEST(Fused, RotaryHalfSplitMatchesPrimitives) {
  // Llama's rotate_half: x * cos(cat(a, a)) + cat(-x2, x1) * sin(cat(a, a)),
  // with per-batch positions [2, 3].
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x8xf32>, %pos: tensor<2x3xi64>, %freq: tensor<2xf32>)
        -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
      %fused = graph.rotary %x, %freq positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x8xf32>, tensor<2xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
      %pf = graph.cast %pos : (tensor<2x3xi64>) -> tensor<2x3xf32>
      %s4 = graph.constant dense<[2, 3, 1, 1]> : tensor<4xi64>
      %p4 = graph.reshape %pf, %s4 : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x3x1x1xf32>
      %ang = graph.mul %p4, %freq : (tensor<2x3x1x1xf32>, tensor<2xf32>) -> tensor<2x3x1x2xf32>
      %emb = graph.concat %ang, %ang {axis = 3 : i64} : (tensor<2x3x1x2xf32>, tensor<2x3x1x2xf32>) -> tensor<2x3x1x4xf32>
      %cos = graph.cos %emb : (tensor<2x3x1x4xf32>) -> tensor<2x3x1x4xf32>
      %sin = graph.sin %emb : (tensor<2x3x1x4xf32>) -> tensor<2x3x1x4xf32>
      %xs = graph.constant dense<[2, 3, 2, 4]> : tensor<4xi64>
      %x4 = graph.reshape %x, %xs : (tensor<2x3x8xf32>, tensor<4xi64>) -> tensor<2x3x2x4xf32>
      %axis = graph.constant dense<[3]> : tensor<1xi64>
      %one = graph.constant dense<[1]> : tensor<1xi64>
      %c0 = graph.constant dense<[0]> : tensor<1xi64>
      %c2 = graph.constant dense<[2]> : tensor<1xi64>
      %c4 = graph.constant dense<[4]> : tensor<1xi64>
      %x1 = graph.slice %x4, %c0, %c2, %axis, %one
          : (tensor<2x3x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3x2x2xf32>
      %x2 = graph.slice %x4, %c2, %c4, %axis, %one
          : (tensor<2x3x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x3x2x2xf32>
      %nx2 = graph.neg %x2 : (tensor<2x3x2x2xf32>) -> tensor<2x3x2x2xf32>
      %rot = graph.concat %nx2, %x1 {axis = 3 : i64} : (tensor<2x3x2x2xf32>, tensor<2x3x2x2xf32>) -> tensor<2x3x2x4xf32>
      %a = graph.mul %x4, %cos : (tensor<2x3x2x4xf32>, tensor<2x3x1x4xf32>) -> tensor<2x3x2x4xf32>
      %b = graph.mul %rot, %sin : (tensor<2x3x2x4xf32>, tensor<2x3x1x4xf32>) -> tensor<2x3x2x4xf32>
      %y4 = graph.add %a, %b : (tensor<2x3x2x4xf32>, tensor<2x3x2x4xf32>) -> tensor<2x3x2x4xf32>
      %os = graph.constant dense<[2, 3, 8]> : tensor<3xi64>
      %ref = graph.reshape %y4, %os : (tensor<2x3x2x4xf32>, tensor<3xi64>) -> tensor<2x3x8xf32>
      return %fused, %ref : tensor<2x3x8xf32>, tensor<2x3x8xf32>
    })mlir",
                       {randomF32({2, 3, 8}, 20), Tensor::fromI64({2, 3}, {0, 1, 2, 7, 100, 1000}),
                        Tensor::fromF32({2}, {1.0f, 0.01f})});
  ASSERT_EQ(results.size(), 2u);
  expectClose(results[0], results[1]);
}

TEST(Fused, RotaryInterleavedMatchesPrimitives) {
  // GPT-J pairs (2i, 2i+1): view [B, S, H, D/2, 2] and rotate the last dim.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x3x8xf32>, %pos: tensor<1x3xi64>, %freq: tensor<2xf32>)
        -> (tensor<1x3x8xf32>, tensor<1x3x8xf32>) {
      %fused = graph.rotary %x, %freq positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 2 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64,
           interleaved = true}
          : (tensor<1x3x8xf32>, tensor<2xf32>, tensor<1x3xi64>) -> tensor<1x3x8xf32>
      %pf = graph.cast %pos : (tensor<1x3xi64>) -> tensor<1x3xf32>
      %s5 = graph.constant dense<[1, 3, 1, 1, 1]> : tensor<5xi64>
      %p5 = graph.reshape %pf, %s5 : (tensor<1x3xf32>, tensor<5xi64>) -> tensor<1x3x1x1x1xf32>
      %fs = graph.constant dense<[2, 1]> : tensor<2xi64>
      %f2 = graph.reshape %freq, %fs : (tensor<2xf32>, tensor<2xi64>) -> tensor<2x1xf32>
      %ang = graph.mul %p5, %f2 : (tensor<1x3x1x1x1xf32>, tensor<2x1xf32>) -> tensor<1x3x1x2x1xf32>
      %cos = graph.cos %ang : (tensor<1x3x1x2x1xf32>) -> tensor<1x3x1x2x1xf32>
      %sin = graph.sin %ang : (tensor<1x3x1x2x1xf32>) -> tensor<1x3x1x2x1xf32>
      %xs = graph.constant dense<[1, 3, 2, 2, 2]> : tensor<5xi64>
      %x5 = graph.reshape %x, %xs : (tensor<1x3x8xf32>, tensor<5xi64>) -> tensor<1x3x2x2x2xf32>
      %axis = graph.constant dense<[4]> : tensor<1xi64>
      %one = graph.constant dense<[1]> : tensor<1xi64>
      %c0 = graph.constant dense<[0]> : tensor<1xi64>
      %c2 = graph.constant dense<[2]> : tensor<1xi64>
      %xe = graph.slice %x5, %c0, %one, %axis, %one
          : (tensor<1x3x2x2x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x3x2x2x1xf32>
      %xo = graph.slice %x5, %one, %c2, %axis, %one
          : (tensor<1x3x2x2x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x3x2x2x1xf32>
      %ec = graph.mul %xe, %cos : (tensor<1x3x2x2x1xf32>, tensor<1x3x1x2x1xf32>) -> tensor<1x3x2x2x1xf32>
      %os = graph.mul %xo, %sin : (tensor<1x3x2x2x1xf32>, tensor<1x3x1x2x1xf32>) -> tensor<1x3x2x2x1xf32>
      %ye = graph.sub %ec, %os : (tensor<1x3x2x2x1xf32>, tensor<1x3x2x2x1xf32>) -> tensor<1x3x2x2x1xf32>
      %oc = graph.mul %xo, %cos : (tensor<1x3x2x2x1xf32>, tensor<1x3x1x2x1xf32>) -> tensor<1x3x2x2x1xf32>
      %es = graph.mul %xe, %sin : (tensor<1x3x2x2x1xf32>, tensor<1x3x1x2x1xf32>) -> tensor<1x3x2x2x1xf32>
      %yo = graph.add %oc, %es : (tensor<1x3x2x2x1xf32>, tensor<1x3x2x2x1xf32>) -> tensor<1x3x2x2x1xf32>
      %y5 = graph.concat %ye, %yo {axis = 4 : i64} : (tensor<1x3x2x2x1xf32>, tensor<1x3x2x2x1xf32>) -> tensor<1x3x2x2x2xf32>
      %rs = graph.constant dense<[1, 3, 8]> : tensor<3xi64>
      %ref = graph.reshape %y5, %rs : (tensor<1x3x2x2x2xf32>, tensor<3xi64>) -> tensor<1x3x8xf32>
      return %fused, %ref : tensor<1x3x8xf32>, tensor<1x3x8xf32>
    })mlir",
                       {randomF32({1, 3, 8}, 21), Tensor::fromI64({1, 3}, {3, 4, 5}),
                        Tensor::fromF32({2}, {1.0f, 0.1f})});
  ASSERT_EQ(results.size(), 2u);
  expectClose(results[0], results[1]);
}

TEST(Fused, RotaryPartialDimsAndHeadsMatchesPrimitives) {
  // Packed-QKV style: 3 heads of 8, the first 2 rotated, on their first 4
  // dims only; the rest (dims 4..7 and all of head 2) pass through.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x2x24xf32>, %pos: tensor<1x2xi64>, %freq: tensor<2xf32>)
        -> (tensor<1x2x24xf32>, tensor<1x2x24xf32>) {
      %fused = graph.rotary %x, %freq positions(%pos)
          {num_heads = 3 : i64, rotated_heads = 2 : i64, head_dim = 8 : i64, rotary_dim = 4 : i64}
          : (tensor<1x2x24xf32>, tensor<2xf32>, tensor<1x2xi64>) -> tensor<1x2x24xf32>
      %pf = graph.cast %pos : (tensor<1x2xi64>) -> tensor<1x2xf32>
      %s4 = graph.constant dense<[1, 2, 1, 1]> : tensor<4xi64>
      %p4 = graph.reshape %pf, %s4 : (tensor<1x2xf32>, tensor<4xi64>) -> tensor<1x2x1x1xf32>
      %ang = graph.mul %p4, %freq : (tensor<1x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x1x2xf32>
      %emb = graph.concat %ang, %ang {axis = 3 : i64} : (tensor<1x2x1x2xf32>, tensor<1x2x1x2xf32>) -> tensor<1x2x1x4xf32>
      %cos = graph.cos %emb : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
      %sin = graph.sin %emb : (tensor<1x2x1x4xf32>) -> tensor<1x2x1x4xf32>
      %xs = graph.constant dense<[1, 2, 3, 8]> : tensor<4xi64>
      %x4 = graph.reshape %x, %xs : (tensor<1x2x24xf32>, tensor<4xi64>) -> tensor<1x2x3x8xf32>
      %a2 = graph.constant dense<[2]> : tensor<1xi64>
      %a3 = graph.constant dense<[3]> : tensor<1xi64>
      %one = graph.constant dense<[1]> : tensor<1xi64>
      %c0 = graph.constant dense<[0]> : tensor<1xi64>
      %c2 = graph.constant dense<[2]> : tensor<1xi64>
      %c3 = graph.constant dense<[3]> : tensor<1xi64>
      %c4 = graph.constant dense<[4]> : tensor<1xi64>
      %c8 = graph.constant dense<[8]> : tensor<1xi64>
      %rh = graph.slice %x4, %c0, %c2, %a2, %one
          : (tensor<1x2x3x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x8xf32>
      %ph = graph.slice %x4, %c2, %c3, %a2, %one
          : (tensor<1x2x3x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x1x8xf32>
      %rd = graph.slice %rh, %c0, %c4, %a3, %one
          : (tensor<1x2x2x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x4xf32>
      %pd = graph.slice %rh, %c4, %c8, %a3, %one
          : (tensor<1x2x2x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x4xf32>
      %x1 = graph.slice %rd, %c0, %c2, %a3, %one
          : (tensor<1x2x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
      %x2 = graph.slice %rd, %c2, %c4, %a3, %one
          : (tensor<1x2x2x4xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
      %nx2 = graph.neg %x2 : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
      %rot = graph.concat %nx2, %x1 {axis = 3 : i64} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x4xf32>
      %a = graph.mul %rd, %cos : (tensor<1x2x2x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x2x4xf32>
      %b = graph.mul %rot, %sin : (tensor<1x2x2x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x2x4xf32>
      %y = graph.add %a, %b : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
      %yh = graph.concat %y, %pd {axis = 3 : i64} : (tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x2x2x8xf32>
      %y4 = graph.concat %yh, %ph {axis = 2 : i64} : (tensor<1x2x2x8xf32>, tensor<1x2x1x8xf32>) -> tensor<1x2x3x8xf32>
      %os = graph.constant dense<[1, 2, 24]> : tensor<3xi64>
      %ref = graph.reshape %y4, %os : (tensor<1x2x3x8xf32>, tensor<3xi64>) -> tensor<1x2x24xf32>
      return %fused, %ref : tensor<1x2x24xf32>, tensor<1x2x24xf32>
    })mlir",
                       {randomF32({1, 2, 24}, 22), Tensor::fromI64({1, 2}, {9, 10}),
                        Tensor::fromF32({2}, {0.7f, 0.05f})});
  ASSERT_EQ(results.size(), 2u);
  expectClose(results[0], results[1]);
}

TEST(Fused, RotaryByHand) {
  // Position 0 is the identity. One pair turned by pi/2 (position 1,
  // inv_freq pi/2): (x0, x1) -> (-x1, x0), in both pairings.
  constexpr const char *kRotary = R"mlir(
    func.func @main(%x: tensor<1x2x2xf32>, %pos: tensor<1x2xi64>, %freq: tensor<1xf32>)
        -> (tensor<1x2x2xf32>, tensor<1x2x2xf32>) {
      %0 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 1 : i64, rotated_heads = 1 : i64, head_dim = 2 : i64, rotary_dim = 2 : i64}
          : (tensor<1x2x2xf32>, tensor<1xf32>, tensor<1x2xi64>) -> tensor<1x2x2xf32>
      %1 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 1 : i64, rotated_heads = 1 : i64, head_dim = 2 : i64, rotary_dim = 2 : i64,
           interleaved = true}
          : (tensor<1x2x2xf32>, tensor<1xf32>, tensor<1x2xi64>) -> tensor<1x2x2xf32>
      return %0, %1 : tensor<1x2x2xf32>, tensor<1x2x2xf32>
    })mlir";
  auto results = runOk(kRotary, {Tensor::fromF32({1, 2, 2}, {1, 2, 3, 4}),
                                 Tensor::fromI64({1, 2}, {0, 1}),
                                 Tensor::fromF32({1}, {float(std::acos(0.0))})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {1, 2, 2}, {1, 2, -4, 3});
  expectF32(results[1], {1, 2, 2}, {1, 2, -4, 3});
}

TEST(Fused, RotaryNoRotatedHeadsIsIdentity) {
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x1x4xf32>, %pos: tensor<1x1xi64>, %freq: tensor<1xf32>) -> tensor<1x1x4xf32> {
      %0 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 0 : i64, head_dim = 2 : i64, rotary_dim = 2 : i64}
          : (tensor<1x1x4xf32>, tensor<1xf32>, tensor<1x1xi64>) -> tensor<1x1x4xf32>
      return %0 : tensor<1x1x4xf32>
    })mlir",
                       {Tensor::fromF32({1, 1, 4}, {1, 2, 3, 4}), Tensor::fromI64({1, 1}, {5}),
                        Tensor::fromF32({1}, {1})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1, 1, 4}, {1, 2, 3, 4});
}

TEST(Fused, RotaryDefaultPositionsCountFromZero) {
  // Without positions, every sequence of the batch is at 0, 1, ..., seq - 1.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x8xf32>, %pos: tensor<1x3xi64>, %freq: tensor<2xf32>)
        -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
      %0 = graph.rotary %x, %freq
          {num_heads = 2 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x8xf32>, tensor<2xf32>) -> tensor<2x3x8xf32>
      %1 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x8xf32>, tensor<2xf32>, tensor<1x3xi64>) -> tensor<2x3x8xf32>
      return %0, %1 : tensor<2x3x8xf32>, tensor<2x3x8xf32>
    })mlir",
                       {randomF32({2, 3, 8}, 23), Tensor::fromI64({1, 3}, {0, 1, 2}),
                        Tensor::fromF32({2}, {1.0f, 0.3f})});
  ASSERT_EQ(results.size(), 2u);
  expectIdentical(results[0], results[1]);
}

TEST(Fused, RotaryCachesMatchInvFreq) {
  // Caches of cos and sin of position * inv_freq (ONNX RotaryEmbedding's
  // inputs), spelled with primitives, rotate as inv_freq does, read at
  // per-batch positions, half-split and interleaved, 4 of 8 dims.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x16xf32>, %pos: tensor<2x3xi64>, %freq: tensor<2xf32>)
        -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
      %rows = graph.constant dense<[[0.0], [1.0], [2.0], [3.0], [4.0], [5.0], [6.0], [7.0], [8.0], [9.0]]> : tensor<10x1xf32>
      %ang = graph.mul %rows, %freq : (tensor<10x1xf32>, tensor<2xf32>) -> tensor<10x2xf32>
      %cos = graph.cos %ang : (tensor<10x2xf32>) -> tensor<10x2xf32>
      %sin = graph.sin %ang : (tensor<10x2xf32>) -> tensor<10x2xf32>
      %0 = graph.rotary %x caches(%cos, %sin) positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 2 : i64, head_dim = 8 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x16xf32>, tensor<10x2xf32>, tensor<10x2xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
      %1 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 2 : i64, head_dim = 8 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x16xf32>, tensor<2xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
      %2 = graph.rotary %x caches(%cos, %sin) positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 2 : i64, head_dim = 8 : i64, rotary_dim = 4 : i64,
           interleaved = true}
          : (tensor<2x3x16xf32>, tensor<10x2xf32>, tensor<10x2xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
      %3 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 2 : i64, head_dim = 8 : i64, rotary_dim = 4 : i64,
           interleaved = true}
          : (tensor<2x3x16xf32>, tensor<2xf32>, tensor<2x3xi64>) -> tensor<2x3x16xf32>
      return %0, %1, %2, %3 : tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>, tensor<2x3x16xf32>
    })mlir",
                       {randomF32({2, 3, 16}, 24), Tensor::fromI64({2, 3}, {0, 1, 2, 9, 4, 7}),
                        Tensor::fromF32({2}, {1.0f, 0.1f})});
  ASSERT_EQ(results.size(), 4u);
  expectClose(results[0], results[1]);
  expectClose(results[2], results[3]);
}

TEST(Fused, RotaryPerTokenCachesMatchPositionedCaches) {
  // Per-token [batch, seq, half] caches hold row positions[b, s] of the
  // [max_position, half] caches, built here by Gather.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<2x3x8xf32>, %pos: tensor<2x3xi64>, %cos: tensor<10x2xf32>, %sin: tensor<10x2xf32>)
        -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
      %tcos = graph.gather %cos, %pos {axis = 0 : i64} : (tensor<10x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
      %tsin = graph.gather %sin, %pos {axis = 0 : i64} : (tensor<10x2xf32>, tensor<2x3xi64>) -> tensor<2x3x2xf32>
      %0 = graph.rotary %x caches(%tcos, %tsin)
          {num_heads = 2 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x8xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x8xf32>
      %1 = graph.rotary %x caches(%cos, %sin) positions(%pos)
          {num_heads = 2 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x8xf32>, tensor<10x2xf32>, tensor<10x2xf32>, tensor<2x3xi64>) -> tensor<2x3x8xf32>
      return %0, %1 : tensor<2x3x8xf32>, tensor<2x3x8xf32>
    })mlir",
                       {randomF32({2, 3, 8}, 25), Tensor::fromI64({2, 3}, {5, 0, 3, 9, 9, 1}),
                        randomF32({10, 2}, 26), randomF32({10, 2}, 27)});
  ASSERT_EQ(results.size(), 2u);
  expectIdentical(results[0], results[1]);
}

TEST(Fused, RotaryCachesByHand) {
  // The cache row at position 1 holds cos 0, sin 1 (a quarter turn):
  // (x0, x1) -> (-x1, x0); position 0's row (1, 0) is the identity.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<1x2x2xf32>, %cos: tensor<2x1xf32>, %sin: tensor<2x1xf32>) -> tensor<1x2x2xf32> {
      %0 = graph.rotary %x caches(%cos, %sin)
          {num_heads = 1 : i64, rotated_heads = 1 : i64, head_dim = 2 : i64, rotary_dim = 2 : i64}
          : (tensor<1x2x2xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<1x2x2xf32>
      return %0 : tensor<1x2x2xf32>
    })mlir",
                       {Tensor::fromF32({1, 2, 2}, {1, 2, 3, 4}), Tensor::fromF32({2, 1}, {1, 0}),
                        Tensor::fromF32({2, 1}, {0, 1})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {1, 2, 2}, {1, 2, -4, 3});
}

//===----------------------------------------------------------------------===//
// attention
//===----------------------------------------------------------------------===//

struct AttentionCase {
  int64_t batch, seq, kvSeq, heads, kvHeads, headDim;
  const char *scale;
  const char *softcap; // "0.0": none
  bool causal;
  int64_t window = 0; // causal only: keys j > i + kv_seq - seq - window too
  double alibi = 0;   // ALiBi's factor c: bias c * slope_h * (j - i')
};

/// ALiBi's slopes (Press et al.), written out for the head counts the tests
/// use: 2^(-8 (h + 1) / 4) for the first four heads, then 2^-1, 2^-3.
double alibiSlopeTable(int64_t heads, int64_t h) {
  static const double four[] = {0.25, 0.0625, 0.015625, 0.00390625};
  static const double six[] = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  EXPECT_TRUE(heads == 4 || heads == 6);
  return heads == 4 ? four[h] : six[h];
}

/// The reference: heads split out and transposed, each KV head repeated
/// heads / kvHeads times (Expand over a new group dim, then Reshape), scores
/// by MatMul, the causal (windowed) mask as an explicit bool table and -inf,
/// Softmax, MatMul with V. Returns (fused, reference).
std::string attentionProgram(const AttentionCase &c) {
  std::map<std::string, std::string> vars = {
      {"B", std::to_string(c.batch)},
      {"S", std::to_string(c.seq)},
      {"T", std::to_string(c.kvSeq)},
      {"H", std::to_string(c.heads)},
      {"KV", std::to_string(c.kvHeads)},
      {"G", std::to_string(c.heads / c.kvHeads)},
      {"D", std::to_string(c.headDim)},
      {"QF", std::to_string(c.heads * c.headDim)},
      {"KF", std::to_string(c.kvHeads * c.headDim)},
      {"SCALE", c.scale},
      {"CAP", c.softcap},
      {"CAUSAL", c.causal ? "true" : "false"},
      {"WINDOW", std::to_string(c.window)},
      {"ALIBI", std::to_string(c.alibi)},
  };
  std::string softcap =
      std::string(c.softcap) == "0.0"
          ? "%capped = graph.identity %scaled : (${SC}) -> ${SC}"
          : R"mlir(%cap = graph.constant dense<${CAP}> : tensor<f32>
      %sc0 = graph.div %scaled, %cap : (${SC}, tensor<f32>) -> ${SC}
      %sc1 = graph.tanh %sc0 : (${SC}) -> ${SC}
      %capped = graph.mul %sc1, %cap : (${SC}, tensor<f32>) -> ${SC})mlir";
  // allowed[i][j] = j <= i + kv_seq - seq (and > i + kv_seq - seq - window),
  // written out as a literal.
  std::string table = "[";
  for (int64_t i = 0; i < c.seq; ++i) {
    table += i ? ", [" : "[";
    for (int64_t j = 0; j < c.kvSeq; ++j)
      table += std::string(j ? ", " : "") +
               (j <= i + c.kvSeq - c.seq &&
                        (c.window == 0 || j > i + c.kvSeq - c.seq - c.window)
                    ? "true"
                    : "false");
    table += "]";
  }
  table += "]";
  // bias[h][i][j] = alibi * slope_h * (j - i - kv_seq + seq), as a literal.
  std::string bias = "[";
  for (int64_t h = 0; h < c.heads; ++h) {
    bias += h ? ", [" : "[";
    for (int64_t i = 0; i < c.seq; ++i) {
      bias += i ? ", [" : "[";
      for (int64_t j = 0; j < c.kvSeq; ++j) {
        double value =
            c.alibi == 0 ? 0.0
                         : c.alibi * alibiSlopeTable(c.heads, h) * double(j - i - c.kvSeq + c.seq);
        bias += (j ? ", " : "") + std::to_string(value);
      }
      bias += "]";
    }
    bias += "]";
  }
  bias += "]";
  std::string biased = R"mlir(%bias = graph.constant dense<)mlir" + bias +
                       R"mlir(> : tensor<${H}x${S}x${T}xf32>
      %biased = graph.add %capped, %bias : (${SC}, tensor<${H}x${S}x${T}xf32>) -> ${SC})mlir";
  std::string mask = c.causal ? R"mlir(%allowed = graph.constant dense<)mlir" + table +
                                    R"mlir(> : tensor<${S}x${T}xi1>
      %ninf = graph.constant dense<0xFF800000> : tensor<f32>
      %masked = graph.where %allowed, %biased, %ninf : (tensor<${S}x${T}xi1>, ${SC}, tensor<f32>) -> ${SC})mlir"
                              : "%masked = graph.identity %biased : (${SC}) -> ${SC}";
  std::string program = R"mlir(
    func.func @main(%q: tensor<${B}x${S}x${QF}xf32>, %k: tensor<${B}x${T}x${KF}xf32>, %v: tensor<${B}x${T}x${KF}xf32>)
        -> (tensor<${B}x${S}x${QF}xf32>, tensor<${B}x${S}x${QF}xf32>) {
      %fused = graph.attention %q, %k, %v {num_heads = ${H} : i64, num_kv_heads = ${KV} : i64, head_dim = ${D} : i64,
                                           scale = ${SCALE} : f32, causal = ${CAUSAL}, softcap = ${CAP} : f32,
                                           window = ${WINDOW} : i64, alibi = ${ALIBI} : f32}
          : (tensor<${B}x${S}x${QF}xf32>, tensor<${B}x${T}x${KF}xf32>, tensor<${B}x${T}x${KF}xf32>) -> tensor<${B}x${S}x${QF}xf32>
      %qs = graph.constant dense<[${B}, ${S}, ${H}, ${D}]> : tensor<4xi64>
      %q4 = graph.reshape %q, %qs : (tensor<${B}x${S}x${QF}xf32>, tensor<4xi64>) -> tensor<${B}x${S}x${H}x${D}xf32>
      %qh = graph.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : (tensor<${B}x${S}x${H}x${D}xf32>) -> tensor<${B}x${H}x${S}x${D}xf32>
      %kvs = graph.constant dense<[${B}, ${T}, ${KV}, 1, ${D}]> : tensor<5xi64>
      %wide = graph.constant dense<[${B}, ${T}, ${KV}, ${G}, ${D}]> : tensor<5xi64>
      %hs = graph.constant dense<[${B}, ${T}, ${H}, ${D}]> : tensor<4xi64>
      %k5 = graph.reshape %k, %kvs : (tensor<${B}x${T}x${KF}xf32>, tensor<5xi64>) -> tensor<${B}x${T}x${KV}x1x${D}xf32>
      %kx = graph.expand %k5, %wide : (tensor<${B}x${T}x${KV}x1x${D}xf32>, tensor<5xi64>) -> tensor<${B}x${T}x${KV}x${G}x${D}xf32>
      %kr = graph.reshape %kx, %hs : (tensor<${B}x${T}x${KV}x${G}x${D}xf32>, tensor<4xi64>) -> tensor<${B}x${T}x${H}x${D}xf32>
      %kt = graph.transpose %kr {perm = array<i64: 0, 2, 3, 1>} : (tensor<${B}x${T}x${H}x${D}xf32>) -> tensor<${B}x${H}x${D}x${T}xf32>
      %v5 = graph.reshape %v, %kvs : (tensor<${B}x${T}x${KF}xf32>, tensor<5xi64>) -> tensor<${B}x${T}x${KV}x1x${D}xf32>
      %vx = graph.expand %v5, %wide : (tensor<${B}x${T}x${KV}x1x${D}xf32>, tensor<5xi64>) -> tensor<${B}x${T}x${KV}x${G}x${D}xf32>
      %vr = graph.reshape %vx, %hs : (tensor<${B}x${T}x${KV}x${G}x${D}xf32>, tensor<4xi64>) -> tensor<${B}x${T}x${H}x${D}xf32>
      %vh = graph.transpose %vr {perm = array<i64: 0, 2, 1, 3>} : (tensor<${B}x${T}x${H}x${D}xf32>) -> tensor<${B}x${H}x${T}x${D}xf32>
      %scores = graph.matmul %qh, %kt : (tensor<${B}x${H}x${S}x${D}xf32>, tensor<${B}x${H}x${D}x${T}xf32>) -> ${SC}
      %scale = graph.constant dense<${SCALE}> : tensor<f32>
      %scaled = graph.mul %scores, %scale : (${SC}, tensor<f32>) -> ${SC}
      )mlir" + softcap + R"mlir(
      )mlir" + biased + R"mlir(
      )mlir" + mask + R"mlir(
      %p = graph.softmax %masked {axis = 3 : i64} : ${SC}
      %o = graph.matmul %p, %vh : (${SC}, tensor<${B}x${H}x${T}x${D}xf32>) -> tensor<${B}x${H}x${S}x${D}xf32>
      %ot = graph.transpose %o {perm = array<i64: 0, 2, 1, 3>} : (tensor<${B}x${H}x${S}x${D}xf32>) -> tensor<${B}x${S}x${H}x${D}xf32>
      %os = graph.constant dense<[${B}, ${S}, ${QF}]> : tensor<3xi64>
      %ref = graph.reshape %ot, %os : (tensor<${B}x${S}x${H}x${D}xf32>, tensor<3xi64>) -> tensor<${B}x${S}x${QF}xf32>
      return %fused, %ref : tensor<${B}x${S}x${QF}xf32>, tensor<${B}x${S}x${QF}xf32>
    })mlir";
  program = fill(program, {{"SC", "tensor<${B}x${H}x${S}x${T}xf32>"}});
  return fill(program, vars);
}

void expectAttentionMatchesReference(const AttentionCase &c, uint64_t seed) {
  std::vector<Tensor> inputs = {
      randomF32({c.batch, c.seq, c.heads * c.headDim}, seed, -2, 2),
      randomF32({c.batch, c.kvSeq, c.kvHeads * c.headDim}, seed + 1, -2, 2),
      randomF32({c.batch, c.kvSeq, c.kvHeads * c.headDim}, seed + 2)};
  auto results = runOk(attentionProgram(c), inputs);
  ASSERT_EQ(results.size(), 2u);
  expectClose(results[0], results[1]);
}

TEST(Fused, AttentionMultiHeadCausal) {
  expectAttentionMatchesReference({2, 3, 3, 2, 2, 4, "0.5", "0.0", true}, 30);
}

TEST(Fused, AttentionGroupedQueryCausal) {
  expectAttentionMatchesReference({2, 4, 4, 4, 2, 4, "0.5", "0.0", true}, 31);
}

TEST(Fused, AttentionMultiQueryNotCausal) {
  expectAttentionMatchesReference({1, 3, 5, 4, 1, 4, "0.5", "0.0", false}, 32);
}

TEST(Fused, AttentionCausalWithLongerKv) {
  // kv_seq > seq (prefill after a cached prefix): query i sees j <= i + 2.
  expectAttentionMatchesReference({2, 2, 4, 4, 2, 2, "0.7", "0.0", true}, 33);
}

TEST(Fused, AttentionSoftcap) {
  // Large scores so that the cap (Gemma 2: 50) is far from the identity at
  // 2.0.
  expectAttentionMatchesReference({1, 3, 3, 2, 1, 4, "3.0", "2.0", true}, 34);
  expectAttentionMatchesReference({1, 2, 3, 2, 2, 4, "3.0", "2.0", false}, 35);
}

TEST(Fused, AttentionSlidingWindow) {
  // Windows shorter than the keys, with kv_seq = seq and kv_seq > seq (a
  // cached prefix), GQA, and with a softcap (Gemma 2's local layers).
  expectAttentionMatchesReference({2, 9, 9, 4, 2, 4, "0.5", "0.0", true, 3},
                                  36);
  expectAttentionMatchesReference({1, 3, 10, 2, 1, 4, "0.5", "0.0", true, 4},
                                  37);
  expectAttentionMatchesReference({1, 6, 6, 2, 2, 4, "3.0", "2.0", true, 2},
                                  38);
  // A window of one key: each query returns its own v.
  expectAttentionMatchesReference({1, 5, 5, 2, 2, 4, "0.5", "0.0", true, 1},
                                  39);
}

TEST(Fused, AttentionAlibi) {
  // BLOOM/MPT (factor 1) and Falcon-RW (factor 1 / sqrt(head_dim)) biases,
  // causal with kv_seq = seq and > seq, with a window, and not causal; six
  // heads take the slopes past the largest power of two.
  expectAttentionMatchesReference({2, 5, 5, 4, 4, 4, "0.5", "0.0", true, 0, 1.0}, 44);
  expectAttentionMatchesReference({1, 3, 7, 6, 2, 4, "0.5", "0.0", true, 0, 0.5}, 45);
  expectAttentionMatchesReference({1, 6, 6, 4, 2, 4, "0.5", "0.0", true, 3, 1.0}, 46);
  expectAttentionMatchesReference({1, 4, 4, 6, 6, 4, "0.5", "2.0", false, 0, 1.0}, 47);
}

TEST(Fused, AttentionPackedEqualsSeparate) {
  // The packed operand is q, k, v concatenated along features; both forms
  // must give bit-identical results.
  auto results = runOk(R"mlir(
    func.func @main(%q: tensor<2x3x16xf32>, %k: tensor<2x3x8xf32>, %v: tensor<2x3x8xf32>)
        -> (tensor<2x3x16xf32>, tensor<2x3x16xf32>) {
      %qkv = graph.concat %q, %k, %v {axis = 2 : i64}
          : (tensor<2x3x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x32xf32>
      %0 = graph.attention %qkv {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64,
                                 scale = 5.000000e-01 : f32, causal = true}
          : (tensor<2x3x32xf32>) -> tensor<2x3x16xf32>
      %1 = graph.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 4 : i64,
                                       scale = 5.000000e-01 : f32, causal = true}
          : (tensor<2x3x16xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x16xf32>
      return %0, %1 : tensor<2x3x16xf32>, tensor<2x3x16xf32>
    })mlir",
                       {randomF32({2, 3, 16}, 40), randomF32({2, 3, 8}, 41),
                        randomF32({2, 3, 8}, 42)});
  ASSERT_EQ(results.size(), 2u);
  expectIdentical(results[0], results[1]);
}

TEST(Fused, AttentionByHand) {
  // One key: softmax is 1, so every query head returns its KV head's v
  // (MQA: both query heads read the one kv head). Packed [q0 q1 | k | v].
  auto single = runOk(R"mlir(
    func.func @main(%qkv: tensor<1x1x8xf32>) -> tensor<1x1x4xf32> {
      %0 = graph.attention %qkv {num_heads = 2 : i64, num_kv_heads = 1 : i64, head_dim = 2 : i64,
                                 scale = 1.000000e+00 : f32, causal = true}
          : (tensor<1x1x8xf32>) -> tensor<1x1x4xf32>
      return %0 : tensor<1x1x4xf32>
    })mlir",
                      {Tensor::fromF32({1, 1, 8}, {9, -9, 3, 4, 1, 1, 5, 6})});
  ASSERT_EQ(single.size(), 1u);
  expectF32(single[0], {1, 1, 4}, {5, 6, 5, 6});

  // Query 0 (causal, seq = kv_seq = 2) sees only key 0; query 1 has equal
  // scores for both keys (q = 0) and averages v: (1 + 3) / 2, (2 + 4) / 2.
  auto causal = runOk(R"mlir(
    func.func @main(%q: tensor<1x2x2xf32>, %k: tensor<1x2x2xf32>, %v: tensor<1x2x2xf32>) -> tensor<1x2x2xf32> {
      %0 = graph.attention %q, %k, %v {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 2 : i64,
                                       scale = 1.000000e+00 : f32, causal = true}
          : (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
      return %0 : tensor<1x2x2xf32>
    })mlir",
                      {Tensor::fromF32({1, 2, 2}, {7, 7, 0, 0}),
                       Tensor::fromF32({1, 2, 2}, {1, 0, -5, 3}),
                       Tensor::fromF32({1, 2, 2}, {1, 2, 3, 4})});
  ASSERT_EQ(causal.size(), 1u);
  expectF32(causal[0], {1, 2, 2}, {1, 2, 2, 3});
}

//===----------------------------------------------------------------------===//
// gated_activation, embedding
//===----------------------------------------------------------------------===//

TEST(Fused, GatedActivationMatchesPrimitives) {
  auto results = runOk(R"mlir(
    func.func @main(%gu: tensor<2x3x8xf32>, %g: tensor<2x3x4xf32>, %u: tensor<2x3x4xf32>)
        -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>,
            tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
      %f1 = graph.gated_activation %gu {activation = "silu"} : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
      %f2 = graph.gated_activation %g, %u {activation = "silu"}
          : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %f3 = graph.gated_activation %g, %u {activation = "gelu"}
          : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %f4 = graph.gated_activation %gu {activation = "gelu_tanh"} : (tensor<2x3x8xf32>) -> tensor<2x3x4xf32>
      %sizes = graph.constant dense<[4, 4]> : tensor<2xi64>
      %gate, %up = graph.split %gu split(%sizes) {axis = 2 : i64}
          : (tensor<2x3x8xf32>, tensor<2xi64>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>)
      %sg = graph.sigmoid %gate : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %silu = graph.mul %gate, %sg : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %r1 = graph.mul %silu, %up : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %sg2 = graph.sigmoid %g : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %silu2 = graph.mul %g, %sg2 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %r2 = graph.mul %silu2, %u : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %ge = graph.gelu %g {approximate = "none"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %r3 = graph.mul %ge, %u : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %gt = graph.gelu %gate {approximate = "tanh"} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      %r4 = graph.mul %gt, %up : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
      return %f1, %f2, %f3, %f4, %r1, %r2, %r3, %r4 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>,
          tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
    })mlir",
                       {randomF32({2, 3, 8}, 50, -4, 4), randomF32({2, 3, 4}, 51, -4, 4),
                        randomF32({2, 3, 4}, 52)});
  ASSERT_EQ(results.size(), 8u);
  for (int i = 0; i < 4; ++i)
    expectClose(results[i], results[i + 4]);
}

TEST(Fused, GatedActivationByHand) {
  // silu(0) = 0, silu(x) -> x for large x; gelu(0) = 0. gate_up = [0, 20 | 3, 5].
  auto results = runOk(R"mlir(
    func.func @main(%gu: tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<1x2xf32>) {
      %0 = graph.gated_activation %gu {activation = "silu"} : (tensor<1x4xf32>) -> tensor<1x2xf32>
      %1 = graph.gated_activation %gu {activation = "gelu"} : (tensor<1x4xf32>) -> tensor<1x2xf32>
      return %0, %1 : tensor<1x2xf32>, tensor<1x2xf32>
    })mlir",
                       {Tensor::fromF32({1, 4}, {0, 20, 3, 5})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {1, 2}, {0, float(20.0 / (1.0 + std::exp(-20.0)) * 5)});
  expectF32(results[1], {1, 2}, {0, 100});
}

TEST(Fused, EmbeddingMatchesGather) {
  auto results = runOk(R"mlir(
    func.func @main(%table: tensor<5x3xf32>, %ids: tensor<2x2xi64>) -> (tensor<2x2x3xf32>, tensor<2x2x3xf32>) {
      %0 = graph.embedding %table, %ids : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
      %1 = graph.gather %table, %ids {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
      return %0, %1 : tensor<2x2x3xf32>, tensor<2x2x3xf32>
    })mlir",
                       {randomF32({5, 3}, 60), Tensor::fromI64({2, 2}, {4, 0, 2, 4})});
  ASSERT_EQ(results.size(), 2u);
  expectIdentical(results[0], results[1]);
}

TEST(Fused, EmbeddingI32Ids) {
  // i32 ids are held as i64 by the interpreter; the rows are the same.
  auto results = runOk(R"mlir(
    func.func @main(%table: tensor<3x2xf32>, %ids: tensor<2xi32>) -> tensor<2x2xf32> {
      %0 = graph.embedding %table, %ids : (tensor<3x2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir",
                       {Tensor::fromF32({3, 2}, {1, 2, 3, 4, 5, 6}), Tensor::fromI64({2}, {2, 1})});
  ASSERT_EQ(results.size(), 1u);
  expectF32(results[0], {2, 2}, {5, 6, 3, 4});
}

//===----------------------------------------------------------------------===//
// fusion_group
//===----------------------------------------------------------------------===//

TEST(Fused, FusionGroupWithTwoResultsMatchesItsOpsUnfused) {
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %w: tensor<4xf32>)
        -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
      %sum, %norm = graph.fusion_group %a, %b, %w
          : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
      ^bb0(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>, %g: tensor<4xf32>):
        %s = graph.add %x, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
        %n = graph.rms_norm %s, %g {epsilon = 1.0e-06 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
        graph.yield %s, %n : tensor<2x4xf32>, tensor<2x4xf32>
      }
      %rs = graph.add %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
      %rn = graph.rms_norm %rs, %w {epsilon = 1.0e-06 : f32} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      return %sum, %norm, %rs, %rn : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
    })mlir",
                       {randomF32({2, 4}, 70), randomF32({2, 4}, 71), randomF32({4}, 72)});
  ASSERT_EQ(results.size(), 4u);
  expectIdentical(results[0], results[2]);
  expectIdentical(results[1], results[3]);
}

TEST(Fused, NestedFusionGroupsAndYieldedOperand) {
  // The inner group computes x * x; the outer yields its own block argument
  // too. ((a + 1) * (a + 1), a).
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %0:2 = graph.fusion_group %a : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      ^bb0(%x: tensor<3xf32>):
        %one = graph.constant dense<1.0> : tensor<f32>
        %p = graph.add %x, %one : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
        %sq = graph.fusion_group %p : (tensor<3xf32>) -> tensor<3xf32> {
        ^bb0(%y: tensor<3xf32>):
          %m = graph.mul %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
          graph.yield %m : tensor<3xf32>
        }
        graph.yield %sq, %x : tensor<3xf32>, tensor<3xf32>
      }
      return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
    })mlir",
                       {Tensor::fromF32({3}, {0, 1, -3})});
  ASSERT_EQ(results.size(), 2u);
  expectF32(results[0], {3}, {1, 4, 4});
  expectF32(results[1], {3}, {0, 1, -3});
}

//===----------------------------------------------------------------------===//
// Bad input: errors naming the op, never a crash
//===----------------------------------------------------------------------===//

TEST(FusedErrors, EmbeddingIdOutOfRange) {
  constexpr const char *kEmbedding = R"mlir(
    func.func @main(%table: tensor<3x2xf32>, %ids: tensor<2xi64>) -> tensor<2x2xf32> {
      %0 = graph.embedding %table, %ids : (tensor<3x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
      return %0 : tensor<2x2xf32>
    })mlir";
  Tensor table = Tensor::fromF32({3, 2}, {1, 2, 3, 4, 5, 6});
  std::string high = runError(kEmbedding, {table, Tensor::fromI64({2}, {0, 3})});
  EXPECT_THAT(high, HasSubstr("graph.embedding"));
  EXPECT_THAT(high, HasSubstr("id 3 is outside [0, 3)"));
  // Gather would wrap -1 to the last row; a token id never does.
  std::string negative = runError(kEmbedding, {table, Tensor::fromI64({2}, {-1, 0})});
  EXPECT_THAT(negative, HasSubstr("id -1 is outside [0, 3)"));
}

TEST(FusedErrors, RmsNormWeightSize) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2x?xf32>, %w: tensor<?xf32>) -> tensor<2x?xf32> {
      %0 = graph.rms_norm %x, %w {epsilon = 1.0e-06 : f32} : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
      return %0 : tensor<2x?xf32>
    })mlir",
                                 {randomF32({2, 4}, 80), randomF32({3}, 81)});
  EXPECT_THAT(message, HasSubstr("graph.rms_norm"));
  EXPECT_THAT(message, HasSubstr("weight is [3] but the input's last dim is 4"));
}

TEST(FusedErrors, LinearShapes) {
  constexpr const char *kLinear = R"mlir(
    func.func @main(%x: tensor<2x?xf32>, %w: tensor<?x?xf32>, %r: tensor<?x?xf32>) -> tensor<2x?xf32> {
      %0 = graph.linear %x, %w residual(%r) : (tensor<2x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<2x?xf32>
      return %0 : tensor<2x?xf32>
    })mlir";
  std::string features =
      runError(kLinear, {randomF32({2, 4}, 82), randomF32({3, 5}, 83), randomF32({2, 5}, 84)});
  EXPECT_THAT(features, HasSubstr("graph.linear"));
  EXPECT_THAT(features, HasSubstr("has 4 features but the weight [3, 5] expects 3"));
  std::string residual =
      runError(kLinear, {randomF32({2, 4}, 82), randomF32({4, 5}, 83), randomF32({1, 5}, 84)});
  EXPECT_THAT(residual, HasSubstr("residual is [1, 5], expected the result's shape [2, 5]"));
}

TEST(FusedErrors, RotaryPositionsShape) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2x?x4xf32>, %pos: tensor<?x?xi64>, %freq: tensor<2xf32>) -> tensor<2x?x4xf32> {
      %0 = graph.rotary %x, %freq positions(%pos)
          {num_heads = 1 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x?x4xf32>, tensor<2xf32>, tensor<?x?xi64>) -> tensor<2x?x4xf32>
      return %0 : tensor<2x?x4xf32>
    })mlir",
                                 {randomF32({2, 3, 4}, 85), Tensor::fromI64({3, 3}, {0, 1, 2, 0, 1, 2, 0, 1, 2}),
                                  Tensor::fromF32({2}, {1, 1})});
  EXPECT_THAT(message, HasSubstr("graph.rotary"));
  EXPECT_THAT(message, HasSubstr("positions [3, 3] must be [2 or 1, 3]"));
}

TEST(FusedErrors, RotaryPositionOutsideCaches) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<1x2x4xf32>, %pos: tensor<1x2xi64>, %c: tensor<4x2xf32>) -> tensor<1x2x4xf32> {
      %0 = graph.rotary %x caches(%c, %c) positions(%pos)
          {num_heads = 1 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<1x2x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<1x2xi64>) -> tensor<1x2x4xf32>
      return %0 : tensor<1x2x4xf32>
    })mlir",
                                 {randomF32({1, 2, 4}, 86), Tensor::fromI64({1, 2}, {3, 4}),
                                  randomF32({4, 2}, 87)});
  EXPECT_THAT(message, HasSubstr("graph.rotary"));
  EXPECT_THAT(message, HasSubstr("position 4 is outside the caches' 4 rows"));
}

TEST(FusedErrors, RotaryPerTokenCachesShape) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2x3x4xf32>, %c: tensor<?x?x2xf32>) -> tensor<2x3x4xf32> {
      %0 = graph.rotary %x caches(%c, %c)
          {num_heads = 1 : i64, rotated_heads = 1 : i64, head_dim = 4 : i64, rotary_dim = 4 : i64}
          : (tensor<2x3x4xf32>, tensor<?x?x2xf32>, tensor<?x?x2xf32>) -> tensor<2x3x4xf32>
      return %0 : tensor<2x3x4xf32>
    })mlir",
                                 {randomF32({2, 3, 4}, 88), randomF32({2, 2, 2}, 89)});
  EXPECT_THAT(message, HasSubstr("graph.rotary"));
  EXPECT_THAT(message, HasSubstr("per-token caches [2, 2, 2] must be [2 or 1, 3, 2]"));
}

TEST(FusedErrors, AttentionShapes) {
  constexpr const char *kAttention = R"mlir(
    func.func @main(%q: tensor<1x?x4xf32>, %k: tensor<1x?x4xf32>, %v: tensor<1x?x4xf32>) -> tensor<1x?x4xf32> {
      %0 = graph.attention %q, %k, %v {num_heads = 1 : i64, num_kv_heads = 1 : i64, head_dim = 4 : i64,
                                       scale = 1.000000e+00 : f32, causal = true}
          : (tensor<1x?x4xf32>, tensor<1x?x4xf32>, tensor<1x?x4xf32>) -> tensor<1x?x4xf32>
      return %0 : tensor<1x?x4xf32>
    })mlir";
  std::string mismatch = runError(
      kAttention, {randomF32({1, 2, 4}, 86), randomF32({1, 3, 4}, 87), randomF32({1, 2, 4}, 88)});
  EXPECT_THAT(mismatch, HasSubstr("graph.attention"));
  EXPECT_THAT(mismatch, HasSubstr("k [1, 3, 4] and v [1, 2, 4] must have the same shape"));
  // Causal with fewer keys than queries leaves query 0 with nothing to see.
  std::string shortKv = runError(
      kAttention, {randomF32({1, 3, 4}, 86), randomF32({1, 2, 4}, 87), randomF32({1, 2, 4}, 88)});
  EXPECT_THAT(shortKv, HasSubstr("query 0 sees no key (seq = 3, kv_seq = 2, causal)"));
}

TEST(FusedErrors, GatedActivationShapes) {
  std::string pair = runError(R"mlir(
    func.func @main(%g: tensor<?xf32>, %u: tensor<?xf32>) -> tensor<?xf32> {
      %0 = graph.gated_activation %g, %u {activation = "silu"} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir",
                              {randomF32({3}, 89), randomF32({4}, 90)});
  EXPECT_THAT(pair, HasSubstr("graph.gated_activation"));
  EXPECT_THAT(pair, HasSubstr("gate [3] and up [4] must have the same shape"));
  std::string odd = runError(R"mlir(
    func.func @main(%gu: tensor<?xf32>) -> tensor<?xf32> {
      %0 = graph.gated_activation %gu {activation = "gelu"} : (tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    })mlir",
                             {randomF32({5}, 91)});
  EXPECT_THAT(odd, HasSubstr("packed gate_up [5] has an odd number of features"));
}

TEST(FusedErrors, NonF32Input) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<1x2xi64>, %w: tensor<2x2xi64>) -> tensor<1x2xi64> {
      %0 = graph.linear %x, %w : (tensor<1x2xi64>, tensor<2x2xi64>) -> tensor<1x2xi64>
      return %0 : tensor<1x2xi64>
    })mlir",
                                 {Tensor::fromI64({1, 2}, {1, 2}), Tensor::fromI64({2, 2}, {1, 0, 0, 1})});
  EXPECT_THAT(message, HasSubstr("graph.linear"));
  EXPECT_THAT(message, HasSubstr("input must be f32, got i64"));
}

TEST(FusedErrors, ErrorInsideFusionGroupNamesBothOps) {
  std::string message = runError(R"mlir(
    func.func @main(%table: tensor<3x2xf32>, %ids: tensor<1xi64>) -> tensor<1x2xf32> {
      %0 = graph.fusion_group %table, %ids : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<1x2xf32> {
      ^bb0(%t: tensor<3x2xf32>, %i: tensor<1xi64>):
        %e = graph.embedding %t, %i : (tensor<3x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
        graph.yield %e : tensor<1x2xf32>
      }
      return %0 : tensor<1x2xf32>
    })mlir",
                                 {Tensor::fromF32({3, 2}, {1, 2, 3, 4, 5, 6}), Tensor::fromI64({1}, {7})});
  EXPECT_THAT(message, HasSubstr("graph.fusion_group"));
  EXPECT_THAT(message, HasSubstr("graph.embedding"));
  EXPECT_THAT(message, HasSubstr("id 7 is outside [0, 3)"));
}

} // namespace
