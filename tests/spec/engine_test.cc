// The engine on the golden checkpoints: speculative greedy equals plain greedy token for token
// (every drafter, batch sizes, fp8 KV), the page tables hold exactly the committed rows, a request
// that runs out of pages fails alone, sampling is reproducible, stop tokens and limits.
#include <gtest/gtest.h>

#include <cstring>

#include "engine_test_util.h"
#include "mlaspec/model/dflash.h"
#include "mlaspec/spec/dflash_drafter.h"
#include "mlaspec/spec/ngram_drafter.h"

namespace mlaspec::spec {
namespace {

using testing::load_model;
using testing::OracleDrafter;
using testing::random_prompts;
using testing::RandomDrafter;
using testing::run_engine;

using testing::make_engine;

GenerationRequest req(std::vector<int32_t> prompt, int32_t max_new_tokens = 16) {
  GenerationRequest r;
  r.prompt = std::move(prompt);
  r.max_new_tokens = max_new_tokens;
  return r;
}

using testing::answers;
using testing::check_lossless_greedy;
using testing::mixed_prompts;

// Hundreds of prompts: engine_long_test.cc.
TEST(EngineLossless, SpeculativeGreedyEqualsPlainGreedyForEveryDrafter) {
  for (const std::string& name : testing::kModels) check_lossless_greedy(name, 8, 16, 7);
}

// The DFlash drafter behind the engine: the target's captured hidden states reach it through
// append_context (prefill chunks, then the anchor and accepted rows of every step); greedy output
// equals plain greedy, in bf16 and fp8 target KV, with prefill in several chunks.
TEST(EngineLossless, DFlashDrafterGetsTheTargetContextAndIsLossless) {
  const std::string name = "v3_qlora_moe_yarn";
  for (const DType kv : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile}) {
    SCOPED_TRACE(std::string(dtype_name(kv)));
    EngineConfig config;
    config.kv_dtype = kv;
    config.prefill_chunk_tokens = 16;
    Engine plain = make_engine(name, nullptr, config);
    const auto prompts = mixed_prompts(8, 256, 61);
    const auto want = run_engine(plain, prompts, {}, 24);

    model::Model target = load_model(name);
    Result<model::DFlashNetwork> net =
        model::DFlashNetwork::load(testing::model_dir(name + "-dflash"), target);
    ASSERT_TRUE(net.ok()) << net.status().message();
    DFlashDrafterConfig dconfig;
    dconfig.max_tokens_per_request = 512;
    dconfig.target_kv_dtype = kv;
    Result<std::unique_ptr<DFlashDrafter>> drafter =
        DFlashDrafter::create(std::move(*net), dconfig);
    ASSERT_TRUE(drafter.ok()) << drafter.status().message();
    EXPECT_EQ((*drafter)->pool().dtype(), DType::kBF16);  // the drafter's own pool stays bf16
    config.num_draft = (*drafter)->num_draft();
    Result<Engine> spec = Engine::create(std::move(target), std::move(*drafter), config);
    ASSERT_TRUE(spec.ok()) << spec.status().message();
    const auto got = run_engine(*spec, prompts, {}, 24);
    EXPECT_EQ(got.outputs, want.outputs);
    for (const Status& e : got.errors) EXPECT_TRUE(e.ok()) << e.message();
    EXPECT_GT(got.stats.drafted, 0);
    std::printf("[ info ] dflash (%s): tau %.2f, acceptance %.2f\n",
                std::string(dtype_name(kv)).c_str(), got.stats.accept_length(),
                got.stats.acceptance_rate());
  }
}

TEST(EngineLossless, RaggedBatchesEqualEachRequestAlone) {
  for (const std::string name : {"v3_qlora_moe_yarn"}) {
    SCOPED_TRACE(name);
    Engine plain = make_engine(name, nullptr);
    const int32_t vocab = plain.model().config().vocab_size;
    const auto prompts = mixed_prompts(16, vocab, 21);
    std::vector<std::vector<int32_t>> alone;
    for (const auto& p : prompts) alone.push_back(run_engine(plain, {p}, {}, 12).outputs[0]);
    for (const int batch : {1, 8, 16}) {
      SCOPED_TRACE(batch);
      for (const bool ngram : {false, true}) {
        std::unique_ptr<Drafter> d;
        if (ngram) {
          d = std::make_unique<NgramDrafter>(*NgramDrafter::create());
        } else {
          d = std::make_unique<RandomDrafter>(vocab, 5, false, 8);
        }
        // (random drafts over 8 ids: some accepted, most not; lengths 0 .. 7 per request)
        Engine spec = make_engine(name, std::move(d));
        for (size_t first = 0; first < prompts.size(); first += static_cast<size_t>(batch)) {
          const std::vector<std::vector<int32_t>> part(
              prompts.begin() + static_cast<std::ptrdiff_t>(first),
              prompts.begin() + static_cast<std::ptrdiff_t>(first + static_cast<size_t>(batch)));
          const auto got = run_engine(spec, part, {}, 12);
          for (size_t i = 0; i < part.size(); ++i) ASSERT_EQ(got.outputs[i], alone[first + i]);
        }
      }
    }
  }
}

// Per-layer fp8 and per-tile fp8 (fp8_tile) target pools: speculative greedy equals plain greedy
// on the same pool dtype.
TEST(EngineLossless, Fp8TargetKv) {
  testing::check_fp8_kv_lossless(Device::kCPU,
                                 {"v3_qlora_moe_yarn", "kimi_k2_fp8", "v3_generate_bytelevel"});
}

// Logprobs come from the row that decided each token: one entry per emitted token, the chosen
// token the emitted one, greedy's on top of its row; in deterministic mode the same values with
// and without drafts (verify rows are bitwise decode steps).
TEST(EngineLogprobs, OnePerTokenAndEqualWithAndWithoutDrafts) {
  const std::string name = testing::kModels[0];
  Engine plain = make_engine(name, nullptr);
  const int32_t vocab = plain.model().config().vocab_size;
  const auto prompts = mixed_prompts(4, vocab, 17);
  constexpr int32_t kTop = 4;
  const testing::RunResult want = run_engine(plain, prompts, {}, 12, {}, kTop);
  // The oracle is always right: a step emits up to num_draft + 1 tokens, from rows 0 .. 7.
  Engine oracle = make_engine(
      name, std::make_unique<OracleDrafter>(answers(prompts, want.outputs), false, vocab));
  const testing::RunResult got = run_engine(oracle, prompts, {}, 12, {}, kTop);
  ASSERT_EQ(got.outputs, want.outputs);
  EXPECT_GT(got.stats.accept_length(), 3.0);
  for (size_t p = 0; p < prompts.size(); ++p) {
    ASSERT_EQ(want.logprobs[p].size(), want.outputs[p].size());
    ASSERT_EQ(got.logprobs[p].size(), want.logprobs[p].size());
    for (size_t i = 0; i < want.logprobs[p].size(); ++i) {
      const TokenLogprobs& w = want.logprobs[p][i];
      const TokenLogprobs& g = got.logprobs[p][i];
      EXPECT_EQ(w.chosen.token, want.outputs[p][i]);
      ASSERT_EQ(w.top.size(), static_cast<size_t>(kTop));
      EXPECT_EQ(w.top[0].token, w.chosen.token);
      EXPECT_LE(w.chosen.logprob, 0.0f);
      EXPECT_EQ(g.chosen.logprob, w.chosen.logprob) << "prompt " << p << " token " << i;
      for (size_t k = 0; k < w.top.size(); ++k) {
        EXPECT_EQ(g.top[k].token, w.top[k].token);
        EXPECT_EQ(g.top[k].logprob, w.top[k].logprob);
      }
    }
  }
  // Sampled: still one entry per token, naming the token emitted.
  Engine spec = make_engine(name, std::make_unique<RandomDrafter>(vocab, 3, true, 4));
  const model::SamplingParams sampled{
      .temperature = 0.9f, .top_k = 0, .top_p = 1.0f, .min_p = 0.0f, .seed = 5};
  const testing::RunResult s = run_engine(spec, prompts, sampled, 12, {}, 0);
  for (size_t p = 0; p < prompts.size(); ++p) {
    ASSERT_EQ(s.logprobs[p].size(), s.outputs[p].size());
    for (size_t i = 0; i < s.outputs[p].size(); ++i) {
      EXPECT_EQ(s.logprobs[p][i].chosen.token, s.outputs[p][i]);
      EXPECT_TRUE(s.logprobs[p][i].top.empty());
    }
  }
  // Out of range: refused naming the value and the bound.
  Result<RequestId> bad = spec.add_request({.prompt = prompts[0],
                                            .sampling = {},
                                            .max_new_tokens = 4,
                                            .stop_token_ids = {},
                                            .logprobs = kMaxTopLogprobs + 1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("logprobs 21 is outside [-1, 20]"), std::string::npos)
      << bad.status().message();
}

// prefill_chunk: a long prompt prefilled one chunk at a time, with a step of the running request
// after each chunk, gives both requests the tokens they get alone.
TEST(EnginePrefill, ChunksInterleavedWithStepsGiveTheSameTokens) {
  const std::string name = testing::kModels[0];
  EngineConfig config;
  config.prefill_chunk_tokens = 16;
  Engine plain = make_engine(name, nullptr, config);
  const int32_t vocab = plain.model().config().vocab_size;
  const std::vector<std::vector<int32_t>> prompts = {random_prompts(1, 20, 20, vocab, 7)[0],
                                                     random_prompts(1, 100, 100, vocab, 8)[0]};
  const testing::RunResult want = run_engine(plain, prompts, {}, 12);

  Engine e = make_engine(name, nullptr, config);
  const RequestId a = e.add_request(req(prompts[0], 12)).value();
  ASSERT_TRUE(e.prefill(a).ok());
  const RequestId b = e.add_request(req(prompts[1], 12)).value();
  int chunks = 0, steps_of_a = 0;
  while (e.state(b) == RequestState::kWaiting) {
    Result<RequestEvent> ev = e.prefill_chunk(b);
    ASSERT_TRUE(ev.ok()) << ev.status().message();
    ASSERT_TRUE(ev->error.ok()) << ev->error.message();
    ++chunks;
    EXPECT_EQ(e.prefilled(b), std::min<int64_t>(16 * chunks, 100));
    EXPECT_EQ(ev->tokens.size(), e.prefilled(b) == 100 ? 1u : 0u);
    if (e.state(b) == RequestState::kWaiting) {
      // Only the running request steps: the waiting one is not in the batch.
      StepOutput out = e.step().value();
      ASSERT_EQ(out.events.size(), 1u);
      EXPECT_EQ(out.events[0].id, a);
      ++steps_of_a;
    }
  }
  EXPECT_EQ(chunks, 7);  // ceil(100 / 16)
  EXPECT_EQ(steps_of_a, 6);
  EXPECT_FALSE(e.prefill_chunk(b).ok());  // running: nothing to prefill
  while (e.num_running() > 0) ASSERT_TRUE(e.step().ok());
  EXPECT_EQ(std::vector<int32_t>(e.output(a).begin(), e.output(a).end()), want.outputs[0]);
  EXPECT_EQ(std::vector<int32_t>(e.output(b).begin(), e.output(b).end()), want.outputs[1]);
  EXPECT_EQ(e.prefill_tokens(), 120);
}

// prefill_chunk_tokens 0 (the default) is the target device's chunk length, reported by config();
// a length outside [1, 1024] is refused naming the value.
TEST(EnginePrefill, ChunkLengthDefaultsToTheDevicesAndIsChecked) {
  EXPECT_EQ(model::default_chunk_tokens(Device::kCPU), 256);
  EXPECT_EQ(model::default_chunk_tokens(Device::kCUDA), 1024);
  EngineConfig config;
  EXPECT_EQ(config.prefill_chunk_tokens, 0);
  EXPECT_EQ(make_engine(testing::kModels[0], nullptr, config).config().prefill_chunk_tokens, 256);
  config.prefill_chunk_tokens = 1025;
  Result<Engine> bad = Engine::create(load_model(testing::kModels[0]), nullptr, config);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "prefill_chunk_tokens 1025 is outside [1, 1024]");
}

// The deterministic forward is what makes the equality hold: verify row i of a block is bitwise
// the decode step at that position (logits and the KV rows written).
TEST(DeterministicForward, VerifyRowsEqualDecodeSteps) {
  for (const std::string& name : testing::kModels) {
    SCOPED_TRACE(name);
    model::Model m = load_model(name);
    const int32_t vocab = m.config().vocab_size;
    auto make_pool = [&] {
      return std::move(*kv::KvPool::create(m.kv_pool_spec(2, 64, DType::kBF16)));
    };
    const std::vector<int32_t> pages = {0, 1};
    const auto seq = random_prompts(1, 60, 60, vocab, 99)[0];
    const int P = 45, Q = 12;  // prompt, then one verify block of Q tokens vs Q decode steps
    std::vector<int32_t> pos(seq.size());
    for (size_t i = 0; i < pos.size(); ++i) pos[i] = static_cast<int32_t>(i);
    auto prefill = [&](kv::KvPool& pool) {
      model::ForwardRequest r{.tokens = std::span(seq).first(P),
                              .positions = std::span(pos).first(P),
                              .pages = pages,
                              .logits = model::LogitsMode::kNone};
      ASSERT_TRUE(m.forward({&r, 1}, pool).ok());
    };
    for (const bool det : {true, false}) {
      kv::KvPool a = make_pool(), b = make_pool();
      prefill(a);
      prefill(b);
      model::ForwardOptions opt;
      opt.deterministic = det;
      model::ForwardRequest block{.tokens = std::span(seq).subspan(P, Q),
                                  .positions = std::span(pos).subspan(P, Q),
                                  .pages = pages,
                                  .logits = model::LogitsMode::kAll};
      auto verify = m.forward({&block, 1}, a, opt);
      ASSERT_TRUE(verify.ok());
      bool same = true;
      for (int i = 0; i < Q; ++i) {
        model::ForwardRequest one{.tokens = std::span(seq).subspan(P + i, 1),
                                  .positions = std::span(pos).subspan(P + i, 1),
                                  .pages = pages,
                                  .logits = model::LogitsMode::kLast};
        auto dec = m.forward({&one, 1}, b, opt);
        ASSERT_TRUE(dec.ok());
        same = same && std::memcmp(dec->requests[0].logits.data(),
                                   verify->requests[0].logits.data() + i * vocab,
                                   sizeof(float) * static_cast<size_t>(vocab)) == 0;
      }
      const bool same_kv = std::memcmp(a.data(), b.data(), a.bytes()) == 0;
      if (det) {
        EXPECT_TRUE(same) << "verify logits differ from decode logits";
        EXPECT_TRUE(same_kv) << "verify KV rows differ from decode KV rows";
      } else {
        std::printf("[ info ] %s BLAS forward: verify rows == decode rows: logits %s, KV %s\n",
                    name.c_str(), same ? "yes" : "no", same_kv ? "yes" : "no");
      }
    }
  }
}

TEST(EnginePages, ExhaustionFailsOneRequestAndTheOthersFinishAsAlone) {
  const std::string name = "v3_plain_q_tied";
  Engine plain = make_engine(name, nullptr);
  const int32_t vocab = plain.model().config().vocab_size;
  // Pages of 16 tokens, 9 in the pool. Requests 0 and 2 (33 prompt tokens, 15 new: at most 47
  // tokens in the cache) hold their 3 pages from prefill on; request 1 (40 prompt tokens, 60 new)
  // fills the last 3 pages and fails in the step that needs a 4th, after some tokens.
  auto prompts = random_prompts(3, 33, 33, vocab, 5);
  prompts[1] = random_prompts(1, 40, 40, vocab, 6)[0];
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(run_engine(plain, {p}, {}, 15).outputs[0]);

  EngineConfig config;
  config.page_size = 16;
  config.num_pages = 9;
  config.num_draft = 4;
  Engine spec = make_engine(name, std::make_unique<RandomDrafter>(vocab, 3, false, 4), config);
  std::vector<RequestId> ids;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ids.push_back(*spec.add_request(req(prompts[i], i == 1 ? 60 : 15)));
    ASSERT_TRUE(spec.prefill(ids.back()).ok());
  }
  bool failed = false;
  while (spec.num_running() > 0) {
    auto out = spec.step();
    ASSERT_TRUE(out.ok()) << out.status().message();
    for (const RequestEvent& ev : out->events) {
      if (!ev.error.ok()) {
        EXPECT_EQ(ev.id, ids[1]);
        EXPECT_EQ(ev.error.code(), StatusCode::kResourceExhausted);
        EXPECT_NE(ev.error.message().find("request 1"), std::string::npos) << ev.error.message();
        failed = true;
      }
    }
    ASSERT_TRUE(spec.page_tables().check_invariants().ok());
  }
  EXPECT_TRUE(failed);
  EXPECT_EQ(spec.state(ids[1]), RequestState::kFailed);
  EXPECT_EQ(spec.page_tables().used_pages(), 0);
  for (const size_t i : {size_t{0}, size_t{2}}) {
    EXPECT_EQ(spec.state(ids[i]), RequestState::kFinished);
    EXPECT_EQ(std::vector<int32_t>(spec.output(ids[i]).begin(), spec.output(ids[i]).end()),
              alone[i]);
  }
  // What request 1 produced before it failed is plain greedy's prefix.
  const auto part = spec.output(ids[1]);
  Engine plain_long = make_engine(name, nullptr);
  const auto full = run_engine(plain_long, {prompts[1]}, {}, 60).outputs[0];
  ASSERT_GE(part.size(), 2u);
  ASSERT_LE(part.size(), full.size());
  EXPECT_TRUE(std::equal(part.begin(), part.end(), full.begin()));
}

// A drafter that answers request 1 with a token outside the vocabulary: that request fails in the
// step, alone; the others finish with plain greedy's tokens.
class BadForOneDrafter final : public Drafter {
 public:
  explicit BadForOneDrafter(int32_t vocab) : vocab_(vocab) {}
  std::string_view name() const override { return "bad-for-one"; }
  Status add_request(RequestId, std::span<const int32_t>, const model::SamplingParams&) override {
    return Status::Ok();
  }
  Status propose(std::span<DraftSlot> batch) override {
    for (DraftSlot& s : batch) {
      s.tokens.assign(static_cast<size_t>(std::min(s.max_draft, 2)), s.request == 1 ? vocab_ : 0);
    }
    return Status::Ok();
  }
  Status commit(RequestId, std::span<const int32_t>) override { return Status::Ok(); }
  Status remove_request(RequestId) override { return Status::Ok(); }

 private:
  int32_t vocab_;
};

TEST(EnginePages, BadDraftsFailOnlyTheirRequest) {
  const std::string name = "v3_plain_q_tied";
  Engine plain = make_engine(name, nullptr);
  const auto prompts = random_prompts(3, 5, 20, 256, 14);
  const auto want = run_engine(plain, prompts, {}, 10);
  Engine spec = make_engine(name, std::make_unique<BadForOneDrafter>(256));
  const auto got = run_engine(spec, prompts, {}, 10);
  EXPECT_EQ(got.outputs[0], want.outputs[0]);
  EXPECT_EQ(got.outputs[2], want.outputs[2]);
  EXPECT_EQ(got.errors[1].message(),
            "request 1: draft token 256 is outside the vocabulary [0, 256)");
  EXPECT_EQ(got.outputs[1], std::vector<int32_t>(1, want.outputs[1][0]));  // prefill's token
}

TEST(EnginePages, PrefillThatRunsOutFailsCleanly) {
  EngineConfig config;
  config.page_size = 16;
  config.num_pages = 4;
  Engine e = make_engine("v3_plain_q_tied", nullptr, config);
  const auto prompts = random_prompts(2, 40, 40, 256, 3);
  const RequestId a = *e.add_request(req(prompts[0], 8));
  const RequestId b = *e.add_request(req(prompts[1], 8));
  ASSERT_TRUE(e.prefill(a).ok());
  Result<RequestEvent> ev = e.prefill(b);  // needs 3 pages, 1 is left
  ASSERT_TRUE(ev.ok());
  EXPECT_EQ(ev->error.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(e.state(b), RequestState::kFailed);
  EXPECT_FALSE(e.page_tables().contains(b));
  EXPECT_EQ(e.page_tables().used_pages(), 3);
  EXPECT_TRUE(e.page_tables().check_invariants().ok());
  while (e.num_running() > 0) ASSERT_TRUE(e.step().ok());
  EXPECT_EQ(e.output(a).size(), 8u);
  EXPECT_EQ(e.prefill(b).status().code(), StatusCode::kInvalidArgument);  // not waiting
}

TEST(EngineSampling, ReproducibleWithTheSameSeedAndPlainWhenNothingIsDrafted) {
  const std::string name = "v3_qlora_moe_yarn";
  model::SamplingParams sp{.temperature = 0.9f, .top_k = 40, .top_p = 0.95f, .seed = 1234};
  Engine plain = make_engine(name, nullptr);
  const int32_t vocab = plain.model().config().vocab_size;
  const auto prompts = mixed_prompts(4, vocab, 44);
  const auto a = run_engine(plain, prompts, sp, 16);
  const auto b = run_engine(plain, prompts, sp, 16);
  EXPECT_EQ(a.outputs, b.outputs);
  // A drafter that never proposes: the step is plain sampling, draw for draw.
  EngineConfig no_drafts;
  no_drafts.num_draft = 0;
  Engine none = make_engine(name, std::make_unique<RandomDrafter>(vocab, 1, false), no_drafts);
  EXPECT_EQ(run_engine(none, prompts, sp, 16).outputs, a.outputs);
  for (const bool ngram : {false, true}) {
    auto drafter = [&]() -> std::unique_ptr<Drafter> {
      if (ngram) return std::make_unique<NgramDrafter>(*NgramDrafter::create());
      return std::make_unique<RandomDrafter>(vocab, 8, true);
    };
    Engine s1 = make_engine(name, drafter()), s2 = make_engine(name, drafter());
    const auto x = run_engine(s1, prompts, sp, 16), y = run_engine(s2, prompts, sp, 16);
    EXPECT_EQ(x.outputs, y.outputs);
    model::SamplingParams other = sp;
    other.seed = 99;
    Engine s3 = make_engine(name, drafter());
    EXPECT_NE(run_engine(s3, prompts, other, 16).outputs, x.outputs);
  }
}

TEST(EngineRequests, StopTokensLimitsAndErrors) {
  const std::string name = "v3_plain_q_tied";
  Engine plain = make_engine(name, nullptr);
  const auto prompts = random_prompts(4, 5, 20, 256, 8);
  const auto full = run_engine(plain, prompts, {}, 30);
  // Stop at the first occurrence of the 10th token of each continuation: output ends with it.
  Engine spec = make_engine(name, std::make_unique<NgramDrafter>(*NgramDrafter::create()));
  for (size_t i = 0; i < prompts.size(); ++i) {
    const int32_t stop = full.outputs[i][9];
    const auto got = run_engine(spec, {prompts[i]}, {}, 30, {stop});
    const auto end = std::find(full.outputs[i].begin(), full.outputs[i].end(), stop);
    EXPECT_EQ(got.outputs[0], std::vector<int32_t>(full.outputs[i].begin(), end + 1));
  }
  // max_new_tokens 1: the prefill's token only.
  EXPECT_EQ(run_engine(spec, {prompts[0]}, {}, 1).outputs[0],
            std::vector<int32_t>(1, full.outputs[0][0]));

  auto err = [&](GenerationRequest r) { return spec.add_request(std::move(r)).status().message(); };
  EXPECT_EQ(err(req({})), "the prompt is empty");
  EXPECT_EQ(err(req({3, 256})),
            "prompt token 256 at index 1 is outside the model's vocabulary [0, 256)");
  EXPECT_EQ(err(req({3}, 0)), "max_new_tokens 0 is < 1");
  EXPECT_EQ(err(req({3, 4}, 511)),
            "prompt 2 + max_new_tokens 511 = 513 tokens exceeds the limit of 512 per request");
  GenerationRequest bad_stop = req({3});
  bad_stop.stop_token_ids = {-1};
  EXPECT_EQ(err(bad_stop), "stop token -1 is outside the model's vocabulary [0, 256)");
  GenerationRequest bad_sampling = req({3});
  bad_sampling.sampling.top_p = 2.0f;
  EXPECT_NE(err(bad_sampling).find("top_p 2"), std::string::npos);
  // finish() ends a request in any live state and frees its pages.
  RequestId id = *spec.add_request(req(prompts[0], 30));
  ASSERT_TRUE(spec.prefill(id).ok());
  ASSERT_TRUE(spec.step().ok());
  EXPECT_TRUE(spec.finish(id).ok());
  EXPECT_EQ(spec.state(id), RequestState::kFinished);
  EXPECT_EQ(spec.page_tables().used_pages(), 0);
  EXPECT_EQ(spec.num_running(), 0);
  EXPECT_TRUE(spec.release(id).ok());
  EXPECT_EQ(spec.release(id).code(), StatusCode::kNotFound);

  EngineConfig too_long;
  too_long.max_tokens_per_request = 513;
  auto bad = Engine::create(load_model(name), nullptr, too_long);
  EXPECT_EQ(bad.status().message(),
            "max_tokens_per_request 513 is outside [0, 512] (the model's max_position_embeddings)");
}

}  // namespace
}  // namespace mlaspec::spec
