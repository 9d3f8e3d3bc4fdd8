//===- LowPrecision.cpp - bf16/f16 encoding and rounding ------------------===//
//
// The encodings themselves live in runtime/base/LowPrecision.cpp (shared with
// the runtime); these are the interpreter's format-generic helpers.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/LowPrecision.h"

using namespace infer::interp;

float infer::interp::roundTo(HalfFormat format, float value) {
  if (format == HalfFormat::BF16)
    return floatFromBF16(bf16FromFloat(value));
  return floatFromF16(f16FromFloat(value));
}

void infer::interp::roundAllTo(HalfFormat format, llvm::MutableArrayRef<float> values) {
  for (float &value : values)
    value = roundTo(format, value);
}

float infer::interp::decodeHalf(HalfFormat format, uint16_t bits) {
  return format == HalfFormat::BF16 ? floatFromBF16(bits) : floatFromF16(bits);
}
