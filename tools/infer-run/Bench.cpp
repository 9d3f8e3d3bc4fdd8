//===- Bench.cpp - infer-run bench: serving throughput and latency --------===//
//
// Times the serving loop with steady_clock around each step (Backend::step
// returns once the logits are on the host, so a step's time is its device
// time plus the host's scheduling and sampling). Per request: TTFT is
// submission → the step that produced its first token; TPOT is the mean gap
// between its later tokens; ITL is every such gap. With --rate a request's
// submission is its arrival time, so time spent waiting for the step that was
// running when it arrived counts in its TTFT.
//
//===----------------------------------------------------------------------===//

#include "tools/infer-run/Bench.h"

#include "runtime/artifact/ArtifactReader.h"
#include "runtime/base/HostMemory.h"
#include "runtime/sampling/Sampler.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

namespace infer::tools {
namespace {

using Clock = std::chrono::steady_clock;

struct Timeline {
  Clock::time_point submitted, first, last;
  int64_t tokens = 0;
  std::vector<double> gapsMs; ///< between consecutive tokens (ITL)
};

/// The q-quantile (0..1) of `values` by linear interpolation; 0 when empty.
double quantile(std::vector<double> values, double q) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  double at = q * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(at);
  size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (at - static_cast<double>(lo));
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

/// `value` rounded to `digits` decimals (the JSON line's precision).
double rounded(double value, int digits = 3) {
  double scale = std::pow(10.0, digits);
  return std::round(value * scale) / scale;
}

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

Status validateOptions(const BenchOptions &options) {
  if (options.requests < 1)
    return invalidArgumentError("bench needs --requests N with N >= 1 (got " +
                                std::to_string(options.requests) + ")");
  if (options.inputLen < 1)
    return invalidArgumentError("bench needs --input-len N with N >= 1 (got " +
                                std::to_string(options.inputLen) + ")");
  if (options.outputLen < 1)
    return invalidArgumentError("bench needs --output-len N with N >= 1 (got " +
                                std::to_string(options.outputLen) + ")");
  if (options.batch < 0)
    return invalidArgumentError("--batch must be >= 1 (0 or absent: offline)");
  if (!(options.rate >= 0) || !std::isfinite(options.rate))
    return invalidArgumentError("--rate must be a positive number of requests a second (got " +
                                std::to_string(options.rate) + ")");
  if (options.rate > 0 && options.batch > 0)
    return invalidArgumentError("--rate and --batch are two ways of submitting: give one");
  if (options.warmupRequests < 0)
    return invalidArgumentError("--warmup-requests must be >= 0 (got " +
                                std::to_string(options.warmupRequests) + ")");
  return okStatus();
}

/// Host memory one request takes while bench holds it: its prompt (twice:
/// bench's list and the scheduler's token list, which grows by the output),
/// its timeline and the scheduler's and KV manager's entries, rounded up.
uint64_t requestHostBytes(const BenchOptions &options) {
  return 8 * uint64_t(options.inputLen + 2 * options.outputLen) + 512;
}

/// Refuses a request count whose host-side state cannot fit, naming the flag.
Status checkRequestsFit(const char *flag, int64_t requests, const BenchOptions &options) {
  uint64_t each = requestHostBytes(options), bytes = 0;
  if (__builtin_mul_overflow(uint64_t(requests), each, &bytes))
    bytes = UINT64_MAX;
  uint64_t available = availableHostMemoryBytes();
  if (bytes <= available)
    return okStatus();
  return resourceExhaustedError(std::string(flag) + " " + std::to_string(requests) +
                                ": the requests' prompts, token lists and timelines need " +
                                formatBytes(bytes) + " of host memory (" + formatBytes(each) +
                                " a request), more than the " + formatBytes(available) +
                                " available: at most " + std::to_string(available / each) +
                                " requests fit");
}

/// Seconds from the start at which each of `count` requests arrives: a
/// Poisson process of `rate` a second (exponential gaps), seeded.
std::vector<double> poissonArrivals(int64_t count, double rate, uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  std::exponential_distribution<double> gap(rate);
  std::vector<double> arrivals;
  double at = 0;
  for (int64_t i = 0; i < count; ++i)
    arrivals.push_back(at += i == 0 ? 0 : gap(rng));
  return arrivals;
}

/// Submits `prompts` (all at once, options.batch in flight, or at their
/// `arrivals` when given) and steps the session until every one has
/// options.outputLen tokens; `timelines` gets each request's submission and
/// token times.
Status serve(serving::ServingSession &session, const std::vector<std::vector<int32_t>> &prompts,
             const BenchOptions &options, const std::vector<double> &arrivals,
             std::vector<Timeline> &timelines) {
  scheduler::Scheduler &sched = session.scheduler();
  timelines.assign(prompts.size(), Timeline());
  size_t submitted = 0, finished = 0;
  Clock::time_point start = Clock::now();
  auto arrival = [&](size_t i) {
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(arrivals[i]));
  };
  auto submit = [&]() -> Status {
    auto id = static_cast<scheduler::RequestId>(submitted);
    timelines[submitted].submitted = arrivals.empty() ? Clock::now() : arrival(submitted);
    RETURN_IF_ERROR(sched.addRequest(id, prompts[submitted],
                                     static_cast<int32_t>(options.outputLen)));
    ++submitted;
    return okStatus();
  };
  auto collect = [&]() -> Status {
    for (const scheduler::Request &request : sched.takeFinished()) {
      if (request.finishReason == scheduler::FinishReason::kRefused ||
          request.finishReason == scheduler::FinishReason::kError)
        return invalidArgumentError("request " + std::to_string(request.id) +
                                    " cannot run: " + request.error);
      if (request.numGeneratedTokens() != options.outputLen)
        return internalError("request " + std::to_string(request.id) + " generated " +
                             std::to_string(request.numGeneratedTokens()) + " tokens, not " +
                             std::to_string(options.outputLen));
      ++finished;
    }
    return okStatus();
  };
  size_t inFlight = options.batch > 0 ? static_cast<size_t>(options.batch) : prompts.size();
  auto refill = [&]() -> Status {
    while (submitted < prompts.size() && submitted - finished < inFlight &&
           (arrivals.empty() || arrival(submitted) <= Clock::now()))
      RETURN_IF_ERROR(submit());
    return collect();
  };
  auto greedy = [](scheduler::RequestId) { return RowSampling(); };
  RETURN_IF_ERROR(refill());
  while (sched.hasUnfinished() || submitted < prompts.size()) {
    if (!sched.hasUnfinished()) {
      // Idle until the next arrival.
      std::this_thread::sleep_until(arrival(submitted));
      RETURN_IF_ERROR(refill());
      continue;
    }
    ASSIGN_OR_RETURN(std::vector<serving::SampledToken> got, session.step(greedy));
    Clock::time_point now = Clock::now();
    for (const serving::SampledToken &drawn : got) {
      Timeline &timeline = timelines[static_cast<size_t>(drawn.request)];
      if (timeline.tokens++ == 0)
        timeline.first = now;
      else
        timeline.gapsMs.push_back(ms(now - timeline.last));
      timeline.last = now;
    }
    RETURN_IF_ERROR(collect());
    RETURN_IF_ERROR(refill());
  }
  return okStatus();
}

} // namespace

Status runBench(const std::string &artifactPath, const BenchOptions &options) {
  RETURN_IF_ERROR(validateOptions(options));
  serving::SessionOptions sessionOptions = options.session;
  if (options.batch > 0)
    sessionOptions.maxSequences = options.batch;
  ASSIGN_OR_RETURN(auto session, serving::ServingSession::open(artifactPath, sessionOptions));
  if (options.inputLen + options.outputLen > session->maxSeqLen())
    return invalidArgumentError(
        "--input-len " + std::to_string(options.inputLen) + " + --output-len " +
        std::to_string(options.outputLen) + " is beyond the artifact's context of " +
        std::to_string(session->maxSeqLen()) + " tokens (--max-seq-len)");
  RETURN_IF_ERROR(checkRequestsFit("--requests", options.requests, options));
  RETURN_IF_ERROR(checkRequestsFit("--warmup-requests", options.warmupRequests, options));
  int64_t vocab = session->vocab();
  if (vocab < 1)
    return failedPreconditionError(artifactPath + ": the model's vocabulary size is unknown "
                                   "(its logits have no static last dimension)");

  auto randomPrompts = [&](uint64_t seed, int64_t count) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<int32_t>> prompts(static_cast<size_t>(count));
    for (auto &prompt : prompts)
      for (int64_t t = 0; t < options.inputLen; ++t)
        prompt.push_back(static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab)));
    return prompts;
  };
  scheduler::Scheduler &sched = session->scheduler();
  if (options.warmupRequests > 0) {
    // Same shapes, other prompts (no prefix-cache hits in the timed run):
    // GEMM tuning and CUDA-graph capture happen here, not in the timed run
    // (a prefill shape is captured at its second step: two requests at batch 1).
    std::vector<Timeline> ignored;
    RETURN_IF_ERROR(serve(*session, randomPrompts(options.promptSeed + 1, options.warmupRequests),
                          options, {}, ignored));
  }
  int64_t stepsBefore = session->steps(), computedBefore = session->computedTokens();
  double hostBefore = session->hostSeconds(), backendBefore = session->backendSeconds();
  double floorBefore = session->floorSeconds();
  int64_t preemptionsBefore = sched.numPreemptions();
  int64_t aheadBefore = session->stepsAhead(), droppedBefore = session->stepsAheadDropped();
  session->resetPeakUsedBlocks();
  std::vector<Timeline> timelines;
  Clock::time_point start = Clock::now();
  std::vector<double> arrivals;
  if (options.rate > 0)
    arrivals = poissonArrivals(options.requests, options.rate, options.promptSeed);
  RETURN_IF_ERROR(serve(*session, randomPrompts(options.promptSeed, options.requests), options,
                        arrivals, timelines));
  double wall = std::chrono::duration<double>(Clock::now() - start).count();
  int64_t steps = session->steps() - stepsBefore;
  int64_t computed = session->computedTokens() - computedBefore;
  int64_t preemptions = sched.numPreemptions() - preemptionsBefore;
  double host = session->hostSeconds() - hostBefore;
  double backend = session->backendSeconds() - backendBefore;
  double floor = session->floorSeconds() - floorBefore;
  int64_t ahead = session->stepsAhead() - aheadBefore;
  int64_t dropped = session->stepsAheadDropped() - droppedBefore;

  std::vector<double> ttft, tpot, itl;
  for (const Timeline &timeline : timelines) {
    itl.insert(itl.end(), timeline.gapsMs.begin(), timeline.gapsMs.end());
    ttft.push_back(ms(timeline.first - timeline.submitted));
    if (timeline.tokens > 1)
      tpot.push_back(ms(timeline.last - timeline.first) / static_cast<double>(timeline.tokens - 1));
  }
  int64_t outputTokens = options.requests * options.outputLen;
  int64_t inputTokens = options.requests * options.inputLen;
  double outputRate = wall > 0 ? outputTokens / wall : 0;
  double inputRate = wall > 0 ? inputTokens / wall : 0;
  double ttft50 = quantile(ttft, 0.5), ttft99 = quantile(ttft, 0.99);
  double tpot50 = quantile(tpot, 0.5), tpot99 = quantile(tpot, 0.99);
  double itl50 = quantile(itl, 0.5), itl99 = quantile(itl, 0.99);
  double requestRate = wall > 0 ? options.requests / wall : 0;
  char rateText[64];
  std::snprintf(rateText, sizeof(rateText), "Poisson arrivals at %g requests/s", options.rate);
  std::string mode = options.batch > 0 ? "batch " + std::to_string(options.batch) +
                                             " (requests in flight at once)"
                     : options.rate > 0 ? std::string(rateText)
                                        : std::string("offline (all submitted at once)");
  std::printf("bench: %lld requests x %lld input + %lld output tokens on %s, %s\n",
              static_cast<long long>(options.requests), static_cast<long long>(options.inputLen),
              static_cast<long long>(options.outputLen), session->deviceName().c_str(),
              mode.c_str());
  std::printf("  wall %.3f s: %.1f output tok/s, %.1f input tok/s (%lld output tokens), %.2f "
              "requests/s\n",
              wall, outputRate, inputRate, static_cast<long long>(outputTokens), requestRate);
  std::printf("  TTFT p50 %.3f ms, p99 %.3f ms; TPOT p50 %.3f ms, p99 %.3f ms; ITL p50 %.3f ms, "
              "p99 %.3f ms\n",
              ttft50, ttft99, tpot50, tpot99, itl50, itl99);
  std::printf("  %lld steps, peak KV blocks %lld of %lld (plus the null block), %lld "
              "preemptions\n",
              static_cast<long long>(steps),
              static_cast<long long>(session->peakUsedBlocks()),
              static_cast<long long>(session->kvBlocks() - 1),
              static_cast<long long>(preemptions));
  std::printf("  host loop %.3f s (%.1f%% of wall: scheduling, metadata, update), backend step "
              "calls %.3f s\n",
              host, wall > 0 ? 100.0 * host / wall : 0.0, backend);
  std::printf("  %lld decode steps enqueued ahead of their predecessor's tokens (%lld dropped)%s\n",
              static_cast<long long>(ahead), static_cast<long long>(dropped),
              options.session.runAhead ? "" : "; --no-run-ahead");
  // The H200 roofline of this run's steps (exec/StepCosts.h): an H200
  // could not serve these steps faster than `floor` seconds (on any device:
  // the steps are the same).
  const exec::StepCosts &costs = session->stepCosts();
  double ceiling = floor > 0 ? outputTokens / floor : 0;
  if (floor > 0)
    std::printf("  roofline (H200: GEMM weights %.4g GB per step / 4.3 TB/s, 2 x %.4g GFLOP per "
                "token / 790 TFLOP/s; attention not counted): floor %.4g s, ceiling %.1f output "
                "tok/s; this run %.1f%% of it\n",
                costs.gemmWeightBytes / 1e9, (costs.macsPerToken + costs.macsPerLogitRow) / 1e9,
                floor, ceiling, 100.0 * floor / wall);
  // Where the cold start went (the process's first artifact load).
  const double loadSeconds = session->openSeconds() + session->backendLoadSeconds();
  std::string phases = "read and checksum " + fixed(session->openSeconds(), 2) + " s";
  nlohmann::ordered_json phasesJson = {{"open", rounded(session->openSeconds(), 4)}};
  const double weightGb = double(session->reader().manifest().weight_section_size()) / 1e9;
  std::vector<std::pair<std::string, double>> phaseTimes = session->loadPhases();
  if (phaseTimes.empty()) // a backend without a breakdown
    phaseTimes.emplace_back("backend", session->backendLoadSeconds());
  for (const auto &[phase, seconds] : phaseTimes) {
    phases += ", " + phase + " " + fixed(seconds, 2);
    if (phase == "weights" && seconds > 0)
      phases += " (" + fixed(weightGb / seconds, 1) + " GB/s)";
    phasesJson[phase] = rounded(seconds, 4);
  }
  std::printf("  load %.2f s: %s\n", loadSeconds, phases.c_str());
  nlohmann::ordered_json json = {{"device", session->deviceName()},
                                 {"dtype", session->reader().manifest().options().dtype()},
                                 {"quantize", session->reader().manifest().options().quantize()},
                                 {"requests", options.requests},
                                 {"input_len", options.inputLen},
                                 {"output_len", options.outputLen},
                                 {"batch", options.batch},
                                 {"rate", options.rate},
                                 {"wall_s", rounded(wall, 6)},
                                 {"output_tokens", outputTokens},
                                 {"input_tokens", inputTokens},
                                 {"output_tok_s", rounded(outputRate)},
                                 {"input_tok_s", rounded(inputRate)},
                                 {"ttft_ms_p50", rounded(ttft50, 4)},
                                 {"ttft_ms_p99", rounded(ttft99, 4)},
                                 {"tpot_ms_p50", rounded(tpot50, 4)},
                                 {"tpot_ms_p99", rounded(tpot99, 4)},
                                 {"itl_ms_p50", rounded(itl50, 4)},
                                 {"itl_ms_p99", rounded(itl99, 4)},
                                 {"requests_per_s", rounded(requestRate, 4)},
                                 {"steps", steps},
                                 {"computed_tokens", computed},
                                 {"peak_kv_blocks", session->peakUsedBlocks()},
                                 {"kv_blocks", session->kvBlocks()},
                                 {"preemptions", preemptions},
                                 {"warmup_requests", options.warmupRequests},
                                 {"host_s", rounded(host, 6)},
                                 {"backend_s", rounded(backend, 6)},
                                 {"steps_ahead", ahead},
                                 {"steps_ahead_dropped", dropped},
                                 {"gemm_weight_bytes", costs.gemmWeightBytes},
                                 {"gemm_macs_per_token", costs.macsPerToken},
                                 {"gemm_macs_per_logit_row", costs.macsPerLogitRow},
                                 {"h200_floor_s", rounded(floor, 9)},
                                 {"h200_ceiling_output_tok_s", rounded(ceiling)},
                                 {"load_s", rounded(loadSeconds, 4)},
                                 {"load_phases_s", phasesJson}};
  std::printf("%s\n", json.dump().c_str());
  return okStatus();
}

} // namespace infer::tools
