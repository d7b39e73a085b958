// Log-probabilities of emitted tokens under the target model's distribution, for the OpenAI API's
// `logprobs` (docs/spec.md, "Engine"; docs/serve.md).
//
//   TokenLogprobs lp = token_logprobs(row, token, /*top_k=*/5);   // lp.chosen, lp.top[0..4]
//
// The distribution is the model's own: log_softmax of the raw logits row the acceptor read, at
// temperature 1 and before top-k / top-p / min-p (what vLLM calls raw logprobs), so a token's
// value does not depend on the request's sampling parameters. The logits are f32; the
// log-sum-exp is accumulated in double and the results rounded to f32.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mlaspec::spec {

// OpenAI's bound on top_logprobs (and vLLM's default max_logprobs).
inline constexpr int32_t kMaxTopLogprobs = 20;

struct TokenLogprob {
  int32_t token = 0;
  float logprob = 0.0f;  // -inf for a masked (-inf) logit
};

struct TokenLogprobs {
  TokenLogprob chosen;            // the emitted token
  std::vector<TokenLogprob> top;  // the top_k most likely, most likely first (ties: lower id)
};

// `logits` is one row that passed model::check_logits (finite or -inf, one finite at least);
// token in [0, logits.size()); top_k in [0, kMaxTopLogprobs] (clamped to the row's size).
TokenLogprobs token_logprobs(std::span<const float> logits, int32_t token, int32_t top_k);

}  // namespace mlaspec::spec
