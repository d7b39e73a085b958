// SpecStats: counters and per-position acceptance on a hand-worked sequence, invariants on random
// steps, merge (sums, order-free), the summary line, and the phase timer.
#include "mlaspec/spec/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <thread>

namespace mlaspec::spec {
namespace {

SpecStats hand_worked() {
  SpecStats s;
  // (num_draft, num_accepted): all 4 accepted, none, 2 of 4, a step without drafts, 2 of 2.
  EXPECT_TRUE(s.record_step(4, 4).ok());
  EXPECT_TRUE(s.record_step(4, 0).ok());
  EXPECT_TRUE(s.record_step(4, 2).ok());
  EXPECT_TRUE(s.record_step(0, 0).ok());
  EXPECT_TRUE(s.record_step(2, 2).ok());
  return s;
}

TEST(SpecStats, HandWorkedSequence) {
  const SpecStats s = hand_worked();
  EXPECT_EQ(s.verify_steps, 5);
  EXPECT_EQ(s.drafted, 14);
  EXPECT_EQ(s.accepted, 8);
  EXPECT_EQ(s.emitted, 13);
  EXPECT_DOUBLE_EQ(s.accept_length(), 13.0 / 5);
  EXPECT_DOUBLE_EQ(s.acceptance_rate(), 8.0 / 14);
  EXPECT_DOUBLE_EQ(s.tokens_per_verify_token(), 13.0 / 19);  // 14 drafts + 5 target rows
  // Position 0 reached by the 4 steps with drafts, accepted in 3; position 1 reached by 3 (all
  // accepted); position 2 by 2 (1 accepted); position 3 by 1 (accepted).
  EXPECT_EQ(s.reached, (std::vector<int64_t>{4, 3, 2, 1}));
  EXPECT_EQ(s.accepted_at, (std::vector<int64_t>{3, 3, 1, 1}));
  EXPECT_DOUBLE_EQ(s.position_acceptance(0), 0.75);
  EXPECT_DOUBLE_EQ(s.position_acceptance(1), 1.0);
  EXPECT_DOUBLE_EQ(s.position_acceptance(2), 0.5);
  EXPECT_TRUE(std::isnan(s.position_acceptance(4)));
}

TEST(SpecStats, BadStepsAreRefusedAndNotCounted) {
  SpecStats s;
  EXPECT_EQ(s.record_step(2, 3).message(), "accepted 3 is outside [0, 2] (the drafts proposed)");
  EXPECT_EQ(s.record_step(-1, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.record_step(2, 1, 3).message(), "emitted 3 is outside [0, 2] (accepted + 1)");
  EXPECT_EQ(s.verify_steps, 0);
  EXPECT_EQ(s.accept_length(), 0.0);
  EXPECT_EQ(s.acceptance_rate(), 0.0);
  EXPECT_EQ(s.tokens_per_verify_token(), 0.0);
  // A request that stops inside a step emits fewer tokens; tau still counts the step's length.
  ASSERT_TRUE(s.record_step(3, 3, 2).ok());
  EXPECT_EQ(s.emitted, 2);
  EXPECT_DOUBLE_EQ(s.accept_length(), 4.0);
}

TEST(SpecStats, InvariantsAndMergeOnRandomSteps) {
  std::mt19937 rng(31);
  SpecStats all, parts[3];
  std::vector<std::pair<int, int>> steps;
  for (int i = 0; i < 3000; ++i) {
    const int n = static_cast<int>(rng() % 9);
    const int a = n == 0 ? 0 : static_cast<int>(rng() % (n + 1));
    steps.emplace_back(n, a);
    ASSERT_TRUE(all.record_step(n, a).ok());
    ASSERT_TRUE(parts[rng() % 3].record_step(n, a).ok());
  }
  // By definition: position k is reached when a draft k exists and drafts 0 .. k-1 were accepted.
  std::vector<int64_t> reached(8, 0), accepted_at(8, 0);
  for (auto [n, a] : steps) {
    for (int k = 0; k < n; ++k) {
      reached[k] += a >= k;
      accepted_at[k] += a > k;
    }
  }
  EXPECT_EQ(all.reached, reached);
  EXPECT_EQ(all.accepted_at, accepted_at);
  int64_t sum_accepted = 0;
  for (int64_t v : all.accepted_at) sum_accepted += v;
  EXPECT_EQ(sum_accepted, all.accepted);
  EXPECT_EQ(all.emitted, all.accepted + all.verify_steps);
  // Merging per-request stats in any order gives the run's totals.
  SpecStats m1, m2;
  m1.merge(parts[0]);
  m1.merge(parts[1]);
  m1.merge(parts[2]);
  m2.merge(parts[2]);
  m2.merge(parts[0]);
  m2.merge(parts[1]);
  for (const SpecStats* m : {&m1, &m2}) {
    EXPECT_EQ(m->verify_steps, all.verify_steps);
    EXPECT_EQ(m->drafted, all.drafted);
    EXPECT_EQ(m->accepted, all.accepted);
    EXPECT_EQ(m->emitted, all.emitted);
    EXPECT_EQ(m->reached, all.reached);
    EXPECT_EQ(m->accepted_at, all.accepted_at);
  }
}

TEST(SpecStats, SummaryLine) {
  SpecStats s = hand_worked();
  s.add_time(Phase::kDraft, 0.005);
  s.add_time(Phase::kVerify, 0.040);
  s.add_time(Phase::kAcceptCommit, 0.0005);
  EXPECT_EQ(format_summary(s, "ngram"),
            "ngram: 5 steps, 14 drafted, 8 accepted (57.1%), tau 2.60, per-position 0.75 1.00 "
            "0.50 1.00, 13 emitted; ms/step draft 1.00 verify 8.00 accept+commit 0.10");
  EXPECT_EQ(format_summary(SpecStats{}),
            "spec: 0 steps, 0 drafted, 0 accepted (0.0%), tau 0.00, per-position -, 0 emitted; "
            "ms/step draft 0.00 verify 0.00 accept+commit 0.00");
}

TEST(SpecStats, PhaseTimerAddsItsScope) {
  SpecStats s;
  {
    PhaseTimer t(s, Phase::kVerify);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_GE(s.verify_seconds, 0.002);
  EXPECT_EQ(s.draft_seconds, 0.0);
}

}  // namespace
}  // namespace mlaspec::spec
