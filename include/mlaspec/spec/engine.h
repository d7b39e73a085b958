// Engine: a target model, its paged KV cache and an optional drafter, generating for a batch of
// requests (docs/spec.md, "Engine").
//
//   Engine e = Engine::create(std::move(model), std::move(drafter), {.num_draft = 7}).value();
//   RequestId id = e.add_request({.prompt = ids, .max_new_tokens = 64}).value();
//   e.prefill(id, progress);                      // chunked; emits the first token
//                                                 // (or prefill_chunk(id) per chunk)
//   while (e.num_running() > 0) {
//     StepOutput out = e.step().value();          // draft -> verify -> accept -> commit
//     for (const RequestEvent& ev : out.events) { ... ev.tokens, ev.finished, ev.error ... }
//   }
//
// A request's life: add_request (validated, registered with the page tables and the drafter) ->
// prefill (the prompt's KV in chunks, then its first token from the last prompt row) -> steps,
// each emitting 1 .. num_draft + 1 tokens -> finished (a stop token, max_new_tokens, finish()) or
// failed (its own error, e.g. the pool ran out of pages for it). A finished or failed request has
// returned its pages and left the drafter; its tokens and stats stay readable until release().
//
// Stop token ids end a request here, the stop token included in its output. Stop strings need the
// tokenizer and are the caller's: it calls finish() when the text it decoded contains one (the
// `generate` command does).
//
// Positions: the prompt takes 0 .. P-1; generated token n (from 0) sits at P + n, which is the
// `position` its sampling draw uses (model/sampling.h), so plain and speculative runs draw from the
// same counters. The KV cache holds every token but the last emitted one: that one is the next
// step's anchor (verify row 0).
//
// Not thread-safe: one loop owns an Engine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"
#include "mlaspec/kvcache/page_table.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/model.h"
#include "mlaspec/model/sampling.h"
#include "mlaspec/spec/drafter.h"
#include "mlaspec/spec/logprobs.h"
#include "mlaspec/spec/stats.h"

namespace mlaspec::spec {

struct EngineConfig {
  DType kv_dtype = DType::kBF16;  // target pool: kBF16, kFP8E4M3 or kFP8Tile (CPU runtime)
  std::vector<float> kv_scales;   // fp8: one scale per layer (value = code * scale); empty = 1
  int page_size = 64;
  // Pages in the target pool; 0 = enough for max_requests requests of max_tokens_per_request.
  int num_pages = 0;
  int max_requests = 16;  // requests registered at once (page-table slots)
  // Longest sequence (prompt + generated) of one request; 0 = the model's
  // max_position_embeddings. Never more than that.
  int64_t max_tokens_per_request = 0;
  // Drafts per verify step (verify q_len = num_draft + 1); 0 or no drafter = plain decoding.
  int num_draft = 7;
  // Prompt tokens per prefill forward (one progress report each); at most 1024. 0 = the target's
  // device default, model::default_chunk_tokens (256 on the CPU, 1024 on CUDA); Engine::config()
  // reports the value in use.
  int prefill_chunk_tokens = 0;
  // Row-invariant forwards (model::ForwardOptions::deterministic) for decode and verify steps, so
  // speculative greedy output equals plain greedy output token for token. Prefill chunks are the
  // same in both runs and keep the BLAS GEMMs.
  bool deterministic = true;
  // The target's attention in fp8 math (model::ForwardOptions::fp8_math_attention: Q and P
  // rounded to e4m3) for every forward: opt-in, changes outputs; needs kv_dtype fp8_e4m3. Served
  // by the CPU reference and the CUDA backends (their e4m3 tensor-core kernel).
  bool fp8_math_attention = false;
};

struct GenerationRequest {
  std::vector<int32_t> prompt;  // >= 1 token, ids in the model's vocabulary
  model::SamplingParams sampling;
  int32_t max_new_tokens = 16;          // >= 1
  std::vector<int32_t> stop_token_ids;  // emitting one ends the request (it is kept)
  // -1: none. k in [0, kMaxTopLogprobs]: each emitted token's log-probability under the target
  // and its k most likely alternatives (spec/logprobs.h), from the logits row that decided the
  // token (the prefill's last row, a verify row), computed only for requests that ask.
  int32_t logprobs = -1;
};

enum class RequestState : uint8_t {
  kWaiting,   // added, not prefilled
  kRunning,   // prefilled, generating
  kFinished,  // done; pages returned
  kFailed,    // its own error; pages returned
};
const char* state_name(RequestState state);

enum class FinishReason : uint8_t { kNone, kStopToken, kMaxTokens, kCaller };
const char* finish_reason_name(FinishReason reason);

// What one request got from a prefill or a step.
struct RequestEvent {
  RequestId id = 0;
  std::vector<int32_t> tokens;          // emitted this time, in order
  std::vector<TokenLogprobs> logprobs;  // GenerationRequest::logprobs >= 0: one per token
  // Drafts this step verified for the request (its verify q_len - 1; 0 for a plain decode step
  // or a prefill's first token): the width the drafter's policy chose (DSpark's scheduler).
  int32_t drafted = 0;
  bool finished = false;
  FinishReason reason = FinishReason::kNone;
  Status error;  // not ok: the request failed in this step (pages freed; batchmates unaffected)
};

struct StepOutput {
  std::vector<RequestEvent> events;  // one per request that was running, in id order
  int32_t batch = 0;                 // requests verified in one forward
};

// Called after each prefill chunk: (prompt tokens done, prompt tokens in all).
using PrefillProgress = std::function<void(int64_t done, int64_t total)>;

class Engine {
 public:
  // `drafter` may be null (plain decoding). Validates the config against the model; allocates
  // the pool; logs the decided policies once (dtype, pages, drafts, deterministic, recurrent
  // state). Recurrent-state commits are decided here, once: the engine commits the accepted
  // prefix's state after every kept forward when the target has recurrent-state layers
  // (target.recurrent_state() non-null) and never touches it otherwise. `recurrent` stands in for
  // the target's own (a test double of a hybrid model); null = the target's.
  static Result<Engine> create(model::Model target, std::unique_ptr<Drafter> drafter,
                               const EngineConfig& config,
                               std::unique_ptr<model::RecurrentState> recurrent = nullptr);

  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  ~Engine();

  // Validates (prompt non-empty and in the vocabulary, prompt + max_new_tokens within
  // max_tokens_per_request, sampling params, stop ids) and registers the request.
  Result<RequestId> add_request(GenerationRequest request);
  // Runs the prompt through the target in chunks and emits the first token. An error that is the
  // request's own (the pool ran out for it) fails the request and is returned.
  Result<RequestEvent> prefill(RequestId id, const PrefillProgress& progress = {});
  // One chunk of that: the next prefill_chunk_tokens of a waiting request's prompt. The event has
  // no tokens until the last chunk, which emits the first token and makes the request running;
  // an error that is the request's own fails it (event.error), as in prefill. Lets a scheduler
  // interleave a long prompt's chunks with step()s of the running requests (step() never touches
  // a waiting request).
  Result<RequestEvent> prefill_chunk(RequestId id);
  // Prompt tokens of the request already prefilled (0 for unknown ids).
  int64_t prefilled(RequestId id) const;
  // One draft -> verify -> accept -> commit step for every running request, in one target
  // forward. A request's own failure is reported in its event; the returned status is an error
  // only when the step as a whole could not run (then nothing changed).
  Result<StepOutput> step();
  // Ends a running or waiting request now (stop strings, cancellation): its pages and drafter
  // state are released; its tokens stay readable.
  Status finish(RequestId id);
  // Forgets a request (any state).
  Status release(RequestId id);

  RequestState state(RequestId id) const;  // kFailed for unknown ids
  // Generated tokens so far (not the prompt).
  std::span<const int32_t> output(RequestId id) const;
  // Step counts of one request (phase times are kept for the run only: a step's time serves the
  // whole batch).
  const SpecStats& request_stats(RequestId id) const;
  const Status& request_error(RequestId id) const;
  int num_running() const;

  // Run totals: the step counts of every request and each step's draft / verify / accept+commit
  // time; prefill time and tokens apart.
  const SpecStats& stats() const { return stats_; }
  double prefill_seconds() const { return prefill_seconds_; }
  int64_t prefill_tokens() const { return prefill_tokens_; }

  const model::Model& model() const { return target_; }
  model::Model& model() { return target_; }
  const kv::PageTables& page_tables() const { return tables_; }
  const kv::KvPool& pool() const { return pool_; }
  const EngineConfig& config() const { return config_; }
  const Drafter* drafter() const { return drafter_.get(); }
  // The recurrent state the engine commits, or null (pure-MLA target: nothing to commit).
  const model::RecurrentState* recurrent_state() const { return recurrent_; }
  // One line of the decided policies ("target kv bf16, 64 pages x 64, ngram num_draft 7, ...").
  const std::string& describe() const { return description_; }

 private:
  struct Request {
    GenerationRequest spec;
    RequestState state = RequestState::kWaiting;
    FinishReason reason = FinishReason::kNone;
    std::vector<int32_t> output;
    int64_t prefilled = 0;  // prompt tokens in the KV cache (prefill_chunk)
    SpecStats stats;
    Status error;
    bool in_drafter = false;
    bool in_recurrent = false;
  };
  Engine(model::Model target, std::unique_ptr<Drafter> drafter, const EngineConfig& config,
         kv::KvPool pool, kv::PageTables tables);
  // Commits the recurrent state after `rows` of the forward's `tokens` (no-op without one).
  Status commit_recurrent(RequestId id, Request& r, std::span<const int32_t> tokens, int32_t rows);
  Request* find(RequestId id);
  const Request* find(RequestId id) const;
  // Frees the request's pages and drafter state; state becomes `state`.
  void retire(RequestId id, Request& r, RequestState state);
  // Appends emitted tokens, cut at a stop token or max_new_tokens; returns how
  // many were kept and finishes the request when it should stop.
  int32_t emit(RequestId id, Request& r, std::span<const int32_t> tokens, RequestEvent& event);
  // With r.spec.logprobs >= 0: the log-probabilities of the event's last `n` tokens, token i of
  // them from row i of `rows` ([n or more, vocab] logits).
  void add_logprobs(const Request& r, std::span<const float> rows, int32_t n,
                    RequestEvent& event) const;

  model::Model target_;
  std::unique_ptr<Drafter> drafter_;
  // The test double create() was given, if any; recurrent_ points to it or to the target's own
  // recurrent state, and is null for a pure-MLA target (decided once in create()).
  std::unique_ptr<model::RecurrentState> recurrent_owned_;
  model::RecurrentState* recurrent_ = nullptr;
  EngineConfig config_;
  kv::KvPool pool_;
  kv::PageTables tables_;
  // The drafter's capture_layers(), read once: every target forward captures them and the
  // committed rows go to Drafter::append_context (empty: the forward captures nothing).
  std::vector<int> capture_layers_;
  std::map<RequestId, Request> requests_;
  RequestId next_id_ = 0;
  SpecStats stats_;
  double prefill_seconds_ = 0.0;
  int64_t prefill_tokens_ = 0;
  std::string description_;
};

}  // namespace mlaspec::spec
