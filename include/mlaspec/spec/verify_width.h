// Verify width: how many drafts of a block one request sends to verify (docs/dspark.md).
//
// A drafter with per-slot confidences c_1 .. c_gamma (DSpark: c_k = the predicted probability that
// draft k is accepted once drafts 1 .. k-1 were) can verify fewer drafts when the later ones are
// unlikely to survive. With n drafts verified:
//   expected accepted  A(n) = sum_{k=1..n} prod_{j<=k} c_j
//   tokens emitted     A(n) + 1 (the target's own token after the accepted drafts)
//   verify cost        cost(q_len = n + 1) = kVerifyFixedCost + kVerifyCostPerToken * q_len
// kAdaptive picks the n in [0, max_draft] with the most tokens per unit cost (the smallest n on a
// tie); kFixed always verifies max_draft. The draft forward is one block whatever n is, so it is
// not part of the trade.
//
// A step verifies its whole batch in one forward, so the choice is made for the batch at once
// (choose_num_drafts): the step's cost is fixed + per_token * sum_b q_len_b, its yield
// sum_b (A_b(n_b) + 1), and the widths maximise yield / cost. Draft k of request b adds
// p_bk = prod_{j<=k} c_bj to the yield and per_token to the cost, so the best widths take the
// drafts in decreasing p_bk while p_bk > per_token * (yield / cost so far): a request's own p_bk
// only fall with k, so this is the optimum (ties: the fewer drafts). The batch's load is in the
// threshold: the fixed cost is shared by B requests, so at B = 16 a draft must be likelier to
// survive than at B = 1 to be worth its row (with the defaults, p > ~0.44 at B = 16 with every
// request at its first token, ~0.048 at B = 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::spec {

// The linear verify-time model, in units of one decode step's fixed cost: a verify forward is
// dominated by reading the weights and the KV (the same for any small q_len), and each query row
// adds a little compute. 0.05 per row: a q_len-8 verify costs 1.4 decode steps. Measured numbers
// for a given GPU can replace these through VerifyCostModel.
inline constexpr double kVerifyFixedCost = 1.0;
inline constexpr double kVerifyCostPerToken = 0.05;

struct VerifyCostModel {
  double fixed = kVerifyFixedCost;
  double per_token = kVerifyCostPerToken;
  double cost(int q_len) const { return fixed + per_token * q_len; }
};

struct VerifyWidthPolicy {
  enum class Mode { kFixed, kAdaptive };
  Mode mode = Mode::kFixed;
  VerifyCostModel cost;
};

// kInvalidArgument naming the value unless fixed > 0 and per_token >= 0 (both finite).
Status validate(const VerifyWidthPolicy& policy);

// A(n) above; confidences past the span count as 0.
double expected_accepted(std::span<const float> confidence, int num_draft);

// The number of drafts to verify, in [0, min(max_draft, confidence.size())] for kAdaptive and
// min(max_draft, confidence.size()) for kFixed; max_draft <= 0 gives 0.
int choose_num_draft(std::span<const float> confidence, int max_draft,
                     const VerifyWidthPolicy& policy);

// The widths of one step's requests chosen together (above): element b in [0, min(max_drafts[b],
// confidences[b].size())]; kFixed gives each request that upper end. A batch of one gives
// choose_num_draft's width. confidences and max_drafts have one element per request.
std::vector<int> choose_num_drafts(std::span<const std::span<const float>> confidences,
                                   std::span<const int> max_drafts,
                                   const VerifyWidthPolicy& policy);

// The order in which a ragged verify batch goes to the target: the indices of q_lens sorted by
// q_len, ties in their given order. The CUDA backends serve a ragged call one launch per run of
// consecutive equal widths, so sorting makes the runs as few as the distinct widths (16 random
// widths 1..8 at S = 32k: 1.97x -> 1.41x the padded call's time with fold on an H100;
// docs/perf/knowledge.md, "Ragged verify"). Each request's rows do not depend on the order in
// deterministic mode.
std::vector<size_t> verify_order(std::span<const int64_t> q_lens);

}  // namespace mlaspec::spec
