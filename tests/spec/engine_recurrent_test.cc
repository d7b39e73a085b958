// Hybrid models' recurrent state (model/recurrent_state.h): the engine commits the state of the
// accepted prefix only, decided once at create; a pure-MLA target never has it called.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine_test_util.h"
#include "mlaspec/model/recurrent_state.h"

namespace mlaspec::spec {
namespace {

using testing::load_model;
using testing::make_engine;
using testing::mixed_prompts;
using testing::RandomDrafter;
using testing::run_engine;

// A recurrent state whose value after a token sequence is a hash of that sequence, so the state
// the engine kept names exactly the tokens it committed (an extra or a missing row changes it).
uint64_t advance(uint64_t state, int32_t token) {
  return (state ^ static_cast<uint64_t>(token + 1)) * 0x100000001b3ull;
}
constexpr uint64_t kInitial = 0xcbf29ce484222325ull;

struct HashLog {
  std::map<int64_t, uint64_t> state;  // live requests
  int64_t commits = 0;
  int64_t rows = 0;
};

class HashRecurrentState final : public model::RecurrentState {
 public:
  // `fail_request`: commits of that request fail (an error of the state's own).
  explicit HashRecurrentState(std::shared_ptr<HashLog> log, int64_t fail_request = -1)
      : log_(std::move(log)), fail_request_(fail_request) {}
  std::string_view name() const override { return "hash-double"; }
  Status add_request(int64_t request) override {
    if (!log_->state.emplace(request, kInitial).second) return invalid_argument("duplicate");
    return Status::Ok();
  }
  Status remove_request(int64_t request) override {
    return log_->state.erase(request) ? Status::Ok() : not_found("unknown request");
  }
  Status commit(int64_t request, std::span<const int32_t> tokens, int32_t rows) override {
    auto it = log_->state.find(request);
    if (it == log_->state.end()) return not_found("unknown request");
    if (rows < 1 || rows > static_cast<int32_t>(tokens.size())) {
      return invalid_argument("rows " + std::to_string(rows) + " outside [1, " +
                              std::to_string(tokens.size()) + "]");
    }
    if (request == fail_request_) return internal_error("state of request lost");
    for (int32_t i = 0; i < rows; ++i) it->second = advance(it->second, tokens[i]);
    ++log_->commits;
    log_->rows += rows;
    return Status::Ok();
  }

 private:
  std::shared_ptr<HashLog> log_;
  int64_t fail_request_;
};

uint64_t hash_of(const std::vector<int32_t>& prompt, std::span<const int32_t> output) {
  uint64_t h = kInitial;
  for (const int32_t t : prompt) h = advance(h, t);
  // Everything but the last emitted token, which is the next step's anchor (as in the KV).
  for (size_t i = 0; i + 1 < output.size(); ++i) h = advance(h, output[i]);
  return h;
}

TEST(EngineRecurrent, PureMlaTargetsNeverCommitRecurrentState) {
  for (const std::string& name : testing::kModels) {
    SCOPED_TRACE(name);
    model::Model m = load_model(name);
    EXPECT_EQ(m.recurrent_state(), nullptr);
    Engine e = make_engine(name, std::make_unique<RandomDrafter>(m.config().vocab_size, 1, false));
    EXPECT_EQ(e.recurrent_state(), nullptr);
    EXPECT_NE(e.describe().find("recurrent-state commit off (pure MLA)"), std::string::npos)
        << e.describe();
  }
}

// Ragged batches with drafts that are sometimes accepted: after prefill (in chunks) and after
// every step, each running request's state is that of exactly its committed tokens; the output is
// still plain greedy's (with the same prefill chunks: prefill is not row-invariant, so other chunks
// may give other KV values); finished requests left the state.
TEST(EngineRecurrent, HybridDoubleKeepsTheAcceptedPrefixOnly) {
  const std::string name = "v3_qlora_moe_yarn";
  EngineConfig config;
  config.prefill_chunk_tokens = 7;  // prompts of 3 .. 48 tokens: 1 .. 7 chunks
  Engine plain = make_engine(name, nullptr, config);
  const int32_t vocab = plain.model().config().vocab_size;
  const auto prompts = mixed_prompts(8, vocab, 33);
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(run_engine(plain, {p}, {}, 14).outputs[0]);

  auto log = std::make_shared<HashLog>();
  // Drafts from tokens 248 .. 255: these prompts' greedy outputs hold them often (one repeats 250).
  Result<Engine> created = Engine::create(
      load_model(name), std::make_unique<RandomDrafter>(vocab, 9, false, 8, vocab - 8), config,
      std::make_unique<HashRecurrentState>(log));
  ASSERT_TRUE(created.ok()) << created.status().message();
  Engine& e = *created;
  ASSERT_NE(e.recurrent_state(), nullptr);
  EXPECT_NE(e.describe().find("recurrent-state commit on (hash-double)"), std::string::npos);

  std::vector<RequestId> ids;
  for (const auto& p : prompts) {
    GenerationRequest request;
    request.prompt = p;
    request.max_new_tokens = 14;
    Result<RequestId> id = e.add_request(request);
    ASSERT_TRUE(id.ok()) << id.status().message();
    ids.push_back(*id);
  }
  EXPECT_EQ(log->state.size(), prompts.size());
  auto check = [&] {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (e.state(ids[i]) != RequestState::kRunning) {
        EXPECT_EQ(log->state.count(ids[i]), 0u) << "request " << i << " left but kept its state";
        continue;
      }
      ASSERT_EQ(log->state.count(ids[i]), 1u);
      EXPECT_EQ(log->state[ids[i]], hash_of(prompts[i], e.output(ids[i])))
          << "request " << i << " after " << e.output(ids[i]).size() << " tokens";
    }
  };
  for (const RequestId id : ids) ASSERT_TRUE(e.prefill(id).ok());
  check();
  int steps = 0;
  int64_t multi_token_steps = 0;
  while (e.num_running() > 0) {
    Result<StepOutput> out = e.step();
    ASSERT_TRUE(out.ok()) << out.status().message();
    for (const RequestEvent& ev : out->events) {
      ASSERT_TRUE(ev.error.ok()) << ev.error.message();
      multi_token_steps += ev.tokens.size() > 1 ? 1 : 0;
    }
    check();
    ++steps;
  }
  EXPECT_GT(multi_token_steps, 0) << "no draft was ever accepted: the test proves nothing";
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(std::vector<int32_t>(e.output(ids[i]).begin(), e.output(ids[i]).end()), alone[i]);
  }
  EXPECT_TRUE(log->state.empty());
  EXPECT_GT(log->commits, steps);
}

// A commit that fails is that request's own error: it fails alone and leaves the state; the
// others finish with their plain greedy tokens.
TEST(EngineRecurrent, FailedCommitFailsOnlyItsRequest) {
  const std::string name = "v3_qlora_moe_yarn";
  Engine plain = make_engine(name, nullptr);
  const int32_t vocab = plain.model().config().vocab_size;
  const auto prompts = mixed_prompts(3, vocab, 5);
  std::vector<std::vector<int32_t>> alone;
  for (const auto& p : prompts) alone.push_back(run_engine(plain, {p}, {}, 8).outputs[0]);

  auto log = std::make_shared<HashLog>();
  Result<Engine> created =
      Engine::create(load_model(name), std::make_unique<RandomDrafter>(vocab, 2, false, 8), {},
                     std::make_unique<HashRecurrentState>(log, /*fail_request=*/1));
  ASSERT_TRUE(created.ok()) << created.status().message();
  const testing::RunResult got = run_engine(*created, prompts, {}, 8);
  EXPECT_EQ(got.errors[1].code(), StatusCode::kInternal);
  EXPECT_NE(got.errors[1].message().find("hash-double"), std::string::npos)
      << got.errors[1].message();
  EXPECT_TRUE(got.errors[0].ok());
  EXPECT_TRUE(got.errors[2].ok());
  EXPECT_EQ(got.outputs[0], alone[0]);
  EXPECT_EQ(got.outputs[2], alone[2]);
  EXPECT_TRUE(log->state.empty());
}

}  // namespace
}  // namespace mlaspec::spec
