#include "mlaspec/serve/metrics.h"

#include <cmath>
#include <cstdio>

namespace mlaspec::serve {
namespace {

std::string num(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

void header(std::string& out, const std::string& name, const std::string& help, const char* type) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

void scalar(std::string& out, const std::string& name, const std::string& help, const char* type,
            double value) {
  header(out, name, help, type);
  out += name + " " + num(value) + "\n";
}

// Seconds: 1 ms .. 60 s.
std::vector<double> latency_bounds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0};
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  size_t i = 0;
  while (i < bounds_.size() && value > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += value;
  ++count_;
}

void Histogram::render(const std::string& name, const std::string& help, std::string& out) const {
  header(out, name, help, "histogram");
  int64_t cumulative = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cumulative += counts_[i];
    const std::string le = i < bounds_.size() ? num(bounds_[i]) : "+Inf";
    out += name + "_bucket{le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  out += name + "_sum " + num(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : ttft_(latency_bounds()),
      itl_(latency_bounds()),
      e2e_(latency_bounds()),
      accept_length_({1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 32}),
      verify_width_({0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32}) {}

void Metrics::count_request(const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[outcome];
}

void Metrics::record_done(int64_t prompt_tokens, int64_t completion_tokens, double e2e_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  prompt_tokens_ += prompt_tokens;
  completion_tokens_ += completion_tokens;
  e2e_.observe(e2e_seconds);
}

void Metrics::record_ttft(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ttft_.observe(seconds);
}

void Metrics::record_itl(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  itl_.observe(seconds);
}

void Metrics::record_step(int64_t tokens, int64_t drafted) {
  std::lock_guard<std::mutex> lock(mu_);
  accept_length_.observe(static_cast<double>(tokens));
  verify_width_.observe(static_cast<double>(drafted));
}

void Metrics::count_prefill_chunk() {
  std::lock_guard<std::mutex> lock(mu_);
  ++prefill_chunks_;
}

void Metrics::count_preemption() {
  std::lock_guard<std::mutex> lock(mu_);
  ++preemptions_;
}

void Metrics::set_gauges(EngineGauges gauges) {
  std::lock_guard<std::mutex> lock(mu_);
  gauges_ = std::move(gauges);
}

EngineGauges Metrics::gauges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gauges_;
}

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  header(out, "mlaspec_requests_total", "Requests answered, by outcome", "counter");
  for (const char* outcome : {"ok", "error", "rejected", "cancelled", "timeout", "failed"}) {
    auto it = requests_.find(outcome);
    out += std::string("mlaspec_requests_total{outcome=\"") + outcome + "\"} " +
           std::to_string(it == requests_.end() ? 0 : it->second) + "\n";
  }
  scalar(out, "mlaspec_prompt_tokens_total", "Prompt tokens of completed requests", "counter",
         static_cast<double>(prompt_tokens_));
  scalar(out, "mlaspec_generation_tokens_total", "Tokens generated for completed requests",
         "counter", static_cast<double>(completion_tokens_));
  scalar(out, "mlaspec_prefill_chunks_total",
         "Prefill chunks run (each up to the engine's prefill_chunk_tokens; the running requests "
         "step between iterations)",
         "counter", static_cast<double>(prefill_chunks_));
  scalar(out, "mlaspec_preemptions_total",
         "Running requests preempted (pages freed, recomputed later) because the pool was full",
         "counter", static_cast<double>(preemptions_));
  ttft_.render("mlaspec_time_to_first_token_seconds", "From arrival to the first generated token",
               out);
  itl_.render("mlaspec_inter_token_latency_seconds",
              "Between a request's consecutive token deliveries (a speculative step delivers "
              "several tokens at once)",
              out);
  e2e_.render("mlaspec_request_latency_seconds", "From arrival to the last token", out);
  accept_length_.render("mlaspec_accept_length",
                        "Tokens a request gained per verify step (accepted drafts + 1)", out);
  verify_width_.render("mlaspec_verify_width",
                       "Drafts a request sent per verify step (its verify q_len - 1; 0 for a plain "
                       "decode step): the drafter's width choice",
                       out);
  scalar(out, "mlaspec_requests_running", "Requests admitted to the engine", "gauge",
         gauges_.running);
  scalar(out, "mlaspec_requests_waiting", "Requests queued for admission", "gauge",
         gauges_.waiting);
  scalar(out, "mlaspec_kv_pages_used", "Target KV pool pages in use", "gauge",
         gauges_.kv_pages_used);
  scalar(out, "mlaspec_kv_pages_reserved",
         "Target KV pool pages admitted requests still need for their prompts (+ one step)",
         "gauge", gauges_.kv_pages_reserved);
  scalar(out, "mlaspec_kv_pages_total", "Target KV pool pages", "gauge", gauges_.kv_pages_total);
  scalar(out, "mlaspec_kv_usage_ratio", "Target KV pool pages in use / pages", "gauge",
         gauges_.kv_pages_total > 0
             ? static_cast<double>(gauges_.kv_pages_used) / gauges_.kv_pages_total
             : 0.0);
  scalar(out, "mlaspec_spec_verify_steps_total", "Verify steps (per request)", "counter",
         static_cast<double>(gauges_.verify_steps));
  scalar(out, "mlaspec_spec_draft_tokens_total", "Draft tokens proposed", "counter",
         static_cast<double>(gauges_.drafted));
  scalar(out, "mlaspec_spec_accepted_tokens_total", "Draft tokens accepted", "counter",
         static_cast<double>(gauges_.accepted));
  scalar(out, "mlaspec_spec_accept_length", "Accept length tau of the run (tokens per verify step)",
         "gauge", gauges_.accept_length);
  header(out, "mlaspec_attention_calls_total",
         "Target attention calls (one per layer per forward pass) by the backend the dispatcher "
         "picked",
         "counter");
  for (const EngineGauges::AttentionBackend& b : gauges_.attention) {
    out += "mlaspec_attention_calls_total{backend=\"" + b.name + "\"} " + std::to_string(b.calls) +
           "\n";
  }
  header(out, "mlaspec_attention_rows_total",
         "Query rows x heads of the target's attention calls, by backend", "counter");
  for (const EngineGauges::AttentionBackend& b : gauges_.attention) {
    out +=
        "mlaspec_attention_rows_total{backend=\"" + b.name + "\"} " + std::to_string(b.rows) + "\n";
  }
  header(out, "mlaspec_spec_position_acceptance",
         "Acceptance of draft position k given positions before it were accepted", "gauge");
  for (size_t k = 0; k < gauges_.position_acceptance.size(); ++k) {
    out += "mlaspec_spec_position_acceptance{position=\"" + std::to_string(k) + "\"} " +
           num(gauges_.position_acceptance[k]) + "\n";
  }
  return out;
}

}  // namespace mlaspec::serve
