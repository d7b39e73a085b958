#include "mlaspec/model/sampling.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <string>

#include "mlaspec/core/parallel.h"

namespace mlaspec::model {
namespace {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// Probability weights of the kept tokens, before normalisation, computed in double so that the
// filters' comparisons do not depend on float rounding of the running sums.
void fill_weights(std::span<const float> logits, const SamplingParams& params,
                  std::vector<double>& w) {
  const size_t vocab = logits.size();
  const double inv_t = 1.0 / static_cast<double>(params.temperature);
  w.resize(vocab);
  size_t live = 0;
  for (size_t i = 0; i < vocab; ++i) {
    w[i] = static_cast<double>(logits[i]) * inv_t;  // -inf stays -inf: masked
    live += w[i] != -INFINITY;
  }
  if (params.top_k > 0 && static_cast<size_t>(params.top_k) < live) {
    std::vector<double> vals;
    vals.reserve(live);
    for (double z : w) {
      if (z != -INFINITY) vals.push_back(z);
    }
    std::nth_element(vals.begin(), vals.begin() + (params.top_k - 1), vals.end(),
                     std::greater<double>());
    const double kth = vals[params.top_k - 1];
    for (double& z : w) {
      if (z < kth) z = -INFINITY;
    }
  }

  const double zmax = *std::max_element(w.begin(), w.end());
  double total = 0.0;
  for (double& z : w) {
    z = std::exp(z - zmax);  // the largest becomes exactly 1; masked ones exactly 0
    total += z;
  }

  if (params.top_p < 1.0f) {
    std::vector<int32_t> order;
    order.reserve(vocab);
    for (size_t i = 0; i < vocab; ++i) {
      if (w[i] > 0.0) order.push_back(static_cast<int32_t>(i));
    }
    // A strict total order (weight descending, then id), so selecting the first c by nth_element
    // and sorting them gives exactly the head of a full sort. Typical rows reach top_p within a
    // few hundred tokens; c grows until the prefix reaches it.
    const auto before = [&](int32_t a, int32_t b) { return w[a] != w[b] ? w[a] > w[b] : a < b; };
    const double limit = static_cast<double>(params.top_p) * total;
    size_t keep = 0;
    for (size_t c = std::min<size_t>(order.size(), 256);; c = std::min(order.size(), c * 4)) {
      std::nth_element(order.begin(), order.begin() + (c - 1), order.end(), before);
      std::sort(order.begin(), order.begin() + c, before);
      double above = 0.0;
      keep = 0;
      while (keep < c && (keep == 0 || above < limit)) above += w[order[keep++]];
      if (keep < c || above >= limit || c == order.size()) break;
    }
    for (size_t j = keep; j < order.size(); ++j) w[order[j]] = 0.0;
  }

  if (params.min_p > 0.0f) {
    const double floor = static_cast<double>(params.min_p);  // relative to the largest, 1
    for (double& v : w) {
      if (v < floor) v = 0.0;
    }
  }
}

template <typename T>
int32_t sample_impl(std::span<const T> weights, double u) {
  double total = 0.0;
  for (T v : weights) total += static_cast<double>(v);
  const double target = u * total;
  double cum = 0.0;
  int32_t last = -1;
  for (size_t i = 0; i < weights.size(); ++i) {
    const double v = static_cast<double>(weights[i]);
    if (v <= 0.0) continue;
    cum += v;
    last = static_cast<int32_t>(i);
    if (cum > target) return last;
  }
  // Rounding can leave the sum a hair short of u * total; the last positive token is the limit.
  return last;
}

}  // namespace

Status validate(const SamplingParams& p) {
  if (!std::isfinite(p.temperature) || p.temperature < 0.0f) {
    return invalid_argument("temperature " + fmt(p.temperature) +
                            " is not a finite value >= 0 (0 means greedy)");
  }
  if (p.top_k < 0) {
    return invalid_argument("top_k " + std::to_string(p.top_k) + " is negative (0 turns it off)");
  }
  if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) {
    return invalid_argument("top_p " + fmt(p.top_p) + " is outside (0, 1] (1 turns it off)");
  }
  if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) {
    return invalid_argument("min_p " + fmt(p.min_p) + " is outside [0, 1] (0 turns it off)");
  }
  return Status::Ok();
}

Status check_logits(std::span<const float> logits) {
  if (logits.empty()) return invalid_argument("logits row is empty (vocab 0)");
  bool any_finite = false;
  for (size_t i = 0; i < logits.size(); ++i) {
    const float v = logits[i];
    if (std::isnan(v)) return invalid_argument("logit " + std::to_string(i) + " is nan");
    if (v == INFINITY) return invalid_argument("logit " + std::to_string(i) + " is +inf");
    any_finite = any_finite || v != -INFINITY;
  }
  if (!any_finite) {
    return invalid_argument("all " + std::to_string(logits.size()) +
                            " logits are -inf: no token can be chosen");
  }
  return Status::Ok();
}

int32_t argmax(std::span<const float> logits) {
  int32_t best = 0;
  for (size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = static_cast<int32_t>(i);
  }
  return best;
}

std::vector<int32_t> argmax_rows(std::span<const float> logits, int64_t vocab) {
  std::vector<int32_t> ids;
  if (vocab <= 0) return ids;
  const size_t n = static_cast<size_t>(vocab);
  for (size_t r = 0; r + n <= logits.size(); r += n) {
    const std::span<const float> row = logits.subspan(r, n);
    ids.push_back(check_logits(row).ok() ? argmax(row) : -1);
  }
  return ids;
}

Status process_logits(std::span<const float> logits, const SamplingParams& params,
                      std::span<float> probs) {
  MLASPEC_RETURN_IF_ERROR(validate(params));
  MLASPEC_RETURN_IF_ERROR(check_logits(logits));
  if (probs.size() != logits.size()) {
    return invalid_argument("probs has " + std::to_string(probs.size()) + " entries, logits " +
                            std::to_string(logits.size()));
  }
  if (params.greedy()) {
    std::fill(probs.begin(), probs.end(), 0.0f);
    probs[argmax(logits)] = 1.0f;
    return Status::Ok();
  }
  std::vector<double> w;
  fill_weights(logits, params, w);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (size_t i = 0; i < w.size(); ++i) probs[i] = static_cast<float>(w[i] / total);
  return Status::Ok();
}

Result<std::vector<float>> target_distribution(std::span<const float> logits,
                                               const SamplingParams& params) {
  std::vector<float> probs(logits.size());
  MLASPEC_RETURN_IF_ERROR(process_logits(logits, params, probs));
  return probs;
}

Status process_logits_rows(std::span<const float> logits, int64_t vocab,
                           std::span<const SamplingParams> params, std::span<float> probs) {
  const int64_t rows = static_cast<int64_t>(params.size());
  if (vocab <= 0) return invalid_argument("vocab " + std::to_string(vocab) + " is not positive");
  if (static_cast<int64_t>(logits.size()) != rows * vocab ||
      static_cast<int64_t>(probs.size()) != rows * vocab) {
    return invalid_argument("logits (" + std::to_string(logits.size()) + ") and probs (" +
                            std::to_string(probs.size()) + ") must both hold " +
                            std::to_string(rows) + " rows x vocab " + std::to_string(vocab));
  }
  std::vector<Status> status(rows);
  parallel_for(0, rows, [&](int64_t r) {
    status[r] = process_logits(logits.subspan(r * vocab, vocab), params[r],
                               probs.subspan(r * vocab, vocab));
  });
  for (int64_t r = 0; r < rows; ++r) {
    if (!status[r].ok()) return status[r].with_context("row " + std::to_string(r));
  }
  return Status::Ok();
}

int32_t sample_from(std::span<const float> weights, double u) {
  return sample_impl(weights, u);
}
int32_t sample_from(std::span<const double> weights, double u) {
  return sample_impl(weights, u);
}

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint64_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] += kW0;
      k[1] += kW1;
    }
    const uint64_t p0 = kM0 * c[0];
    const uint64_t p1 = kM1 * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

double random_uniform(uint64_t seed, int64_t position, RandomStream stream, uint32_t index) {
  const uint64_t pos = static_cast<uint64_t>(position);
  const std::array<uint32_t, 4> r =
      philox4x32_10({static_cast<uint32_t>(pos), static_cast<uint32_t>(pos >> 32),
                     static_cast<uint32_t>(stream), index},
                    {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  // 27 + 26 bits: the standard 53-bit construction, exactly representable, in [0, 1).
  const uint64_t bits = (uint64_t{r[0] >> 5} << 26) | (r[1] >> 6);
  return static_cast<double>(bits) * 0x1.0p-53;
}

Result<int32_t> sample_token(std::span<const float> logits, const SamplingParams& params,
                             int64_t position) {
  MLASPEC_RETURN_IF_ERROR(validate(params));
  MLASPEC_RETURN_IF_ERROR(check_logits(logits));
  if (params.greedy()) return argmax(logits);
  // Through the float distribution, exactly as the acceptor samples bonus and recovered tokens.
  std::vector<float> probs(logits.size());
  MLASPEC_RETURN_IF_ERROR(process_logits(logits, params, probs));
  return sample_from(std::span<const float>(probs),
                     random_uniform(params.seed, position, RandomStream::kSample));
}

}  // namespace mlaspec::model
