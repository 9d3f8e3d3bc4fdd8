//===- Sampler.h - host-side token sampling over one logit row --*- C++ -*-===//
//
// Greedy (argmax, lowest id on ties) or a seeded draw from
// softmax(logits / temperature), restricted to the top-k ids and then to the
// nucleus (top-p). Each request owns its RNG, seeded from (seed, request id),
// so its tokens do not depend on which requests it was batched with.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SAMPLING_SAMPLER_H
#define INFER_RUNTIME_SAMPLING_SAMPLER_H

#include "runtime/base/Status.h"

#include <cstdint>
#include <random>
#include <string>

namespace infer::sampling {

struct SamplingParams {
  /// 0: greedy. Otherwise logits are divided by it before the softmax.
  double temperature = 1.0;
  int32_t topK = 0;   ///< keep the K most likely ids (0: all)
  double topP = 1.0;  ///< keep the smallest set with probability >= P (1: all)
  uint64_t seed = 0;

  bool greedy() const { return temperature == 0.0; }
};

/// temperature >= 0 (finite), topK >= 0, 0 < topP <= 1; InvalidArgument
/// naming the command-line flag otherwise.
Status validate(const SamplingParams &params);

/// Why a logit row cannot be sampled, or "" when it can: a NaN or +inf
/// logit, or no finite one (-inf is a probability of 0, allowed beside
/// finite logits). Such a row means the model's arithmetic went wrong
/// (overflow, a NaN weight); sampling it would draw an arbitrary token.
std::string nonFiniteLogits(const float *logits, int64_t vocab);

/// The highest logit's id, the lowest id on ties (NaN never wins).
int32_t argmax(const float *logits, int64_t vocab);

/// The id whose cumulative probability, summed over the kept ids in id order,
/// first exceeds `u` in [0, 1) under `params` (softmax in double of logits /
/// temperature, top-k, then top-p, renormalized; ties in probability are
/// kept by id). The device sampler walks the same order, so one uniform
/// draws the same id on both (up to fp32 rounding at interval edges).
/// Greedy params ignore `u`. Falls back to argmax when no probability is
/// positive and finite.
int32_t sampleWithUniform(const float *logits, int64_t vocab, const SamplingParams &params,
                          double u);

/// One request's sampler: an mt19937_64 seeded from (params.seed, requestId)
/// that advances once per sampled token (not at all when greedy).
class RequestSampler {
public:
  RequestSampler(const SamplingParams &params, int64_t requestId);
  int32_t next(const float *logits, int64_t vocab);
  /// The uniform of the next draw (the RNG advances as next() would; 0 when
  /// greedy), for a sampler that runs elsewhere (on the device).
  double nextUniform();
  const SamplingParams &params() const { return params_; }

private:
  SamplingParams params_;
  std::mt19937_64 rng_;
};

} // namespace infer::sampling

#endif // INFER_RUNTIME_SAMPLING_SAMPLER_H
