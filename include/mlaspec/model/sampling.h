// Sampling: from one row of logits to the target distribution p, and from p to a token.
//
// Processing order (temperature > 0), the order of transformers' logits warpers:
//   1. z = logits / temperature
//   2. top-k:  keep every token whose z is >= the k-th largest z (ties at the boundary all kept)
//   3. top-p:  over the top-k survivors' softmax, sorted by probability (ties: lower id first),
//              keep a token iff the mass ranked strictly above it is < top_p (the smallest
//              prefix reaching top_p; the top token always stays)
//   4. min-p:  keep a token iff its probability is >= min_p * (the largest probability)
//   5. renormalise the survivors: p = softmax of the kept z.
// vLLM v1 applies min-p before top-k/top-p; the two orders differ only when min-p and top-k/top-p
// are combined. temperature == 0 is greedy: p is one-hot at the argmax (ties: lowest id) and the
// filters are ignored (the argmax survives all of them anyway).
//
// Non-finite logits: -inf masks a token (probability 0). NaN or +inf anywhere, or a row whose
// logits are all -inf, is kInvalidArgument naming the first offending index; no token is made up.
//
// Randomness is counter-based (Philox4x32-10): the uniform for (seed, position, stream) is a pure
// function of those three values, so the draw for output position n of a request never depends on
// how many tokens were drafted or accepted before, nor on batchmates. Streams keep the uses apart:
//   kSample  the draw that samples position n's token: plain decoding, the bonus token, and the
//            token recovered after a rejection at n all use it (each position is decided once);
//   kAccept  the accept/reject coin of a draft token proposed for position n;
//   kDraft   the drafter's own draws when it samples its proposal for position n.
// A step with no drafts therefore emits exactly the token plain sampling would; with drafts the
// output has the same distribution (docs/spec.md), not the same tokens.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::model {

struct SamplingParams {
  float temperature = 0.0f;  // 0 = greedy; otherwise finite and > 0
  int32_t top_k = 0;         // 0 = off; otherwise >= 1
  float top_p = 1.0f;        // 1 = off; in (0, 1]
  float min_p = 0.0f;        // 0 = off; in [0, 1]
  uint64_t seed = 0;         // keys the request's random streams

  bool greedy() const { return temperature == 0.0f; }
};

// OK, or kInvalidArgument naming the value and its range ("top_p 1.5 is outside (0, 1]").
Status validate(const SamplingParams& params);

// OK if every logit is finite or -inf and at least one is finite; else kInvalidArgument naming the
// first bad index ("logit 17 is nan").
Status check_logits(std::span<const float> logits);

// Index of the largest logit, ties to the lowest id. The row must pass check_logits.
int32_t argmax(std::span<const float> logits);
// argmax of each `vocab`-wide row of `logits`, or -1 for a row check_logits refuses
// (ForwardOptions::argmax_only's rule, which the CUDA runtime's kernel follows).
std::vector<int32_t> argmax_rows(std::span<const float> logits, int64_t vocab);

// Writes the processed target distribution of one row (the rule above) into probs (same size).
// Errors: bad params, bad logits, size mismatch.
Status process_logits(std::span<const float> logits, const SamplingParams& params,
                      std::span<float> probs);
Result<std::vector<float>> target_distribution(std::span<const float> logits,
                                               const SamplingParams& params);

// Rows [i * vocab, (i + 1) * vocab) of logits into the same rows of probs with params[i], rows in
// parallel (core/parallel.h); each row's result is independent of the others.
Status process_logits_rows(std::span<const float> logits, int64_t vocab,
                           std::span<const SamplingParams> params, std::span<float> probs);

// Inverse CDF in id order: the first token whose cumulative weight exceeds u * total, skipping
// zero weights; never returns a token of weight 0. Weights must be finite, >= 0, with a positive
// sum; u in [0, 1).
int32_t sample_from(std::span<const float> weights, double u);
int32_t sample_from(std::span<const double> weights, double u);

enum class RandomStream : uint32_t { kSample = 0, kAccept = 1, kDraft = 2 };

// Philox4x32-10 (Salmon et al., SC'11), the Random123 definition.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// Uniform double in [0, 1) (53 bits) for (seed, position, stream, index); index numbers extra
// draws a user needs at one position (0 for the engine's own uses).
double random_uniform(uint64_t seed, int64_t position, RandomStream stream, uint32_t index = 0);

// Plain decoding of position `position`: greedy argmax, or a draw from the processed distribution
// with random_uniform(seed, position, kSample).
Result<int32_t> sample_token(std::span<const float> logits, const SamplingParams& params,
                             int64_t position);

}  // namespace mlaspec::model
