//===- Quantization.h - weight and activation quantization math -*- C++ -*-===//
//
// The quantization schemes of `infer-compile --quantize` (docs/quantization.md),
// shared by the artifact writer (which quantizes the weights once), the
// reference interpreter and the cpu backend (which dequantize them). Weights
// are [n, k] (a row per output channel); every rounding is to nearest even in
// f32, so all three agree bit for bit. No LLVM, no MLIR.
//
//   int4 (weight only): per row and group of `group` consecutive k, scale =
//        max|w| / 7 (1 where the group is all zero), q = clamp(rint(w /
//        scale), -8, 7); stored two a byte, the even k in the low nibble.
//   fp8  (W8A8, E4M3FN): per row, scale = max|w| / 448 (1 for a zero row),
//        q = e4m3(clamp(w / scale, ±448)); activations the same per token at
//        run time (dynamic), the product accumulated in f32 or wider.
//   int8 (weight only): per row and group, scale = max|w| / 127, q =
//        clamp(rint(w / scale), -128, 127), a byte each.
//   fp8-weight (weight only): fp8's weights, the activations as they are.
//
// Weights imported already quantized (ONNX DequantizeLinear, MatMulNBits)
// keep their own integers and scales, and may carry zero points: per group
// a float z (in the signed range of q) with w = (q - z) * scale.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_QUANTIZATION_H
#define INFER_RUNTIME_BASE_QUANTIZATION_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace infer::quant {

enum class Scheme { Int4, Fp8, Int8, Fp8Weight };

/// "int4" / "fp8" / "int8" / "fp8-weight" as a Scheme; nullopt for anything else.
std::optional<Scheme> parseScheme(std::string_view name);
const char *schemeName(Scheme scheme);

/// int4 and int8 have a scale (and zero point) a group of `group` k; the fp8
/// schemes one a row (group 0).
bool isGrouped(Scheme scheme);

/// Why a [n, k] weight cannot be quantized with `scheme` in groups of
/// `group` (int4: even, dividing k; int8: dividing k; fp8: 0), or "" when it can.
std::string shapeError(Scheme scheme, int64_t k, int64_t group);

/// w[row, j] *= f[j] for the [n, k] rows `w`: AWQ's input scales, applied to
/// a weight before it is quantized.
void scaleColumns(float *w, int64_t n, int64_t k, const float *f);

/// Clamps each group of `group` values of the [n, k] rows `w` to ±ratio[row,
/// g] times its own max |w| (ratio [n, k / group]): AWQ's clipping, applied
/// after scaleColumns and before quantize, so the group's scale covers the
/// clipped range.
void clipGroups(float *w, int64_t n, int64_t k, int64_t group, const float *ratio);

/// Bytes of the quantized [n, k] weight and number of its scales.
int64_t quantizedBytes(Scheme scheme, int64_t n, int64_t k);
int64_t scaleCount(Scheme scheme, int64_t n, int64_t k, int64_t group);

/// Quantizes f32 `w` [n, k] into `q` (quantizedBytes) and `scales`
/// (scaleCount; int4: [n, k / group]). int4 needs k % group == 0 and an
/// even group.
void quantize(Scheme scheme, const float *w, int64_t n, int64_t k, int64_t group, uint8_t *q,
              float *scales);

/// Row `row` of the dequantized weight: out[j] = (q[row, j] - zero) * scale,
/// `zeros` (scaleCount of them, grouped schemes only) or none (zero 0).
void dequantizeRow(Scheme scheme, const uint8_t *q, const float *scales, const float *zeros,
                   int64_t k, int64_t group, int64_t row, float *out);

/// The E4M3FN encoding of `value` (finite, |value| <= 448), nearest even.
uint8_t e4m3FromFloat(float value);
/// The f32 holding E4M3FN `bits` (exact; 0x7f / 0xff are NaN).
float floatFromE4M3(uint8_t bits);

/// A value as an FP8 KV cache holds it: e4m3(clamp(x / scale, ±448)) *
/// scale (NaN stays NaN).
float roundThroughE4M3(float x, float scale);

/// fp8's activation rounding of one token's `k` features in place: x =
/// e4m3(x / s) * s with s = max|x| / 448 (1 for a zero row). Returns s.
float fakeQuantizeRowFp8(float *x, int64_t k);

} // namespace infer::quant

#endif // INFER_RUNTIME_BASE_QUANTIZATION_H
