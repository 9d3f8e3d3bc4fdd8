//===- LowPrecision.cpp - bf16/f16 encoding and rounding ------------------===//
//
// The encodings themselves live in runtime/base/LowPrecision.cpp (shared with
// the runtime); these are the interpreter's format-generic helpers.
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/Interpreter/LowPrecision.h"

#include <cstring>

using namespace infer::interp;

float infer::interp::roundTo(HalfFormat format, float value) {
  if (format == HalfFormat::BF16)
    return floatFromBF16(bf16FromFloat(value));
  return floatFromF16(f16FromFloat(value));
}

void infer::interp::roundAllTo(HalfFormat format, llvm::MutableArrayRef<float> values) {
  if (format != HalfFormat::BF16) {
    for (float &value : values)
      value = roundTo(format, value);
    return;
  }
  // bf16 in one branch-free pass the compiler vectorizes: the same bits as
  // floatFromBF16(bf16FromFloat(x)) (a NaN keeps its sign and top payload and
  // turns quiet). Proofs round every value of a bf16 model this way, among
  // them an expert layer's 10^9 weights (most of a real MoE's compile time).
  for (float &value : values) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) & 0xffff0000u;
    const uint32_t quiet = (bits & 0xffff0000u) | 0x00400000u;
    bits = (bits & 0x7fffffffu) > 0x7f800000u ? quiet : rounded;
    std::memcpy(&value, &bits, sizeof bits);
  }
}

float infer::interp::decodeHalf(HalfFormat format, uint16_t bits) {
  return format == HalfFormat::BF16 ? floatFromBF16(bits) : floatFromF16(bits);
}
