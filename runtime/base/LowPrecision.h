//===- LowPrecision.h - bf16/f16 encodings, round-to-nearest-even -*- C++ -*-===//
//
// Pure conversions between f32 and the 16-bit float encodings (IEEE
// round-to-nearest-even), shared by the compiler's reference interpreter
// (dialects/graph/Interpreter/LowPrecision.h) and the runtime's cpu backend, which
// both hold bf16/f16 values as f32 that are exactly representable in the
// 16-bit type ("compute in fp32, store rounded"). No LLVM, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_LOWPRECISION_H
#define INFER_RUNTIME_BASE_LOWPRECISION_H

#include <cstdint>

namespace infer::lowp {

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

/// `value` rounded to the nearest bf16 / f16, as an f32.
inline float roundToBF16(float value) { return floatFromBF16(bf16FromFloat(value)); }
inline float roundToF16(float value) { return floatFromF16(f16FromFloat(value)); }

} // namespace infer::lowp

#endif // INFER_RUNTIME_BASE_LOWPRECISION_H
