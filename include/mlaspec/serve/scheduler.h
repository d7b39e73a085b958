// Scheduler: the one thread that owns the spec::Engine, and the channels through which HTTP
// handler threads hand it requests and read their text back (docs/serve.md, "Scheduler").
//
//   Scheduler s(std::move(engine), tokenizer, {.max_running = 16, .max_queue = 64}, &metrics);
//   SubmitOutcome sub = s.submit({.prompt = ids, .max_tokens = 64});
//   while (true) { Update u = sub.channel->wait(100ms); send(u.text); if (u.done) break; }
//
// Policy (continuous batching): requests wait in arrival order; the head is admitted when a
// request slot is free (--max-running) and the target pool's free pages cover its prompt and one
// step beside the running requests' next step. When the running requests' next step does not fit,
// the newest is preempted: its pages are freed, it goes back to the queue's front and is
// recomputed (prompt + what it generated) when admitted again, so no running request loses a
// token and the preempted one's text goes on unchanged. Each loop iteration admits waiting
// requests, runs prefill chunks of admitted ones up to a prompt-token budget (a long prompt takes
// several iterations), then runs one speculative step for every running request. A cancelled
// (client gone) or timed out request is finished and released at the next iteration, freeing its
// pages.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "mlaspec/model/sampling.h"
#include "mlaspec/serve/api.h"
#include "mlaspec/serve/metrics.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/tokenizer/tokenizer.h"

namespace mlaspec::serve {

struct SchedulerConfig {
  int max_running = 16;  // requests in the engine at once (<= the engine's max_requests)
  // Requests waiting for admission beyond the free request slots; more: refused (429).
  int max_queue = 64;
  // From arrival to the last token; 0 = none. A request past it ends with finish "timeout".
  double request_timeout_seconds = 600.0;
  // Prompt tokens prefilled per loop iteration before the running requests step again, in the
  // engine's chunks (spec::Engine::prefill_chunk; at least one chunk per iteration).
  int64_t prefill_tokens_per_iteration = 512;
};

// A request as the engine takes it: tokenized and validated (completion_budget).
struct Job {
  std::vector<int32_t> prompt;
  model::SamplingParams sampling;
  int32_t max_tokens = 16;
  std::vector<std::string> stop;
  bool ignore_eos = false;  // the tokenizer's EOS does not end the request
  int32_t logprobs = -1;    // spec::GenerationRequest::logprobs
};

// How a request ended: "stop" (EOS or a stop string), "length" (max_tokens), or one of the
// failures: "cancelled", "timeout", "error".
struct Update {
  std::string text;  // released since the previous wait (whole UTF-8 characters)
  // With Job::logprobs >= 0: one entry per token decoded since the previous wait, up to and
  // including the token that completed a stop string or the EOS. The text may lag behind (a
  // held-back stop-string prefix or incomplete UTF-8 character).
  std::vector<spec::TokenLogprobs> logprobs;
  bool done = false;
  std::string finish_reason;
  ApiError error;  // finish_reason "error" / "timeout": what to tell the client
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;  // so far
  double accept_length = 0.0;     // tokens per verify step of this request (0: no step yet)
  int64_t verify_steps = 0;
};

// One request's mailbox: the loop posts, one handler thread waits.
class Channel {
 public:
  // What arrived since the previous call; waits up to `timeout` when nothing has.
  Update wait(std::chrono::milliseconds timeout);
  // The client is gone: the loop finishes the request and frees its pages.
  void cancel() { cancelled_.store(true); }
  bool cancelled() const { return cancelled_.load(); }

 private:
  friend class Scheduler;
  void post(const std::string& text, const Update& state);
  std::mutex mu_;
  std::condition_variable cv_;
  std::string text_;
  std::vector<spec::TokenLogprobs> logprobs_;
  Update state_;
  bool news_ = false;
  std::atomic<bool> cancelled_{false};
};

struct SubmitOutcome {
  std::shared_ptr<Channel> channel;  // null: refused
  ApiError error;
};

class Scheduler {
 public:
  // Starts the loop thread. The engine's max_requests bounds max_running.
  Scheduler(spec::Engine engine, tokenizer::Tokenizer tokenizer, SchedulerConfig config,
            Metrics* metrics);
  ~Scheduler();  // stops the loop: requests still queued or running end with an error
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a request. Refused at once: the queue is full (429, code queue_full), the request
  // could never fit the pool (400), the server is stopping (503).
  SubmitOutcome submit(Job job);
  void stop();

  // Pages the target pool has, and the pages a request of `tokens` tokens needs.
  int pool_pages() const { return pool_pages_; }
  int pages_for(int64_t tokens) const;
  int64_t context() const { return context_; }
  int32_t vocab_size() const { return vocab_size_; }
  const SchedulerConfig& config() const { return config_; }
  // The engine's policies, as it described them at creation.
  const std::string& engine_description() const { return engine_description_; }

 private:
  struct Active;
  void loop();
  void sweep(std::chrono::steady_clock::time_point now);
  void admit();    // waiting -> the engine, while slots and pages allow
  void prefill();  // prefill chunks of admitted requests, up to the iteration's token budget
  // Preempts the newest admitted requests until the running ones' next step fits the pool.
  void make_room();
  void preempt(std::unique_ptr<Active> a);
  // Target pool pages the running requests' next step needs beyond what they hold, and the pages
  // admitted requests still need for their prompts (+ one step).
  int step_need() const;
  int prefill_need() const;
  int step_tokens() const;        // rows one step appends at the most (num_draft + 1)
  void update_counts(Active& a);  // usage and tau, over every admission of the request
  void run_step();
  void deliver(Active& a, const spec::RequestEvent& ev);
  void end(Active& a, const std::string& reason, ApiError error = {});
  // Posts `text` and the pending logprobs to the request's channel.
  void post(Active& a, const std::string& text);
  void publish();

  spec::Engine engine_;
  tokenizer::Tokenizer tokenizer_;
  SchedulerConfig config_;
  Metrics* metrics_;
  int pool_pages_ = 0;
  int page_size_ = 1;
  int64_t context_ = 0;
  int32_t vocab_size_ = 0;
  std::optional<int32_t> eos_;
  std::string engine_description_;

  std::mutex mu_;  // guards inbox_, stopping_, queued_
  std::condition_variable cv_;
  std::deque<std::unique_ptr<Active>> inbox_;
  int queued_ = 0;         // inbox_ + waiting_
  int running_count_ = 0;  // running_.size(), as the loop last published it
  bool stopping_ = false;

  // The loop's own (no lock).
  std::deque<std::unique_ptr<Active>> waiting_;
  std::vector<std::unique_ptr<Active>> running_;
  std::thread thread_;
};

}  // namespace mlaspec::serve
