// Shared by the engine tests: test drafters and a driver that runs prompts through an Engine.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "mlaspec/model/model.h"
#include "mlaspec/spec/drafter.h"
#include "mlaspec/spec/engine.h"
#include "mlaspec/spec/ngram_drafter.h"

namespace mlaspec::spec::testing {

inline std::filesystem::path model_dir(const std::string& name) {
  return std::filesystem::path(MLASPEC_TEST_DATA_DIR) / "models" / name;
}

inline model::Model load_model(const std::string& name, Device device = Device::kCPU) {
  model::LoadOptions options;
  options.device = device;
  Result<model::Model> m = model::Model::load(model_dir(name), options);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

// Proposes a fixed continuation per prompt (the plain greedy one: every draft is right) or its
// corruption (every draft is wrong); `answers` maps a prompt to the tokens after it.
class OracleDrafter final : public Drafter {
 public:
  OracleDrafter(std::map<std::vector<int32_t>, std::vector<int32_t>> answers, bool wrong,
                int32_t vocab)
      : answers_(std::move(answers)), wrong_(wrong), vocab_(vocab) {}
  std::string_view name() const override { return wrong_ ? "always-wrong" : "oracle"; }
  Status add_request(RequestId id, std::span<const int32_t> prompt,
                     const model::SamplingParams&) override {
    auto it = answers_.find(std::vector<int32_t>(prompt.begin(), prompt.end()));
    if (it == answers_.end()) return not_found("no answer for this prompt");
    requests_[id] = {&it->second, 0};
    return Status::Ok();
  }
  Status propose(std::span<DraftSlot> batch) override {
    for (DraftSlot& s : batch) {
      auto& [answer, done] = requests_.at(s.request);
      s.tokens.clear();
      for (int32_t k = 0; k < s.max_draft && done + k < static_cast<int64_t>(answer->size()); ++k) {
        const int32_t t = (*answer)[static_cast<size_t>(done + k)];
        s.tokens.push_back(wrong_ ? (t + 1) % vocab_ : t);
      }
    }
    return Status::Ok();
  }
  Status commit(RequestId id, std::span<const int32_t> tokens) override {
    requests_.at(id).second += static_cast<int64_t>(tokens.size());
    return Status::Ok();
  }
  Status remove_request(RequestId id) override {
    return requests_.erase(id) ? Status::Ok() : not_found("unknown request");
  }

 private:
  std::map<std::vector<int32_t>, std::vector<int32_t>> answers_;
  bool wrong_;
  int32_t vocab_;
  std::map<RequestId, std::pair<const std::vector<int32_t>*, int64_t>> requests_;
};

// Random drafts of random length (0 .. max_draft), one-hot or with a random distribution q; the
// tokens from [first, first + alphabet) (a small alphabet of tokens the model emits often makes
// some drafts right).
class RandomDrafter final : public Drafter {
 public:
  RandomDrafter(int32_t vocab, uint64_t seed, bool with_probs, int32_t alphabet = 0,
                int32_t first = 0)
      : vocab_(vocab),
        rng_(seed),
        with_probs_(with_probs),
        alphabet_(alphabet ? alphabet : vocab),
        first_(first) {}
  std::string_view name() const override { return "random"; }
  Status add_request(RequestId, std::span<const int32_t>, const model::SamplingParams&) override {
    return Status::Ok();
  }
  Status propose(std::span<DraftSlot> batch) override {
    for (DraftSlot& s : batch) {
      const int32_t n = std::uniform_int_distribution<int32_t>(0, s.max_draft)(rng_);
      s.tokens.clear();
      s.probs.clear();
      for (int32_t k = 0; k < n; ++k) {
        s.tokens.push_back(first_ + std::uniform_int_distribution<int32_t>(0, alphabet_ - 1)(rng_));
      }
      if (with_probs_) {
        s.probs.assign(static_cast<size_t>(n) * static_cast<size_t>(vocab_), 0.0f);
        for (int32_t k = 0; k < n; ++k) {
          float* row = s.probs.data() + static_cast<size_t>(k) * static_cast<size_t>(vocab_);
          double sum = 0;
          for (int32_t v = 0; v < vocab_; ++v) {
            row[v] = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng_);
            sum += row[v];
          }
          for (int32_t v = 0; v < vocab_; ++v) row[v] = static_cast<float>(row[v] / sum);
        }
      }
    }
    return Status::Ok();
  }
  Status commit(RequestId, std::span<const int32_t>) override { return Status::Ok(); }
  Status remove_request(RequestId) override { return Status::Ok(); }

 private:
  int32_t vocab_;
  std::mt19937_64 rng_;
  bool with_probs_;
  int32_t alphabet_;
  int32_t first_;
};

struct RunResult {
  std::vector<std::vector<int32_t>> outputs;  // per prompt
  std::vector<Status> errors;                 // per prompt
  SpecStats stats;
  std::vector<std::vector<TokenLogprobs>> logprobs;  // per prompt, with logprobs >= 0
};

// Adds every prompt, prefills them in order, steps until none runs; checks the page tables'
// invariants and every running request's KV length (prompt + output - 1: all but the anchor)
// after each step.
inline RunResult run_engine(Engine& engine, const std::vector<std::vector<int32_t>>& prompts,
                            const model::SamplingParams& params, int32_t max_new_tokens,
                            std::vector<int32_t> stop = {}, int32_t logprobs = -1) {
  RunResult res;
  std::vector<RequestId> ids;
  for (const auto& p : prompts) {
    Result<RequestId> id = engine.add_request({.prompt = p,
                                               .sampling = params,
                                               .max_new_tokens = max_new_tokens,
                                               .stop_token_ids = stop,
                                               .logprobs = logprobs});
    EXPECT_TRUE(id.ok()) << id.status().message();
    ids.push_back(*id);
  }
  res.logprobs.resize(ids.size());
  auto keep = [&](const RequestEvent& ev) {
    EXPECT_EQ(ev.logprobs.size(), logprobs >= 0 ? ev.tokens.size() : 0u);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] != ev.id) continue;
      res.logprobs[i].insert(res.logprobs[i].end(), ev.logprobs.begin(), ev.logprobs.end());
    }
  };
  for (const RequestId id : ids) {
    Result<RequestEvent> ev = engine.prefill(id);
    EXPECT_TRUE(ev.ok()) << ev.status().message();
    if (ev.ok()) keep(*ev);
  }
  auto check = [&] {
    const kv::PageTables& t = engine.page_tables();
    const Status inv = t.check_invariants();
    EXPECT_TRUE(inv.ok()) << inv.message();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (engine.state(ids[i]) != RequestState::kRunning) {
        EXPECT_FALSE(t.contains(ids[i]));
        continue;
      }
      EXPECT_EQ(t.pending(ids[i]), 0);
      EXPECT_EQ(t.length(ids[i]),
                static_cast<int64_t>(prompts[i].size() + engine.output(ids[i]).size()) - 1);
    }
  };
  check();
  while (engine.num_running() > 0) {
    Result<StepOutput> out = engine.step();
    EXPECT_TRUE(out.ok()) << out.status().message();
    if (!out.ok()) break;
    for (const RequestEvent& ev : out->events) keep(ev);
    check();
  }
  for (const RequestId id : ids) {
    res.outputs.emplace_back(engine.output(id).begin(), engine.output(id).end());
    res.errors.push_back(engine.request_error(id));
    EXPECT_TRUE(engine.release(id).ok());
  }
  EXPECT_EQ(engine.page_tables().used_pages(), 0);
  res.stats = engine.stats();
  return res;
}

// run_engine over consecutive groups of `batch` prompts (the engine's slots hold 16).
inline RunResult run_batches(Engine& engine, const std::vector<std::vector<int32_t>>& prompts,
                             const model::SamplingParams& params, int32_t max_new_tokens,
                             size_t batch = 8) {
  RunResult all;
  for (size_t first = 0; first < prompts.size(); first += batch) {
    const size_t end = std::min(prompts.size(), first + batch);
    RunResult part = run_engine(
        engine,
        std::vector<std::vector<int32_t>>(prompts.begin() + static_cast<std::ptrdiff_t>(first),
                                          prompts.begin() + static_cast<std::ptrdiff_t>(end)),
        params, max_new_tokens);
    all.outputs.insert(all.outputs.end(), part.outputs.begin(), part.outputs.end());
    all.errors.insert(all.errors.end(), part.errors.begin(), part.errors.end());
    all.stats = part.stats;
  }
  return all;
}

inline std::vector<std::vector<int32_t>> random_prompts(int count, int min_len, int max_len,
                                                        int32_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int32_t>> prompts;
  for (int i = 0; i < count; ++i) {
    std::vector<int32_t> p(
        static_cast<size_t>(std::uniform_int_distribution<int>(min_len, max_len)(rng)));
    for (int32_t& t : p) t = std::uniform_int_distribution<int32_t>(0, vocab - 1)(rng);
    prompts.push_back(std::move(p));
  }
  return prompts;
}

inline const std::vector<std::string> kModels = {"v3_qlora_moe_yarn", "v3_plain_q_tied",
                                                 "v2_lite_greedy",    "v2_group_limited_yarn",
                                                 "kimi_k2_fp8",       "v3_generate_bytelevel"};

inline Engine make_engine(const std::string& name, std::unique_ptr<Drafter> drafter,
                          EngineConfig config = {}, Device device = Device::kCPU) {
  Result<Engine> e = Engine::create(load_model(name, device), std::move(drafter), config);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return std::move(*e);
}

// Prompts with repeats in them, so the n-gram drafter has something to find.
inline std::vector<std::vector<int32_t>> mixed_prompts(int count, int32_t vocab, uint64_t seed) {
  std::vector<std::vector<int32_t>> prompts = random_prompts(count, 3, 24, vocab, seed);
  for (size_t i = 0; i < prompts.size(); i += 2) {
    std::vector<int32_t> p = prompts[i];
    p.insert(p.end(), prompts[i].begin(), prompts[i].end());
    prompts[i] = p;
  }
  return prompts;
}

inline std::map<std::vector<int32_t>, std::vector<int32_t>> answers(
    const std::vector<std::vector<int32_t>>& prompts,
    const std::vector<std::vector<int32_t>>& outputs) {
  std::map<std::vector<int32_t>, std::vector<int32_t>> m;
  for (size_t i = 0; i < prompts.size(); ++i) m[prompts[i]] = outputs[i];
  return m;
}

// Per-layer fp8 and per-tile fp8 (fp8_tile) target pools on `device`: speculative greedy (the
// n-gram drafter, and the oracle) equals plain greedy on the same pool dtype, on `models`.
inline void check_fp8_kv_lossless(Device device, const std::vector<std::string>& models) {
  for (const DType kv : {DType::kFP8E4M3, DType::kFP8Tile}) {
    EngineConfig fp8;
    fp8.kv_dtype = kv;
    for (const std::string& name : models) {
      SCOPED_TRACE(name + " " + std::string(dtype_name(kv)));
      Engine plain = make_engine(name, nullptr, fp8, device);
      const int32_t vocab = plain.model().config().vocab_size;
      const auto prompts = mixed_prompts(6, vocab, 33);
      const auto want = run_engine(plain, prompts, {}, 16);
      Engine spec =
          make_engine(name, std::make_unique<NgramDrafter>(*NgramDrafter::create()), fp8, device);
      EXPECT_EQ(run_engine(spec, prompts, {}, 16).outputs, want.outputs);
      Engine oracle = make_engine(
          name, std::make_unique<OracleDrafter>(answers(prompts, want.outputs), false, vocab), fp8,
          device);
      EXPECT_EQ(run_engine(oracle, prompts, {}, 16).outputs, want.outputs);
    }
  }
}

// Plain greedy, then the same prompts with an oracle (always right), always-wrong, random
// (one-hot and with q) and n-gram drafter: every output must be plain greedy's. The target runs
// on `device`, `batch` requests at a time.
inline void check_lossless_greedy(const std::string& name, int num_prompts, int32_t new_tokens,
                                  uint64_t seed, Device device = Device::kCPU, size_t batch = 8) {
  const int kPrompts = num_prompts;
  const int32_t kNew = new_tokens;
  {
    SCOPED_TRACE(name);
    Engine plain = make_engine(name, nullptr, {}, device);
    const int32_t vocab = plain.model().config().vocab_size;
    const auto prompts = mixed_prompts(kPrompts, vocab, seed);
    const RunResult want = run_batches(plain, prompts, {}, kNew, batch);
    for (const auto& out : want.outputs) ASSERT_EQ(out.size(), static_cast<size_t>(kNew));

    struct Case {
      std::string what;
      std::unique_ptr<Drafter> drafter;
      int num_draft;
    };
    std::vector<Case> cases;
    cases.push_back({"oracle",
                     std::make_unique<OracleDrafter>(answers(prompts, want.outputs), false, vocab),
                     7});
    cases.push_back(
        {"wrong", std::make_unique<OracleDrafter>(answers(prompts, want.outputs), true, vocab), 5});
    cases.push_back({"random", std::make_unique<RandomDrafter>(vocab, 11, false), 4});
    cases.push_back({"random-q", std::make_unique<RandomDrafter>(vocab, 12, true), 3});
    cases.push_back({"ngram", std::make_unique<NgramDrafter>(*NgramDrafter::create()), 7});
    for (Case& c : cases) {
      SCOPED_TRACE(c.what);
      EngineConfig config;
      config.num_draft = c.num_draft;
      Engine spec = make_engine(name, std::move(c.drafter), config, device);
      const RunResult got = run_batches(spec, prompts, {}, kNew, batch);
      for (size_t i = 0; i < prompts.size(); ++i) {
        ASSERT_EQ(got.outputs[i], want.outputs[i]) << "prompt " << i;
      }
      if (c.what == "oracle") {
        // Every draft right: each step emits num_draft + 1 tokens until the budget's end.
        EXPECT_EQ(got.stats.accepted, got.stats.drafted);
        EXPECT_GT(got.stats.accept_length(), 4.0);
      }
      if (c.what == "wrong") {
        EXPECT_EQ(got.stats.accepted, 0);
      }
    }
  }
}

// Wraps a drafter and counts the steps whose requests (those not near their token limit: the
// engine lets them draft at least `full` tokens, the drafter's block) sent different numbers of
// drafts: ragged verify batches (DSpark's adaptive width).
class WidthRecorder final : public Drafter {
 public:
  WidthRecorder(std::unique_ptr<Drafter> inner, int full) : inner_(std::move(inner)), full_(full) {}
  std::string_view name() const override { return inner_->name(); }
  Status add_request(RequestId id, std::span<const int32_t> p,
                     const model::SamplingParams& s) override {
    return inner_->add_request(id, p, s);
  }
  Status propose(std::span<DraftSlot> batch) override {
    MLASPEC_RETURN_IF_ERROR(inner_->propose(batch));
    std::set<size_t> widths;
    for (const DraftSlot& s : batch) {
      if (s.max_draft >= full_) widths.insert(s.tokens.size());
    }
    ragged_steps_ += widths.size() > 1;
    return Status::Ok();
  }
  Status commit(RequestId id, std::span<const int32_t> t) override { return inner_->commit(id, t); }
  Status remove_request(RequestId id) override { return inner_->remove_request(id); }
  std::vector<int> capture_layers() const override { return inner_->capture_layers(); }
  Status append_context(RequestId id, const ContextRows& rows) override {
    return inner_->append_context(id, rows);
  }
  int* ragged_steps() { return &ragged_steps_; }

 private:
  std::unique_ptr<Drafter> inner_;
  int full_;
  int ragged_steps_ = 0;
};

}  // namespace mlaspec::spec::testing
