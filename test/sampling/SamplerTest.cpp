//===- SamplerTest.cpp - greedy, temperature, top-k, top-p, seeding -------===//
//
// The reference is an independent softmax of the same logits computed here;
// the empirical check draws 200k tokens and compares frequencies.

#include "runtime/sampling/Sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace infer::sampling {
namespace {

const std::vector<float> kLogits = {0.5f, 2.0f, -1.0f, 1.5f, 0.0f, 1.0f};
constexpr int32_t kArgmax = 1;

std::vector<float> randomLogits(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.f, 3.f);
  std::vector<float> logits(n);
  for (float &l : logits)
    l = normal(rng);
  return logits;
}

SamplingParams params(double temperature, int32_t topK = 0, double topP = 1.0,
                      uint64_t seed = 0) {
  SamplingParams p;
  p.temperature = temperature;
  p.topK = topK;
  p.topP = topP;
  p.seed = seed;
  return p;
}

/// Draws `n` tokens with one request sampler and returns their frequencies.
std::vector<double> frequencies(const std::vector<float> &logits, const SamplingParams &p,
                                int n) {
  RequestSampler sampler(p, 3);
  std::vector<double> counts(logits.size());
  for (int i = 0; i < n; ++i)
    counts[sampler.next(logits.data(), logits.size())] += 1;
  for (double &c : counts)
    c /= n;
  return counts;
}

TEST(Sampler, ArgmaxTakesLowestIdOnTies) {
  std::vector<float> logits = {1.f, 3.f, 2.f, 3.f};
  EXPECT_EQ(argmax(logits.data(), 4), 1);
  EXPECT_EQ(argmax(kLogits.data(), kLogits.size()), kArgmax);
  std::vector<float> nan = {std::nanf(""), -5.f, -7.f};
  EXPECT_EQ(argmax(nan.data(), 3), 1);
}

TEST(Sampler, GreedyAndItsLimitsEqualArgmax) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<float> logits = randomLogits(seed, 257);
    int32_t best = argmax(logits.data(), logits.size());
    RequestSampler greedy(params(0.0, 0, 1.0, seed), 0);
    RequestSampler topK1(params(1.0, 1, 1.0, seed), 0);
    RequestSampler cold(params(1e-4, 0, 1.0, seed), 0);
    RequestSampler tinyP(params(1.0, 0, 1e-9, seed), 0);
    for (int draw = 0; draw < 50; ++draw) {
      EXPECT_EQ(greedy.next(logits.data(), logits.size()), best);
      EXPECT_EQ(topK1.next(logits.data(), logits.size()), best) << "top-k 1, seed " << seed;
      EXPECT_EQ(cold.next(logits.data(), logits.size()), best) << "temperature 1e-4";
      EXPECT_EQ(tinyP.next(logits.data(), logits.size()), best) << "top-p 1e-9";
    }
    // Extreme uniforms too.
    for (double u : {0.0, 0.5, 1.0 - 0x1.0p-53}) {
      EXPECT_EQ(sampleWithUniform(logits.data(), logits.size(), params(1.0, 1), u), best);
      EXPECT_EQ(sampleWithUniform(logits.data(), logits.size(), params(1.0, 0, 1e-9), u), best);
    }
  }
}

TEST(Sampler, EmpiricalDistributionMatchesSoftmax) {
  // Reference: softmax(logits / T) computed independently.
  const double temperature = 0.7;
  std::vector<double> expected(kLogits.size());
  double total = 0;
  for (size_t i = 0; i < kLogits.size(); ++i)
    total += expected[i] = std::exp(kLogits[i] / temperature);
  for (double &e : expected)
    e /= total;
  std::vector<double> got = frequencies(kLogits, params(temperature, 0, 1.0, 42), 200000);
  for (size_t i = 0; i < kLogits.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], 0.01) << "id " << i;
}

TEST(Sampler, TopKRenormalizesOverTheTopK) {
  // Top-2 of kLogits: ids 1 (2.0) and 3 (1.5), renormalized.
  std::vector<double> got = frequencies(kLogits, params(1.0, 2, 1.0, 9), 200000);
  double p1 = 1 / (1 + std::exp(-0.5));
  for (size_t i = 0; i < got.size(); ++i)
    if (i != 1 && i != 3) {
      EXPECT_EQ(got[i], 0.0) << "id " << i << " is outside the top 2";
    }
  EXPECT_NEAR(got[1], p1, 0.01);
  EXPECT_NEAR(got[3], 1 - p1, 0.01);
}

TEST(Sampler, TopPKeepsTheSmallestNucleus) {
  // Probabilities 0.5, 0.3, 0.2 (as logits). top-p 0.79 keeps {0, 1} (0.5 + 0.3
  // reaches 0.79); 0.81 keeps all three; 0.4 keeps only id 0.
  std::vector<float> logits = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  std::vector<double> nucleus = frequencies(logits, params(1.0, 0, 0.79, 5), 200000);
  EXPECT_EQ(nucleus[2], 0.0);
  EXPECT_NEAR(nucleus[0], 0.5 / 0.8, 0.01);
  std::vector<double> all = frequencies(logits, params(1.0, 0, 0.81, 5), 200000);
  EXPECT_NEAR(all[2], 0.2, 0.01);
  std::vector<double> one = frequencies(logits, params(1.0, 0, 0.4, 5), 1000);
  EXPECT_EQ(one[0], 1.0);
}

TEST(Sampler, SameSeedSameSequenceOtherSeedOrRequestDiffers) {
  std::vector<float> logits = randomLogits(1, 64);
  auto draw = [&](uint64_t seed, int64_t request) {
    RequestSampler sampler(params(1.5, 20, 0.95, seed), request);
    std::vector<int32_t> tokens;
    for (int i = 0; i < 64; ++i)
      tokens.push_back(sampler.next(logits.data(), logits.size()));
    return tokens;
  };
  EXPECT_EQ(draw(7, 0), draw(7, 0));
  EXPECT_EQ(draw(7, 5), draw(7, 5));
  EXPECT_NE(draw(7, 0), draw(8, 0));
  EXPECT_NE(draw(7, 0), draw(7, 1));
}

TEST(Sampler, ValidateRejectsBadOptions) {
  EXPECT_TRUE(validate(params(0.0)).ok());
  EXPECT_TRUE(validate(params(0.8, 20, 0.9)).ok());
  EXPECT_TRUE(validate(params(1.0, 0, 1.0)).ok());
  Status s = validate(params(-0.1));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--temperature"), std::string::npos);
  EXPECT_FALSE(validate(params(NAN)).ok());
  EXPECT_FALSE(validate(params(INFINITY)).ok());
  s = validate(params(1.0, -1));
  EXPECT_NE(s.message().find("--top-k"), std::string::npos);
  s = validate(params(1.0, 0, 0.0));
  EXPECT_NE(s.message().find("--top-p"), std::string::npos);
  EXPECT_FALSE(validate(params(1.0, 0, 1.01)).ok());
}

} // namespace
} // namespace infer::sampling
