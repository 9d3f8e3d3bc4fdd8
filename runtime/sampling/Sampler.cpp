//===- Sampler.cpp - host-side token sampling over one logit row ----------===//

#include "runtime/sampling/Sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

namespace infer::sampling {
namespace {

/// SplitMix64's finalizer: spreads (seed, id) pairs over the RNG's seed space.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

} // namespace

Status validate(const SamplingParams &params) {
  if (!(params.temperature >= 0) || !std::isfinite(params.temperature))
    return invalidArgumentError("--temperature " + number(params.temperature) +
                                " must be a finite number >= 0 (0: greedy)");
  if (params.topK < 0)
    return invalidArgumentError("--top-k " + std::to_string(params.topK) +
                                " must be >= 0 (0: off)");
  if (!(params.topP > 0 && params.topP <= 1))
    return invalidArgumentError("--top-p " + number(params.topP) +
                                " must be in (0, 1] (1: off)");
  return okStatus();
}

std::string nonFiniteLogits(const float *logits, int64_t vocab) {
  int64_t nans = 0, positive = 0, finite = 0, first = -1;
  for (int64_t v = 0; v < vocab; ++v) {
    float x = logits[v];
    if (std::isfinite(x)) {
      ++finite;
      continue;
    }
    if (std::isnan(x))
      ++nans;
    else if (x > 0)
      ++positive;
    else
      continue;
    if (first < 0)
      first = v;
  }
  if (nans == 0 && positive == 0 && finite > 0)
    return {};
  std::string what = "the model's logits are not finite (" + std::to_string(nans) + " NaN, " +
                     std::to_string(positive) + " +inf, " + std::to_string(finite) + " finite of " +
                     std::to_string(vocab);
  if (first >= 0)
    what += "; the first at token id " + std::to_string(first);
  return what + ")";
}

int32_t argmax(const float *logits, int64_t vocab) {
  int64_t best = 0;
  for (int64_t v = 1; v < vocab; ++v)
    if (logits[v] > logits[best] || (std::isnan(logits[best]) && !std::isnan(logits[v])))
      best = v;
  return static_cast<int32_t>(best);
}

int32_t sampleWithUniform(const float *logits, int64_t vocab, const SamplingParams &params,
                          double u) {
  if (params.greedy() || vocab <= 1)
    return argmax(logits, vocab);
  // Candidate ids, most likely first (ties by id); only as many as top-k
  // needs sorted, all of them when top-p needs the order.
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  auto before = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  size_t keep = ids.size();
  if (params.topK > 0 && static_cast<int64_t>(params.topK) < vocab) {
    keep = static_cast<size_t>(params.topK);
    std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), before);
  } else if (params.topP < 1) {
    std::sort(ids.begin(), ids.end(), before);
  }
  int32_t top = argmax(logits, vocab);
  double maxLogit = logits[top];
  std::vector<double> probs(keep);
  double total = 0;
  for (size_t i = 0; i < keep; ++i) {
    double p = std::exp((static_cast<double>(logits[ids[i]]) - maxLogit) / params.temperature);
    probs[i] = std::isfinite(p) ? p : 0.0;
    total += probs[i];
  }
  if (!(total > 0) || !std::isfinite(total))
    return top;
  if (params.topP < 1) {
    // Nucleus: the smallest prefix whose mass reaches topP (at least one id).
    double target = params.topP * total, cumulative = 0;
    size_t n = 0;
    while (n < keep) {
      cumulative += probs[n++];
      if (cumulative >= target)
        break;
    }
    keep = n;
    total = cumulative;
  }
  // The draw walks the kept ids in id order, as the device sampler does
  // (kernels/Sampling.cuh), so one uniform picks the same id on both.
  std::vector<size_t> order(keep);
  std::iota(order.begin(), order.end(), size_t(0));
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a] < ids[b]; });
  std::vector<int32_t> keptIds(keep);
  std::vector<double> keptProbs(keep);
  for (size_t i = 0; i < keep; ++i) {
    keptIds[i] = ids[order[i]];
    keptProbs[i] = probs[order[i]];
  }
  ids.swap(keptIds);
  probs.swap(keptProbs);
  double threshold = u * total, cumulative = 0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += probs[i];
    if (threshold < cumulative)
      return ids[i];
  }
  // Rounding left `threshold` at the very top: the last id with mass.
  for (size_t i = keep; i-- > 0;)
    if (probs[i] > 0)
      return ids[i];
  return top;
}

RequestSampler::RequestSampler(const SamplingParams &params, int64_t requestId)
    : params_(params), rng_(mix(mix(params.seed) ^ static_cast<uint64_t>(requestId))) {}

int32_t RequestSampler::next(const float *logits, int64_t vocab) {
  if (params_.greedy())
    return argmax(logits, vocab);
  return sampleWithUniform(logits, vocab, params_, nextUniform());
}

double RequestSampler::nextUniform() {
  if (params_.greedy())
    return 0.0;
  // 53 random bits as a double in [0, 1): the same on every standard library
  // (std::uniform_real_distribution's algorithm is unspecified).
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

} // namespace infer::sampling
