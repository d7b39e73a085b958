// The generation engine: prefill in chunks, then speculative steps (draft -> verify -> accept ->
// commit) over a batch of requests that each accept a different number of drafts.
#include "mlaspec/spec/engine.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/core/log.h"
#include "mlaspec/spec/acceptor.h"
#include "mlaspec/spec/verify_width.h"

namespace mlaspec::spec {
namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

constexpr int kMaxNumDraft = 64;

Status validate_config(const EngineConfig& c, const model::ModelConfig& m) {
  if (c.kv_dtype != DType::kBF16 && c.kv_dtype != DType::kFP8E4M3 &&
      c.kv_dtype != DType::kFP8Tile) {
    return invalid_argument("kv dtype " + std::string(dtype_name(c.kv_dtype)) +
                            " is not bf16, fp8_e4m3 or fp8_tile");
  }
  if (c.page_size < 1) return invalid_argument("page_size " + str(c.page_size) + " is < 1");
  if (c.max_requests < 1) {
    return invalid_argument("max_requests " + str(c.max_requests) + " is < 1");
  }
  if (c.num_draft < 0 || c.num_draft > kMaxNumDraft) {
    return invalid_argument("num_draft " + str(c.num_draft) + " is outside [0, " +
                            str(kMaxNumDraft) + "]");
  }
  if (c.prefill_chunk_tokens < 1 || c.prefill_chunk_tokens > attn::kCpuReferenceCaps.max_q_len) {
    return invalid_argument("prefill_chunk_tokens " + str(c.prefill_chunk_tokens) +
                            " is outside [1, " + str(attn::kCpuReferenceCaps.max_q_len) + "]");
  }
  if (c.max_tokens_per_request < 0 || c.max_tokens_per_request > m.max_position_embeddings) {
    return invalid_argument("max_tokens_per_request " + str(c.max_tokens_per_request) +
                            " is outside [0, " + str(m.max_position_embeddings) +
                            "] (the model's max_position_embeddings)");
  }
  if (c.num_pages < 0) return invalid_argument("num_pages " + str(c.num_pages) + " is < 0");
  return Status::Ok();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

const char* state_name(RequestState state) {
  switch (state) {
    case RequestState::kWaiting:
      return "waiting";
    case RequestState::kRunning:
      return "running";
    case RequestState::kFinished:
      return "finished";
    case RequestState::kFailed:
      return "failed";
  }
  return "?";
}

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone:
      return "none";
    case FinishReason::kStopToken:
      return "stop";
    case FinishReason::kMaxTokens:
      return "length";
    case FinishReason::kCaller:
      return "caller";
  }
  return "?";
}

Engine::Engine(model::Model target, std::unique_ptr<Drafter> drafter, const EngineConfig& config,
               kv::KvPool pool, kv::PageTables tables)
    : target_(std::move(target)),
      drafter_(std::move(drafter)),
      config_(config),
      pool_(std::move(pool)),
      tables_(std::move(tables)) {}
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;
Engine::~Engine() = default;

Result<Engine> Engine::create(model::Model target, std::unique_ptr<Drafter> drafter,
                              const EngineConfig& config_in,
                              std::unique_ptr<model::RecurrentState> recurrent) {
  EngineConfig config = config_in;
  const model::ModelConfig& m = target.config();
  if (config.prefill_chunk_tokens == 0) {
    config.prefill_chunk_tokens = model::default_chunk_tokens(target.device());
  }
  MLASPEC_RETURN_IF_ERROR(validate_config(config, m));
  if (config.fp8_math_attention && config.kv_dtype != DType::kFP8E4M3) {
    return invalid_argument("fp8-math attention needs kv fp8 (fp8_e4m3); kv is " +
                            std::string(dtype_name(config.kv_dtype)));
  }
  if (config.max_tokens_per_request == 0) config.max_tokens_per_request = m.max_position_embeddings;
  if (drafter == nullptr) config.num_draft = 0;
  const int64_t pages_per_request =
      (config.max_tokens_per_request + config.page_size - 1) / config.page_size;
  if (config.num_pages == 0) {
    const int64_t pages = pages_per_request * config.max_requests;
    if (pages > (int64_t{1} << 30)) {
      return invalid_argument(str(config.max_requests) + " requests of " +
                              str(config.max_tokens_per_request) + " tokens need " + str(pages) +
                              " pages; give num_pages or lower max_tokens_per_request");
    }
    config.num_pages = static_cast<int>(pages);
  }
  Result<kv::KvPool> pool = kv::KvPool::create(
      target.kv_pool_spec(config.num_pages, config.page_size, config.kv_dtype, config.kv_scales));
  if (!pool.ok()) return pool.status().with_context("target KV pool");
  kv::PageTablesSpec tspec;
  tspec.name = "target";
  tspec.num_pages = config.num_pages;
  tspec.page_size = config.page_size;
  tspec.max_requests = config.max_requests;
  tspec.max_pages_per_request = static_cast<int>(pages_per_request);
  Result<kv::PageTables> tables = kv::PageTables::create(tspec);
  if (!tables.ok()) return tables.status();

  Engine e(std::move(target), std::move(drafter), config, std::move(*pool), std::move(*tables));
  if (e.drafter_) e.capture_layers_ = e.drafter_->capture_layers();
  e.recurrent_owned_ = std::move(recurrent);
  e.recurrent_ = e.recurrent_owned_ ? e.recurrent_owned_.get() : e.target_.recurrent_state();
  e.description_ =
      "target on " + std::string(device_name(e.target_.device())) + ", kv " +
      std::string(dtype_name(config.kv_dtype)) + ", " + str(config.num_pages) + " pages x " +
      str(config.page_size) + " tokens (" + str(e.pool_.bytes() >> 20) + " MiB), " +
      str(config.max_requests) + " requests of <= " + str(config.max_tokens_per_request) +
      " tokens; " +
      (e.drafter_ ? std::string(e.drafter_->name()) + " num_draft " + str(config.num_draft)
                  : std::string("no drafter (plain decoding)")) +
      "; deterministic " + (config.deterministic ? "on" : "off") +
      (config.fp8_math_attention ? "; attention in fp8 math (Q and P rounded to e4m3)" : "") +
      "; recurrent-state commit " +
      (e.recurrent_ ? "on (" + std::string(e.recurrent_->name()) + ")"
                    : std::string("off (pure MLA)"));
  log_debug("engine: " + e.description_);
  return e;
}

Engine::Request* Engine::find(RequestId id) {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}
const Engine::Request* Engine::find(RequestId id) const {
  auto it = requests_.find(id);
  return it == requests_.end() ? nullptr : &it->second;
}

Result<RequestId> Engine::add_request(GenerationRequest request) {
  const model::ModelConfig& m = target_.config();
  if (request.prompt.empty()) return invalid_argument("the prompt is empty");
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    const int32_t t = request.prompt[i];
    if (t < 0 || t >= m.vocab_size) {
      return out_of_range("prompt token " + str(t) + " at index " + str(static_cast<int64_t>(i)) +
                          " is outside the model's vocabulary [0, " + str(m.vocab_size) + ")");
    }
  }
  for (const int32_t t : request.stop_token_ids) {
    if (t < 0 || t >= m.vocab_size) {
      return out_of_range("stop token " + str(t) + " is outside the model's vocabulary [0, " +
                          str(m.vocab_size) + ")");
    }
  }
  if (request.max_new_tokens < 1) {
    return invalid_argument("max_new_tokens " + str(request.max_new_tokens) + " is < 1");
  }
  const int64_t total = static_cast<int64_t>(request.prompt.size()) + request.max_new_tokens;
  if (total > config_.max_tokens_per_request) {
    return out_of_range("prompt " + str(static_cast<int64_t>(request.prompt.size())) +
                        " + max_new_tokens " + str(request.max_new_tokens) + " = " + str(total) +
                        " tokens exceeds the limit of " + str(config_.max_tokens_per_request) +
                        " per request");
  }
  if (request.logprobs < -1 || request.logprobs > kMaxTopLogprobs) {
    return invalid_argument("logprobs " + str(request.logprobs) + " is outside [-1, " +
                            str(kMaxTopLogprobs) + "] (-1: none)");
  }
  MLASPEC_RETURN_IF_ERROR(model::validate(request.sampling));
  const RequestId id = next_id_;
  MLASPEC_RETURN_IF_ERROR(tables_.add_request(id));
  if (drafter_) {
    const Status s = drafter_->add_request(id, request.prompt, request.sampling);
    if (!s.ok()) {
      (void)tables_.free(id);
      return s;
    }
  }
  if (recurrent_) {
    const Status s = recurrent_->add_request(id);
    if (!s.ok()) {
      (void)tables_.free(id);
      if (drafter_) (void)drafter_->remove_request(id);
      return s.with_context(std::string(recurrent_->name()));
    }
  }
  ++next_id_;
  Request r;
  r.spec = std::move(request);
  r.in_drafter = drafter_ != nullptr;
  r.in_recurrent = recurrent_ != nullptr;
  requests_.emplace(id, std::move(r));
  return id;
}

void Engine::retire(RequestId id, Request& r, RequestState state) {
  if (tables_.contains(id)) (void)tables_.free(id);
  if (r.in_drafter) {
    (void)drafter_->remove_request(id);
    r.in_drafter = false;
  }
  if (r.in_recurrent) {
    (void)recurrent_->remove_request(id);
    r.in_recurrent = false;
  }
  r.state = state;
}

Status Engine::commit_recurrent(RequestId id, Request& r, std::span<const int32_t> tokens,
                                int32_t rows) {
  if (!r.in_recurrent) return Status::Ok();
  return recurrent_->commit(id, tokens, rows).with_context(std::string(recurrent_->name()));
}

int32_t Engine::emit(RequestId id, Request& r, std::span<const int32_t> tokens,
                     RequestEvent& event) {
  int32_t kept = 0;
  for (const int32_t t : tokens) {
    if (static_cast<int32_t>(r.output.size()) >= r.spec.max_new_tokens) break;
    r.output.push_back(t);
    event.tokens.push_back(t);
    ++kept;
    if (std::find(r.spec.stop_token_ids.begin(), r.spec.stop_token_ids.end(), t) !=
        r.spec.stop_token_ids.end()) {
      r.reason = FinishReason::kStopToken;
      break;
    }
  }
  if (r.reason == FinishReason::kNone &&
      static_cast<int32_t>(r.output.size()) >= r.spec.max_new_tokens) {
    r.reason = FinishReason::kMaxTokens;
  }
  if (r.reason != FinishReason::kNone) {
    retire(id, r, RequestState::kFinished);
    event.finished = true;
    event.reason = r.reason;
  }
  return kept;
}

void Engine::add_logprobs(const Request& r, std::span<const float> rows, int32_t n,
                          RequestEvent& event) const {
  if (r.spec.logprobs < 0) return;
  const size_t vocab = static_cast<size_t>(target_.config().vocab_size);
  const size_t first = event.tokens.size() - static_cast<size_t>(n);
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    event.logprobs.push_back(
        token_logprobs(rows.subspan(i * vocab, vocab), event.tokens[first + i], r.spec.logprobs));
  }
}

Result<RequestEvent> Engine::prefill(RequestId id, const PrefillProgress& progress) {
  const Request* r = find(id);
  if (r == nullptr) return not_found("request " + str(id) + " is unknown");
  const int64_t P = static_cast<int64_t>(r->spec.prompt.size());
  while (true) {
    Result<RequestEvent> ev = prefill_chunk(id);
    if (!ev.ok() || !ev->error.ok()) return ev;
    if (progress) progress(prefilled(id), P);
    // The last chunk emits the first token (or ends the request).
    if (ev->finished || !ev->tokens.empty()) return ev;
  }
}

Result<RequestEvent> Engine::prefill_chunk(RequestId id) {
  Request* r = find(id);
  if (r == nullptr) return not_found("request " + str(id) + " is unknown");
  if (r->state != RequestState::kWaiting) {
    return invalid_argument("request " + str(id) + " is " + state_name(r->state) +
                            ", not waiting for prefill");
  }
  const auto t0 = std::chrono::steady_clock::now();
  RequestEvent event;
  event.id = id;
  const std::vector<int32_t>& prompt = r->spec.prompt;
  const int64_t P = static_cast<int64_t>(prompt.size());
  auto fail = [&](const Status& s) {
    r->error = s.with_context("request " + str(id));
    retire(id, *r, RequestState::kFailed);
    event.error = r->error;
    event.finished = true;
    return event;
  };
  const int64_t begin = r->prefilled;
  const int64_t T = std::min<int64_t>(config_.prefill_chunk_tokens, P - begin);
  const bool last = begin + T == P;
  if (Status s = tables_.append(id, T); !s.ok()) return fail(s);
  std::vector<int32_t> positions(static_cast<size_t>(T));
  for (int64_t i = 0; i < T; ++i)
    positions[static_cast<size_t>(i)] = static_cast<int32_t>(begin + i);
  model::ForwardRequest fr;
  fr.tokens =
      std::span<const int32_t>(prompt).subspan(static_cast<size_t>(begin), static_cast<size_t>(T));
  fr.positions = positions;
  fr.pages = tables_.pages(id);
  fr.logits = last ? model::LogitsMode::kLast : model::LogitsMode::kNone;
  model::ForwardOptions options;
  options.capture_layers = capture_layers_;
  options.fp8_math_attention = config_.fp8_math_attention;
  // A greedy request without logprobs needs only the last row's argmax (made on the GPU there).
  options.argmax_only = last && r->spec.sampling.greedy() && r->spec.logprobs < 0;
  Result<model::ForwardOutput> out = target_.forward({&fr, 1}, pool_, options);
  if (!out.ok()) {
    (void)tables_.rollback(id);
    return fail(out.status());
  }
  if (Status s = tables_.commit(id, T); !s.ok()) return fail(s);
  if (Status s = commit_recurrent(id, *r, fr.tokens, static_cast<int32_t>(T)); !s.ok()) {
    return fail(s);
  }
  if (!capture_layers_.empty() && r->in_drafter) {
    const ContextRows rows{out->requests[0].hidden, 0, T, begin};
    if (Status s = drafter_->append_context(id, rows); !s.ok()) return fail(s);
  }
  r->prefilled += T;
  prefill_tokens_ += T;
  if (last) {
    const std::vector<float>& last_logits = out->requests[0].logits;
    Result<int32_t> first = [&]() -> Result<int32_t> {
      if (!options.argmax_only) return model::sample_token(last_logits, r->spec.sampling, P);
      Result<Acceptance> a =
          accept_greedy_ids({}, out->requests[0].argmax, target_.config().vocab_size);
      if (!a.ok()) return a.status();
      return a->last();
    }();
    if (!first.ok()) return fail(first.status());
    r->state = RequestState::kRunning;
    const int32_t tok = *first;
    add_logprobs(*r, last_logits, emit(id, *r, {&tok, 1}, event), event);
    if (r->state == RequestState::kRunning && r->in_drafter) {
      if (Status s = drafter_->commit(id, {&tok, 1}); !s.ok()) return fail(s);
    }
  }
  prefill_seconds_ += seconds_since(t0);
  return event;
}

int64_t Engine::prefilled(RequestId id) const {
  const Request* r = find(id);
  return r == nullptr ? 0 : r->prefilled;
}

Result<StepOutput> Engine::step() {
  StepOutput out;
  std::vector<RequestId> ids;
  for (const auto& [id, r] : requests_) {
    if (r.state == RequestState::kRunning) ids.push_back(id);
  }
  if (ids.empty()) return out;
  const int64_t vocab = target_.config().vocab_size;
  const size_t n = ids.size();
  SpecStats step_time;  // this step's phase times, added to the run totals at the end

  // Draft: at most num_draft, and never more than the request can still emit minus the target's
  // own token, so a verify block never runs past max_new_tokens.
  std::vector<DraftSlot> slots(n);
  for (size_t b = 0; b < n; ++b) {
    const Request& r = requests_.at(ids[b]);
    const int32_t remaining = r.spec.max_new_tokens - static_cast<int32_t>(r.output.size());
    slots[b].request = ids[b];
    slots[b].max_draft = std::min(config_.num_draft, remaining - 1);
  }
  if (drafter_ && config_.num_draft > 0) {
    PhaseTimer timer(step_time, Phase::kDraft);
    MLASPEC_RETURN_IF_ERROR(drafter_->propose(slots).with_context(std::string(drafter_->name())));
  }

  // Verify: [anchor, drafts] per request, one forward for the batch.
  out.events.resize(n);
  std::vector<std::vector<int32_t>> tokens(n), positions(n);
  std::vector<model::ForwardRequest> batch;
  std::vector<size_t> in_batch;  // batch index -> slot index
  for (size_t b = 0; b < n; ++b) {
    const RequestId id = ids[b];
    Request& r = requests_.at(id);
    RequestEvent& ev = out.events[b];
    ev.id = id;
    DraftSlot& slot = slots[b];
    Status bad;
    if (static_cast<int32_t>(slot.tokens.size()) > slot.max_draft) {
      slot.tokens.resize(static_cast<size_t>(std::max(slot.max_draft, 0)));
    }
    for (const int32_t t : slot.tokens) {
      if (t < 0 || t >= vocab) {
        bad = out_of_range("draft token " + str(t) + " is outside the vocabulary [0, " +
                           str(vocab) + ")");
      }
    }
    if (!slot.probs.empty() && static_cast<int64_t>(slot.probs.size()) <
                                   static_cast<int64_t>(slot.tokens.size()) * vocab) {
      bad = invalid_argument(
          str(static_cast<int64_t>(slot.probs.size())) + " draft probabilities for " +
          str(static_cast<int64_t>(slot.tokens.size())) + " drafts of vocab " + str(vocab));
    }
    slot.probs.resize(slot.probs.empty() ? 0 : slot.tokens.size() * static_cast<size_t>(vocab));
    const int64_t L = tables_.length(id);
    const int64_t q_len = 1 + static_cast<int64_t>(slot.tokens.size());
    if (bad.ok()) bad = tables_.append(id, q_len);
    if (!bad.ok()) {
      r.error = bad.with_context("request " + str(id));
      retire(id, r, RequestState::kFailed);
      ev.error = r.error;
      ev.finished = true;
      continue;
    }
    tokens[b].push_back(r.output.back());
    tokens[b].insert(tokens[b].end(), slot.tokens.begin(), slot.tokens.end());
    positions[b].resize(static_cast<size_t>(q_len));
    for (int64_t i = 0; i < q_len; ++i)
      positions[b][static_cast<size_t>(i)] = static_cast<int32_t>(L + i);
    model::ForwardRequest fr;
    fr.tokens = tokens[b];
    fr.positions = positions[b];
    fr.pages = tables_.pages(id);
    fr.logits = model::LogitsMode::kAll;
    batch.push_back(fr);
    in_batch.push_back(b);
  }
  out.batch = static_cast<int32_t>(batch.size());
  if (batch.empty()) return out;
  {
    // Requests of equal width next to each other: one attention launch per width (verify_order).
    std::vector<int64_t> q_lens;
    for (const model::ForwardRequest& fr : batch) q_lens.push_back(std::ssize(fr.tokens));
    const std::vector<size_t> order = verify_order(q_lens);
    std::vector<model::ForwardRequest> sorted_batch;
    std::vector<size_t> sorted_in_batch;
    for (const size_t k : order) {
      sorted_batch.push_back(batch[k]);
      sorted_in_batch.push_back(in_batch[k]);
    }
    batch = std::move(sorted_batch);
    in_batch = std::move(sorted_in_batch);
  }
  // When every request of the step is greedy without logprobs, the target returns its argmax per
  // row instead of the logits (on the GPU: B x q_len ids instead of B x q_len x vocab floats).
  bool argmax_only = true;
  for (const size_t b : in_batch) {
    const Request& r = requests_.at(ids[b]);
    argmax_only = argmax_only && r.spec.sampling.greedy() && r.spec.logprobs < 0;
  }
  Result<model::ForwardOutput> verified = [&] {
    PhaseTimer timer(step_time, Phase::kVerify);
    model::ForwardOptions options;
    options.deterministic = config_.deterministic;
    options.fp8_math_attention = config_.fp8_math_attention;
    options.capture_layers = capture_layers_;
    options.argmax_only = argmax_only;
    return target_.forward(batch, pool_, options);
  }();
  if (!verified.ok()) {
    for (const size_t b : in_batch) (void)tables_.rollback(ids[b]);
    return verified.status().with_context("verify");
  }

  // Accept and commit, request by request: nothing of one request reaches another's.
  {
    PhaseTimer timer(step_time, Phase::kAcceptCommit);
    for (size_t k = 0; k < in_batch.size(); ++k) {
      const size_t b = in_batch[k];
      const RequestId id = ids[b];
      Request& r = requests_.at(id);
      RequestEvent& ev = out.events[b];
      const DraftSlot& slot = slots[b];
      const int64_t L = positions[b][0];
      Result<Acceptance> acc =
          argmax_only ? accept_greedy_ids(slot.tokens, verified->requests[k].argmax, vocab)
                      : accept_logits(slot.tokens, verified->requests[k].logits, slot.probs, vocab,
                                      r.spec.sampling, L + 1);
      Status s = acc.ok() ? tables_.commit(id, acc->num_accepted + 1) : acc.status();
      // The anchor's and the accepted drafts' rows stay, in the recurrent state as in the KV.
      if (s.ok()) s = commit_recurrent(id, r, tokens[b], acc->num_accepted + 1);
      if (!s.ok()) {
        r.error = s.with_context("request " + str(id));
        retire(id, r, RequestState::kFailed);
        ev.error = r.error;
        ev.finished = true;
        continue;
      }
      const int32_t num_draft = static_cast<int32_t>(slot.tokens.size());
      ev.drafted = num_draft;
      const int32_t kept = emit(id, r, acc->tokens, ev);
      // Emitted token i was decided by verify row i (the rows past it are not read).
      add_logprobs(r, verified->requests[k].logits, kept, ev);
      (void)r.stats.record_step(num_draft, acc->num_accepted, kept);
      (void)stats_.record_step(num_draft, acc->num_accepted, kept);
      if (r.state == RequestState::kRunning && r.in_drafter) {
        // The anchor's and the accepted drafts' rows; the emitted token's row comes with the
        // next step, where it is the anchor.
        Status c = Status::Ok();
        if (!capture_layers_.empty()) {
          c = drafter_->append_context(
              id, ContextRows{verified->requests[k].hidden, 0, acc->num_accepted + 1, L});
        }
        if (c.ok()) c = drafter_->commit(id, acc->tokens);
        if (!c.ok()) {
          r.error = c.with_context("request " + str(id));
          retire(id, r, RequestState::kFailed);
          ev.error = r.error;
          ev.finished = true;
        }
      }
    }
  }
  stats_.add_time(Phase::kDraft, step_time.draft_seconds);
  stats_.add_time(Phase::kVerify, step_time.verify_seconds);
  stats_.add_time(Phase::kAcceptCommit, step_time.accept_commit_seconds);
  return out;
}

Status Engine::finish(RequestId id) {
  Request* r = find(id);
  if (r == nullptr) return not_found("request " + str(id) + " is unknown");
  if (r->state == RequestState::kWaiting || r->state == RequestState::kRunning) {
    r->reason = FinishReason::kCaller;
    retire(id, *r, RequestState::kFinished);
  }
  return Status::Ok();
}

Status Engine::release(RequestId id) {
  Request* r = find(id);
  if (r == nullptr) return not_found("request " + str(id) + " is unknown");
  retire(id, *r,
         r->state == RequestState::kFailed ? RequestState::kFailed : RequestState::kFinished);
  requests_.erase(id);
  return Status::Ok();
}

RequestState Engine::state(RequestId id) const {
  const Request* r = find(id);
  return r == nullptr ? RequestState::kFailed : r->state;
}

std::span<const int32_t> Engine::output(RequestId id) const {
  const Request* r = find(id);
  return r == nullptr ? std::span<const int32_t>{} : std::span<const int32_t>(r->output);
}

const SpecStats& Engine::request_stats(RequestId id) const {
  static const SpecStats kEmpty;
  const Request* r = find(id);
  return r == nullptr ? kEmpty : r->stats;
}

const Status& Engine::request_error(RequestId id) const {
  static const Status kUnknown = not_found("unknown request");
  const Request* r = find(id);
  return r == nullptr ? kUnknown : r->error;
}

int Engine::num_running() const {
  int n = 0;
  for (const auto& [id, r] : requests_) n += r.state == RequestState::kRunning ? 1 : 0;
  return n;
}

}  // namespace mlaspec::spec
