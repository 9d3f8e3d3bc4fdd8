//===- TransposeTiled.h - parallel tiled transposing copy -------*- C++ -*-===//
//
// The artifact writer stores [n, k] weights that models keep as [k, n]; both
// the plain copy and the quantizer's f32 rows transpose through this loop,
// converting elements with the codecs below.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_COMPILER_ARTIFACT_TRANSPOSETILED_H
#define INFER_COMPILER_ARTIFACT_TRANSPOSETILED_H

#include "runtime/base/LowPrecision.h"

#include "llvm/Support/Parallel.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace infer::compiler {

/// Element codecs: an element's stored bits and its f32 value (encode rounds
/// to nearest even; f64 is only read).
struct F32Codec {
  using Bits = uint32_t;
  static float decode(uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  }
  static uint32_t encode(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return bits;
  }
};
struct F64Codec {
  using Bits = uint64_t;
  static float decode(uint64_t bits) {
    double value;
    std::memcpy(&value, &bits, 8);
    return static_cast<float>(value);
  }
};
struct BF16Codec {
  using Bits = uint16_t;
  static float decode(uint16_t bits) { return lowp::floatFromBF16(bits); }
  static uint16_t encode(float value) { return lowp::bf16FromFloat(value); }
};
struct F16Codec {
  using Bits = uint16_t;
  static float decode(uint16_t bits) { return lowp::floatFromF16(bits); }
  static uint16_t encode(float value) { return lowp::f16FromFloat(value); }
};

/// out[c * outStride + r] = convert(in[r * cols + c]) for a row-major `in` of
/// rows x cols elements, tile by tile: a tile's 64 source rows stay in L1
/// while its output rows are written contiguously. Elements go through
/// memcpy: sources are mmap'd at whatever offset the model put them.
///
///        in (rows x cols)              out (cols x rows, rows of outStride)
///     +-----+-----+--                  +-----+-----+--
///     | t00 | t01 |       tile (r, c)  | t00 | t10 |
///     +-----+-----+--   ->  (c, r)     +-----+-----+--
///     | t10 | t11 |                    | t01 | t11 |
///
/// Bands of source rows (one tile high) run in parallel, each sweeping its
/// tiles left to right so that the pages of its 64 rows stay in the TLB
/// (1.5x faster than sweeping a band of columns top to bottom).
template <typename In, typename Out, typename Convert>
void transposeTiled(const char *in, uint64_t rows, uint64_t cols, char *out, uint64_t outStride,
                    Convert convert) {
  constexpr uint64_t kTile = 64;
  llvm::parallelFor(0, (rows + kTile - 1) / kTile, [&](size_t band) {
    uint64_t rowBegin = band * kTile, rowEnd = std::min(rowBegin + kTile, rows);
    for (uint64_t colBegin = 0; colBegin < cols; colBegin += kTile) {
      uint64_t colEnd = std::min(colBegin + kTile, cols);
      for (uint64_t c = colBegin; c < colEnd; ++c) {
        const char *from = in + (rowBegin * cols + c) * sizeof(In);
        char *to = out + (c * outStride + rowBegin) * sizeof(Out);
        for (uint64_t r = rowBegin; r < rowEnd; ++r) {
          In value;
          std::memcpy(&value, from, sizeof(In));
          Out result = convert(value);
          std::memcpy(to, &result, sizeof(Out));
          from += cols * sizeof(In);
          to += sizeof(Out);
        }
      }
    }
  });
}

} // namespace infer::compiler

#endif // INFER_COMPILER_ARTIFACT_TRANSPOSETILED_H
