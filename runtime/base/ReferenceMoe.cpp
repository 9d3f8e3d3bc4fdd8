//===- ReferenceMoe.cpp - mixture-of-experts math of the references -------===//

#include "runtime/base/ReferenceMoe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace infer::reference {

void routeToken(const double *logits, const MoeShape &shape, std::vector<int64_t> &experts,
                std::vector<double> &weights) {
  int64_t count = shape.experts;
  double largest = *std::max_element(logits, logits + count);
  std::vector<double> probs(static_cast<size_t>(count));
  double sum = 0;
  for (int64_t e = 0; e < count; ++e)
    sum += probs[size_t(e)] = std::exp(logits[e] - largest);
  for (double &p : probs)
    p /= sum;
  experts.resize(size_t(count));
  std::iota(experts.begin(), experts.end(), 0);
  std::stable_sort(experts.begin(), experts.end(),
                   [&](int64_t a, int64_t b) { return probs[size_t(a)] > probs[size_t(b)]; });
  experts.resize(size_t(shape.topK));
  weights.clear();
  double picked = 0;
  for (int64_t e : experts)
    picked += probs[size_t(e)], weights.push_back(probs[size_t(e)]);
  if (shape.normalize)
    for (double &w : weights)
      w /= picked;
}

void moe(const float *x, const float *router, const float *gateUp, const float *down,
         const MoeShape &shape, float *dst) {
  const int64_t H = shape.hidden, I = shape.inter;
  std::vector<double> logits(static_cast<size_t>(shape.experts)), act(static_cast<size_t>(I)),
      out(static_cast<size_t>(H));
  std::vector<int64_t> experts;
  std::vector<double> weights;
  for (int64_t t = 0; t < shape.tokens; ++t) {
    const float *row = x + t * H;
    for (int64_t e = 0; e < shape.experts; ++e) {
      double dot = 0;
      for (int64_t h = 0; h < H; ++h)
        dot += double(router[e * H + h]) * row[h];
      logits[size_t(e)] = dot;
    }
    routeToken(logits.data(), shape, experts, weights);
    std::fill(out.begin(), out.end(), 0.0);
    for (size_t j = 0; j < experts.size(); ++j) {
      const float *gate = gateUp + experts[j] * 2 * I * H, *up = gate + I * H;
      for (int64_t i = 0; i < I; ++i) {
        double g = 0, u = 0;
        for (int64_t h = 0; h < H; ++h) {
          g += double(gate[i * H + h]) * row[h];
          u += double(up[i * H + h]) * row[h];
        }
        act[size_t(i)] = g / (1.0 + std::exp(-g)) * u;
      }
      const float *w = down + experts[j] * H * I;
      for (int64_t h = 0; h < H; ++h) {
        double dot = 0;
        for (int64_t i = 0; i < I; ++i)
          dot += double(w[h * I + i]) * act[size_t(i)];
        out[size_t(h)] += weights[j] * dot;
      }
    }
    for (int64_t h = 0; h < H; ++h)
      dst[t * H + h] = float(out[size_t(h)]);
  }
}

} // namespace infer::reference
