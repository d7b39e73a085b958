// The verify-width policy (include/mlaspec/spec/verify_width.h).
#include "mlaspec/spec/verify_width.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace mlaspec::spec {

Status validate(const VerifyWidthPolicy& p) {
  if (!std::isfinite(p.cost.fixed) || p.cost.fixed <= 0 || !std::isfinite(p.cost.per_token) ||
      p.cost.per_token < 0) {
    return invalid_argument("verify width: cost model fixed " + std::to_string(p.cost.fixed) +
                            " must be > 0 and per_token " + std::to_string(p.cost.per_token) +
                            " >= 0 (both finite)");
  }
  return Status::Ok();
}

double expected_accepted(std::span<const float> confidence, int num_draft) {
  double sum = 0.0, prod = 1.0;
  const int n = std::min<int>(num_draft, static_cast<int>(confidence.size()));
  for (int k = 0; k < n; ++k) {
    prod *= std::clamp(static_cast<double>(confidence[static_cast<size_t>(k)]), 0.0, 1.0);
    sum += prod;
  }
  return sum;
}

int choose_num_draft(std::span<const float> confidence, int max_draft,
                     const VerifyWidthPolicy& policy) {
  const std::span<const float> one[] = {confidence};
  const int max_one[] = {max_draft};
  return choose_num_drafts(one, max_one, policy).front();
}

std::vector<int> choose_num_drafts(std::span<const std::span<const float>> confidences,
                                   std::span<const int> max_drafts,
                                   const VerifyWidthPolicy& policy) {
  const size_t B = confidences.size();
  std::vector<int> hi(B), width(B, 0);
  for (size_t b = 0; b < B; ++b) {
    hi[b] = std::max(0, std::min<int>(b < max_drafts.size() ? max_drafts[b] : 0,
                                      static_cast<int>(confidences[b].size())));
  }
  if (policy.mode == VerifyWidthPolicy::Mode::kFixed) return hi;
  // Every (request, draft) with its yield p_bk, largest first; within a request k ascending
  // (its p_bk do not rise with k), so a prefix of this order is a width per request.
  struct Item {
    double gain;
    size_t b;
    int k;
  };
  std::vector<Item> items;
  for (size_t b = 0; b < B; ++b) {
    double p = 1.0;
    for (int k = 0; k < hi[b]; ++k) {
      p *= std::clamp(static_cast<double>(confidences[b][static_cast<size_t>(k)]), 0.0, 1.0);
      items.push_back({p, b, k});
    }
  }
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& x, const Item& y) { return x.gain > y.gain; });
  double yield = static_cast<double>(B);  // each request's own token
  double cost = policy.cost.fixed + policy.cost.per_token * static_cast<double>(B);
  for (const Item& it : items) {
    // Strictly better only: on a tie the fewer drafts. Items of one request come in k order, so
    // taking this one extends request b's width by one.
    if (it.k != width[it.b]) continue;  // an earlier draft of b was not taken
    if (it.gain * cost <= policy.cost.per_token * yield) break;
    yield += it.gain;
    cost += policy.cost.per_token;
    width[it.b] = it.k + 1;
  }
  return width;
}

std::vector<size_t> verify_order(std::span<const int64_t> q_lens) {
  std::vector<size_t> order(q_lens.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return q_lens[a] < q_lens[b]; });
  return order;
}

}  // namespace mlaspec::spec
