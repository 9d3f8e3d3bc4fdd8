//===- sampling_test.cu - infer_sample<T> against a reference in double ---===//
//
// Runs infer_sample<T> for f32, bf16 and f16 over vocabularies 7, 1000,
// 32000, 128256 and 151936 and batches of 1, 3 and 64 rows, each row with
// its own temperature (0, 0.7, 1, 1.5), top-k (0, 1, 5, 50), top-p (1, 0.9,
// 0.5) and uniform, on rows of several kinds: gaussian logits with a few
// peaks, flat, one dominant id, many exactly equal logits (with -0 and +0),
// all equal, only -0, +0 and -1, -inf except one, NaNs, +inf, all NaN. The
// reference follows runtime/sampling/Sampler.cpp in double (argmax; softmax
// of logits / temperature; top-k by logit, ties by id, NaN last; the
// nucleus), and draws the id whose cumulative probability in id order over
// the kept set first exceeds u * kept mass, as the kernel does
// (KernelParams.h; Sampler.cpp walks the kept ids most likely first when
// top-k or top-p cut: the same distribution, another id for a given u).
//
// Greedy rows and rows without positive finite mass must match exactly. A
// draw may differ only by rounding (the kernel works in fp32 and 2^-40 fixed
// point): to an id that u moved by at most 1e-4 of the kept mass would draw,
// also under a nucleus one id larger or smaller when its mass is that close
// to topP. Such differences are counted, and more than 1% of the draws
// fails; draws with u that close to a boundary are counted too. Then a
// distribution check (20000 draws of one 16-id row, temperature 1, top-k 8,
// top-p 0.9: frequencies within 4 sigma) and timings (not asserted).
//
// The same cases again with the argmax given (SampleParams::argmax, as the
// LM head folds it): same tokens, every slot set back to 0.
//
// Exit status: 0 all passed, 1 a case failed, 77 no CUDA device.
//
//   nvcc -std=c++17 -O2 -arch=sm_90a -I<repo> -o sampling_test
//       codegen/cuda/tests/sampling_test.cu
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/tests/KernelTestSupport.cuh"
#include "codegen/cuda/kernels/Sampling.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

namespace {

using infer::kernels::kSampleThreads;
using infer::kernels::SampleParams;
using infer::kerneltest::DeviceBuffer;

template <typename T> using TypeInfo = infer::kerneltest::Element<T>;

template <typename T> void upload(T *device, const std::vector<T> &host) {
  CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// ---- The reference ----------------------------------------------------------

constexpr double kBoundaryTolerance = 1e-4; // relative to the kept mass

struct RowParams {
  float temperature;
  int topK;
  float topP;
};

/// Sampler.cpp's argmax: the lowest id of the highest logit, NaN never wins.
int argmaxRef(const float *logits, long long vocab) {
  long long best = 0;
  for (long long v = 1; v < vocab; ++v)
    if (logits[v] > logits[best] || (std::isnan(logits[best]) && !std::isnan(logits[v])))
      best = v;
  return int(best);
}

/// All ids, most likely first: logit descending, ties by id, NaN last.
std::vector<int> rankOrder(const float *logits, long long vocab) {
  std::vector<int> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  std::sort(ids.begin(), ids.end(), [&](int a, int b) {
    const float x = logits[a], y = logits[b];
    if (std::isnan(x) || std::isnan(y))
      return std::isnan(x) == std::isnan(y) ? a < b : !std::isnan(x);
    return x > y || (x == y && a < b);
  });
  return ids;
}

/// One row under one set of parameters: either a fixed token (greedy, or no
/// positive finite mass) or the kept ids with their running probability.
struct Reference {
  int fixed = -1;
  std::vector<int> ids;    // ascending
  std::vector<double> cum; // cum[i] = mass of ids[0..i]
  /// The kept sets of the nucleus sizes next to this one whose mass is within
  /// the tolerance of topP * mass, as the kernel may round to them.
  std::vector<Reference> alternatives;
};

/// `order` is the row's rankOrder (unused when greedy).
Reference reference(const float *logits, long long vocab, const std::vector<int> &order,
                    const RowParams &rp) {
  Reference ref;
  const int top = argmaxRef(logits, vocab);
  if (rp.temperature == 0.f || vocab <= 1) {
    ref.fixed = top;
    return ref;
  }
  const long long keep = rp.topK > 0 && rp.topK < vocab ? rp.topK : vocab;
  const double maxLogit = logits[top], temperature = rp.temperature;
  auto prob = [&](int id) {
    const double p = std::exp((double(logits[id]) - maxLogit) / temperature);
    return std::isfinite(p) ? p : 0.0;
  };
  std::vector<double> probs(static_cast<size_t>(keep));
  double total = 0;
  for (long long i = 0; i < keep; ++i)
    total += probs[size_t(i)] = prob(order[size_t(i)]);
  if (!(total > 0) || !std::isfinite(total)) {
    ref.fixed = top;
    return ref;
  }
  // The first `count` ids of the order, in id order.
  auto keptSet = [&](long long count) {
    Reference kept;
    std::vector<char> in(static_cast<size_t>(vocab), 0);
    for (long long i = 0; i < count; ++i)
      in[size_t(order[size_t(i)])] = 1;
    double cumulative = 0;
    for (long long id = 0; id < vocab; ++id) {
      if (!in[size_t(id)])
        continue;
      cumulative += prob(int(id));
      kept.ids.push_back(int(id));
      kept.cum.push_back(cumulative);
    }
    return kept;
  };
  long long n = keep;
  std::vector<long long> nearSizes;
  if (rp.topP < 1.f) {
    const double target = double(rp.topP) * total;
    double cumulative = 0;
    n = 0;
    while (n < keep) {
      cumulative += probs[size_t(n++)];
      if (cumulative >= target)
        break;
    }
    const double before = cumulative - probs[size_t(n - 1)];
    const double tolerance = kBoundaryTolerance * total;
    if (n < keep && std::fabs(cumulative - target) <= tolerance)
      nearSizes.push_back(n + 1);
    if (n > 1 && std::fabs(before - target) <= tolerance)
      nearSizes.push_back(n - 1);
  }
  ref = keptSet(n);
  for (long long size : nearSizes)
    ref.alternatives.push_back(keptSet(size));
  return ref;
}

struct Draw {
  int token;
  bool nearBoundary; // u within the tolerance of a cumulative boundary
};

/// The first kept id (in id order) whose running probability exceeds u * mass.
Draw drawRef(const Reference &ref, float u) {
  if (ref.fixed >= 0)
    return {ref.fixed, false};
  const double total = ref.cum.back(), threshold = double(u) * total;
  const double tolerance = kBoundaryTolerance * total;
  size_t i = size_t(std::upper_bound(ref.cum.begin(), ref.cum.end(), threshold) - ref.cum.begin());
  if (i == ref.cum.size()) { // rounding: the last id with mass, as Sampler.cpp
    while (i > 1 && ref.cum[i - 1] <= ref.cum[i - 2])
      --i;
    return {ref.ids[i - 1], true};
  }
  const bool near =
      ref.cum[i] - threshold <= tolerance || (i > 0 && threshold - ref.cum[i - 1] <= tolerance);
  return {ref.ids[i], near};
}

/// Whether `token` is what u moved by at most the tolerance would draw: a
/// kept id whose cumulative interval comes that close to u * mass (also
/// under the nucleus sizes the kernel may round to).
bool withinTolerance(const Reference &ref, float u, int token) {
  for (const Reference &other : ref.alternatives)
    if (withinTolerance(other, u, token))
      return true;
  const auto at = std::lower_bound(ref.ids.begin(), ref.ids.end(), token);
  if (ref.fixed >= 0 || at == ref.ids.end() || *at != token)
    return false;
  const size_t i = size_t(at - ref.ids.begin());
  const double total = ref.cum.back(), threshold = double(u) * total;
  const double tolerance = kBoundaryTolerance * total;
  const double low = i ? ref.cum[i - 1] : 0.0, high = ref.cum[i];
  return low - tolerance <= threshold && threshold <= high + tolerance;
}

// ---- End of the reference -----------------------------------------------------

/// Row kinds: what the logits of a row look like.
enum Kind {
  kPeaked,    // gaussian (sigma 2) plus three peaks
  kFlat,      // gaussian, sigma 0.5
  kDiscrete,  // values from {-1, -0.5, 0 (also -0), 0.5, 1}: many exact ties
  kOneFinite, // -inf except one id
  kNaNs,      // gaussian with ~5% NaN, id 0 NaN
  kDominant,  // one id 12 above a gaussian
  kAllEqual,  // every logit 0.25
  kPlusInf,   // gaussian with one +inf: no finite mass, argmax
  kAllNaN,    // argmax 0
  kWide,      // gaussian, sigma 8: most weights underflow at low temperature
  kZeros,     // -0, +0 and -1: the maximum is tied between both zeros
  kKinds
};
const char *kindName(int kind) {
  static const char *names[] = {"peaked",  "flat",     "discrete",  "one-finite",
                                "nans",    "dominant", "all-equal", "plus-inf",
                                "all-nan", "wide",     "zeros"};
  return names[kind];
}

std::vector<float> makeRow(int kind, long long vocab, std::mt19937 &rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_int_distribution<long long> anyId(0, vocab - 1);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> row(static_cast<size_t>(vocab));
  switch (kind) {
  case kPeaked:
    for (float &x : row)
      x = 2.f * normal(rng);
    for (float lift : {6.f, 5.f, 4.f})
      row[size_t(anyId(rng))] += lift;
    break;
  case kFlat:
    for (float &x : row)
      x = 0.5f * normal(rng);
    break;
  case kDiscrete: {
    const float values[] = {-1.f, -0.5f, 0.f, -0.f, 0.5f, 1.f};
    std::uniform_int_distribution<int> pick(0, 5);
    for (float &x : row)
      x = values[pick(rng)];
    break;
  }
  case kOneFinite:
    std::fill(row.begin(), row.end(), -inf);
    row[size_t(anyId(rng))] = normal(rng);
    break;
  case kNaNs: {
    std::uniform_real_distribution<float> uniform(0.f, 1.f);
    for (float &x : row)
      x = uniform(rng) < 0.05f ? nan : 2.f * normal(rng);
    row[0] = nan;
    break;
  }
  case kDominant:
    for (float &x : row)
      x = normal(rng);
    row[size_t(anyId(rng))] = 12.f;
    break;
  case kAllEqual:
    std::fill(row.begin(), row.end(), 0.25f);
    break;
  case kPlusInf:
    for (float &x : row)
      x = normal(rng);
    row[size_t(anyId(rng))] = inf;
    break;
  case kAllNaN:
    std::fill(row.begin(), row.end(), nan);
    break;
  case kWide:
    for (float &x : row)
      x = 8.f * normal(rng);
    break;
  default: { // kZeros
    const float values[] = {-0.f, 0.f, -1.f};
    std::uniform_int_distribution<int> pick(0, 2);
    for (float &x : row)
      x = values[pick(rng)];
    break;
  }
  }
  return row;
}

RowParams paramsOf(int combo) {
  static const float temperatures[] = {0.f, 0.7f, 1.f, 1.5f};
  static const int topKs[] = {0, 1, 5, 50};
  static const float topPs[] = {1.f, 0.9f, 0.5f};
  return {temperatures[combo % 4], topKs[(combo / 4) % 4], topPs[(combo / 16) % 3]};
}
constexpr int kCombos = 48;

struct Tally {
  long long exact = 0, draws = 0, near = 0, tolerated = 0, failures = 0;
};
/// Runs infer_sample<T> over `rows` rows of width `vocab`, several launches
/// with different parameters and uniforms; checks every token. `folded`:
/// each row's argmax comes in SampleParams::argmax (as the LM head folds it,
/// GemvRows.cuh), packed from the reference argmax; the kernel must give the
/// same tokens and leave every slot 0.
template <typename T>
void runConfig(long long vocab, long long rows, int config, std::mt19937 &rng, Tally &tally,
               bool folded = false) {
  using Info = TypeInfo<T>;
  std::vector<T> logits(size_t(rows * vocab));
  std::vector<float> values(logits.size()); // the logits as the kernel sees them
  std::vector<int> kinds(static_cast<size_t>(rows));
  for (long long r = 0; r < rows; ++r) {
    kinds[size_t(r)] = int((r * 3 + config * 7) % kKinds);
    std::vector<float> row = makeRow(kinds[size_t(r)], vocab, rng);
    for (long long v = 0; v < vocab; ++v) {
      T x = Info::from(row[size_t(v)]);
      logits[size_t(r * vocab + v)] = x;
      values[size_t(r * vocab + v)] = Info::value(x);
    }
  }
  std::vector<std::vector<int>> orders(static_cast<size_t>(rows)); // computed when first needed
  DeviceBuffer<T> logitsDev(logits.size());
  upload(logitsDev.ptr, logits);
  DeviceBuffer<float> temperatureDev(static_cast<size_t>(rows)), topPDev(static_cast<size_t>(rows)),
      uniformDev(static_cast<size_t>(rows));
  DeviceBuffer<int> topKDev(static_cast<size_t>(rows)), tokensDev(static_cast<size_t>(rows));
  DeviceBuffer<unsigned long long> argmaxDev(static_cast<size_t>(rows));
  std::vector<unsigned long long> argmax(static_cast<size_t>(rows));
  for (long long r = 0; r < rows; ++r) {
    const int top = argmaxRef(values.data() + r * vocab, vocab);
    argmax[size_t(r)] =
        infer::kerneltest::hostArgmaxWord(values[size_t(r * vocab + top)], unsigned(top));
  }

  const int launches = 6;
  std::uniform_real_distribution<float> uniform01(0.f, 1.f);
  long long configFailures = 0, configNear = 0, configTolerated = 0;
  for (int launch = 0; launch < launches; ++launch) {
    std::vector<float> temperature(static_cast<size_t>(rows)), topP(static_cast<size_t>(rows)),
        u(static_cast<size_t>(rows));
    std::vector<int> topK(static_cast<size_t>(rows));
    std::vector<RowParams> params(static_cast<size_t>(rows));
    for (long long r = 0; r < rows; ++r) {
      params[size_t(r)] = paramsOf(int((r * 7 + launch * 11 + config * 5) % kCombos));
      temperature[size_t(r)] = params[size_t(r)].temperature;
      topK[size_t(r)] = params[size_t(r)].topK;
      topP[size_t(r)] = params[size_t(r)].topP;
      float x = uniform01(rng);
      if (x >= 1.f)
        x = 0.f;
      if (launch == 0 && r == 0)
        x = 0.f; // the smallest and the largest uniform
      if (launch == 1 && r == 0)
        x = 0x1.fffffep-1f;
      u[size_t(r)] = x;
    }
    upload(temperatureDev.ptr, temperature);
    upload(topKDev.ptr, topK);
    upload(topPDev.ptr, topP);
    upload(uniformDev.ptr, u);
    CUDA_CHECK(cudaMemset(tokensDev.ptr, 0xff, size_t(rows) * sizeof(int)));
    SampleParams p;
    std::memset(&p, 0, sizeof(p));
    p.logits = logitsDev.ptr;
    p.rows = rows;
    p.vocab = vocab;
    p.temperature = temperatureDev.ptr;
    p.topK = topKDev.ptr;
    p.topP = topPDev.ptr;
    p.uniform = uniformDev.ptr;
    p.tokens = tokensDev.ptr;
    if (folded) {
      upload(argmaxDev.ptr, argmax);
      p.argmax = argmaxDev.ptr;
    }
    infer::kernels::infer_sample<T><<<unsigned(rows), kSampleThreads>>>(p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> tokens(static_cast<size_t>(rows));
    CUDA_CHECK(cudaMemcpy(tokens.data(), tokensDev.ptr, tokens.size() * sizeof(int),
                          cudaMemcpyDeviceToHost));
    if (folded) {
      std::vector<unsigned long long> left(static_cast<size_t>(rows));
      CUDA_CHECK(cudaMemcpy(left.data(), argmaxDev.ptr, left.size() * sizeof(left[0]),
                            cudaMemcpyDeviceToHost));
      for (long long r = 0; r < rows; ++r)
        if (left[size_t(r)] != 0 && ++configFailures <= 5)
          std::printf("  argmax slot of row %lld not set back to 0\n", r);
    }

    for (long long r = 0; r < rows; ++r) {
      const float *row = values.data() + r * vocab;
      const RowParams &rp = params[size_t(r)];
      std::vector<int> &order = orders[size_t(r)];
      if (order.empty() && rp.temperature != 0.f)
        order = rankOrder(row, vocab);
      const Reference ref = reference(row, vocab, order, rp);
      const Draw want = drawRef(ref, u[size_t(r)]);
      const int got = tokens[size_t(r)];
      const bool fixed = ref.fixed >= 0;
      fixed ? ++tally.exact : ++tally.draws;
      if (!fixed && want.nearBoundary)
        ++configNear;
      if (got == want.token)
        continue;
      if (withinTolerance(ref, u[size_t(r)], got)) { // off by rounding
        ++configTolerated;
        continue;
      }
      if (++configFailures <= 5)
        std::printf("  MISMATCH %s vocab=%lld row=%lld (%s) T=%g k=%d p=%g u=%.9g: got %d, want "
                    "%d%s\n",
                    Info::name, vocab, r, kindName(kinds[size_t(r)]), double(rp.temperature),
                    rp.topK, double(rp.topP), double(u[size_t(r)]), got, want.token,
                    fixed ? " (exact)" : "");
    }
  }
  tally.near += configNear;
  tally.tolerated += configTolerated;
  tally.failures += configFailures;
  std::printf("%-4s vocab=%-6lld rows=%-2lld x %d launches%s: %lld near a boundary, %lld "
              "tolerated, %s\n",
              Info::name, vocab, rows, launches, folded ? " (argmax folded)" : "", configNear,
              configTolerated, configFailures ? "FAIL" : "ok");
}

template <typename T> Tally runAll(int &config) {
  std::mt19937 rng(4321u + unsigned(config));
  Tally tally;
  for (long long vocab : {7ll, 1000ll, 32000ll, 128256ll, 151936ll})
    for (long long rows : {1ll, 3ll, 64ll})
      runConfig<T>(vocab, rows, config++, rng, tally);
  for (long long vocab : {1000ll, 32000ll, 128256ll})
    for (long long rows : {1ll, 3ll})
      runConfig<T>(vocab, rows, config++, rng, tally, /*folded=*/true);
  return tally;
}

/// 20000 draws of one 16-id row (f32, temperature 1, top-k 8, top-p 0.9):
/// each id's frequency within 4 sigma of its reference probability.
bool distributionCheck() {
  const std::vector<float> row = {0.3f, 2.0f, -1.f, 1.5f, 0.8f,  1.5f, -0.2f, 1.2f,
                                  0.f,  1.0f, -3.f, 0.5f, -0.5f, 1.9f, -2.f,  0.2f};
  const long long vocab = (long long)row.size(), draws = 20000;
  const RowParams rp{1.f, 8, 0.9f};
  const Reference ref = reference(row.data(), vocab, rankOrder(row.data(), vocab), rp);
  std::vector<double> probability(static_cast<size_t>(vocab), 0.0);
  for (size_t i = 0; i < ref.ids.size(); ++i)
    probability[size_t(ref.ids[i])] = (ref.cum[i] - (i ? ref.cum[i - 1] : 0.0)) / ref.cum.back();

  std::vector<float> logits(size_t(draws * vocab)), u(static_cast<size_t>(draws));
  std::mt19937_64 rng(99);
  for (long long d = 0; d < draws; ++d) {
    std::copy(row.begin(), row.end(), logits.begin() + d * vocab);
    u[size_t(d)] = float(rng() >> 40) * 0x1.0p-24f;
  }
  std::vector<float> temperature(static_cast<size_t>(draws), rp.temperature),
      topP(static_cast<size_t>(draws), rp.topP);
  std::vector<int> topK(static_cast<size_t>(draws), rp.topK);
  DeviceBuffer<float> logitsDev(logits.size()), temperatureDev(static_cast<size_t>(draws)),
      topPDev(static_cast<size_t>(draws)), uniformDev(static_cast<size_t>(draws));
  DeviceBuffer<int> topKDev(static_cast<size_t>(draws)), tokensDev(static_cast<size_t>(draws));
  upload(logitsDev.ptr, logits);
  upload(temperatureDev.ptr, temperature);
  upload(topPDev.ptr, topP);
  upload(topKDev.ptr, topK);
  upload(uniformDev.ptr, u);
  SampleParams p;
  std::memset(&p, 0, sizeof(p));
  p.logits = logitsDev.ptr;
  p.rows = draws;
  p.vocab = vocab;
  p.temperature = temperatureDev.ptr;
  p.topK = topKDev.ptr;
  p.topP = topPDev.ptr;
  p.uniform = uniformDev.ptr;
  p.tokens = tokensDev.ptr;
  infer::kernels::infer_sample<float><<<unsigned(draws), kSampleThreads>>>(p);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> tokens(static_cast<size_t>(draws));
  CUDA_CHECK(cudaMemcpy(tokens.data(), tokensDev.ptr, tokens.size() * sizeof(int),
                        cudaMemcpyDeviceToHost));
  std::vector<long long> counts(static_cast<size_t>(vocab), 0);
  bool ok = true;
  for (int t : tokens) {
    if (t < 0 || t >= vocab) {
      ok = false;
      continue;
    }
    ++counts[size_t(t)];
  }
  std::printf("distribution (16 ids, T=1, k=8, p=0.9, %lld draws):\n", draws);
  for (long long v = 0; v < vocab; ++v) {
    const double pv = probability[size_t(v)], expected = pv * double(draws);
    const double sigma = std::sqrt(double(draws) * pv * (1 - pv));
    const bool good = pv == 0 ? counts[size_t(v)] == 0
                              : std::fabs(double(counts[size_t(v)]) - expected) <= 4 * sigma;
    ok = ok && good;
    if (pv > 0 || counts[size_t(v)] > 0)
      std::printf("  id %2lld: %6lld draws, expected %8.1f +- %5.1f %s\n", v, counts[size_t(v)],
                  expected, sigma, good ? "" : "FAIL");
  }
  std::printf("distribution: %s\n", ok ? "ok" : "FAIL");
  return ok;
}

/// bf16 timings: `rows` x `vocab`, greedy, top-p 0.9 and top-k 50 + top-p 0.9.
void timeSampling(long long rows, long long vocab) {
  using T = __nv_bfloat16;
  std::mt19937 rng(5);
  std::vector<T> logits(size_t(rows * vocab));
  for (long long r = 0; r < rows; ++r) {
    std::vector<float> row = makeRow(kPeaked, vocab, rng);
    for (long long v = 0; v < vocab; ++v)
      logits[size_t(r * vocab + v)] = TypeInfo<T>::from(row[size_t(v)]);
  }
  DeviceBuffer<T> logitsDev(logits.size());
  upload(logitsDev.ptr, logits);
  DeviceBuffer<float> temperatureDev(static_cast<size_t>(rows)), topPDev(static_cast<size_t>(rows)),
      uniformDev(static_cast<size_t>(rows));
  DeviceBuffer<int> topKDev(static_cast<size_t>(rows)), tokensDev(static_cast<size_t>(rows));
  std::vector<float> u(static_cast<size_t>(rows));
  std::uniform_real_distribution<float> uniform01(0.f, 0.999f);
  for (float &x : u)
    x = uniform01(rng);
  upload(uniformDev.ptr, u);
  struct Mode {
    const char *name;
    float temperature;
    int topK;
    float topP;
  };
  const Mode modes[] = {{"greedy", 0.f, 0, 1.f},
                        {"top-p 0.9 (T=0.7)", 0.7f, 0, 0.9f},
                        {"top-k 50 + top-p 0.9 (T=0.7)", 0.7f, 50, 0.9f}};
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (const Mode &mode : modes) {
    upload(temperatureDev.ptr, std::vector<float>(size_t(rows), mode.temperature));
    upload(topKDev.ptr, std::vector<int>(size_t(rows), mode.topK));
    upload(topPDev.ptr, std::vector<float>(size_t(rows), mode.topP));
    SampleParams p;
    std::memset(&p, 0, sizeof(p));
    p.logits = logitsDev.ptr;
    p.rows = rows;
    p.vocab = vocab;
    p.temperature = temperatureDev.ptr;
    p.topK = topKDev.ptr;
    p.topP = topPDev.ptr;
    p.uniform = uniformDev.ptr;
    p.tokens = tokensDev.ptr;
    for (int i = 0; i < 3; ++i)
      infer::kernels::infer_sample<T><<<unsigned(rows), kSampleThreads>>>(p);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    const int reps = 20;
    CUDA_CHECK(cudaEventRecord(start));
    for (int i = 0; i < reps; ++i)
      infer::kernels::infer_sample<T><<<unsigned(rows), kSampleThreads>>>(p);
    CUDA_CHECK(cudaEventRecord(stop));
    CUDA_CHECK(cudaEventSynchronize(stop));
    CUDA_CHECK(cudaGetLastError());
    float elapsed = 0;
    CUDA_CHECK(cudaEventElapsedTime(&elapsed, start, stop));
    std::printf("timing bf16 %lld rows x %lld, %s: %.4f ms\n", rows, vocab, mode.name,
                double(elapsed) / reps);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
}

} // namespace

int main() {
  if (!infer::kerneltest::haveDevice())
    return 77;
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);

  int config = 0;
  Tally total;
  for (const Tally &t :
       {runAll<float>(config), runAll<__nv_bfloat16>(config), runAll<__half>(config)}) {
    total.exact += t.exact;
    total.draws += t.draws;
    total.near += t.near;
    total.tolerated += t.tolerated;
    total.failures += t.failures;
  }
  const bool toleratedOk = total.tolerated * 100 <= total.draws;
  std::printf("%lld exact (greedy or no mass) tokens, %lld draws: %lld near a boundary, %lld "
              "differing there (%.3f%%, at most 1%%)%s\n",
              total.exact, total.draws, total.near, total.tolerated,
              total.draws ? 100.0 * double(total.tolerated) / double(total.draws) : 0.0,
              toleratedOk ? "" : " FAIL");
  const bool distributionOk = distributionCheck();
  timeSampling(256, 32000);
  timeSampling(1, 128256);
  if (total.failures || !toleratedOk || !distributionOk) {
    std::printf("FAILED: %lld mismatching token(s)%s%s\n", total.failures,
                toleratedOk ? "" : ", too many boundary differences",
                distributionOk ? "" : ", distribution");
    return 1;
  }
  std::printf("all sampling cases passed\n");
  return 0;
}
