// Acceptor: which draft tokens a verify step keeps, and the one token it adds after them.
//
// A verify step for one request runs the target on [anchor, d_0 .. d_{n-1}] (n = num_draft) and
// gives n + 1 rows: row i is the target's distribution (or logits) for the token at position
// first_position + i, where d_i was proposed. The result is `num_accepted` = a in [0, n] and the
// a + 1 tokens to emit: d_0 .. d_{a-1} and then one token from the target.
//
// Greedy (ARCHITECTURE.md §3.7): accept d_i while d_i == argmax(row i); the last token is
// argmax(row a) (the bonus when a = n, the correction otherwise). Ties: lowest id.
//
// Rejection sampling (Leviathan et al. 2023, Chen et al. 2023), position by position from i = 0:
//   accept d_i with probability min(1, p_i(d_i) / q_i(d_i)), as u * q_i(d_i) < p_i(d_i) with
//   u = random_uniform(seed, first_position + i, kAccept);
//   at the first rejection emit a token drawn from norm(max(0, p_i - q_i)) and stop;
//   if all n are accepted, emit a bonus drawn from p_n.
// Every draw of an emitted target token uses random_uniform(seed, its position, kSample), the draw
// plain sampling uses at that position (model/sampling.h), so with n = 0 the step emits exactly the
// token plain sampling would. The emitted tokens follow the target's distribution whatever q is,
// provided d_i was drawn from q_i independently of the acceptor's draws (or chosen
// deterministically, for one-hot drafts).
// Rules at the edges:
//   * no draft probabilities: q_i is one-hot at d_i (accept with probability p_i(d_i); on
//     rejection draw from p_i with d_i removed);
//   * q_i(d_i) == 0 for a proposed token: q_i cannot have produced d_i, so that position is
//     treated as one-hot as above (the only reading under which the output stays exact);
//   * p_i(d_i) == 0: always rejected;
//   * norm(max(0, p_i - q_i)) with zero mass (reachable only through rounding, as p_i == q_i
//     accepts surely, or through a q_i that does not sum to 1): draw from p_i instead.
// Rows are probability rows (non-negative, summing to 1 up to rounding: model::process_logits's
// output); values read are checked to be finite and >= 0, a row is read in full only when a
// token is drawn from it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/model/sampling.h"

namespace mlaspec::spec {

struct Acceptance {
  int32_t num_accepted = 0;     // drafts kept, in [0, num_draft]
  std::vector<int32_t> tokens;  // the kept drafts, then the target's token: num_accepted + 1

  int32_t last() const { return tokens.back(); }
};

// Greedy from the target's argmax per verify position (num_draft + 1 of them).
Result<Acceptance> accept_greedy(std::span<const int32_t> draft,
                                 std::span<const int32_t> target_argmax);
// Greedy from the target's logits rows, [(num_draft + 1) * vocab]. Every row is checked as
// model::check_logits does (NaN / +inf / all -inf are errors), also rows past a rejection: a bad
// value means a broken forward, reported whatever the drafts.
Result<Acceptance> accept_greedy_logits(std::span<const int32_t> draft,
                                        std::span<const float> target_logits, int64_t vocab);
// Greedy from the forward's own argmax (ForwardOptions::argmax_only): the same checks as
// accept_greedy_logits, a -1 id standing for a row check_logits refused; every row is checked.
Result<Acceptance> accept_greedy_ids(std::span<const int32_t> draft,
                                     std::span<const int32_t> target_argmax, int64_t vocab);

struct SampledVerify {
  std::span<const int32_t> draft;       // num_draft tokens
  std::span<const float> target_probs;  // [(num_draft + 1) * vocab]: p per verify position
  std::span<const float> draft_probs;   // empty (one-hot drafts) or [num_draft * vocab]: q
  int64_t vocab = 0;
  uint64_t seed = 0;           // the request's SamplingParams::seed
  int64_t first_position = 0;  // position of the token draft[0] proposes
};

// Rejection sampling as above.
Result<Acceptance> accept_rejection(const SampledVerify& verify);

// From the target's raw logits rows and the request's sampling params: greedy when temperature is
// 0, else rejection sampling on the processed rows (model::process_logits), computed only for the
// rows the step reads; every row's logits are checked first, as in accept_greedy_logits.
Result<Acceptance> accept_logits(std::span<const int32_t> draft,
                                 std::span<const float> target_logits,
                                 std::span<const float> draft_probs, int64_t vocab,
                                 const model::SamplingParams& params, int64_t first_position);

namespace detail {
// Known faults planted into the real acceptor, for the statistical tests only: they show that the
// lossless-sampling test detects a wrong rule with the sample count it uses.
struct PlantedFault {
  double ratio_scale = 1.0;          // accept with min(1, ratio_scale * p / q)
  bool recover_from_target = false;  // on rejection draw from p instead of norm(max(0, p - q))
};
Result<Acceptance> accept_rejection_with_fault(const SampledVerify& verify,
                                               const PlantedFault& fault);
}  // namespace detail

}  // namespace mlaspec::spec
