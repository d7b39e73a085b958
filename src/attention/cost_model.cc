// Cost model: features, the non-negative least-squares fit, lookup and crossover.
#include "mlaspec/attention/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <sstream>

namespace mlaspec::attn {

std::string_view kv_read_pattern_name(KvReadPattern p) {
  return p == KvReadPattern::kOncePerRequest ? "once per request" : "once per query token";
}

CostFeatures cost_features(const VerifyShape& shape, KvReadPattern pattern) {
  const double tokens = static_cast<double>(shape.total_kv);
  const double passes = pattern == KvReadPattern::kOncePerQueryToken ? shape.q_len : 1;
  CostFeatures f;
  f.kv_mb = tokens * kHeadDimQK * dtype_size(shape.kv_dtype) * passes / 1e6;
  // PERF.md: 2 * q_len * H * (576 + 512) per KV token, no causal discount.
  f.gflops = 2.0 * shape.q_len * shape.num_heads * (kHeadDimQK + kHeadDimV) * tokens / 1e9;
  return f;
}

// ---- Fit
// ------------------------------------------------------------------------------------------

namespace {

constexpr int kTerms = 3;

std::array<double, kTerms> row_of(const CostFeatures& f) {
  return {1.0, f.kv_mb, f.gflops};
}

// Solves the k x k system a x = b in place (Gaussian elimination, partial pivoting). False when a
// pivot is negligible against the matrix scale: the chosen columns are (nearly) collinear, e.g.
// rowwise's KV bytes and FLOPs both grow as q_len * S.
bool solve(std::vector<std::vector<double>>& a, std::vector<double>& b) {
  const int n = static_cast<int>(b.size());
  double scale = 0;
  for (const auto& r : a)
    for (double v : r) scale = std::max(scale, std::abs(v));
  if (scale == 0) return false;
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[p][c])) p = r;
    if (std::abs(a[p][c]) < 1e-10 * scale) return false;
    std::swap(a[p], a[c]);
    std::swap(b[p], b[c]);
    for (int r = c + 1; r < n; ++r) {
      const double m = a[r][c] / a[c][c];
      for (int k = c; k < n; ++k) a[r][k] -= m * a[c][k];
      b[r] -= m * b[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    double s = b[c];
    for (int k = c + 1; k < n; ++k) s -= a[c][k] * b[k];
    b[c] = s / a[c][c];
  }
  return true;
}

}  // namespace

Result<CostFit> fit_cost_terms(std::span<const CostSample> samples) {
  if (samples.size() < static_cast<size_t>(kTerms)) {
    return invalid_argument("cost fit needs at least 3 measurements, got " +
                            std::to_string(samples.size()));
  }
  // Weighted rows: minimising sum ((x.c - t) / t)^2 is ordinary least squares on rows x / t
  // against 1. Columns are scaled to unit RMS so the normal equations stay well conditioned
  // (fixed ~1, KV MB ~1e3, GFLOPs ~1e2).
  const size_t n = samples.size();
  std::vector<std::array<double, kTerms>> rows(n);
  std::array<double, kTerms> col_rms{};
  for (size_t i = 0; i < n; ++i) {
    const CostSample& s = samples[i];
    if (!(s.time_us > 0) || !std::isfinite(s.time_us) || !std::isfinite(s.features.kv_mb) ||
        !std::isfinite(s.features.gflops) || s.features.kv_mb < 0 || s.features.gflops < 0) {
      return invalid_argument("cost fit: measurement " + std::to_string(i) +
                              " is not usable (time_us must be > 0, features finite and >= 0)");
    }
    const auto x = row_of(s.features);
    for (int k = 0; k < kTerms; ++k) {
      rows[i][k] = x[k] / s.time_us;
      col_rms[k] += rows[i][k] * rows[i][k];
    }
  }
  for (double& v : col_rms) v = std::sqrt(v / static_cast<double>(n));

  double best_sse = std::numeric_limits<double>::infinity();
  std::array<double, kTerms> best{};
  int best_terms = kTerms + 1;
  // Every non-empty subset of the terms: the unconstrained solution on a subset, kept when all
  // its coefficients are >= 0. The NNLS optimum is the best such solution (KKT on 3 variables).
  for (int mask = 1; mask < (1 << kTerms); ++mask) {
    std::vector<int> cols;
    for (int k = 0; k < kTerms; ++k)
      if ((mask >> k) & 1 && col_rms[k] > 0) cols.push_back(k);
    if (cols.size() != static_cast<size_t>(__builtin_popcount(mask))) continue;
    const int m = static_cast<int>(cols.size());
    std::vector<std::vector<double>> ata(m, std::vector<double>(m, 0.0));
    std::vector<double> atb(m, 0.0);
    for (size_t i = 0; i < n; ++i) {
      for (int a = 0; a < m; ++a) {
        const double xa = rows[i][cols[a]] / col_rms[cols[a]];
        atb[a] += xa;
        for (int b = 0; b < m; ++b) ata[a][b] += xa * rows[i][cols[b]] / col_rms[cols[b]];
      }
    }
    if (!solve(ata, atb)) continue;
    std::array<double, kTerms> coef{};
    bool nonneg = true;
    for (int a = 0; a < m; ++a) {
      coef[cols[a]] = atb[a] / col_rms[cols[a]];
      if (coef[cols[a]] < 0) nonneg = false;
    }
    if (!nonneg) continue;
    double sse = 0;
    for (size_t i = 0; i < n; ++i) {
      double r = -1.0;
      for (int k = 0; k < kTerms; ++k) r += coef[k] * rows[i][k];
      sse += r * r;
    }
    // Prefer fewer terms when the fit is as good (collinear data): simpler profiles.
    const bool better =
        sse < best_sse * (1 - 1e-9) || (sse <= best_sse * (1 + 1e-9) && m < best_terms);
    if (better) {
      best_sse = sse;
      best = coef;
      best_terms = m;
    }
  }
  if (!std::isfinite(best_sse)) {
    return invalid_argument(
        "cost fit: the measurements determine no non-negative model "
        "(all features zero?)");
  }
  CostFit fit;
  fit.terms = CostTerms{best[0], best[1], best[2]};
  fit.points = static_cast<int>(n);
  double sum_sq = 0;
  for (const CostSample& s : samples) {
    const double rel = fit.terms.estimate_us(s.features) / s.time_us - 1.0;
    sum_sq += rel * rel;
    fit.max_rel_err = std::max(fit.max_rel_err, std::abs(rel));
  }
  fit.rms_rel_err = std::sqrt(sum_sq / static_cast<double>(n));
  return fit;
}

// ---- CostModel
// ------------------------------------------------------------------------------------

const CostEntry* CostModel::find(std::string_view backend, DType kv_dtype, int num_heads) const {
  const CostEntry* best = nullptr;
  double best_dist = std::numeric_limits<double>::infinity();
  const double lh = std::log2(std::max(num_heads, 1));
  for (const CostEntry& e : entries_) {
    if (e.backend != backend || e.kv_dtype != kv_dtype) continue;
    // heads = 0 (fitted over all H) ranks behind every measured H.
    const double dist = e.heads > 0 ? std::abs(std::log2(e.heads) - lh) : 1e9;
    if (dist < best_dist - 1e-12 ||
        (std::abs(dist - best_dist) <= 1e-12 && best && e.heads < best->heads)) {
      best = &e;
      best_dist = dist;
    }
  }
  return best;
}

std::optional<double> CostModel::estimate_us(std::string_view backend, KvReadPattern pattern,
                                             const VerifyShape& shape) const {
  const CostEntry* e = find(backend, shape.kv_dtype, shape.num_heads);
  if (!e) return std::nullopt;
  return e->terms.estimate_us(cost_features(shape, pattern));
}

std::string Crossover::to_string() const {
  if (!has_model) return "no cost model for both backends";
  if (seq_len == 0) return short_winner + " cheaper at every S";
  return short_winner + " below S=" + std::to_string(seq_len) + ", " + long_winner + " from there";
}

Crossover find_crossover(const CostModel& model, std::string_view backend_a, KvReadPattern pat_a,
                         std::string_view backend_b, KvReadPattern pat_b, VerifyShape shape,
                         int64_t max_seq_len) {
  Crossover out;
  const int64_t lo = std::max<int64_t>(shape.q_len, 1);
  auto at = [&](std::string_view name, KvReadPattern pat, int64_t s) {
    shape.max_seq_len = s;
    shape.total_kv = s * shape.batch;
    return model.estimate_us(name, pat, shape);
  };
  auto a_lo = at(backend_a, pat_a, lo), b_lo = at(backend_b, pat_b, lo);
  auto a_hi = at(backend_a, pat_a, max_seq_len), b_hi = at(backend_b, pat_b, max_seq_len);
  if (!a_lo || !b_lo || !a_hi || !b_hi) return out;
  out.has_model = true;
  // cost_x(S) is linear in S: compare the difference at both ends.
  const double d_lo = *a_lo - *b_lo, d_hi = *a_hi - *b_hi;  // > 0: B cheaper
  const std::string a(backend_a), b(backend_b);
  if ((d_lo <= 0) == (d_hi <= 0)) {
    out.short_winner = d_lo <= 0 ? a : b;
    out.long_winner = out.short_winner;
    return out;
  }
  out.short_winner = d_lo <= 0 ? a : b;
  out.long_winner = d_lo <= 0 ? b : a;
  // Binary search for the first S where the long-context winner is strictly cheaper (exact even
  // though the estimates are doubles: monotone in S).
  auto long_cheaper = [&](int64_t s) {
    const double da = *at(backend_a, pat_a, s), db = *at(backend_b, pat_b, s);
    return out.long_winner == b ? db < da : da < db;
  };
  int64_t l = lo, h = max_seq_len;  // !long_cheaper(l), long_cheaper(h)
  while (h - l > 1) {
    const int64_t mid = l + (h - l) / 2;
    (long_cheaper(mid) ? h : l) = mid;
  }
  out.seq_len = h;
  return out;
}

}  // namespace mlaspec::attn
