//===- LowPrecision.h - bf16/f16 encoding and rounding ----------*- C++ -*-===//
//
// The interpreter holds bf16 and f16 values as f32 ("compute in fp32, store
// rounded", as PyTorch does on the CPU): every value of a 16-bit float type is
// an f32 that is exactly representable in that type. The conversions between
// f32 and the 16-bit encodings (IEEE round-to-nearest-even) are
// runtime/base/LowPrecision.h's, shared with the runtime's cpu backend.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_DIALECTS_GRAPH_INTERPRETER_LOWPRECISION_H
#define INFER_DIALECTS_GRAPH_INTERPRETER_LOWPRECISION_H

#include "runtime/base/LowPrecision.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace infer::interp {

/// The 16-bit float formats the interpreter stores as f32.
enum class HalfFormat {
  BF16, ///< bfloat16: 8 exponent bits, 7 mantissa bits (the top half of an f32)
  F16,  ///< IEEE binary16: 5 exponent bits, 10 mantissa bits
};

// The encodings (bf16FromFloat, floatFromBF16, f16FromFloat, floatFromF16)
// are the runtime's LLVM-free ones, re-exported here.
using lowp::bf16FromFloat;
using lowp::f16FromFloat;
using lowp::floatFromBF16;
using lowp::floatFromF16;

/// `value` rounded to the nearest value of `format`, as an f32.
float roundTo(HalfFormat format, float value);

/// Rounds every element of `values` to `format` in place.
void roundAllTo(HalfFormat format, llvm::MutableArrayRef<float> values);

/// The f32 holding the 16-bit `bits` of `format`.
float decodeHalf(HalfFormat format, uint16_t bits);

} // namespace infer::interp

#endif // INFER_DIALECTS_GRAPH_INTERPRETER_LOWPRECISION_H
