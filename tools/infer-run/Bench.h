//===- Bench.h - infer-run bench: serving throughput and latency -*- C++ -*-===//
#ifndef INFER_TOOLS_INFER_RUN_BENCH_H
#define INFER_TOOLS_INFER_RUN_BENCH_H

#include "runtime/base/Status.h"
#include "runtime/serving/ServingSession.h"

#include <cstdint>
#include <string>

namespace infer::tools {

struct BenchOptions {
  int64_t requests = 0;
  int64_t inputLen = 0;  ///< prompt tokens per request
  int64_t outputLen = 0; ///< generated tokens per request (stop tokens ignored)
  /// Seeds the random prompt ids, uniform over the vocabulary.
  uint64_t promptSeed = 0;
  /// 0: offline (all requests submitted at once). B > 0: B requests in flight,
  /// the next submitted when one finishes (at most B running sequences).
  int64_t batch = 0;
  /// > 0: requests arrive as a Poisson process of this many a second (seeded
  /// by promptSeed), each submitted at its arrival, as a server sees them.
  double rate = 0;
  /// Requests of the same shapes (other prompts) run first, untimed: GEMM
  /// tuning and CUDA-graph capture happen there.
  int64_t warmupRequests = 0;
  serving::SessionOptions session;
};

/// Runs the requests greedily through a ServingSession, timing every step,
/// and prints a summary and one JSON line: wall time, output and input
/// tokens/s, requests/s, TTFT, TPOT and ITL p50/p99, steps, peak KV blocks,
/// preemptions.
Status runBench(const std::string &artifactPath, const BenchOptions &options);

} // namespace infer::tools

#endif // INFER_TOOLS_INFER_RUN_BENCH_H
