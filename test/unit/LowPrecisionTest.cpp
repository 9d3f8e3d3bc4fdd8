//===- LowPrecisionTest.cpp - interpreter tests: bf16 and f16 -------------===//
//
// bf16/f16 values are held as f32, computed in f32 and rounded (nearest even)
// wherever a value of the narrow type is bound. The encoders are checked
// against hand-computed bit patterns and, exhaustively or on many random
// patterns, against llvm::APFloat as an independent reference; the graph
// tests compare with results worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

#include "dialects/graph/IR/GraphDialect.h"
#include "dialects/graph/IR/GraphOps.h"
#include "dialects/graph/IR/GraphResources.h"
#include "dialects/graph/Interpreter/Interpreter.h"
#include "dialects/graph/Interpreter/LowPrecision.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/APFloat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace infer;
using namespace infer::interp;
using namespace infer::test;
using ::testing::HasSubstr;

namespace {

const float kInf = std::numeric_limits<float>::infinity();

uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

/// Exact comparison (the tolerance of expectF32 would hide a wrong rounding).
void expectExactly(const Tensor &actual, const std::vector<int64_t> &shape,
                   const std::vector<float> &values) {
  ASSERT_EQ(actual.dtype(), DType::F32);
  ASSERT_EQ(actual.shape(), shape);
  ASSERT_EQ(actual.numElements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(bitsOf(actual.f32()[i]), bitsOf(values[i]))
        << "element " << i << ": got " << actual.f32()[i] << ", want " << values[i];
}

//===----------------------------------------------------------------------===//
// Encoders, against hand-computed values
//===----------------------------------------------------------------------===//

TEST(LowPrecision, BF16RoundsToNearestEven) {
  // bf16 keeps 7 mantissa bits: next to 1.0 the spacing is 2^-7.
  EXPECT_EQ(bf16FromFloat(1.0f), 0x3F80);
  // 1 + 2^-8 is halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): even.
  EXPECT_EQ(bf16FromFloat(1.0f + 0x1p-8f), 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 0x3F81 (odd) and 0x3F82 = 1 + 2^-6: even.
  EXPECT_EQ(bf16FromFloat(1.0f + 3 * 0x1p-8f), 0x3F82);
  // Just past the halfway point rounds up.
  EXPECT_EQ(bf16FromFloat(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
  EXPECT_EQ(bf16FromFloat(-(1.0f + 0x1p-8f)), 0xBF80);
  // 0.1f = 0x3DCCCCCD: the dropped 0xCCCD is above half, so 0x3DCD.
  EXPECT_EQ(bf16FromFloat(0.1f), 0x3DCD);
  // The largest f32 rounds past the largest bf16 (0x7F7F) to infinity.
  EXPECT_EQ(bf16FromFloat(std::numeric_limits<float>::max()), 0x7F80);
  EXPECT_EQ(bf16FromFloat(-kInf), 0xFF80);
  EXPECT_TRUE(std::isnan(floatFromBF16(bf16FromFloat(std::nanf("")))));
  // A NaN whose payload is only in the dropped bits must not become infinity.
  EXPECT_TRUE(std::isnan(floatFromBF16(bf16FromFloat(floatOf(0x7F800001)))));

  EXPECT_EQ(floatFromBF16(0x3F81), 1.0078125f);
  EXPECT_EQ(floatFromBF16(0xC040), -3.0f);
  EXPECT_EQ(roundTo(HalfFormat::BF16, 0.1f), 0.10009765625f);
}

TEST(LowPrecision, F16RoundsToNearestEven) {
  EXPECT_EQ(f16FromFloat(1.0f), 0x3C00);
  EXPECT_EQ(f16FromFloat(-2.0f), 0xC000);
  // f16 keeps 10 mantissa bits: 1 + 2^-11 is a tie (to 1), 1 + 3 * 2^-11 a
  // tie between 0x3C01 (odd) and 0x3C02 (even).
  EXPECT_EQ(f16FromFloat(1.0f + 0x1p-11f), 0x3C00);
  EXPECT_EQ(f16FromFloat(1.0f + 3 * 0x1p-11f), 0x3C02);
  EXPECT_EQ(f16FromFloat(0.1f), 0x2E66); // 0.0999755859375
  // Largest finite 65504; up to 65520 (exclusive) rounds down to it, 65520
  // is the tie with 65536 = "2^16", which is out of range: infinity.
  EXPECT_EQ(f16FromFloat(65504.0f), 0x7BFF);
  EXPECT_EQ(f16FromFloat(65519.0f), 0x7BFF);
  EXPECT_EQ(f16FromFloat(65520.0f), 0x7C00);
  EXPECT_EQ(f16FromFloat(-65520.0f), 0xFC00);
  EXPECT_EQ(f16FromFloat(1e10f), 0x7C00);
  EXPECT_EQ(f16FromFloat(kInf), 0x7C00);
  EXPECT_TRUE(std::isnan(floatFromF16(f16FromFloat(std::nanf("")))));
}

TEST(LowPrecision, F16Subnormals) {
  // Smallest subnormal 2^-24, largest 1023 * 2^-24, smallest normal 2^-14.
  EXPECT_EQ(f16FromFloat(0x1p-24f), 0x0001);
  EXPECT_EQ(f16FromFloat(1023 * 0x1p-24f), 0x03FF);
  EXPECT_EQ(f16FromFloat(0x1p-14f), 0x0400);
  // 2^-25 is the tie between 0 and 2^-24: to zero (even); a little more
  // rounds up. 1.5 * 2^-24 ties between 1 and 2 units: to 2.
  EXPECT_EQ(f16FromFloat(0x1p-25f), 0x0000);
  EXPECT_EQ(f16FromFloat(0x1p-25f + 0x1p-40f), 0x0001);
  EXPECT_EQ(f16FromFloat(1.5f * 0x1p-24f), 0x0002);
  EXPECT_EQ(f16FromFloat(-0x1p-24f), 0x8001);
  // 1023.5 units rounds up into the smallest normal.
  EXPECT_EQ(f16FromFloat(1023.5f * 0x1p-24f), 0x0400);
  EXPECT_EQ(f16FromFloat(1e-8f), 0x0000); // below 2^-25
  EXPECT_EQ(f16FromFloat(-0.0f), 0x8000);

  EXPECT_EQ(floatFromF16(0x0001), 0x1p-24f);
  EXPECT_EQ(floatFromF16(0x03FF), 1023 * 0x1p-24f);
  EXPECT_EQ(floatFromF16(0x7BFF), 65504.0f);
  EXPECT_EQ(floatFromF16(0xFC00), -kInf);
  EXPECT_TRUE(std::signbit(floatFromF16(0x8000)));
}

//===----------------------------------------------------------------------===//
// Encoders, against llvm::APFloat
//===----------------------------------------------------------------------===//

uint16_t apfloatEncode(const llvm::fltSemantics &semantics, float value) {
  llvm::APFloat converted(value);
  bool losesInfo;
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint16_t>(converted.bitcastToAPInt().getZExtValue());
}

TEST(LowPrecision, DecodingMatchesAPFloatForEveryPattern) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    float half = llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, bits)).convertToFloat();
    float brain = llvm::APFloat(llvm::APFloat::BFloat(), llvm::APInt(16, bits)).convertToFloat();
    if (std::isnan(half))
      EXPECT_TRUE(std::isnan(floatFromF16(uint16_t(bits)))) << bits;
    else
      ASSERT_EQ(bitsOf(floatFromF16(uint16_t(bits))), bitsOf(half)) << "f16 " << bits;
    if (std::isnan(brain))
      EXPECT_TRUE(std::isnan(floatFromBF16(uint16_t(bits)))) << bits;
    else
      ASSERT_EQ(bitsOf(floatFromBF16(uint16_t(bits))), bitsOf(brain)) << "bf16 " << bits;
  }
}

TEST(LowPrecision, EncodingMatchesAPFloat) {
  std::vector<float> values;
  // Every f16/bf16 value, the midpoints between neighbours and one ulp
  // (of f32) either side of them: where rounding decisions are made.
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    for (uint32_t base : {uint32_t(bitsOf(floatFromF16(uint16_t(bits)))), bits << 16}) {
      for (uint32_t offset : {0u, 0x1000u, 0x8000u}) // f16: 2^12 is half an ulp
        for (int32_t nudge : {-1, 0, 1})
          values.push_back(floatOf(base + offset + uint32_t(nudge)));
    }
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i)
    values.push_back(floatOf(uint32_t(rng())));
  for (float value : values) {
    if (std::isnan(value))
      continue;
    ASSERT_EQ(f16FromFloat(value), apfloatEncode(llvm::APFloat::IEEEhalf(), value))
        << "f16 of " << value << " (0x" << std::hex << bitsOf(value) << ")";
    ASSERT_EQ(bf16FromFloat(value), apfloatEncode(llvm::APFloat::BFloat(), value))
        << "bf16 of " << value << " (0x" << std::hex << bitsOf(value) << ")";
  }
}

TEST(LowPrecision, RoundAllToBF16IsRoundToOnEveryKindOfPattern) {
  // roundAllTo's branch-free bf16 loop against the scalar roundTo: every top
  // half with the low halves where rounding decides (0, just below, at and
  // above the midpoint, all ones; NaNs and infinities among them), and
  // patterns spread over all 2^32.
  std::vector<float> values;
  for (uint32_t high = 0; high <= 0xFFFF; ++high)
    for (uint32_t low : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      values.push_back(floatOf((high << 16) | low));
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 65521)
    values.push_back(floatOf(uint32_t(bits)));
  std::vector<float> rounded = values;
  roundAllTo(HalfFormat::BF16, rounded);
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(bitsOf(rounded[i]), bitsOf(roundTo(HalfFormat::BF16, values[i])))
        << "0x" << std::hex << bitsOf(values[i]);
}

//===----------------------------------------------------------------------===//
// Graphs: compute in f32, store rounded
//===----------------------------------------------------------------------===//

TEST(LowPrecision, BF16MatMulRoundsTheF32Result) {
  // A = [[1, 1, 1], [1, 3, 0]], B = [[1, 0], [2^-8, 1], [2^-8, 0]].
  //   (0,0): 1 + 2^-8 + 2^-8 = 1 + 2^-7, exact in bf16. Rounding after each
  //          step would have lost both 2^-8 (ties to 1); f32 accumulation keeps them.
  //   (0,1): 1.   (1,1): 3.
  //   (1,0): 1 + 3 * 2^-8, the tie between 1 + 2^-7 (odd) and 1 + 2^-6: 1 + 2^-6.
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<2x3xbf16>, %b: tensor<3x2xbf16>) -> tensor<2x2xbf16> {
      %0 = graph.matmul %a, %b : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
      return %0 : tensor<2x2xbf16>
    })mlir",
                       {Tensor::fromF32({2, 3}, {1, 1, 1, 1, 3, 0}),
                        Tensor::fromF32({3, 2}, {1, 0, 0x1p-8f, 1, 0x1p-8f, 0})});
  ASSERT_EQ(results.size(), 1u);
  expectExactly(results[0], {2, 2}, {1.0f + 0x1p-7f, 1.0f, 1.0f + 0x1p-6f, 3.0f});
}

TEST(LowPrecision, AddRoundsSumsThatAreNotRepresentable) {
  // bf16: 1 + 2^-8 ties to 1; 1 + 3 * 2^-8 ties up to 1 + 2^-6; 256 + 1 = 257
  // ties (spacing 2 above 256) to 256; 1 + 2^-7 is exact.
  // f16: 65504 + 16 = 65520 overflows to inf; 2048 + 1 ties to 2048; 2048 + 3
  // = 2051 ties between 2050 (odd) and 2052.
  auto results = runOk(R"mlir(
    func.func @main(%a: tensor<4xbf16>, %b: tensor<4xbf16>, %c: tensor<3xf16>, %d: tensor<3xf16>)
        -> (tensor<4xbf16>, tensor<3xf16>) {
      %0 = graph.add %a, %b : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
      %1 = graph.add %c, %d : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
      return %0, %1 : tensor<4xbf16>, tensor<3xf16>
    })mlir",
                       {Tensor::fromF32({4}, {1, 1, 256, 1}),
                        Tensor::fromF32({4}, {0x1p-8f, 3 * 0x1p-8f, 1, 0x1p-7f}),
                        Tensor::fromF32({3}, {65504, 2048, 2048}),
                        Tensor::fromF32({3}, {16, 1, 3})});
  ASSERT_EQ(results.size(), 2u);
  expectExactly(results[0], {4}, {1.0f, 1.0f + 0x1p-6f, 256.0f, 1.0f + 0x1p-7f});
  expectExactly(results[1], {3}, {kInf, 2048.0f, 2052.0f});
}

TEST(LowPrecision, InputsAreRoundedToTheirType) {
  // An f32 input for a bf16 argument is the bf16 value nearest to it.
  auto results = runOk(R"mlir(
    func.func @main(%x: tensor<3xbf16>) -> tensor<3xbf16> {
      return %x : tensor<3xbf16>
    })mlir",
                       {Tensor::fromF32({3}, {0.1f, 1.0f + 0x1p-8f, -3.0f})});
  ASSERT_EQ(results.size(), 1u);
  expectExactly(results[0], {3}, {0.10009765625f, 1.0f, -3.0f});
}

TEST(LowPrecision, CastsRoundTrip) {
  // f32 -> bf16 -> f32 and f32 -> f16 -> f32 round once (values as in the
  // encoder tests); i64 -> bf16 goes through f32: 257 ties to 256, 259 ties
  // between 258 (odd) and 260; back to i64 the bf16 values are exact. bf16 ->
  // f16 is exact for these (f16 has more mantissa bits).
  auto results = runOk(R"mlir(
    func.func @main(%f: tensor<4xf32>, %i: tensor<3xi64>)
        -> (tensor<4xf32>, tensor<4xf32>, tensor<3xi64>, tensor<3xf16>) {
      %0 = graph.cast %f : (tensor<4xf32>) -> tensor<4xbf16>
      %1 = graph.cast %0 : (tensor<4xbf16>) -> tensor<4xf32>
      %2 = graph.cast %f : (tensor<4xf32>) -> tensor<4xf16>
      %3 = graph.cast %2 : (tensor<4xf16>) -> tensor<4xf32>
      %4 = graph.cast %i : (tensor<3xi64>) -> tensor<3xbf16>
      %5 = graph.cast %4 : (tensor<3xbf16>) -> tensor<3xi64>
      %6 = graph.cast %4 : (tensor<3xbf16>) -> tensor<3xf16>
      return %1, %3, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<3xi64>, tensor<3xf16>
    })mlir",
                       {Tensor::fromF32({4}, {0.1f, 1.0f + 3 * 0x1p-8f, 65520.0f, 1.5f * 0x1p-24f}),
                        Tensor::fromI64({3}, {257, 259, -3})});
  ASSERT_EQ(results.size(), 4u);
  // bf16 has f32's exponent range: 65520 = 0x477FF000 is 0x4780 = 65536 after
  // rounding; 1.5 * 2^-24 is exact (a normal bf16).
  expectExactly(results[0], {4}, {0.10009765625f, 1.0f + 0x1p-6f, 65536.0f, 1.5f * 0x1p-24f});
  // f16: 0x2E66; 1 + 3 * 2^-8 is exact (10 mantissa bits); 65520 -> inf;
  // 1.5 subnormal units tie to 2.
  expectExactly(results[1], {4}, {0.0999755859375f, 1.0f + 3 * 0x1p-8f, kInf, 0x1p-23f});
  expectI64(results[2], {3}, {256, 260, -3});
  expectExactly(results[3], {3}, {256.0f, 260.0f, -3.0f});
}

TEST(LowPrecision, DenseConstantsDecode) {
  // The parser rounds the literals to the element type; the interpreter must
  // read back exactly those values (1.00390625 = 1 + 2^-8 ties to 1 in bf16).
  auto results = runOk(R"mlir(
    func.func @main() -> (tensor<3xbf16>, tensor<2xf16>) {
      %0 = graph.constant dense<[1.5, -2.0, 1.00390625]> : tensor<3xbf16>
      %1 = graph.constant dense<[0.1, 5.9604644775390625E-8]> : tensor<2xf16>
      return %0, %1 : tensor<3xbf16>, tensor<2xf16>
    })mlir");
  ASSERT_EQ(results.size(), 2u);
  expectExactly(results[0], {3}, {1.5f, -2.0f, 1.0f});
  expectExactly(results[1], {2}, {0.0999755859375f, 0x1p-24f});
}

TEST(LowPrecision, WrongInputDTypeIsAnError) {
  std::string message = runError(R"mlir(
    func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {
      return %x : tensor<2xbf16>
    })mlir",
                                 {Tensor::fromI64({2}, {1, 2})});
  EXPECT_THAT(message, HasSubstr("input 0 is i64[2], which does not match its type tensor<2xbf16>"));
}

//===----------------------------------------------------------------------===//
// Weights: raw little-endian bytes
//===----------------------------------------------------------------------===//

TEST(LowPrecision, WeightsDecodeFromRawBytes) {
  mlir::MLIRContext context;
  context.loadDialect<graph::GraphDialect, mlir::func::FuncDialect>();
  mlir::OpBuilder builder(&context);
  mlir::Location loc = mlir::NameLoc::get(builder.getStringAttr("weights"));
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module->getBody());

  // bf16 0x3F80 = 1, 0xC040 = -3, 0x3F81 = 1 + 2^-7, 0x7F80 = inf;
  // f16 0x3C00 = 1, 0x0001 = 2^-24, 0xFBFF = -65504. Little-endian.
  struct Weight {
    const char *name;
    mlir::RankedTensorType type;
    std::string bytes;
  };
  std::vector<Weight> weights = {
      {"w.bf16", mlir::RankedTensorType::get({2, 2}, builder.getBF16Type()),
       std::string("\x80\x3F\x40\xC0\x81\x3F\x80\x7F", 8)},
      {"w.f16", mlir::RankedTensorType::get({3}, builder.getF16Type()),
       std::string("\x00\x3C\x01\x00\xFF\xFB", 6)},
  };
  llvm::SmallVector<mlir::Type> types;
  for (const Weight &weight : weights)
    types.push_back(weight.type);
  auto func = mlir::func::FuncOp::create(builder, loc, "main", builder.getFunctionType({}, types));
  builder.setInsertionPointToStart(func.addEntryBlock());
  llvm::SmallVector<mlir::Value> values;
  for (const Weight &weight : weights) {
    auto data = std::make_unique<char[]>(weight.bytes.size());
    std::memcpy(data.get(), weight.bytes.data(), weight.bytes.size());
    graph::WeightHandle handle =
        graph::insertOwnedWeight(&context, weight.name, std::move(data), weight.bytes.size());
    values.push_back(graph::WeightOp::create(builder, loc, weight.type,
                                             graph::WeightAttr::get(&context, weight.type, handle)));
  }
  mlir::func::ReturnOp::create(builder, loc, values);

  auto results = interp::runFunction(func, {});
  ASSERT_TRUE(static_cast<bool>(results)) << llvm::toString(results.takeError());
  ASSERT_EQ(results->size(), 2u);
  expectExactly((*results)[0], {2, 2}, {1.0f, -3.0f, 1.0f + 0x1p-7f, kInf});
  expectExactly((*results)[1], {3}, {1.0f, 0x1p-24f, -65504.0f});

  // A bf16 weight with an odd byte count is a size mismatch.
  auto shortType = mlir::RankedTensorType::get({2}, builder.getBF16Type());
  auto data = std::make_unique<char[]>(3);
  graph::WeightHandle handle = graph::insertOwnedWeight(&context, "short", std::move(data), 3);
  builder.setInsertionPointToEnd(module->getBody());
  auto bad = mlir::func::FuncOp::create(builder, loc, "bad", builder.getFunctionType({}, {shortType}));
  builder.setInsertionPointToStart(bad.addEntryBlock());
  mlir::Value weight = graph::WeightOp::create(builder, loc, shortType,
                                               graph::WeightAttr::get(&context, shortType, handle));
  mlir::func::ReturnOp::create(builder, loc, weight);
  auto failed = interp::runFunction(bad, {});
  ASSERT_FALSE(static_cast<bool>(failed));
  EXPECT_THAT(llvm::toString(failed.takeError()),
              HasSubstr("weight 'short' holds 3 bytes but [2] of bf16 needs 4"));
}

} // namespace
