//===- ReferenceMoe.cpp - mixture-of-experts math of the references -------===//

#include "runtime/base/ReferenceMoe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace infer::reference {

std::string routingError(const MoeShape &shape) {
  const int64_t experts = shape.experts, groups = shape.groups, topkGroups = shape.topkGroups;
  if (shape.topK < 1 || shape.topK > experts)
    return "top_k " + std::to_string(shape.topK) + " is outside [1, " + std::to_string(experts) +
           "]";
  if (groups < 1 || experts % groups != 0 || topkGroups < 1 || topkGroups > groups ||
      (groups > 1 && shape.topK > topkGroups * (experts / groups)))
    return "groups " + std::to_string(groups) + " and topk_groups " + std::to_string(topkGroups) +
           " cannot route " + std::to_string(experts) + " experts to top_k " +
           std::to_string(shape.topK);
  if (!std::isfinite(shape.scale))
    return "scale must be finite";
  return "";
}

void routeToken(const double *logits, const float *scoreBias, const MoeShape &shape,
                std::vector<int64_t> &experts, std::vector<double> &weights) {
  const int64_t count = shape.experts;
  std::vector<double> scores(static_cast<size_t>(count));
  if (shape.sigmoid) {
    for (int64_t e = 0; e < count; ++e)
      scores[size_t(e)] = 1.0 / (1.0 + std::exp(-logits[e]));
  } else {
    double largest = *std::max_element(logits, logits + count);
    double sum = 0;
    for (int64_t e = 0; e < count; ++e)
      sum += scores[size_t(e)] = std::exp(logits[e] - largest);
    for (double &p : scores)
      p /= sum;
  }
  std::vector<double> choice(scores);
  if (scoreBias)
    for (int64_t e = 0; e < count; ++e)
      choice[size_t(e)] += double(scoreBias[e]);
  // Best first, ties to the lower index (NaN last).
  auto byValue = [](const std::vector<double> &values) {
    return [&values](int64_t a, int64_t b) {
      double x = values[size_t(a)], y = values[size_t(b)];
      return !std::isnan(x) && (std::isnan(y) || x > y);
    };
  };
  std::vector<bool> eligible(size_t(count), true);
  if (shape.groups > 1) {
    const int64_t groupSize = count / shape.groups;
    std::vector<double> groupScores(size_t(shape.groups));
    for (int64_t g = 0; g < shape.groups; ++g) {
      std::vector<double> members(choice.begin() + g * groupSize,
                                  choice.begin() + (g + 1) * groupSize);
      std::vector<int64_t> order(static_cast<size_t>(groupSize));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), byValue(members));
      groupScores[size_t(g)] =
          members[size_t(order[0])] + (groupSize > 1 ? members[size_t(order[1])] : 0.0);
    }
    std::vector<int64_t> groups(size_t(shape.groups));
    std::iota(groups.begin(), groups.end(), 0);
    std::stable_sort(groups.begin(), groups.end(), byValue(groupScores));
    std::fill(eligible.begin(), eligible.end(), false);
    for (int64_t i = 0; i < shape.topkGroups; ++i)
      for (int64_t e = 0; e < groupSize; ++e)
        eligible[size_t(groups[size_t(i)] * groupSize + e)] = true;
    for (int64_t e = 0; e < count; ++e)
      if (!eligible[size_t(e)])
        choice[size_t(e)] = -INFINITY;
  }
  experts.resize(size_t(count));
  std::iota(experts.begin(), experts.end(), 0);
  std::stable_sort(experts.begin(), experts.end(), byValue(choice));
  experts.resize(size_t(shape.topK));
  weights.clear();
  double picked = 0;
  for (int64_t e : experts)
    picked += scores[size_t(e)], weights.push_back(scores[size_t(e)]);
  for (double &w : weights)
    w = (shape.normalize ? w / picked : w) * shape.scale;
}

void moe(const float *x, const float *router, const float *gateUp, const float *down,
         const float *scoreBias, const MoeShape &shape, float *dst) {
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
    routeToken(logits.data(), scoreBias, shape, experts, weights);
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
