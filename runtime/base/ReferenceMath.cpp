//===- ReferenceMath.cpp --------------------------------------------------===//

#include "runtime/base/ReferenceMath.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace infer::reference {

void attention(const HeadView &q, const HeadView &k, const HeadView &v,
               const AttentionShape &shape, float *dst) {
  int64_t group = shape.numHeads / shape.numKvHeads;
  int64_t qFeatures = shape.numHeads * shape.headDim;
  std::vector<double> scores(static_cast<size_t>(shape.kvSeq));
  for (int64_t b = 0; b < shape.batch; ++b) {
    for (int64_t h = 0; h < shape.numHeads; ++h) {
      int64_t kvHead = h / group;
      double slope = shape.alibi * alibiSlope(h, shape.numHeads);
      for (int64_t i = 0; i < shape.seq; ++i) {
        int64_t position = i + shape.kvSeq - shape.seq;
        int64_t visible = shape.causal ? i + shape.kvSeq - shape.seq + 1 : shape.kvSeq;
        int64_t first =
            firstVisibleKey(visible, shape.causal ? shape.window : 0);
        double maximum = -std::numeric_limits<double>::infinity();
        for (int64_t j = first; j < visible; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < shape.headDim; ++d)
            dot += q.at(b, i, h, d) * k.at(b, j, kvHead, d);
          double score = dot * shape.scale;
          if (shape.softcap > 0)
            score = shape.softcap * std::tanh(score / shape.softcap);
          score += slope * double(j - position);
          scores[j] = score;
          maximum = std::max(maximum, score);
        }
        double sum = 0;
        for (int64_t j = first; j < visible; ++j) {
          scores[j] = std::exp(scores[j] - maximum);
          sum += scores[j];
        }
        for (int64_t d = 0; d < shape.headDim; ++d) {
          double acc = 0;
          for (int64_t j = first; j < visible; ++j)
            acc += scores[j] * v.at(b, j, kvHead, d);
          dst[(b * shape.seq + i) * qFeatures + h * shape.headDim + d] = float(acc / sum);
        }
      }
    }
  }
}

void rotateToken(const float *src, float *dst, int64_t rotatedHeads, int64_t headDim,
                 int64_t half, bool interleaved, int64_t position, const float *invFreq,
                 const float *cosRow, const float *sinRow) {
  for (int64_t h = 0; h < rotatedHeads; ++h) {
    int64_t base = h * headDim;
    for (int64_t i = 0; i < half; ++i) {
      double cosine, sine;
      if (invFreq) {
        float angle = float(position) * invFreq[i];
        cosine = std::cos(double(angle));
        sine = std::sin(double(angle));
      } else {
        cosine = cosRow[i];
        sine = sinRow[i];
      }
      int64_t a = base + (interleaved ? 2 * i : i);
      int64_t c = base + (interleaved ? 2 * i + 1 : i + half);
      double x0 = src[a], x1 = src[c];
      dst[a] = float(x0 * cosine - x1 * sine);
      dst[c] = float(x1 * cosine + x0 * sine);
    }
  }
}

} // namespace infer::reference
