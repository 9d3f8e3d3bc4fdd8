//===- Quantization.cpp - weight and activation quantization math ---------===//

#include "runtime/base/Quantization.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace infer::quant {
namespace {

constexpr float kInt4Max = 7.0f;
constexpr float kInt8Max = 127.0f;
constexpr float kE4M3Max = 448.0f;

/// max|x| over `count` values; NaN when one is NaN.
float absMax(const float *x, int64_t count) {
  float best = 0.0f;
  for (int64_t i = 0; i < count; ++i) {
    float a = std::fabs(x[i]);
    if (std::isnan(a))
      return a;
    best = std::max(best, a);
  }
  return best;
}

/// The scale that maps max|x| = `amax` to `top`; 1 for an all-zero range.
float scaleFor(float amax, float top) {
  float scale = amax / top;
  return scale == 0.0f ? 1.0f : scale;
}

int8_t int4Of(float value, float scale) {
  float r = std::nearbyint(value / scale);
  if (std::isnan(r))
    return 0;
  return static_cast<int8_t>(std::clamp(r, -8.0f, kInt4Max));
}

int8_t int8Of(float value, float scale) {
  float r = std::nearbyint(value / scale);
  if (std::isnan(r))
    return 0;
  return static_cast<int8_t>(std::clamp(r, -128.0f, kInt8Max));
}

int int4At(const uint8_t *q, int64_t index) {
  uint8_t byte = q[index / 2];
  int nibble = index % 2 ? byte >> 4 : byte & 0xf;
  return nibble >= 8 ? nibble - 16 : nibble;
}

} // namespace

std::optional<Scheme> parseScheme(std::string_view name) {
  if (name == "int4")
    return Scheme::Int4;
  if (name == "fp8")
    return Scheme::Fp8;
  if (name == "int8")
    return Scheme::Int8;
  if (name == "fp8-weight")
    return Scheme::Fp8Weight;
  return std::nullopt;
}

const char *schemeName(Scheme scheme) {
  switch (scheme) {
  case Scheme::Int4:
    return "int4";
  case Scheme::Fp8:
    return "fp8";
  case Scheme::Int8:
    return "int8";
  case Scheme::Fp8Weight:
    return "fp8-weight";
  }
  return "?";
}

bool isGrouped(Scheme scheme) { return scheme == Scheme::Int4 || scheme == Scheme::Int8; }

std::string shapeError(Scheme scheme, int64_t k, int64_t group) {
  if (scheme == Scheme::Int4 && (group <= 0 || group % 2 || k % group))
    return "int4 group size " + std::to_string(group) +
           " must be even and divide k = " + std::to_string(k);
  if (scheme == Scheme::Int8 && (group <= 0 || k % group))
    return "int8 group size " + std::to_string(group) + " must divide k = " + std::to_string(k);
  if (!isGrouped(scheme) && group != 0)
    return std::string(schemeName(scheme)) + " has one scale a row: group size must be 0";
  return "";
}

void scaleColumns(float *w, int64_t n, int64_t k, const float *f) {
  for (int64_t row = 0; row < n; ++row)
    for (int64_t j = 0; j < k; ++j)
      w[row * k + j] *= f[j];
}

void clipGroups(float *w, int64_t n, int64_t k, int64_t group, const float *ratio) {
  const int64_t groups = k / group;
  for (int64_t row = 0; row < n; ++row)
    for (int64_t g = 0; g < groups; ++g) {
      float *x = w + row * k + g * group;
      const float bound = absMax(x, group) * ratio[row * groups + g];
      if (!std::isfinite(bound))
        continue;
      for (int64_t j = 0; j < group; ++j)
        x[j] = std::clamp(x[j], -bound, bound);
    }
}

int64_t quantizedBytes(Scheme scheme, int64_t n, int64_t k) {
  return scheme == Scheme::Int4 ? n * k / 2 : n * k;
}

int64_t scaleCount(Scheme scheme, int64_t n, int64_t k, int64_t group) {
  return isGrouped(scheme) ? n * (k / group) : n;
}

uint8_t e4m3FromFloat(float value) {
  uint8_t sign = std::signbit(value) ? 0x80 : 0;
  float a = std::fabs(value);
  if (std::isnan(a))
    return sign | 0x7f;
  a = std::min(a, kE4M3Max);
  if (a < 0x1p-6f) // subnormal: units of 2^-9; 8 units is the smallest normal's code
    return sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f));
  uint32_t bits;
  std::memcpy(&bits, &a, 4);
  bits += (1u << 19) - 1 + ((bits >> 20) & 1); // round the mantissa to 3 bits, ties to even
  int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 7;
  return sign | static_cast<uint8_t>(exponent << 3 | ((bits >> 20) & 7));
}

float floatFromE4M3(uint8_t bits) {
  int exponent = (bits >> 3) & 0xf, mantissa = bits & 7;
  float magnitude;
  if (exponent == 0xf && mantissa == 7)
    magnitude = NAN;
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<float>(mantissa), -9);
  else
    magnitude = std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
  return bits & 0x80 ? -magnitude : magnitude;
}

void quantize(Scheme scheme, const float *w, int64_t n, int64_t k, int64_t group, uint8_t *q,
              float *scales) {
  if (!isGrouped(scheme)) {
    for (int64_t row = 0; row < n; ++row) {
      const float *x = w + row * k;
      float scale = scaleFor(absMax(x, k), kE4M3Max);
      scales[row] = scale;
      for (int64_t j = 0; j < k; ++j)
        q[row * k + j] = e4m3FromFloat(std::clamp(x[j] / scale, -kE4M3Max, kE4M3Max));
    }
    return;
  }
  int64_t groups = k / group;
  if (scheme == Scheme::Int8) {
    for (int64_t row = 0; row < n; ++row)
      for (int64_t g = 0; g < groups; ++g) {
        const float *x = w + row * k + g * group;
        float scale = scaleFor(absMax(x, group), kInt8Max);
        scales[row * groups + g] = scale;
        for (int64_t j = 0; j < group; ++j)
          q[row * k + g * group + j] = static_cast<uint8_t>(int8Of(x[j], scale));
      }
    return;
  }
  std::memset(q, 0, static_cast<size_t>(n * k / 2));
  for (int64_t row = 0; row < n; ++row)
    for (int64_t g = 0; g < groups; ++g) {
      const float *x = w + row * k + g * group;
      float scale = scaleFor(absMax(x, group), kInt4Max);
      scales[row * groups + g] = scale;
      for (int64_t j = 0; j < group; ++j) {
        int64_t index = row * k + g * group + j;
        uint8_t nibble = static_cast<uint8_t>(int4Of(x[j], scale)) & 0xf;
        q[index / 2] |= index % 2 ? nibble << 4 : nibble;
      }
    }
}

void dequantizeRow(Scheme scheme, const uint8_t *q, const float *scales, const float *zeros,
                   int64_t k, int64_t group, int64_t row, float *out) {
  if (!isGrouped(scheme)) {
    float scale = scales[row];
    for (int64_t j = 0; j < k; ++j)
      out[j] = floatFromE4M3(q[row * k + j]) * scale;
    return;
  }
  int64_t groups = k / group;
  for (int64_t j = 0; j < k; ++j) {
    int64_t at = row * groups + j / group;
    float value = scheme == Scheme::Int4 ? static_cast<float>(int4At(q, row * k + j))
                                         : static_cast<float>(static_cast<int8_t>(q[row * k + j]));
    out[j] = (zeros ? value - zeros[at] : value) * scales[at];
  }
}

float roundThroughE4M3(float x, float scale) {
  return floatFromE4M3(e4m3FromFloat(std::clamp(x / scale, -kE4M3Max, kE4M3Max))) * scale;
}

float fakeQuantizeRowFp8(float *x, int64_t k) {
  float amax = absMax(x, k);
  if (!std::isfinite(amax))
    return amax; // NaN or Inf reach the output as they are
  float scale = scaleFor(amax, kE4M3Max);
  for (int64_t j = 0; j < k; ++j)
    x[j] = floatFromE4M3(e4m3FromFloat(std::clamp(x[j] / scale, -kE4M3Max, kE4M3Max))) * scale;
  return scale;
}

} // namespace infer::quant
