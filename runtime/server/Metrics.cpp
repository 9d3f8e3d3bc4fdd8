//===- Metrics.cpp - the server's counters in Prometheus text -------------===//

#include "runtime/server/Metrics.h"

#include <cstdio>

namespace infer::server {
namespace {

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17g", value);
  return text;
}

std::string header(const std::string &name, const std::string &help, const char *type) {
  return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string single(const std::string &name, const std::string &help, const char *type,
                   double value) {
  return header(name, help, type) + name + " " + number(value) + "\n";
}

std::string labelled(const std::string &name, const std::string &help, const char *label,
                     const std::map<std::string, int64_t> &values) {
  std::string out = header(name, help, "counter");
  for (const auto &[key, value] : values)
    out += name + "{" + label + "=\"" + key + "\"} " + std::to_string(value) + "\n";
  return out;
}

} // namespace

Histogram::Histogram()
    : bounds_{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
      counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i])
    ++i;
  ++counts_[i];
  sum_ += seconds;
  ++count_;
}

std::string Histogram::render(const std::string &name, const std::string &help) const {
  std::string out = header(name, help, "histogram");
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    std::string le = i < bounds_.size() ? number(bounds_[i]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum " + number(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
  return out;
}

std::string Metrics::render() const {
  std::string out;
  out += single("infer_requests_running", "Requests in the running batch.", "gauge", running);
  out +=
      single("infer_requests_waiting", "Requests accepted and not yet running.", "gauge", waiting);
  out += labelled("infer_requests_finished_total", "Requests that ended, by finish reason.",
                  "finish_reason", finished);
  out += labelled("infer_requests_rejected_total",
                  "Requests answered 503 before they ran, by error code.", "code", rejected);
  out += single("infer_prompt_tokens_total", "Prompt tokens of finished requests.", "counter",
                promptTokens);
  out += single("infer_prompt_tokens_cached_total",
                "Prompt tokens of finished requests found in the prefix cache.", "counter",
                cachedPromptTokens);
  out += single("infer_generation_tokens_total", "Tokens generated.", "counter", generationTokens);
  out += single("infer_kv_blocks_used", "KV-cache blocks held by live requests.", "gauge",
                kvBlocksUsed);
  out += single("infer_kv_blocks_total", "KV-cache blocks in the pool (the null block apart).",
                "gauge", kvBlocksTotal);
  out += single("infer_preemptions_total", "Requests preempted to free KV blocks.", "counter",
                preemptions);
  out += single("infer_steps_total", "Model steps run.", "counter", steps);
  out += timeToFirstToken.render("infer_time_to_first_token_seconds",
                                 "From a request's arrival to its first token.");
  out += timePerOutputToken.render("infer_time_per_output_token_seconds",
                                   "Between a request's tokens after the first.");
  out +=
      endToEnd.render("infer_e2e_request_latency_seconds", "From a request's arrival to its end.");
  out += stepTime.render("infer_step_seconds", "Wall time of one model step.");
  return out;
}

} // namespace infer::server
