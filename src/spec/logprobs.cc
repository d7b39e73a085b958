#include "mlaspec/spec/logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace mlaspec::spec {

TokenLogprobs token_logprobs(std::span<const float> logits, int32_t token, int32_t top_k) {
  float max = -std::numeric_limits<float>::infinity();
  for (const float x : logits) max = std::max(max, x);
  double sum = 0.0;
  for (const float x : logits) sum += std::exp(static_cast<double>(x) - max);
  // log p(t) = x_t - (max + log sum): one offset for the whole row.
  const double offset = static_cast<double>(max) + std::log(sum);
  auto logprob = [&](int32_t t) {
    return TokenLogprob{t, static_cast<float>(static_cast<double>(logits[t]) - offset)};
  };
  TokenLogprobs out;
  out.chosen = logprob(token);
  const size_t k = std::min(static_cast<size_t>(std::max(top_k, 0)), logits.size());
  if (k == 0) return out;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  auto more_likely = [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  };
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    more_likely);
  out.top.reserve(k);
  for (size_t i = 0; i < k; ++i) out.top.push_back(logprob(ids[i]));
  return out;
}

}  // namespace mlaspec::spec
