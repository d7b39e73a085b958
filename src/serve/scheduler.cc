#include "mlaspec/serve/scheduler.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "mlaspec/attention/registry.h"
#include "mlaspec/core/log.h"
#include "mlaspec/spec/stop_strings.h"

namespace mlaspec::serve {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

ApiError server_error(int http_status, std::string message, std::string code) {
  ApiError e;
  e.http_status = http_status;
  e.type = http_status >= 500 ? "server_error" : "invalid_request_error";
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

}  // namespace

struct Scheduler::Active {
  Job job;
  std::shared_ptr<Channel> channel = std::make_shared<Channel>();
  Clock::time_point arrival = Clock::now();
  std::optional<Clock::time_point> deadline;
  Clock::time_point last_emit;
  bool emitted = false;
  int pages = 0;          // prompt + max_tokens: what the request needs at the most
  bool admitted = false;  // in the engine (false again after a preemption)
  // What earlier admissions generated before a preemption (the engine's counts restart).
  int64_t generated_before = 0;
  int64_t prior_steps = 0;
  int64_t prior_accepted = 0;
  bool ended = false;
  spec::RequestId id = 0;
  std::optional<tokenizer::StreamDecoder> decoder;
  std::optional<spec::StopStringFilter> filter;
  Update state;
};

Update Channel::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return news_; });
  Update u = state_;
  u.text = std::move(text_);
  text_.clear();
  u.logprobs = std::move(logprobs_);
  logprobs_.clear();
  news_ = false;
  return u;
}

void Channel::post(const std::string& text, const Update& state) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    text_ += text;
    logprobs_.insert(logprobs_.end(), state.logprobs.begin(), state.logprobs.end());
    state_ = state;
    state_.text.clear();
    state_.logprobs.clear();
    news_ = true;
  }
  cv_.notify_all();
}

Scheduler::Scheduler(spec::Engine engine, tokenizer::Tokenizer tokenizer, SchedulerConfig config,
                     Metrics* metrics)
    : engine_(std::move(engine)),
      tokenizer_(std::move(tokenizer)),
      config_(config),
      metrics_(metrics) {
  config_.max_running = std::clamp(config_.max_running, 1, engine_.config().max_requests);
  pool_pages_ = engine_.page_tables().num_pages();
  page_size_ = engine_.page_tables().page_size();
  context_ = engine_.page_tables().max_tokens_per_request();
  vocab_size_ = static_cast<int32_t>(engine_.model().config().vocab_size);
  eos_ = tokenizer_.eos_id();
  engine_description_ = engine_.describe();
  publish();
  thread_ = std::thread([this] { loop(); });
}

Scheduler::~Scheduler() {
  stop();
}

void Scheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int Scheduler::pages_for(int64_t tokens) const {
  return static_cast<int>((tokens + page_size_ - 1) / page_size_);
}

SubmitOutcome Scheduler::submit(Job job) {
  SubmitOutcome out;
  auto a = std::make_unique<Active>();
  a->pages = pages_for(static_cast<int64_t>(job.prompt.size()) + job.max_tokens);
  // Admission takes the current need only (preempting when the pool fills), but a request must
  // fit alone.
  if (a->pages > pool_pages_) {
    out.error =
        bad_request("the prompt's " + std::to_string(job.prompt.size()) + " tokens + max_tokens " +
                        std::to_string(job.max_tokens) + " need " + std::to_string(a->pages) +
                        " KV pages; the pool has " + std::to_string(pool_pages_),
                    "max_tokens", "context_length_exceeded");
    return out;
  }
  if (config_.request_timeout_seconds > 0) {
    a->deadline = a->arrival + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(config_.request_timeout_seconds));
  }
  a->state.prompt_tokens = static_cast<int64_t>(job.prompt.size());
  a->job = std::move(job);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      out.error = server_error(503, "the server is shutting down", "shutting_down");
      return out;
    }
    // A request that finds a free slot is admitted at the loop's next iteration: only those
    // beyond the free slots wait.
    const int free_slots = std::max(0, config_.max_running - running_count_);
    if (queued_ >= config_.max_queue + free_slots) {
      out.error = server_error(429,
                               "the queue is full: " + std::to_string(queued_) +
                                   " requests are waiting (--max-queue " +
                                   std::to_string(config_.max_queue) + "); retry later",
                               "queue_full");
      out.error.type = "rate_limit_error";
      return out;
    }
    ++queued_;
    out.channel = a->channel;
    inbox_.push_back(std::move(a));
  }
  cv_.notify_all();
  return out;
}

void Scheduler::loop() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (running_.empty() && waiting_.empty()) {
        cv_.wait(lock, [&] { return stopping_ || !inbox_.empty(); });
      }
      if (stopping_) break;
      while (!inbox_.empty()) {
        waiting_.push_back(std::move(inbox_.front()));
        inbox_.pop_front();
      }
    }
    sweep(Clock::now());
    admit();
    prefill();
    make_room();
    if (engine_.num_running() > 0) run_step();
    sweep(Clock::now());
    publish();
    if (running_.empty() && !waiting_.empty()) {
      // Nothing admitted and nothing to step: the head waits for pages that only a cancellation
      // frees. Sleep a little instead of spinning.
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait_for(lock, std::chrono::milliseconds(5));
    }
  }
  // Stopping: everyone still here ends with an error.
  {
    std::lock_guard<std::mutex> lock(mu_);
    while (!inbox_.empty()) {
      waiting_.push_back(std::move(inbox_.front()));
      inbox_.pop_front();
    }
  }
  const ApiError shutting = server_error(503, "the server is shutting down", "shutting_down");
  for (auto& a : waiting_) end(*a, "error", shutting);
  for (auto& a : running_) end(*a, "error", shutting);
  waiting_.clear();
  running_.clear();
  publish();
}

void Scheduler::sweep(Clock::time_point now) {
  char limit[64];
  std::snprintf(limit, sizeof(limit), "the request passed its time limit of %g s (--timeout)",
                config_.request_timeout_seconds);
  auto check = [&](Active& a) {
    if (a.ended) return;
    if (a.channel->cancelled()) {
      end(a, "cancelled");
    } else if (a.deadline && now >= *a.deadline) {
      end(a, "timeout", server_error(504, limit, "timeout"));
    }
  };
  for (auto& a : waiting_) check(*a);
  for (auto& a : running_) check(*a);
  auto gone = [](const std::unique_ptr<Active>& a) { return a->ended; };
  const size_t before = waiting_.size();
  waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), gone), waiting_.end());
  if (waiting_.size() != before) {
    std::lock_guard<std::mutex> lock(mu_);
    queued_ -= static_cast<int>(before - waiting_.size());
  }
  running_.erase(std::remove_if(running_.begin(), running_.end(), gone), running_.end());
}

int Scheduler::step_tokens() const {
  return engine_.config().num_draft + 1;
}

int Scheduler::step_need() const {
  const kv::PageTables& t = engine_.page_tables();
  int need = 0;
  for (const auto& a : running_) {
    if (a->ended || engine_.state(a->id) != spec::RequestState::kRunning) continue;
    // The step appends 1 + min(num_draft, remaining - 1) rows (Engine::step).
    const int64_t remaining =
        a->job.max_tokens - static_cast<int64_t>(engine_.output(a->id).size());
    const int64_t rows = 1 + std::min<int64_t>(step_tokens() - 1, remaining - 1);
    need += t.pages_for(t.length(a->id) + rows) - static_cast<int>(t.pages(a->id).size());
  }
  return need;
}

int Scheduler::prefill_need() const {
  const kv::PageTables& t = engine_.page_tables();
  int need = 0;
  for (const auto& a : running_) {
    if (a->ended || engine_.state(a->id) != spec::RequestState::kWaiting) continue;
    need += t.pages_for(static_cast<int64_t>(a->job.prompt.size()) + step_tokens()) -
            static_cast<int>(t.pages(a->id).size());
  }
  return need;
}

void Scheduler::admit() {
  while (!waiting_.empty() && static_cast<int>(running_.size()) < config_.max_running) {
    Active& head = *waiting_.front();
    // Against the current need: the head's prompt and one step, beside the running requests'
    // next step and the prompts admitted but not prefilled yet. First come, first served: a head
    // that does not fit yet blocks the ones behind it, so a long request is never starved.
    const int free = engine_.page_tables().free_pages() - step_need() - prefill_need();
    if (pages_for(static_cast<int64_t>(head.job.prompt.size()) + step_tokens()) > free) break;
    std::unique_ptr<Active> a = std::move(waiting_.front());
    waiting_.pop_front();
    {
      std::lock_guard<std::mutex> lock(mu_);
      --queued_;
    }
    spec::GenerationRequest request{.prompt = a->job.prompt,
                                    .sampling = a->job.sampling,
                                    .max_new_tokens = a->job.max_tokens,
                                    .stop_token_ids = {},
                                    .logprobs = a->job.logprobs};
    if (eos_ && !a->job.ignore_eos) request.stop_token_ids.push_back(*eos_);
    Result<spec::RequestId> id = engine_.add_request(std::move(request));
    if (!id.ok()) {
      end(*a, "error", bad_request(id.status().message(), "prompt"));
      continue;
    }
    a->id = *id;
    a->admitted = true;
    // A preempted request keeps its detokenizer and stop filter: its text goes on where it was.
    if (!a->decoder) {
      a->decoder.emplace(tokenizer_, tokenizer::DecodeOptions{.skip_special_tokens = true});
      a->filter.emplace(a->job.stop);
    }
    running_.push_back(std::move(a));
  }
}

void Scheduler::prefill() {
  int64_t budget = config_.prefill_tokens_per_iteration;
  // Admitted requests in arrival order, one chunk at a time, until the budget is spent (at least
  // one chunk per iteration); the running requests step between iterations, so a long prompt
  // does not stall them. A chunk waits while the pool cannot hold it beside their next step.
  const int64_t chunk = engine_.config().prefill_chunk_tokens;
  for (auto& a : running_) {
    while (!a->ended && engine_.state(a->id) == spec::RequestState::kWaiting && budget > 0) {
      const int64_t before = engine_.prefilled(a->id);
      const kv::PageTables& t = engine_.page_tables();
      const int64_t upto =
          std::min(before + chunk, static_cast<int64_t>(a->job.prompt.size()) + step_tokens());
      if (t.pages_for(upto) - static_cast<int>(t.pages(a->id).size()) >
          t.free_pages() - step_need()) {
        return;
      }
      Result<spec::RequestEvent> ev = engine_.prefill_chunk(a->id);
      if (!ev.ok()) {
        end(*a, "error",
            server_error(500, "prefill failed: " + ev.status().to_string(), "engine_error"));
        break;
      }
      metrics_->count_prefill_chunk();
      budget -= std::max<int64_t>(1, engine_.prefilled(a->id) - before);
      if (ev->finished || !ev->tokens.empty()) deliver(*a, *ev);
    }
    if (budget <= 0) break;
  }
}

void Scheduler::make_room() {
  while (step_need() > engine_.page_tables().free_pages()) {
    // The newest admitted request goes back to the queue's front; alone, any request fits
    // (submit refuses one that could not), so the oldest is never preempted.
    auto newest = running_.end();
    int live = 0;
    for (auto it = running_.begin(); it != running_.end(); ++it) {
      if ((*it)->ended) continue;
      ++live;
      if (newest == running_.end() || (*it)->arrival > (*newest)->arrival) newest = it;
    }
    if (live <= 1) return;
    std::unique_ptr<Active> a = std::move(*newest);
    running_.erase(newest);
    preempt(std::move(a));
  }
}

void Scheduler::preempt(std::unique_ptr<Active> a) {
  // Recomputed on re-admission: the prompt grows by what was generated (the next token's
  // position, and so its sampling draw, stays P + n), the budget shrinks by as much.
  const std::span<const int32_t> out = engine_.output(a->id);
  a->job.prompt.insert(a->job.prompt.end(), out.begin(), out.end());
  a->job.max_tokens -= static_cast<int32_t>(out.size());
  a->generated_before += static_cast<int64_t>(out.size());
  const spec::SpecStats& st = engine_.request_stats(a->id);
  a->prior_steps += st.verify_steps;
  a->prior_accepted += st.accepted;
  // finish() frees its pages in the target pool and its drafter state (the draft pool's pages).
  if (Status s = engine_.finish(a->id); !s.ok()) log_warn("serve: preempting: " + s.to_string());
  if (Status s = engine_.release(a->id); !s.ok()) log_warn("serve: preempting: " + s.to_string());
  a->admitted = false;
  metrics_->count_preemption();
  log_debug("serve: preempted a request after " + std::to_string(a->generated_before) +
            " tokens; it is recomputed from " + std::to_string(a->job.prompt.size()));
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++queued_;
  }
  waiting_.push_front(std::move(a));
}

void Scheduler::run_step() {
  Result<spec::StepOutput> out = engine_.step();
  if (!out.ok()) {
    const ApiError e =
        server_error(500, "the engine step failed: " + out.status().to_string(), "engine_error");
    log_warn("serve: " + e.message);
    for (auto& a : running_) end(*a, "error", e);
    return;
  }
  for (const spec::RequestEvent& ev : out->events) {
    for (auto& a : running_) {
      if (a->ended || a->id != ev.id) continue;
      if (!ev.tokens.empty()) {
        metrics_->record_step(static_cast<int64_t>(ev.tokens.size()), ev.drafted);
      }
      deliver(*a, ev);
      break;
    }
  }
}

void Scheduler::deliver(Active& a, const spec::RequestEvent& ev) {
  const Clock::time_point now = Clock::now();
  if (!ev.tokens.empty()) {
    if (!a.emitted) {
      metrics_->record_ttft(seconds(now - a.arrival));
    } else {
      metrics_->record_itl(seconds(now - a.last_emit));
    }
    a.emitted = true;
    a.last_emit = now;
  }
  bool stopped = false;
  for (size_t i = 0; i < ev.tokens.size(); ++i) {
    if (i < ev.logprobs.size()) a.state.logprobs.push_back(ev.logprobs[i]);
    Result<std::string> piece = a.decoder->push(ev.tokens[i]);
    if (!piece.ok()) {
      end(a, "error",
          server_error(500, "detokenization failed: " + piece.status().to_string(),
                       "engine_error"));
      return;
    }
    if (a.filter->add(*piece)) {
      stopped = true;
      break;
    }
  }
  if (stopped) {
    end(a, "stop");
    return;
  }
  if (!ev.error.ok()) {
    end(a, "error",
        server_error(500, "the engine failed the request: " + ev.error.to_string(),
                     "engine_error"));
    return;
  }
  if (ev.finished) {
    Result<std::string> rest = a.decoder->flush();
    if (rest.ok() && a.filter->add(*rest)) {
      end(a, "stop");
      return;
    }
    a.filter->finish();
    end(a, ev.reason == spec::FinishReason::kMaxTokens ? "length" : "stop");
    return;
  }
  update_counts(a);
  post(a, a.filter->take());
}

void Scheduler::update_counts(Active& a) {
  const spec::SpecStats& st = engine_.request_stats(a.id);
  a.state.completion_tokens =
      a.generated_before + static_cast<int64_t>(engine_.output(a.id).size());
  a.state.verify_steps = a.prior_steps + st.verify_steps;
  // tau = (accepted + steps) / steps (spec::SpecStats::accept_length), over every admission.
  a.state.accept_length =
      a.state.verify_steps == 0
          ? 0.0
          : static_cast<double>(a.prior_accepted + st.accepted + a.state.verify_steps) /
                static_cast<double>(a.state.verify_steps);
}

void Scheduler::post(Active& a, const std::string& text) {
  a.channel->post(text, a.state);
  a.state.logprobs.clear();
}

void Scheduler::end(Active& a, const std::string& reason, ApiError error) {
  if (a.ended) return;
  a.ended = true;
  std::string text;
  if (a.admitted) {
    const spec::RequestState s = engine_.state(a.id);
    if (s == spec::RequestState::kRunning || s == spec::RequestState::kWaiting) {
      Status st = engine_.finish(a.id);
      if (!st.ok()) log_warn("serve: finishing request: " + st.to_string());
    }
    update_counts(a);
    Status released = engine_.release(a.id);
    if (!released.ok()) log_warn("serve: releasing request: " + released.to_string());
  }
  // A preempted request waiting for re-admission has text too.
  if (a.filter) text = a.filter->take();
  a.state.done = true;
  a.state.finish_reason = reason;
  a.state.error = std::move(error);
  if (reason == "stop" || reason == "length") {
    metrics_->record_done(a.state.prompt_tokens, a.state.completion_tokens,
                          seconds(Clock::now() - a.arrival));
  }
  // The gauges first: a client that reads /metrics right after its answer sees its pages freed.
  publish();
  post(a, text);
}

void Scheduler::publish() {
  EngineGauges g;
  g.running = static_cast<int>(
      std::count_if(running_.begin(), running_.end(), [](const auto& a) { return !a->ended; }));
  {
    std::lock_guard<std::mutex> lock(mu_);
    g.waiting = queued_;
    running_count_ = g.running;
  }
  g.kv_pages_used = engine_.page_tables().used_pages();
  g.kv_pages_total = pool_pages_;
  g.kv_pages_reserved = prefill_need();
  const spec::SpecStats& st = engine_.stats();
  for (size_t k = 0; k < st.reached.size(); ++k) {
    g.position_acceptance.push_back(st.position_acceptance(k));
  }
  g.accept_length = st.accept_length();
  g.verify_steps = st.verify_steps;
  g.drafted = st.drafted;
  g.accepted = st.accepted;
  attn::Dispatcher& d = engine_.model().dispatcher();
  for (int i = 0; i < d.registry().size(); ++i) {
    const attn::BackendCounters c = d.counters(i);
    g.attention.push_back({std::string(d.registry().caps(i).name), c.calls, c.rows});
  }
  metrics_->set_gauges(std::move(g));
}

}  // namespace mlaspec::serve
