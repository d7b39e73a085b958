// Acceptor: greedy on hand cases and random sweeps against a plain reference; rejection sampling's
// edge rules; and the lossless property, checked statistically.
//
// Lossless test. Vocabulary V = 6, two output positions: the target is p1 for the first token and
// p2(. | t1) for the second, the drafter q1 and q2(. | x1) (or one-hot drafts chosen by a rule).
// Each trial runs the real speculative loop (draft num_draft tokens with the drafter's own stream,
// verify with accept_rejection, append, repeat) until two tokens are out, with its own seed. The
// 36-cell histogram of (t1, t2) over N trials is compared with the exact target p1(t1) p2(t2 | t1)
// by a chi-square test at significance 1e-4. Cells of probability 0 must stay empty.
// The same harness and N run the acceptor with planted faults (accept with min(1, 1.3 p/q) or
// min(1, 0.7 p/q); recover from p instead of norm(max(0, p - q))), which must fail the test. Each
// fault's exact output distribution is computed by enumerating the loop, giving the noncentrality
// lambda = N sum (P_fault - P)^2 / P and so the test's power against it; the test asserts that
// power is >= 0.999 before asserting the detection itself.
#include "mlaspec/spec/acceptor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mlaspec/model/sampling.h"
#include "mlaspec/spec/ngram_drafter.h"
#include "mlaspec/spec/stats.h"

namespace mlaspec::spec {
namespace {

using model::random_uniform;
using model::RandomStream;

#ifndef MLASPEC_ACCEPTOR_HARNESS_ONLY
// ---------------------------------------------------------------------------------------------
// Greedy

TEST(AcceptGreedy, HandCases) {
  const std::vector<int32_t> draft = {5, 7, 9};
  Acceptance a = accept_greedy(draft, std::vector<int32_t>{5, 7, 9, 2}).value();
  EXPECT_EQ(a.num_accepted, 3);
  EXPECT_EQ(a.tokens, (std::vector<int32_t>{5, 7, 9, 2}));
  a = accept_greedy(draft, std::vector<int32_t>{5, 8, 9, 2}).value();
  EXPECT_EQ(a.num_accepted, 1);
  EXPECT_EQ(a.tokens, (std::vector<int32_t>{5, 8}));
  a = accept_greedy(draft, std::vector<int32_t>{4, 7, 9, 2}).value();
  EXPECT_EQ(a.num_accepted, 0);
  EXPECT_EQ(a.tokens, (std::vector<int32_t>{4}));
  EXPECT_EQ(a.last(), 4);
  a = accept_greedy({}, std::vector<int32_t>{3}).value();
  EXPECT_EQ(a.num_accepted, 0);
  EXPECT_EQ(a.tokens, (std::vector<int32_t>{3}));
  EXPECT_EQ(accept_greedy(draft, std::vector<int32_t>{5, 7, 9}).status().message(),
            "target_argmax has 3 tokens, expected num_draft + 1 = 4");
}

TEST(AcceptGreedy, LogitsTiesToLowestIdAndBadRows) {
  // Row 0: tie between 1 and 2 -> 1 (= draft). Row 1: tie between 0 and 3 -> 0, draft 2 is
  // rejected, emits 0.
  const std::vector<float> logits = {0, 3, 3, 1, 2, 0, 1, 2, 0, 0, 0, 0};
  Acceptance a = accept_greedy_logits(std::vector<int32_t>{1, 2}, logits, 4).value();
  EXPECT_EQ(a.num_accepted, 1);
  EXPECT_EQ(a.tokens, (std::vector<int32_t>{1, 0}));
  std::vector<float> bad = logits;
  bad[5] = NAN;
  EXPECT_EQ(accept_greedy_logits(std::vector<int32_t>{1, 2}, bad, 4).status().message(),
            "target row 1: logit 1 is nan");
  // A bad row past the rejection is still reported.
  bad = logits;
  bad[10] = INFINITY;
  EXPECT_EQ(accept_greedy_logits(std::vector<int32_t>{1, 2}, bad, 4).status().message(),
            "target row 2: logit 2 is +inf");
  EXPECT_EQ(accept_greedy_logits(std::vector<int32_t>{1, 4}, logits, 4).status().message(),
            "draft token 4 (draft 1) is outside the vocabulary [0, 4)");
  EXPECT_EQ(accept_greedy_logits(std::vector<int32_t>{1, 2}, logits, 3).status().message(),
            "target_logits has 12 values, expected 3 rows x vocab 3");
}

// The forward's argmax ids (ForwardOptions::argmax_only): a -1 row (refused logits) is an error
// wherever it sits, as a bad logits row is for accept_greedy_logits; ids and drafts are checked.
TEST(AcceptGreedy, IdsRefuseBadRowsAndIds) {
  Acceptance a =
      accept_greedy_ids(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1, 0, 3}, 4).value();
  EXPECT_EQ(a.num_accepted, 1);
  EXPECT_EQ(a.tokens, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(accept_greedy_ids(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1, 0, -1}, 4)
                .status()
                .message(),
            "target row 2: its logits hold a nan or +inf, or no finite value");
  EXPECT_EQ(accept_greedy_ids(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1, 7, 0}, 4)
                .status()
                .message(),
            "target row 1: argmax 7 is outside the vocab 4");
  EXPECT_EQ(accept_greedy_ids(std::vector<int32_t>{1, 4}, std::vector<int32_t>{1, 0, 0}, 4)
                .status()
                .message(),
            "draft token 4 (draft 1) is outside the vocabulary [0, 4)");
  EXPECT_EQ(accept_greedy_ids(std::vector<int32_t>{1}, std::vector<int32_t>{1, 0, 0}, 4)
                .status()
                .message(),
            "target_argmax has 3 tokens, expected num_draft + 1 = 2");
}

// Trivially correct reference: walk the positions.
Acceptance greedy_reference(const std::vector<int32_t>& draft, const std::vector<int32_t>& best) {
  Acceptance a;
  for (size_t i = 0; i < draft.size(); ++i) {
    if (draft[i] != best[i]) break;
    a.tokens.push_back(draft[i]);
    ++a.num_accepted;
  }
  a.tokens.push_back(best[a.num_accepted]);
  return a;
}

TEST(AcceptGreedy, RandomSweepMatchesReference) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 5000; ++trial) {
    const int vocab = 2 + trial % 4;  // small vocabularies make long accepted runs common
    const int n = trial % 9;
    std::uniform_int_distribution<int> tok(0, vocab - 1);
    std::uniform_int_distribution<int> logit(-2, 2);  // integer logits: many ties
    std::vector<float> logits((n + 1) * vocab);
    for (float& v : logits) v = static_cast<float>(logit(rng));
    std::vector<int32_t> best(n + 1), draft(n);
    for (int i = 0; i <= n; ++i) {
      best[i] = model::argmax(std::span<const float>(logits).subspan(i * vocab, vocab));
    }
    // Drafts agree with the target most of the time so every acceptance length occurs.
    for (int i = 0; i < n; ++i) draft[i] = rng() % 4 ? best[i] : tok(rng);
    const Acceptance want = greedy_reference(draft, best);
    const Acceptance got = accept_greedy(draft, best).value();
    ASSERT_EQ(got.num_accepted, want.num_accepted) << "trial " << trial;
    ASSERT_EQ(got.tokens, want.tokens) << "trial " << trial;
    const Acceptance from_logits = accept_greedy_logits(draft, logits, vocab).value();
    ASSERT_EQ(from_logits.tokens, want.tokens) << "trial " << trial;
    const Acceptance from_ids =
        accept_greedy_ids(draft, model::argmax_rows(logits, vocab), vocab).value();
    ASSERT_EQ(from_ids.tokens, want.tokens) << "trial " << trial;
    const Acceptance via_params =
        accept_logits(draft, logits, {}, vocab, model::SamplingParams{}, 0).value();
    ASSERT_EQ(via_params.tokens, want.tokens) << "trial " << trial;
    // Rejection sampling against a greedy (one-hot) target is greedy acceptance, for any q.
    std::vector<float> p((n + 1) * vocab, 0.0f), q(n * vocab);
    for (int i = 0; i <= n; ++i) p[i * vocab + best[i]] = 1.0f;
    for (float& v : q) v = 0.1f + static_cast<float>(rng() % 10);
    for (int i = 0; i < n; ++i) {
      float s = 0;
      for (int t = 0; t < vocab; ++t) s += q[i * vocab + t];
      for (int t = 0; t < vocab; ++t) q[i * vocab + t] /= s;
    }
    SampledVerify v{draft, p, q, vocab, static_cast<uint64_t>(trial), 17};
    ASSERT_EQ(accept_rejection(v).value().tokens, want.tokens) << "trial " << trial;
    v.draft_probs = {};
    ASSERT_EQ(accept_rejection(v).value().tokens, want.tokens) << "trial " << trial;
  }
}

// ---------------------------------------------------------------------------------------------
// Rejection sampling: edge rules

TEST(AcceptRejection, NoDraftsEmitsThePlainSample) {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  const int vocab = 50;
  std::vector<float> logits(vocab);
  for (float& v : logits) v = normal(rng);
  model::SamplingParams params;
  params.temperature = 0.9f;
  params.top_p = 0.95f;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    params.seed = seed;
    const int64_t pos = static_cast<int64_t>(seed * 7);
    const Acceptance a = accept_logits({}, logits, {}, vocab, params, pos).value();
    ASSERT_EQ(a.num_accepted, 0);
    ASSERT_EQ(a.tokens.size(), 1u);
    EXPECT_EQ(a.tokens[0], model::sample_token(logits, params, pos).value());
  }
}

TEST(AcceptRejection, LogitsEntryEqualsProbsEntryOnProcessedRows) {
  // accept_logits = process_logits on each row + accept_rejection, draw for draw.
  std::mt19937 rng(6);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  const int vocab = 12, n = 5;
  for (uint64_t seed = 0; seed < 500; ++seed) {
    model::SamplingParams params;
    params.temperature = 0.5f + 0.1f * (seed % 10);
    params.top_k = static_cast<int32_t>(seed % 3) * 4;
    params.top_p = seed % 4 == 0 ? 1.0f : 0.8f;
    params.min_p = seed % 5 == 0 ? 0.1f : 0.0f;
    params.seed = seed;
    std::vector<float> logits((n + 1) * vocab), p((n + 1) * vocab), q(n * vocab);
    for (float& v : logits) v = normal(rng);
    for (int i = 0; i <= n; ++i) {
      ASSERT_TRUE(model::process_logits(std::span<const float>(logits).subspan(i * vocab, vocab),
                                        params, std::span<float>(p).subspan(i * vocab, vocab))
                      .ok());
    }
    // Drafts from a softened target, so that runs of acceptances and rejections both occur.
    model::SamplingParams soft = params;
    soft.temperature *= 1.5f;
    std::vector<int32_t> draft(n);
    for (int i = 0; i < n; ++i) {
      const std::span<float> qi = std::span<float>(q).subspan(i * vocab, vocab);
      ASSERT_TRUE(
          model::process_logits(std::span<const float>(logits).subspan(i * vocab, vocab), soft, qi)
              .ok());
      draft[i] = model::sample_from(std::span<const float>(qi),
                                    random_uniform(seed, 40 + i, RandomStream::kDraft));
    }
    for (bool with_q : {true, false}) {
      const std::span<const float> qs =
          with_q ? std::span<const float>(q) : std::span<const float>();
      const Acceptance a = accept_logits(draft, logits, qs, vocab, params, 40).value();
      const Acceptance b = accept_rejection({draft, p, qs, vocab, seed, 40}).value();
      ASSERT_EQ(a.num_accepted, b.num_accepted) << "seed " << seed;
      ASSERT_EQ(a.tokens, b.tokens) << "seed " << seed;
    }
  }
}

TEST(AcceptRejection, TargetZeroIsAlwaysRejected) {
  const std::vector<float> p = {0.5f, 0.0f, 0.5f, 0.25f, 0.25f, 0.5f};
  const std::vector<float> q = {0.0f, 1.0f, 0.0f};
  const std::vector<int32_t> draft = {1};
  for (uint64_t seed = 0; seed < 500; ++seed) {
    for (std::span<const float> qs : {std::span<const float>(q), std::span<const float>()}) {
      const Acceptance a = accept_rejection({draft, p, qs, 3, seed, 0}).value();
      ASSERT_EQ(a.num_accepted, 0);
      ASSERT_NE(a.tokens[0], 1);  // recovered from p with token 1 out
    }
  }
}

TEST(AcceptRejection, DraftZeroAtTheProposedTokenReadsAsOneHot) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> w(0.05f, 1.0f);
  const int vocab = 5;
  int accepted = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    std::vector<float> p(2 * vocab), q(vocab);
    for (float& v : p) v = w(rng);
    for (float& v : q) v = w(rng);
    const int32_t x = static_cast<int32_t>(seed % vocab);
    q[x] = 0.0f;
    const std::vector<int32_t> draft = {x};
    const Acceptance with_q = accept_rejection({draft, p, q, vocab, seed, 3}).value();
    const Acceptance one_hot = accept_rejection({draft, p, {}, vocab, seed, 3}).value();
    ASSERT_EQ(with_q.tokens, one_hot.tokens) << "seed " << seed;
    accepted += with_q.num_accepted;
  }
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 2000);
}

TEST(AcceptRejection, EmptyResidualFallsBackToTarget) {
  // q >= p everywhere (q is not normalised here, which only this rule can meet): a rejection of
  // token 0 leaves max(0, p - q) = 0, so the token is drawn from p.
  const std::vector<float> p = {0.5f, 0.5f, 0.5f, 0.5f};
  const std::vector<float> q = {0.9f, 0.5f};
  const std::vector<int32_t> draft = {0};
  int rejected = 0;
  std::vector<int> count(2, 0);
  for (uint64_t seed = 0; seed < 4000; ++seed) {
    const Acceptance a = accept_rejection({draft, p, q, 2, seed, 0}).value();
    if (a.num_accepted == 0) {
      ++rejected;
      ++count[a.tokens[0]];
      EXPECT_EQ(a.tokens[0], model::sample_from(std::span<const float>(p).subspan(0, 2),
                                                random_uniform(seed, 0, RandomStream::kSample)));
    }
  }
  EXPECT_NEAR(rejected / 4000.0, 1 - 0.5 / 0.9, 0.03);
  EXPECT_GT(count[0], 0);
  EXPECT_GT(count[1], 0);
}

TEST(AcceptRejection, AlwaysRightDraftsAreAllAccepted) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> w(0.05f, 1.0f);
  const int vocab = 7, n = 4;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    std::vector<float> p((n + 1) * vocab);
    for (float& v : p) v = w(rng);
    for (int i = 0; i <= n; ++i) {
      float s = 0;
      for (int t = 0; t < vocab; ++t) s += p[i * vocab + t];
      for (int t = 0; t < vocab; ++t) p[i * vocab + t] /= s;
    }
    std::vector<int32_t> draft(n);
    for (int i = 0; i < n; ++i) draft[i] = static_cast<int32_t>(rng() % vocab);
    const std::span<const float> q = std::span<const float>(p).subspan(0, n * vocab);
    const Acceptance a = accept_rejection({draft, p, q, vocab, seed, 100}).value();
    ASSERT_EQ(a.num_accepted, n);
    EXPECT_EQ(a.tokens.back(),
              model::sample_from(std::span<const float>(p).subspan(n * vocab, vocab),
                                 random_uniform(seed, 100 + n, RandomStream::kSample)));
  }
}

TEST(AcceptRejection, BadInputsNameTheValue) {
  const std::vector<float> p = {0.5f, 0.5f, 0.5f, 0.5f};
  const std::vector<int32_t> draft = {0};
  EXPECT_EQ(accept_rejection({draft, std::span<const float>(p).subspan(0, 3), {}, 2, 0, 0})
                .status()
                .message(),
            "target_probs has 3 values, expected 2 rows x vocab 2");
  EXPECT_EQ(accept_rejection({draft, p, p, 2, 0, 0}).status().message(),
            "draft_probs has 4 values, expected 1 rows x vocab 2");
  EXPECT_EQ(accept_rejection({std::vector<int32_t>{-1}, p, {}, 2, 0, 0}).status().message(),
            "draft token -1 (draft 0) is outside the vocabulary [0, 2)");
  EXPECT_EQ(accept_rejection({draft, p, {}, 0, 0, 0}).status().message(),
            "vocab 0 is not positive");
  std::vector<float> neg = p;
  neg[0] = -0.5f;
  EXPECT_EQ(accept_rejection({draft, neg, {}, 2, 0, 0}).status().message(),
            "target row 0 token 0 is -0.500000, not a probability");
  model::SamplingParams params;
  params.temperature = 1.0f;
  std::vector<float> logits = {0.0f, 1.0f, 2.0f, NAN};
  EXPECT_EQ(accept_logits(draft, logits, {}, 2, params, 0).status().message(),
            "target row 1: logit 1 is nan");
  params.min_p = 3.0f;
  EXPECT_EQ(accept_logits(draft, logits, {}, 2, params, 0).status().message(),
            "min_p 3 is outside [0, 1] (0 turns it off)");
}

// ---------------------------------------------------------------------------------------------
// The whole step (draft -> verify -> accept -> commit) with the n-gram drafter and a toy target

// A toy target: logits depend on the last two tokens through a fixed random table, so outputs
// repeat and n-gram drafts are often right.
struct ToyTarget {
  static constexpr int kV = 24;
  std::vector<float> table;
  ToyTarget() : table(kV * kV * kV) {
    std::mt19937 rng(77);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (float& v : table) v = normal(rng);
  }
  std::span<const float> logits(const std::vector<int32_t>& h) const {
    const size_t a = h.size() >= 2 ? h[h.size() - 2] : 0, b = h.empty() ? 0 : h.back();
    return std::span<const float>(table).subspan((a * kV + b) * kV, kV);
  }
};

// Runs the speculative loop until `length` tokens; max_draft 0 = plain decoding through the same
// acceptor. Returns the generated tokens (prompt excluded).
std::vector<int32_t> run_loop(const ToyTarget& target, const std::vector<int32_t>& prompt,
                              const model::SamplingParams& params, int max_draft, size_t length,
                              SpecStats* stats, const NgramConfig& config = {}) {
  NgramDrafter drafter = NgramDrafter::create(config).value();
  EXPECT_TRUE(drafter.add_request(0, prompt, params).ok());
  std::vector<int32_t> h = prompt;
  while (h.size() < prompt.size() + length) {
    std::vector<DraftSlot> slot(1);
    slot[0].max_draft = max_draft;
    EXPECT_TRUE(drafter.propose(slot).ok());
    const std::vector<int32_t>& draft = slot[0].tokens;
    std::vector<float> rows;  // the verify forward: one row per draft + 1
    std::vector<int32_t> ctx = h;
    for (size_t i = 0; i <= draft.size(); ++i) {
      const std::span<const float> l = target.logits(ctx);
      rows.insert(rows.end(), l.begin(), l.end());
      if (i < draft.size()) ctx.push_back(draft[i]);
    }
    const Acceptance a =
        accept_logits(draft, rows, {}, ToyTarget::kV, params, static_cast<int64_t>(h.size()))
            .value();
    EXPECT_TRUE(stats->record_step(static_cast<int32_t>(draft.size()), a.num_accepted).ok());
    EXPECT_TRUE(drafter.commit(0, a.tokens).ok());
    h.insert(h.end(), a.tokens.begin(), a.tokens.end());
  }
  return {h.begin() + prompt.size(), h.begin() + prompt.size() + length};
}

std::vector<int32_t> plain_loop(const ToyTarget& target, const std::vector<int32_t>& prompt,
                                const model::SamplingParams& params, size_t length) {
  std::vector<int32_t> h = prompt;
  while (h.size() < prompt.size() + length) {
    h.push_back(
        model::sample_token(target.logits(h), params, static_cast<int64_t>(h.size())).value());
  }
  return {h.begin() + prompt.size(), h.end()};
}

TEST(SpeculativeLoop, GreedyWithNgramDraftsEqualsPlainGreedy) {
  const ToyTarget target;
  for (int32_t first = 0; first < 8; ++first) {
    const std::vector<int32_t> prompt = {first, 3, first, 5};
    const std::vector<int32_t> plain = plain_loop(target, prompt, {}, 300);
    for (int max_draft : {1, 3, 7}) {
      SpecStats stats;
      EXPECT_EQ(run_loop(target, prompt, {}, max_draft, 300, &stats), plain)
          << "prompt " << first << " max_draft " << max_draft;
      EXPECT_GT(stats.accepted, 0);  // the drafts did get used
      EXPECT_LT(stats.verify_steps, 300);
      if (first == 0) std::printf("%s\n", format_summary(stats, "ngram").c_str());
    }
    SpecStats stats;
    EXPECT_EQ(run_loop(target, prompt, {}, 7, 300, &stats, {1, 3, true}), plain);
    if (first == 0) std::printf("%s\n", format_summary(stats, "ngram+cycle").c_str());
  }
}

TEST(SpeculativeLoop, SamplingWithoutDraftsEqualsPlainSampling) {
  const ToyTarget target;
  model::SamplingParams params;
  params.temperature = 0.8f;
  params.top_p = 0.9f;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    params.seed = seed;
    const std::vector<int32_t> prompt = {1, 2, 3};
    SpecStats stats;
    EXPECT_EQ(run_loop(target, prompt, params, 0, 200, &stats),
              plain_loop(target, prompt, params, 200));
    EXPECT_EQ(stats.verify_steps, 200);
  }
}

#endif  // MLASPEC_ACCEPTOR_HARNESS_ONLY

// ---------------------------------------------------------------------------------------------
// Lossless sampling: the statistical harness (acceptance_stat_long_test.cc includes this file
// with MLASPEC_ACCEPTOR_HARNESS_ONLY defined to reuse it at larger sample counts)

constexpr int kVocab = 6;
using Dist = std::vector<double>;

struct Scenario {
  std::string name;
  Dist p1;
  std::vector<Dist> p2;                                         // p2[t1]
  std::optional<Dist> q1;                                       // nullopt: one-hot drafts
  std::vector<Dist> q2;                                         // q2[x1] (when q1 is set)
  std::function<int32_t(const std::vector<int32_t>&)> one_hot;  // the draft token given context
  bool faults_detectable = true;  // false where no fault changes the output
};

Dist uniform_dist() {
  return Dist(kVocab, 1.0 / kVocab);
}

const Dist& target_of(const Scenario& s, const std::vector<int32_t>& ctx) {
  static const Dist uniform = uniform_dist();
  if (ctx.empty()) return s.p1;
  if (ctx.size() == 1) return s.p2[ctx[0]];
  return uniform;  // beyond the two observed positions: irrelevant
}

Dist draft_of(const Scenario& s, const std::vector<int32_t>& ctx) {
  if (!s.q1) {
    Dist d(kVocab, 0.0);
    d[s.one_hot(ctx)] = 1.0;
    return d;
  }
  if (ctx.empty()) return *s.q1;
  if (ctx.size() == 1) return s.q2[ctx[0]];
  return uniform_dist();
}

std::vector<float> to_float(const Dist& d) {
  return {d.begin(), d.end()};
}

// One trial: speculative steps of num_draft until two tokens are out. Returns t1 * V + t2.
int run_trial(const Scenario& s, int num_draft, uint64_t seed, const detail::PlantedFault& fault,
              int* accepted) {
  std::vector<int32_t> out;
  int64_t pos = 0;
  while (out.size() < 2) {
    std::vector<int32_t> ctx = out, draft;
    std::vector<float> p, q;
    for (int j = 0; j < num_draft; ++j) {
      const std::vector<float> qj = to_float(draft_of(s, ctx));
      const int32_t x =
          s.q1 ? model::sample_from(std::span<const float>(qj),
                                    random_uniform(seed, pos + j, RandomStream::kDraft))
               : s.one_hot(ctx);
      draft.push_back(x);
      q.insert(q.end(), qj.begin(), qj.end());
      ctx.push_back(x);
    }
    ctx = out;
    for (int j = 0; j <= num_draft; ++j) {
      const std::vector<float> pj = to_float(target_of(s, ctx));
      p.insert(p.end(), pj.begin(), pj.end());
      if (j < num_draft) ctx.push_back(draft[j]);
    }
    SampledVerify v{draft,  p,    s.q1 ? std::span<const float>(q) : std::span<const float>(),
                    kVocab, seed, pos};
    const Acceptance a = detail::accept_rejection_with_fault(v, fault).value();
    *accepted += a.num_accepted;
    out.insert(out.end(), a.tokens.begin(), a.tokens.end());
    pos += static_cast<int64_t>(a.tokens.size());
  }
  return out[0] * kVocab + out[1];
}

// The exact distribution of (t1, t2) that the loop produces under a rule, by enumerating drafts
// and accept/reject branches with their probabilities (the same rule as the acceptor, in exact
// arithmetic).
void enumerate(const Scenario& s, int num_draft, const detail::PlantedFault& fault,
               const std::vector<int32_t>& out, double prob, Dist& joint) {
  if (out.size() >= 2) {
    joint[out[0] * kVocab + out[1]] += prob;
    return;
  }
  // Enumerate draft sequences.
  std::function<void(std::vector<int32_t>&, double)> drafts = [&](std::vector<int32_t>& draft,
                                                                  double pd) {
    if (static_cast<int>(draft.size()) < num_draft) {
      std::vector<int32_t> ctx = out;
      ctx.insert(ctx.end(), draft.begin(), draft.end());
      const Dist q = draft_of(s, ctx);
      for (int32_t x = 0; x < kVocab; ++x) {
        if (q[x] == 0.0) continue;
        draft.push_back(x);
        drafts(draft, pd * q[x]);
        draft.pop_back();
      }
      return;
    }
    // Verify this draft sequence.
    std::vector<int32_t> ctx = out;
    double reach = pd;
    for (int i = 0; i <= num_draft; ++i) {
      const Dist& p = target_of(s, ctx);
      if (i == num_draft) {
        for (int32_t t = 0; t < kVocab; ++t) {
          std::vector<int32_t> next = ctx;
          next.push_back(t);
          if (p[t] > 0) enumerate(s, num_draft, fault, next, reach * p[t], joint);
        }
        return;
      }
      const Dist q = draft_of(s, ctx);
      const int32_t x = draft[i];
      const double acc = std::min(1.0, fault.ratio_scale * p[x] / q[x]);
      Dist r(kVocab, 0.0);
      double mass = 0.0;
      if (!fault.recover_from_target) {
        for (int t = 0; t < kVocab; ++t) mass += r[t] = std::max(0.0, p[t] - q[t]);
      }
      if (mass == 0.0) {
        r = p;
        mass = 1.0;
      }
      for (int32_t t = 0; t < kVocab; ++t) {
        if (r[t] == 0.0) continue;
        std::vector<int32_t> next = ctx;
        next.push_back(t);
        enumerate(s, num_draft, fault, next, reach * (1 - acc) * r[t] / mass, joint);
      }
      reach *= acc;
      if (reach == 0.0) return;
      ctx.push_back(x);
      if (ctx.size() >= 2) {
        enumerate(s, num_draft, fault, ctx, reach, joint);
        return;
      }
    }
  };
  std::vector<int32_t> draft;
  drafts(draft, prob);
}

Dist exact_joint(const Scenario& s, int num_draft, const detail::PlantedFault& fault) {
  Dist joint(kVocab * kVocab, 0.0);
  enumerate(s, num_draft, fault, {}, 1.0, joint);
  return joint;
}

Dist target_joint(const Scenario& s) {
  Dist joint(kVocab * kVocab);
  for (int a = 0; a < kVocab; ++a) {
    for (int b = 0; b < kVocab; ++b) joint[a * kVocab + b] = s.p1[a] * s.p2[a][b];
  }
  return joint;
}

// Wilson-Hilferty: the chi-square quantile with df degrees of freedom at standard-normal z.
double chi2_quantile(int df, double z) {
  const double h = 2.0 / (9.0 * df);
  return df * std::pow(1 - h + z * std::sqrt(h), 3);
}
constexpr double kZ = 3.7190;  // upper 1e-4 point of the standard normal

struct Chi2 {
  double stat = 0;
  int df = 0;
  double critical = 0;
  bool pass() const { return stat < critical; }
};

Chi2 chi_square(const std::vector<int>& count, const Dist& expected, int n) {
  Chi2 c;
  int cells = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] == 0.0) {
      if (count[i] > 0) c.stat = INFINITY;  // an impossible pair occurred
      continue;
    }
    ++cells;
    const double e = n * expected[i];
    c.stat += (count[i] - e) * (count[i] - e) / e;
  }
  c.df = cells - 1;
  c.critical = chi2_quantile(c.df, kZ);
  return c;
}

// Power of the test against a true distribution `truth` when testing `target`: normal
// approximation of the noncentral chi-square (mean df + lambda, variance 2 (df + 2 lambda)).
double power(const Dist& truth, const Dist& target, int n, const Chi2& c) {
  double lambda = 0;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0.0) {
      if (truth[i] > 0) return 1.0;  // impossible pairs: any occurrence fails the test
      continue;
    }
    lambda += n * (truth[i] - target[i]) * (truth[i] - target[i]) / target[i];
  }
  const double z = (c.critical - (c.df + lambda)) / std::sqrt(2.0 * (c.df + 2 * lambda));
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

Dist random_dist(std::mt19937_64& rng, double lo = 0.2) {
  std::uniform_real_distribution<double> w(lo, 1.0);
  Dist d(kVocab);
  double s = 0;
  for (double& v : d) s += v = w(rng);
  for (double& v : d) v /= s;
  // Round to float and back so the exact model and the acceptor see the same numbers.
  for (double& v : d) v = static_cast<float>(v);
  return d;
}

// Zero out all but the `keep` largest entries (a top-k processed target) and renormalise.
Dist sparse(Dist d, int keep, std::mt19937_64& rng) {
  std::vector<int> idx(kVocab);
  for (int i = 0; i < kVocab; ++i) idx[i] = i;
  std::shuffle(idx.begin(), idx.end(), rng);
  double s = 0;
  for (int i = 0; i < kVocab; ++i) {
    if (i >= keep) d[idx[i]] = 0.0;
    s += d[idx[i]];
  }
  for (double& v : d) v = static_cast<float>(v / s);
  return d;
}

std::vector<Scenario> scenarios(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Scenario> all;
  auto target = [&](Scenario& s) {
    s.p1 = random_dist(rng);
    for (int t = 0; t < kVocab; ++t) s.p2.push_back(random_dist(rng));
  };
  {
    Scenario s;
    s.name = "random q";
    target(s);
    s.q1 = random_dist(rng);
    for (int t = 0; t < kVocab; ++t) s.q2.push_back(random_dist(rng));
    all.push_back(s);
  }
  {
    Scenario s;
    s.name = "one-hot drafts";
    target(s);
    s.one_hot = [](const std::vector<int32_t>& ctx) {
      return ctx.empty() ? 2 : (ctx[0] * 5 + 1) % kVocab;
    };
    all.push_back(s);
  }
  {
    Scenario s;
    s.name = "sparse target (top-4), sparse q (3 of 6)";
    s.p1 = sparse(random_dist(rng), 4, rng);
    for (int t = 0; t < kVocab; ++t) s.p2.push_back(sparse(random_dist(rng), 4, rng));
    s.q1 = sparse(random_dist(rng), 3, rng);
    for (int t = 0; t < kVocab; ++t) s.q2.push_back(sparse(random_dist(rng), 3, rng));
    all.push_back(s);
  }
  {
    Scenario s;
    s.name = "always right (q = p)";
    s.faults_detectable = false;
    target(s);
    s.q1 = s.p1;
    s.q2 = s.p2;
    all.push_back(s);
  }
  {
    // p is zero on tokens 4 and 5, q lives only there: every draft is rejected.
    Scenario s;
    s.name = "always wrong";
    s.faults_detectable = false;
    auto low = [&] {
      Dist d = random_dist(rng);
      d[4] = d[5] = 0.0;
      double sum = 0;
      for (double v : d) sum += v;
      for (double& v : d) v = static_cast<float>(v / sum);
      return d;
    };
    s.p1 = low();
    for (int t = 0; t < kVocab; ++t) s.p2.push_back(low());
    s.q1 = Dist{0, 0, 0, 0, 0.3, 0.7};
    for (int t = 0; t < kVocab; ++t) s.q2.push_back(Dist{0, 0, 0, 0, 0.6, 0.4});
    all.push_back(s);
  }
  return all;
}

struct Fault {
  const char* name;
  detail::PlantedFault fault;
};
const Fault kFaults[] = {
    {"min(1, 1.3 p/q)", {1.3, false}},
    {"min(1, 0.7 p/q)", {0.7, false}},
    {"recover from p", {1.0, true}},
};

struct Outcome {
  Chi2 chi2;
  double accept_rate = 0;
};

Outcome simulate(const Scenario& s, int num_draft, const detail::PlantedFault& fault,
                 uint64_t base_seed, int trials) {
  std::vector<int> count(kVocab * kVocab, 0);
  int accepted = 0;
  for (int trial = 0; trial < trials; ++trial) {
    ++count[run_trial(s, num_draft, base_seed + trial, fault, &accepted)];
  }
  return {chi_square(count, target_joint(s), trials), static_cast<double>(accepted) / trials};
}

// The correct acceptor passes for every scenario and num_draft; trials per case.
void expect_lossless(const std::vector<Scenario>& all, std::initializer_list<int> num_drafts,
                     int trials, uint64_t seed) {
  for (const Scenario& s : all) {
    for (int k : num_drafts) {
      const Outcome o = simulate(s, k, {}, seed * k, trials);
      EXPECT_TRUE(o.chi2.pass()) << s.name << " num_draft " << k << ": chi2 " << o.chi2.stat
                                 << " >= critical " << o.chi2.critical << " (df " << o.chi2.df
                                 << ")";
      if (s.name == "always wrong") {
        EXPECT_EQ(o.accept_rate, 0.0);
      }
      if (s.name.starts_with("always right")) {
        EXPECT_EQ(o.accept_rate, k);
      }
    }
  }
}

// Each fault, in each scenario where a fault can show, must have power >= 0.999 at this trial
// count (from the exact model) and must fail the simulated test.
void expect_faults_detected(const std::vector<Scenario>& all, std::span<const Fault> faults,
                            std::initializer_list<int> num_drafts, int trials, uint64_t seed) {
  for (const Scenario& s : all) {
    if (!s.faults_detectable) continue;
    for (int k : num_drafts) {
      for (const Fault& f : faults) {
        const Outcome o = simulate(s, k, f.fault, seed * k, trials);
        const double pw = power(exact_joint(s, k, f.fault), target_joint(s), trials, o.chi2);
        ASSERT_GE(pw, 0.999) << s.name << " num_draft " << k << " fault " << f.name
                             << ": the test is too weak";
        EXPECT_FALSE(o.chi2.pass())
            << s.name << " num_draft " << k << " fault " << f.name << " went undetected: chi2 "
            << o.chi2.stat << " < " << o.chi2.critical;
        std::printf("%-42s k=%d %-16s chi2 %9.1f (critical %.1f, df %d) power %.6f\n",
                    s.name.c_str(), k, f.name, o.chi2.stat, o.chi2.critical, o.chi2.df, pw);
      }
    }
  }
}

#ifndef MLASPEC_ACCEPTOR_HARNESS_ONLY
// Power at this count (from the exact model, printed by PlantedFaultsAreDetected): >= 0.999
// against the faults above in every scenario; against min(1, 1.1 p/q) or min(1, 0.9 p/q) about
// 0.96 (one-hot drafts) to 1; against +-5% it is low, which the long test covers.
constexpr int kTrials = 20000;

TEST(LosslessSampling, ExactModelOfTheCorrectRuleIsTheTarget) {
  for (const Scenario& s : scenarios(20261204)) {
    for (int k : {1, 2, 3}) {
      const Dist got = exact_joint(s, k, {});
      const Dist want = target_joint(s);
      for (size_t i = 0; i < want.size(); ++i) {
        // Float-rounded inputs sum to 1 within ~1e-7, hence the tolerance.
        ASSERT_NEAR(got[i], want[i], 1e-6) << s.name << " num_draft " << k << " cell " << i;
      }
    }
  }
}

TEST(LosslessSampling, SpeculativeOutputMatchesTargetChiSquare) {
  expect_lossless(scenarios(20261204), {1, 2, 3}, kTrials, 1000003);
}

TEST(LosslessSampling, PlantedFaultsAreDetected) {
  expect_faults_detected(scenarios(20261204), kFaults, {1, 2}, kTrials, 7000001);
}
#endif  // MLASPEC_ACCEPTOR_HARNESS_ONLY

}  // namespace
}  // namespace mlaspec::spec
