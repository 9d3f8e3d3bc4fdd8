//===- LowPrecision.cpp - bf16/f16 encodings, round-to-nearest-even -------===//

#include "runtime/base/LowPrecision.h"

#include <cmath>
#include <cstring>

using namespace infer::lowp;

namespace {

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

/// `value >> shift`, rounded to nearest even on the bits shifted out.
uint32_t shiftRightRoundingToEven(uint32_t value, unsigned shift) {
  uint32_t kept = value >> shift;
  uint32_t dropped = value & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (dropped > half || (dropped == half && (kept & 1)))
    ++kept;
  return kept;
}

} // namespace

uint16_t infer::lowp::bf16FromFloat(float value) {
  uint32_t bits = bitsOf(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x0040); // keep sign and payload, set quiet bit
  // A carry out of the mantissa bumps the exponent, up to infinity: that is
  // exactly round-to-nearest-even on the top 16 bits.
  return static_cast<uint16_t>(shiftRightRoundingToEven(bits, 16));
}

float infer::lowp::floatFromBF16(uint16_t bits) { return floatOf(uint32_t(bits) << 16); }

uint16_t infer::lowp::f16FromFloat(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000) // NaN: quiet, with the top payload bits
    return sign | 0x7e00 | static_cast<uint16_t>((magnitude >> 13) & 0x03ff);
  if (magnitude >= 0x477ff000) // >= 65520 (halfway past 65504) and infinity
    return sign | 0x7c00;
  int32_t exponent = int32_t(magnitude >> 23) - 127;
  uint32_t mantissa = magnitude & 0x007fffff;
  if (exponent >= -14) {
    // Normal: rebias the exponent (127 -> 15) and round 23 mantissa bits to
    // 10; a carry into the exponent is the right result (and cannot reach
    // infinity below 65520).
    uint32_t rebiased = (uint32_t(exponent + 15) << 23) | mantissa;
    return sign | static_cast<uint16_t>(shiftRightRoundingToEven(rebiased, 13));
  }
  // Subnormal (or zero): the result counts units of 2^-24. The f32 is
  // (2^23 + mantissa) * 2^(exponent - 23) = significand * 2^-24 * 2^(exponent + 1),
  // so shift the significand right by -(exponent + 1) >= 14 bits. Below 2^-25
  // everything rounds to zero; a round-up to 0x400 is the smallest normal.
  if (exponent < -25)
    return sign;
  uint32_t significand = mantissa | 0x00800000;
  return sign | static_cast<uint16_t>(shiftRightRoundingToEven(significand, unsigned(-(exponent + 1))));
}

float infer::lowp::floatFromF16(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1f;
  uint32_t mantissa = bits & 0x03ff;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
    float magnitude = std::ldexp(float(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) // infinity or NaN
    return floatOf(sign | 0x7f800000 | (mantissa << 13));
  return floatOf(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}
