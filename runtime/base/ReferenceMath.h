//===- ReferenceMath.h - attention and rotary math of the references -*- C++ -*-===//
//
// The loops the reference interpreter (dialects/graph/Interpreter) and the cpu
// backend (runtime/cpu) share, so that both compute attention and rotary the
// same way (double accumulation, one f32 rounding per result) and the
// backend can be compared with the interpreter bit for bit. LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_BASE_REFERENCEMATH_H
#define INFER_RUNTIME_BASE_REFERENCEMATH_H

#include "runtime/base/Quantization.h"

#include <cmath>
#include <cstdint>

namespace infer::reference {

/// Element (b, s, head, d) at data[(b * seq + s) * rowStride + offset + head * headDim + d]
/// (q, k and v may be column ranges of one packed qkv buffer).
struct HeadView {
  const float *data = nullptr;
  int64_t seq = 0, rowStride = 0, offset = 0, headDim = 0;
  /// > 0: the values are read as an FP8 KV cache holds them (quant::roundThroughE4M3).
  float cacheScale = 0;
  double at(int64_t b, int64_t s, int64_t head, int64_t d) const {
    float x = data[(b * seq + s) * rowStride + offset + head * headDim + d];
    return cacheScale > 0 ? quant::roundThroughE4M3(x, cacheScale) : x;
  }
};

struct AttentionShape {
  int64_t batch = 0, seq = 0, kvSeq = 0, numHeads = 0, numKvHeads = 0, headDim = 0;
  double scale = 1, softcap = 0; ///< as f32 values widened
  bool causal = false;
  /// Causal only: > 0 keeps the last `window` keys of each query.
  int64_t window = 0;
  double alibi = 0; ///< adds alibi * alibiSlope(h, numHeads) * (j - i') to the scores
};

/// Softmax attention: query head h reads kv head h / (numHeads / numKvHeads);
/// causal: query i sees keys j <= i + kvSeq - seq, and with a window W also
/// j > i + kvSeq - seq - W. With alibi c, scores get c * alibiSlope(h) * (j - i')
/// with i' = i + kvSeq - seq (after the softcap). Scores (dot * scale, then
/// softcap * tanh(score / softcap) when softcap > 0), softmax and the weighted
/// sum in double. dst is [batch, seq, numHeads * headDim].
void attention(const HeadView &q, const HeadView &k, const HeadView &v,
               const AttentionShape &shape, float *dst);

/// ALiBi's slope of head h of `heads` (BLOOM's, MPT's and Falcon's
/// build_alibi_tensor): 2^(-8 (h + 1) / n) for the first n heads, n the
/// largest power of two <= heads, then the odd powers of 2^(-4 / n).
inline double alibiSlope(int64_t h, int64_t heads) {
  int64_t n = 1;
  while (n * 2 <= heads)
    n *= 2;
  double exponent =
      h < n ? -8.0 * double(h + 1) / double(n) : -4.0 * double(2 * (h - n) + 1) / double(n);
  return std::exp2(exponent);
}

/// The first key a query that sees keys [0, visible) reads under a sliding
/// window of `window` keys (0: none).
inline int64_t firstVisibleKey(int64_t visible, int64_t window) {
  return window > 0 && visible > window ? visible - window : 0;
}

/// Rotates the first `rotatedHeads` heads (headDim wide) of one token's row:
/// pairs (i, i + half) or, interleaved, (2i, 2i + 1) of the first 2 * half
/// features turn by angle float(position) * invFreq[i] (an f32 product, as
/// the ONNX graph forms it), or by cosRow[i] / sinRow[i] when invFreq is null.
/// Reads `src`, writes the rotated pairs of `dst` (other features untouched).
void rotateToken(const float *src, float *dst, int64_t rotatedHeads, int64_t headDim,
                 int64_t half, bool interleaved, int64_t position, const float *invFreq,
                 const float *cosRow, const float *sinRow);

} // namespace infer::reference

#endif // INFER_RUNTIME_BASE_REFERENCEMATH_H
