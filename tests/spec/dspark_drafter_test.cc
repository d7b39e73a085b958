// The verify-width policy, the DSpark drafter behind the Drafter interface (golden drafts and
// confidences, sampling with the Markov bias and its distributions), and the engine with it:
// greedy output equals plain greedy with fixed and with confidence-chosen (ragged) widths.
#include "mlaspec/spec/dspark_drafter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "dspark_test_util.h"
#include "engine_test_util.h"
#include "model/dflash_test_util.h"

namespace mlaspec::spec {
namespace {

using model::testing::cached_model;
using model::testing::dflash_golden;
using model::testing::dspark_dir;
using model::testing::kDFlashTarget;

constexpr int kVocab = 256;

// ---- verify width ----------------------------------------------------------------------------

TEST(VerifyWidth, ExpectedAcceptedIsTheSumOfPrefixProducts) {
  const std::vector<float> c = {0.5f, 0.5f, 1.0f, 0.0f};
  EXPECT_DOUBLE_EQ(expected_accepted(c, 0), 0.0);
  EXPECT_DOUBLE_EQ(expected_accepted(c, 1), 0.5);
  EXPECT_DOUBLE_EQ(expected_accepted(c, 3), 0.5 + 0.25 + 0.25);
  EXPECT_DOUBLE_EQ(expected_accepted(c, 4), 1.0);
  EXPECT_DOUBLE_EQ(expected_accepted(c, 9), 1.0);  // past the span: 0
}

TEST(VerifyWidth, FixedTakesMaxDraftAdaptiveTradesAcceptanceForCost) {
  VerifyWidthPolicy fixed;
  const std::vector<float> low = {0.1f, 0.1f, 0.1f, 0.1f};
  const std::vector<float> high = {0.95f, 0.95f, 0.95f, 0.95f};
  EXPECT_EQ(choose_num_draft(low, 3, fixed), 3);
  EXPECT_EQ(choose_num_draft(low, 9, fixed), 4);
  EXPECT_EQ(choose_num_draft(low, 0, fixed), 0);
  VerifyWidthPolicy adaptive{VerifyWidthPolicy::Mode::kAdaptive, {1.0, 0.3}};
  EXPECT_EQ(choose_num_draft(high, 4, adaptive), 4);
  EXPECT_EQ(choose_num_draft(high, 2, adaptive), 2);
  EXPECT_EQ(choose_num_draft(low, 4, adaptive), 0);  // 1.1 / 1.6 < 1 / 1.3
  // A decaying chain stops where one more draft costs more than it is expected to yield.
  const std::vector<float> decay = {0.9f, 0.8f, 0.3f, 0.9f};
  EXPECT_EQ(choose_num_draft(decay, 4, adaptive), 2);
  // Free verify rows: every draft with c > 0 pays.
  VerifyWidthPolicy free{VerifyWidthPolicy::Mode::kAdaptive, {1.0, 0.0}};
  EXPECT_EQ(choose_num_draft(low, 4, free), 4);
  EXPECT_TRUE(validate(adaptive).ok());
  Status s = validate(VerifyWidthPolicy{VerifyWidthPolicy::Mode::kAdaptive, {0.0, 0.1}});
  EXPECT_NE(s.message().find("fixed"), std::string::npos) << s.message();
  s = validate(VerifyWidthPolicy{VerifyWidthPolicy::Mode::kAdaptive, {1.0, -0.1}});
  EXPECT_NE(s.message().find("per_token"), std::string::npos) << s.message();
}

// The yield / cost of one step's widths under the linear model (verify_width.h).
double step_rate(const std::vector<std::vector<float>>& conf, const std::vector<int>& widths,
                 const VerifyCostModel& cost) {
  double yield = 0, rows = 0;
  for (size_t b = 0; b < conf.size(); ++b) {
    yield += expected_accepted(conf[b], widths[b]) + 1.0;
    rows += widths[b] + 1;
  }
  return yield / (cost.fixed + cost.per_token * rows);
}

// The batch choice against brute force: over every width vector of batches of 1-3 requests with
// random confidences (and max_drafts below gamma), no other choice has a better yield per cost,
// and a batch of one gives choose_num_draft's width by exhaustive search of its own.
TEST(VerifyWidth, BatchChoiceIsTheBestYieldPerCost) {
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  for (int trial = 0; trial < 400; ++trial) {
    const int B = 1 + trial % 3, gamma = 1 + trial % 4;
    VerifyWidthPolicy policy{VerifyWidthPolicy::Mode::kAdaptive,
                             {0.5 + unit(rng), 0.4 * unit(rng)}};
    std::vector<std::vector<float>> conf(static_cast<size_t>(B));
    std::vector<std::span<const float>> spans;
    std::vector<int> max_drafts;
    for (auto& c : conf) {
      for (int k = 0; k < gamma; ++k) c.push_back(trial % 5 == 0 ? 1.0f : unit(rng));
      max_drafts.push_back(static_cast<int>(rng() % (gamma + 2)) - 1);  // -1 .. gamma
    }
    for (const auto& c : conf) spans.emplace_back(c);
    const std::vector<int> got = choose_num_drafts(spans, max_drafts, policy);
    ASSERT_EQ(got.size(), conf.size());
    std::vector<int> hi(static_cast<size_t>(B));
    for (int b = 0; b < B; ++b) {
      hi[b] = std::max(0, std::min(max_drafts[b], gamma));
      ASSERT_GE(got[b], 0);
      ASSERT_LE(got[b], hi[b]);
    }
    const double rate = step_rate(conf, got, policy.cost);
    std::vector<int> w(static_cast<size_t>(B), 0);
    while (true) {  // every width vector
      EXPECT_LE(step_rate(conf, w, policy.cost), rate * (1 + 1e-12)) << "trial " << trial;
      int b = 0;
      while (b < B && w[b] == hi[b]) w[b++] = 0;
      if (b == B) break;
      ++w[b];
    }
    if (B == 1) {
      int best = 0;
      double best_rate = step_rate(conf, {0}, policy.cost);
      for (int n = 1; n <= hi[0]; ++n) {
        const double r = step_rate(conf, {n}, policy.cost);
        if (r > best_rate) best = n, best_rate = r;
      }
      EXPECT_EQ(got[0], best) << "trial " << trial;
      EXPECT_EQ(choose_num_draft(conf[0], max_drafts[0], policy), got[0]);
    }
    VerifyWidthPolicy fixed = policy;
    fixed.mode = VerifyWidthPolicy::Mode::kFixed;
    EXPECT_EQ(choose_num_drafts(spans, max_drafts, fixed), hi);
  }
}

// The batch's load: the same request verifies fewer drafts in a batch of 16 than alone, since
// the forward's fixed cost is shared and each row's cost is not.
TEST(VerifyWidth, AFullerBatchVerifiesFewerDrafts) {
  const VerifyWidthPolicy policy{VerifyWidthPolicy::Mode::kAdaptive, {}};  // the defaults
  const std::vector<float> c = {0.9f, 0.8f, 0.7f, 0.6f, 0.5f, 0.5f, 0.5f};
  const int alone = choose_num_draft(c, 7, policy);
  const std::vector<std::span<const float>> sixteen(16, std::span<const float>(c));
  const std::vector<int> max_drafts(16, 7);
  const std::vector<int> batch = choose_num_drafts(sixteen, max_drafts, policy);
  // p_k = 0.9, 0.72, 0.50, 0.30, 0.15, 0.076, 0.038. Alone, five drafts make 3.58 tokens for
  // 1.3 decode steps (2.75 per step): the sixth, 0.076, is below 0.05 x 2.75. In a batch of 16
  // the fixed cost is shared: two drafts each make 16 x 2.62 tokens for 1 + 0.05 x 48 = 3.4
  // steps (12.3 per step), and the third, 0.50, is below 0.05 x 12.3 = 0.62.
  EXPECT_EQ(alone, 5);
  for (int w : batch) EXPECT_EQ(w, 2);  // equal requests, equal widths
  std::printf("[ info ] widths alone %d, in a batch of 16 %d\n", alone, batch.front());
}

// ---- the drafter -------------------------------------------------------------------------------

std::unique_ptr<DSparkDrafter> make(VerifyWidthPolicy width = {}) {
  DSparkDrafterConfig c;
  c.backbone.page_size = 16;
  c.backbone.max_requests = 4;
  c.backbone.max_tokens_per_request = 128;
  c.width = width;
  return DSparkDrafter::create(
             model::DSparkNetwork::load(dspark_dir(), cached_model(kDFlashTarget)).value(), c)
      .value();
}

using model::testing::golden_prefix;

Status append(Drafter& d, RequestId id, int64_t first, int64_t rows) {
  const std::vector<std::vector<float>> hidden = model::testing::golden_hidden_slice(first, rows);
  return d.append_context(id, ContextRows{hidden, 0, rows, first});
}

nlohmann::json golden_json() {
  std::ifstream in(dspark_dir() / "goldens.json");
  return nlohmann::json::parse(in);
}

// The verify batch goes to the target sorted by width, ties in arrival order, so the CUDA
// backends' runs of equal widths are as few as the distinct widths.
TEST(VerifyWidth, VerifyOrderSortsByWidthKeepingArrivalOrder) {
  const std::vector<int64_t> q_lens = {6, 4, 1, 7, 4, 2, 6, 8, 7, 3, 2, 1, 8, 2, 5, 4};
  const std::vector<size_t> order = verify_order(q_lens);
  ASSERT_EQ(order.size(), q_lens.size());
  EXPECT_EQ(std::set<size_t>(order.begin(), order.end()).size(), q_lens.size());  // a permutation
  int runs = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) {
      ASSERT_LE(q_lens[order[i - 1]], q_lens[order[i]]) << i;
      if (q_lens[order[i - 1]] == q_lens[order[i]]) {
        EXPECT_LT(order[i - 1], order[i]) << i;
      }
    }
    runs += i == 0 || q_lens[order[i - 1]] != q_lens[order[i]];
  }
  EXPECT_EQ(runs, 8);  // one per distinct width
  EXPECT_TRUE(verify_order(std::vector<int64_t>{}).empty());
  EXPECT_EQ(verify_order(std::vector<int64_t>{3, 3, 3}), (std::vector<size_t>{0, 1, 2}));
}

TEST(DSparkDrafter, GoldenDraftsAndConfidencesThroughTheInterface) {
  auto d = make();
  EXPECT_EQ(d->name(), "dspark");
  EXPECT_EQ(d->gamma(), 4);
  EXPECT_EQ(d->capture_layers(), (std::vector<int>{0, 1}));
  int checked = 0;
  const nlohmann::json golden = golden_json();
  for (const auto& c : golden["cases"]) {
    if (c["draft_window"].get<int>() != 0) continue;
    const int64_t L = c["context_len"].get<int64_t>();
    const RequestId id = 100 + L;
    ASSERT_TRUE(d->add_request(id, golden_prefix(L + 1), {}).ok());
    ASSERT_TRUE(append(*d, id, 0, L).ok());
    DraftSlot slot{id, 4, {}, {}};
    ASSERT_TRUE(d->propose({&slot, 1}).ok());
    EXPECT_EQ(slot.tokens, c["drafts"].get<std::vector<int32_t>>()) << "L " << L;
    EXPECT_TRUE(slot.probs.empty());  // greedy: one-hot drafts
    const std::vector<float> want = c["confidence"].get<std::vector<float>>();
    const std::span<const float> got = d->last_confidences(id);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(got[k], want[k], 1e-4f);
    // max_draft cuts the chain (its first tokens are the same).
    slot.max_draft = 2;
    ASSERT_TRUE(d->propose({&slot, 1}).ok());
    EXPECT_EQ(slot.tokens, std::vector<int32_t>(c["drafts"].begin(), c["drafts"].begin() + 2));
    ASSERT_TRUE(d->remove_request(id).ok());
    EXPECT_TRUE(d->last_confidences(id).empty());
    ++checked;
  }
  EXPECT_GE(checked, 4);
}

TEST(DSparkDrafter, SamplingDraftsCarryTheMarkovBiasedDistributions) {
  auto d = make();
  model::SamplingParams sp;
  sp.temperature = 1.0f;
  sp.seed = 11;
  ASSERT_TRUE(d->add_request(1, golden_prefix(31), sp).ok());
  ASSERT_TRUE(append(*d, 1, 0, 30).ok());
  DraftSlot a{1, 4, {}, {}}, b{1, 4, {}, {}};
  ASSERT_TRUE(d->propose({&a, 1}).ok());
  ASSERT_TRUE(d->propose({&b, 1}).ok());
  EXPECT_EQ(a.tokens, b.tokens);  // (seed, position) draws
  ASSERT_EQ(a.tokens.size(), 4u);
  ASSERT_EQ(a.probs.size(), 4u * kVocab);
  // Row k is softmax(backbone logits + bias of the token drawn for slot k - 1).
  model::DSparkNetwork net =
      model::DSparkNetwork::load(dspark_dir(), cached_model(kDFlashTarget)).value();
  const auto& g = dflash_golden();
  kv::KvPool pool = kv::KvPool::create(net.backbone.kv_pool_spec(8, 16, DType::kBF16)).value();
  kv::PageTables t = kv::PageTables::create({"draft", 8, 16, 2, 8}).value();
  ASSERT_TRUE(t.add_request(1).ok() && t.append(1, 30).ok() && t.commit(1, 30).ok());
  model::DFlashContextRows rows;
  rows.layers = model::testing::hidden_rows(g.target_hidden, 0, g.hidden);
  rows.rows = 30;
  rows.pages = t.pages(1);
  ASSERT_TRUE(net.backbone.append_context({&rows, 1}, pool).ok());
  model::DFlashBlock blk;
  blk.anchor = g.sequence[30];
  blk.context_len = 30;
  blk.pages = t.pages(1);
  ASSERT_TRUE(net.backbone.propose({&blk, 1}, pool).ok());
  const std::vector<float> logits = net.slot_logits(blk, a.tokens);
  for (int k = 0; k < 4; ++k) {
    std::vector<float> q(kVocab);
    ASSERT_TRUE(
        model::process_logits(std::span<const float>(logits.data() + k * kVocab, kVocab), sp, q)
            .ok());
    float worst = 0.0f;
    for (int v = 0; v < kVocab; ++v) {
      worst = std::max(worst, std::abs(q[v] - a.probs[static_cast<size_t>(k * kVocab + v)]));
    }
    EXPECT_LE(worst, 1e-6f) << "slot " << k + 1;
    EXPECT_GT(a.probs[static_cast<size_t>(k * kVocab + a.tokens[static_cast<size_t>(k)])], 0.0f);
  }
}

TEST(DSparkDrafter, AdaptiveWidthSendsFewerDraftsForLowConfidence) {
  // Golden confidences (goldens.json): about 0.4 at L = 9, about 0.53 at L = 30; with 0.2 per
  // verify row the best widths alone would be 1 and 2 (tokens per cost 0.99 vs 0.96, 1.16 vs
  // 1.12); chosen together (one verify forward for both) the shared fixed cost makes each row
  // dearer, and both send 1.
  const VerifyWidthPolicy policy{VerifyWidthPolicy::Mode::kAdaptive, {1.0, 0.2}};
  auto d = make(policy);
  ASSERT_TRUE(d->add_request(1, golden_prefix(10), {}).ok());
  ASSERT_TRUE(append(*d, 1, 0, 9).ok());
  ASSERT_TRUE(d->add_request(2, golden_prefix(31), {}).ok());
  ASSERT_TRUE(append(*d, 2, 0, 30).ok());
  std::vector<DraftSlot> slots = {{1, 4, {}, {}}, {2, 4, {}, {}}};
  ASSERT_TRUE(d->propose(slots).ok());
  EXPECT_EQ(choose_num_draft(d->last_confidences(1), 4, policy), 1);
  EXPECT_EQ(choose_num_draft(d->last_confidences(2), 4, policy), 2);
  const std::span<const float> both[] = {d->last_confidences(1), d->last_confidences(2)};
  const int max_drafts[] = {4, 4};
  const std::vector<int> widths = choose_num_drafts(both, max_drafts, policy);
  EXPECT_EQ(widths, (std::vector<int>{1, 1}));
  EXPECT_EQ(static_cast<int>(slots[0].tokens.size()), widths[0]);
  EXPECT_EQ(static_cast<int>(slots[1].tokens.size()), widths[1]);
  EXPECT_EQ(d->last_confidences(1).size(), 4u);  // every slot's, whatever was sent
  DSparkDrafterConfig bad_config;
  bad_config.width = {VerifyWidthPolicy::Mode::kAdaptive, {1.0, -1.0}};
  const Status bad =
      DSparkDrafter::create(
          model::DSparkNetwork::load(dspark_dir(), cached_model(kDFlashTarget)).value(), bad_config)
          .status();
  EXPECT_NE(bad.message().find("per_token"), std::string::npos) << bad.message();
}

// ---- the engine ---------------------------------------------------------------------------------

TEST(EngineLossless, DSparkGreedyEqualsPlainGreedyWithFixedAndRaggedWidths) {
  testing::check_dspark_lossless(Device::kCPU);
}

TEST(EngineLossless, DSparkOnTheShippedBackboneAcceptsDraftsAndStaysLossless) {
  testing::check_dspark_lossless_shipped(Device::kCPU);
}

}  // namespace
}  // namespace mlaspec::spec
