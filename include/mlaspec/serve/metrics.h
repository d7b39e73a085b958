// Server metrics in the Prometheus text format (GET /metrics; docs/serve.md, "Metrics"): request
// and token counters, TTFT / ITL / end-to-end / accept-length histograms, the engine's
// per-position acceptance, the attention backends' picks and the KV pool's usage. Thread-safe:
// handler threads and the engine loop record, any thread renders.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mlaspec::serve {

// Cumulative buckets with fixed upper bounds (the Prometheus histogram).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // `name_bucket{le="..."}`, `name_sum`, `name_count` lines.
  void render(const std::string& name, const std::string& help, std::string& out) const;
  int64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bound, not cumulative; the last is +Inf
  double sum_ = 0.0;
  int64_t count_ = 0;
};

// A point-in-time view of the engine the loop publishes after each iteration.
struct EngineGauges {
  int running = 0;
  int waiting = 0;
  int kv_pages_used = 0;
  int kv_pages_total = 0;
  int kv_pages_reserved = 0;  // pages admitted requests still need for their prompts + one step
  std::vector<double> position_acceptance;  // the run's, per draft position (NaN: never reached)
  double accept_length = 0.0;               // the run's tau
  int64_t verify_steps = 0;
  int64_t drafted = 0;
  int64_t accepted = 0;
  // The target's attention calls since the server started, per registered backend (in registry
  // order; the dispatcher's counters): which backend `auto` (or the forced policy) picked.
  struct AttentionBackend {
    std::string name;
    uint64_t calls = 0;
    uint64_t rows = 0;  // query rows x heads
  };
  std::vector<AttentionBackend> attention;
};

class Metrics {
 public:
  Metrics();

  // A finished request by outcome: ok, error (bad request), rejected (queue full), cancelled
  // (client gone), timeout, failed (the engine failed it).
  void count_request(const std::string& outcome);
  void record_done(int64_t prompt_tokens, int64_t completion_tokens, double e2e_seconds);
  void record_ttft(double seconds);
  void record_itl(double seconds);
  // One request's verify (or decode) step: the tokens it gained and the drafts it sent (its
  // verify width, which DSpark's scheduler chooses per request and step).
  void record_step(int64_t tokens, int64_t drafted);
  void count_prefill_chunk();  // one Engine::prefill_chunk call
  void count_preemption();     // a running request sent back to the queue
  void set_gauges(EngineGauges gauges);
  EngineGauges gauges() const;

  std::string render() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, int64_t> requests_;
  int64_t prompt_tokens_ = 0;
  int64_t completion_tokens_ = 0;
  int64_t prefill_chunks_ = 0;
  int64_t preemptions_ = 0;
  Histogram ttft_;
  Histogram itl_;
  Histogram e2e_;
  Histogram accept_length_;
  Histogram verify_width_;
  EngineGauges gauges_;
};

}  // namespace mlaspec::serve
