//===- Metrics.h - the server's counters in Prometheus text -----*- C++ -*-===//
//
// The engine thread records into a Metrics (under the EngineLoop's lock) and
// /metrics renders a copy in the Prometheus text exposition format, with
// names as vLLM's but under `infer_`.
//
//===----------------------------------------------------------------------===//
#ifndef INFER_RUNTIME_SERVER_METRICS_H
#define INFER_RUNTIME_SERVER_METRICS_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace infer::server {

/// Cumulative counts per upper bound (seconds), as a Prometheus histogram.
class Histogram {
public:
  Histogram();
  void observe(double seconds);
  /// The `# TYPE` line and the _bucket, _sum and _count lines of `name`.
  std::string render(const std::string &name, const std::string &help) const;

private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_; ///< per bound, not cumulative; one more for +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

struct Metrics {
  // Gauges, refreshed after every step.
  int64_t running = 0, waiting = 0;
  int64_t kvBlocksUsed = 0, kvBlocksTotal = 0;
  // Counters.
  std::map<std::string, int64_t> finished; ///< by finish reason
  std::map<std::string, int64_t> rejected; ///< by error code (queue_full, shutting_down)
  int64_t promptTokens = 0, generationTokens = 0, cachedPromptTokens = 0;
  int64_t preemptions = 0, steps = 0;
  Histogram timeToFirstToken, timePerOutputToken, endToEnd, stepTime;

  std::string render() const;
};

} // namespace infer::server

#endif // INFER_RUNTIME_SERVER_METRICS_H
