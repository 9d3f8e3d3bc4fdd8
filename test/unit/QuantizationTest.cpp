//===- QuantizationTest.cpp - runtime/base/Quantization.h -----------------===//
//
// E4M3FN encoding and decoding against llvm::APFloat's Float8E4M3FN (an
// independent implementation), and int4 / fp8 weight quantization on values
// worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "runtime/base/Quantization.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace infer::quant;

namespace {

uint8_t apfloatE4M3(float value) {
  llvm::APFloat f(value);
  bool losesInfo = false;
  f.convert(llvm::APFloat::Float8E4M3FN(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return static_cast<uint8_t>(f.bitcastToAPInt().getZExtValue());
}

TEST(Quantization, E4M3DecodesEveryCodeAsAPFloat) {
  for (int code = 0; code < 256; ++code) {
    llvm::APFloat expected(llvm::APFloat::Float8E4M3FN(), llvm::APInt(8, code));
    float got = floatFromE4M3(static_cast<uint8_t>(code));
    if (expected.isNaN()) {
      EXPECT_TRUE(std::isnan(got)) << code;
      continue;
    }
    EXPECT_EQ(got, expected.convertToFloat()) << code;
    EXPECT_EQ(e4m3FromFloat(got), code) << code; // every finite code round-trips
  }
}

TEST(Quantization, E4M3EncodesLikeAPFloatTiesToEven) {
  std::vector<float> values;
  // Each pair of neighbouring codes' midpoint (a tie) and values just either side.
  for (int code = 0; code < 0x7e; ++code) {
    float low = floatFromE4M3(static_cast<uint8_t>(code));
    float high = floatFromE4M3(static_cast<uint8_t>(code + 1));
    float mid = (low + high) / 2;
    values.insert(values.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)});
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-12.0f, 8.8f);
  for (int i = 0; i < 200000; ++i)
    values.push_back(std::exp2(exponent(rng)));
  for (float magnitude : values) {
    ASSERT_LE(magnitude, 448.0f);
    for (float value : {magnitude, -magnitude})
      ASSERT_EQ(e4m3FromFloat(value), apfloatE4M3(value)) << value;
  }
}

TEST(Quantization, E4M3SaturatesPast448) {
  EXPECT_EQ(e4m3FromFloat(1000.0f), 0x7e);
  EXPECT_EQ(e4m3FromFloat(-465.0f), 0xfe);
  EXPECT_TRUE(std::isnan(floatFromE4M3(e4m3FromFloat(NAN))));
}

TEST(Quantization, Int4GroupsRoundToNearestEven) {
  // Row 0, group 0: max |w| = 3.5, scale 0.5: 3.5 -> 7, -1.25 -> -2.5 -> -2
  // (even), 0.25 -> 0.5 -> 0 (even), 0.75 -> 1.5 -> 2 (even).
  // Row 0, group 1 is all zero: scale 1, q 0. Row 1: scale 7 / 7 = 1.
  std::vector<float> w = {3.5f, -1.25f, 0.25f, 0.75f, 0, 0, 0, 0,
                          7.0f, -7.0f,  2.5f,  -0.5f, 1, 2, 3, 4};
  std::vector<uint8_t> q(8);
  std::vector<float> scales(4);
  quantize(Scheme::Int4, w.data(), 2, 8, 4, q.data(), scales.data());
  EXPECT_EQ(scales, (std::vector<float>{0.5f, 1.0f, 1.0f, 4.0f / 7.0f}));
  // Two a byte, the even k in the low nibble, two's complement.
  EXPECT_EQ(q[0], 0xe7); // 7, -2
  EXPECT_EQ(q[1], 0x20); // 0, 2
  EXPECT_EQ(q[2], 0x00);
  EXPECT_EQ(q[4], 0x97); // 7, -7
  EXPECT_EQ(q[5], 0x02); // 2.5 -> 2 (even), -0.5 -> -0 (even)
  std::vector<float> row(8);
  dequantizeRow(Scheme::Int4, q.data(), scales.data(), nullptr, 8, 4, 0, row.data());
  EXPECT_EQ(row, (std::vector<float>{3.5f, -1.0f, 0, 1.0f, 0, 0, 0, 0}));
}

TEST(Quantization, ClipGroupsClampsEachGroupToItsRatioOfItsMax) {
  // Row 0: group 0 (max 4) at 0.5 clamps to +-2, group 1 at 1 stays; row 1: group 0
  // (max 8) at 0.75 clamps to +-6, the all-zero group 1 stays zero.
  std::vector<float> w = {4.0f,  -3.0f, 1.0f, -0.5f, 1.0f, -2.0f, 0.5f, 0.25f,
                          -8.0f, 7.0f,  5.0f, 6.5f,  0,    0,     0,    0};
  std::vector<float> ratio = {0.5f, 1.0f, 0.75f, 0.5f};
  clipGroups(w.data(), 2, 8, 4, ratio.data());
  EXPECT_EQ(w, (std::vector<float>{2.0f, -2.0f, 1.0f, -0.5f, 1.0f, -2.0f, 0.5f, 0.25f, -6.0f, 6.0f,
                                   5.0f, 6.0f, 0, 0, 0, 0}));
  // Quantized after the clamp, the group's scale covers the clipped range: 2 / 7.
  std::vector<uint8_t> q(8);
  std::vector<float> scales(4);
  quantize(Scheme::Int4, w.data(), 2, 8, 4, q.data(), scales.data());
  EXPECT_FLOAT_EQ(scales[0], 2.0f / 7.0f);
  EXPECT_FLOAT_EQ(scales[2], 6.0f / 7.0f);
}

TEST(Quantization, Fp8RowScaleMapsTheLargestTo448) {
  std::vector<float> w = {1.0f, -2.0f, 0.5f, 0.0f};
  std::vector<uint8_t> q(4);
  float scale = 0;
  quantize(Scheme::Fp8, w.data(), 1, 4, 0, q.data(), &scale);
  EXPECT_EQ(scale, 2.0f / 448.0f);
  std::vector<float> row(4);
  dequantizeRow(Scheme::Fp8, q.data(), &scale, nullptr, 4, 0, 0, row.data());
  // 1 / (2/448) = 224 and 0.5 -> 112 are exact in E4M3; so is -448.
  EXPECT_EQ(row, (std::vector<float>{224 * scale, -448 * scale, 112 * scale, 0.0f}));
  std::vector<float> x = {0, 0, 0};
  EXPECT_EQ(fakeQuantizeRowFp8(x.data(), 3), 1.0f); // an all-zero row keeps scale 1
}

TEST(Quantization, Int8GroupsAndZeroPoints) {
  // Group 0: max |w| = 127 -> scale 1; group 1: max 2.54 -> scale 0.02.
  std::vector<float> w = {127.0f, -3.5f, 2.54f, -1.27f};
  std::vector<uint8_t> q(4);
  std::vector<float> scales(2);
  quantize(Scheme::Int8, w.data(), 1, 4, 2, q.data(), scales.data());
  EXPECT_EQ(scales[0], 1.0f);
  EXPECT_EQ(scales[1], 2.54f / 127.0f);
  EXPECT_EQ(static_cast<int8_t>(q[0]), 127);
  EXPECT_EQ(static_cast<int8_t>(q[1]), -4); // -3.5 -> -4 (even)
  EXPECT_EQ(static_cast<int8_t>(q[2]), 127);
  EXPECT_EQ(static_cast<int8_t>(q[3]), -64); // -63.5 -> -64 (even)
  // An imported weight's zero point: w = (q - z) * scale per group.
  std::vector<float> zeros = {1.0f, -2.0f}, row(4);
  dequantizeRow(Scheme::Int8, q.data(), scales.data(), zeros.data(), 4, 2, 0, row.data());
  EXPECT_EQ(row, (std::vector<float>{126.0f, -5.0f, 129 * scales[1], -62 * scales[1]}));
  EXPECT_EQ(shapeError(Scheme::Int8, 6, 4), "int8 group size 4 must divide k = 6");
  EXPECT_EQ(shapeError(Scheme::Fp8Weight, 6, 3),
            "fp8-weight has one scale a row: group size must be 0");
  EXPECT_EQ(parseScheme("fp8-weight"), Scheme::Fp8Weight);
}

} // namespace
