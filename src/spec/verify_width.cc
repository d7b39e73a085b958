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
  const int hi = std::max(0, std::min<int>(max_draft, static_cast<int>(confidence.size())));
  if (policy.mode == VerifyWidthPolicy::Mode::kFixed) return hi;
  int best = 0;
  double best_rate = 1.0 / policy.cost.cost(1);
  for (int n = 1; n <= hi; ++n) {
    const double rate = (expected_accepted(confidence, n) + 1.0) / policy.cost.cost(n + 1);
    if (rate > best_rate) {
      best = n;
      best_rate = rate;
    }
  }
  return best;
}

std::vector<size_t> verify_order(std::span<const int64_t> q_lens) {
  std::vector<size_t> order(q_lens.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return q_lens[a] < q_lens[b]; });
  return order;
}

}  // namespace mlaspec::spec
