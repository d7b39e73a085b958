// The lossless-sampling test of acceptor_test.cc at 10x the trials, over more random problem
// instances and up to 4 drafts per step: the correct acceptor must pass every case, and faults of
// only +-5% in the acceptance ratio (min(1, 1.05 p/q), min(1, 0.95 p/q)) must be detected with
// power >= 0.999 (computed from the exact model) and in fact.
#define MLASPEC_ACCEPTOR_HARNESS_ONLY
#include "spec/acceptor_test.cc"

namespace mlaspec::spec {
namespace {

constexpr int kLongTrials = 200000;

const Fault kSmallFaults[] = {
    {"min(1, 1.05 p/q)", {1.05, false}},
    {"min(1, 0.95 p/q)", {0.95, false}},
};

TEST(LosslessSamplingLong, ExactModelOfTheCorrectRuleIsTheTarget) {
  for (uint64_t instance = 1; instance <= 3; ++instance) {
    for (const Scenario& s : scenarios(instance)) {
      for (int k : {1, 2, 3, 4}) {
        const Dist got = exact_joint(s, k, {});
        const Dist want = target_joint(s);
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], 1e-6) << s.name << " num_draft " << k << " cell " << i;
        }
      }
    }
  }
}

TEST(LosslessSamplingLong, SpeculativeOutputMatchesTargetChiSquare) {
  for (uint64_t instance = 1; instance <= 3; ++instance) {
    expect_lossless(scenarios(instance), {1, 2, 4}, kLongTrials, 9000011 * instance);
  }
}

TEST(LosslessSamplingLong, SmallFaultsAreDetected) {
  expect_faults_detected(scenarios(1), kSmallFaults, {1, 2}, kLongTrials, 5000011);
}

}  // namespace
}  // namespace mlaspec::spec
