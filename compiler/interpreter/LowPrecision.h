//===- LowPrecision.h - bf16/f16 encoding and rounding ----------*- C++ -*-===//
//
// The interpreter holds bf16 and f16 values as f32 ("compute in fp32, store
// rounded", as PyTorch does on the CPU): every value of a 16-bit float type is
// an f32 that is exactly representable in that type. These helpers convert
// between f32 and the 16-bit encodings with IEEE round-to-nearest-even.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_INTERPRETER_LOWPRECISION_H
#define INFER_COMPILER_INTERPRETER_LOWPRECISION_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace infer::interp {

/// The 16-bit float formats the interpreter stores as f32.
enum class HalfFormat {
  BF16, ///< bfloat16: 8 exponent bits, 7 mantissa bits (the top half of an f32)
  F16,  ///< IEEE binary16: 5 exponent bits, 10 mantissa bits
};

/// The bf16 encoding of `value`, rounded to nearest even. Values past the
/// largest finite bf16 round to infinity; NaN stays a (quiet) NaN.
uint16_t bf16FromFloat(float value);
/// The f32 holding bf16 `bits` (exact).
float floatFromBF16(uint16_t bits);

/// The f16 encoding of `value`, rounded to nearest even, with subnormals;
/// |value| >= 65520 becomes infinity and NaN stays a (quiet) NaN.
uint16_t f16FromFloat(float value);
/// The f32 holding f16 `bits` (exact, subnormals included).
float floatFromF16(uint16_t bits);

/// `value` rounded to the nearest value of `format`, as an f32.
float roundTo(HalfFormat format, float value);

/// Rounds every element of `values` to `format` in place.
void roundAllTo(HalfFormat format, llvm::MutableArrayRef<float> values);

/// The f32 holding the 16-bit `bits` of `format`.
float decodeHalf(HalfFormat format, uint16_t bits);

} // namespace infer::interp

#endif // INFER_COMPILER_INTERPRETER_LOWPRECISION_H
