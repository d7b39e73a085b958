// Cost model: features, the non-negative least-squares fit, lookup and crossover.
#include "mlaspec/attention/cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

namespace mlaspec::attn {

std::string_view kv_read_pattern_name(KvReadPattern p) {
  return p == KvReadPattern::kOncePerRequest ? "once per request" : "once per query token";
}

std::string kv_math_label(DType kv_dtype, bool fp8_math) {
  return fp8_math ? "fp8math" : std::string(kv_dtype_label(kv_dtype));
}

CostFeatures cost_features(const VerifyShape& shape, KvReadPattern pattern) {
  const double tokens = static_cast<double>(shape.total_kv);
  const double passes = pattern == KvReadPattern::kOncePerQueryToken ? shape.q_len : 1;
  CostFeatures f;
  f.kv_mb = tokens * kv_row_bytes(shape.kv_dtype) * passes / 1e6;
  // PERF.md: 2 * q_len * H * (576 + 512) per KV token, no causal discount.
  f.gflops = 2.0 * shape.q_len * shape.num_heads * (kHeadDimQK + kHeadDimV) * tokens / 1e9;
  return f;
}

// ---- Fit ----------------------------------------------------------------------------------------

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

// ---- CostModel ----------------------------------------------------------------------------------

std::optional<double> interpolate_curve(std::span<const CurvePoint> curve, int64_t seq_len) {
  if (curve.empty() || seq_len < curve.front().seq_len || seq_len > curve.back().seq_len) {
    return std::nullopt;
  }
  // First point with S >= seq_len.
  auto hi = std::lower_bound(curve.begin(), curve.end(), seq_len,
                             [](const CurvePoint& p, int64_t s) { return p.seq_len < s; });
  if (hi->seq_len == seq_len) return hi->us;  // exact at measured points
  auto lo = hi - 1;
  if (lo->us == hi->us) return lo->us;  // flat: exact, no rounding
  const double t = (std::log(static_cast<double>(seq_len)) - std::log(double(lo->seq_len))) /
                   (std::log(double(hi->seq_len)) - std::log(double(lo->seq_len)));
  const double v = std::exp(std::log(lo->us) + t * (std::log(hi->us) - std::log(lo->us)));
  // Never outside the neighbours, rounding included (keeps it monotone between them).
  return std::clamp(v, std::min(lo->us, hi->us), std::max(lo->us, hi->us));
}

BatchGridAxes batch_grid_axes(std::span<const BatchPoint> grid) {
  BatchGridAxes a;
  std::vector<std::pair<int, int64_t>> cells;
  for (const BatchPoint& p : grid) {
    a.batches.push_back(p.batch);
    a.seq_lens.push_back(p.seq_len);
    cells.emplace_back(p.batch, p.seq_len);
  }
  auto unique_sorted = [](auto& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  };
  unique_sorted(a.batches);
  unique_sorted(a.seq_lens);
  unique_sorted(cells);
  a.complete = !grid.empty() && cells.size() == grid.size() &&
               a.batches.size() * a.seq_lens.size() == grid.size();
  return a;
}

std::optional<double> interpolate_batch_grid(std::span<const BatchPoint> grid, int batch,
                                             double seq_len) {
  if (batch < 1 || !(seq_len > 0)) return std::nullopt;
  for (const BatchPoint& p : grid) {
    if (p.batch < 1 || p.seq_len < 1 || !(p.us > 0)) return std::nullopt;
  }
  const BatchGridAxes axes = batch_grid_axes(grid);
  if (!axes.complete) return std::nullopt;  // empty, a repeat or a hole
  const std::vector<int>& bs = axes.batches;
  const std::vector<int64_t>& ss = axes.seq_lens;
  if (batch < bs.front() || batch > bs.back() || seq_len < static_cast<double>(ss.front()) ||
      seq_len > static_cast<double>(ss.back())) {
    return std::nullopt;
  }
  auto at = [&](int b, int64_t s) {
    for (const BatchPoint& p : grid)
      if (p.batch == b && p.seq_len == s) return p.us;
    return 0.0;  // unreachable: the grid is a full rectangle
  };
  // The bracketing grid values and the log-space weight of the upper one (0 on a grid value).
  auto bracket = [](const auto& v, double x, size_t* lo, double* w) {
    size_t hi = 0;
    while (hi + 1 < v.size() && static_cast<double>(v[hi]) < x) ++hi;
    *lo = hi;
    *w = 0;
    if (static_cast<double>(v[hi]) == x || hi == 0) return;
    *lo = hi - 1;
    *w = (std::log(x) - std::log(double(v[hi - 1]))) /
         (std::log(double(v[hi])) - std::log(double(v[hi - 1])));
  };
  size_t bl, sl;
  double wb, ws;
  bracket(bs, static_cast<double>(batch), &bl, &wb);
  bracket(ss, seq_len, &sl, &ws);
  const size_t bh = std::min(bl + 1, bs.size() - 1), sh = std::min(sl + 1, ss.size() - 1);
  const double c00 = at(bs[bl], ss[sl]), c01 = at(bs[bl], ss[sh]);
  const double c10 = at(bs[bh], ss[sl]), c11 = at(bs[bh], ss[sh]);
  if (wb == 0 && ws == 0) return c00;  // exact at measured points
  const double v = std::exp((1 - wb) * ((1 - ws) * std::log(c00) + ws * std::log(c01)) +
                            wb * ((1 - ws) * std::log(c10) + ws * std::log(c11)));
  const double lo = std::min({c00, c01, c10, c11}), hi = std::max({c00, c01, c10, c11});
  return std::clamp(v, lo, hi);  // never outside the surrounding points, rounding included
}

const CostEntry* CostModel::find(std::string_view backend, DType kv_dtype, int num_heads, int q_len,
                                 bool deterministic, bool fp8_math) const {
  // 0. The asked math's entries only; of those, the asked mode's if this backend and dtype have
  // any, else the other mode's.
  auto same_math = [&](const CostEntry& e) {
    return e.backend == backend && e.kv_dtype == kv_dtype && e.fp8_math == fp8_math;
  };
  bool mode = deterministic;
  if (std::none_of(entries_.begin(), entries_.end(), [&](const CostEntry& e) {
        return same_math(e) && e.deterministic == deterministic;
      })) {
    mode = !deterministic;
  }
  auto candidate = [&](const CostEntry& e) { return same_math(e) && e.deterministic == mode; };
  // 1. The H nearest in log2 (ties: the smaller; heads = 0 only without a measured H).
  int best_heads = -1;
  double best_dist = std::numeric_limits<double>::infinity();
  const double lh = std::log2(std::max(num_heads, 1));
  for (const CostEntry& e : entries_) {
    if (!candidate(e)) continue;
    const double dist = e.heads > 0 ? std::abs(std::log2(e.heads) - lh) : 1e9;
    if (dist < best_dist - 1e-12 || (std::abs(dist - best_dist) <= 1e-12 && e.heads < best_heads)) {
      best_heads = e.heads;
      best_dist = dist;
    }
  }
  if (best_heads < 0) return nullptr;
  // 2. Among that H's entries, the q_len nearest (ties: the larger; q_len = 0 only without a
  // measured q_len, or when q_len 0 = "any" is asked for).
  const CostEntry* best = nullptr;
  double best_q = std::numeric_limits<double>::infinity();
  for (const CostEntry& e : entries_) {
    if (!candidate(e) || e.heads != best_heads) continue;
    double dist;
    if (q_len <= 0) {
      dist = e.q_len == 0 ? -1.0 : e.q_len;  // "any": q_len-0 entries, else the smallest
    } else {
      dist = e.q_len > 0 ? std::abs(e.q_len - q_len) : 1e9;
    }
    if (dist < best_q || (dist == best_q && best && e.q_len > best->q_len)) {
      best = &e;
      best_q = dist;
    }
  }
  return best;
}

namespace {

// A shape's work at the roofline, in bytes at the machine's balance: the larger of its KV bytes
// and its FLOPs over the balance. Only ratios of it are used (one shape's work against another's),
// so what matters is the balance alone: PERF.md's measured H200 ceilings, 757 TFLOP/s over 4.21
// TB/s (other Hopper parts are within 1.5x of it).
constexpr double kFlopsPerByte = 757e12 / 4.21e12;

double roofline_work(const CostFeatures& f) {
  return std::max(f.kv_mb * 1e6, f.gflops * 1e9 / kFlopsPerByte);
}

// An estimate `at_us` made for a shape of roofline work `w_at`, carried to a shape of work `w`:
// the part beyond the fixed cost scales with the work.
double scaled_by_work(double at_us, double fixed_us, double w_at, double w) {
  if (!(w_at > 0)) return at_us;
  return fixed_us + std::max(0.0, at_us - fixed_us) * (w / w_at);
}

// The estimate of `shape` from entry `e` (find()'s for the shape's dtype), as estimate_us says.
double estimate_with(const CostEntry* e, KvReadPattern pattern, const VerifyShape& shape) {
  // The entry's own H and q_len, at the call's batch and context.
  VerifyShape own = shape;
  if (e->heads > 0) own.num_heads = e->heads;
  if (e->q_len > 0) own.q_len = e->q_len;
  double at_own = e->terms.estimate_us(cost_features(own, pattern));
  if (shape.batch == 1 && !e->curve.empty()) {
    if (auto c = interpolate_curve(e->curve, shape.max_seq_len)) at_own = *c;
  } else if (shape.batch > 1 && !e->batch.empty()) {
    const double mean_s = static_cast<double>(shape.total_kv) / shape.batch;
    if (auto g = interpolate_batch_grid(e->batch, shape.batch, mean_s)) at_own = *g;
  }
  if (own.num_heads == shape.num_heads && own.q_len == shape.q_len) return at_own;
  // Another H or q_len: the entry's cost beyond its fixed part scales with the work at the
  // roofline (KV bytes or FLOPs, whichever bounds each shape). The fit cannot say which of the
  // two its slope stands for: at one (H, q_len) both grow with S together and the fit keeps one
  // of them, so scaling by the fitted terms priced cuda_fold at H = 128, q_len 1 like q_len 2
  // (its fit put the cost on the KV bytes, which q_len does not change), 2x too high.
  return scaled_by_work(at_own, e->terms.fixed_us, roofline_work(cost_features(own, pattern)),
                        roofline_work(cost_features(shape, pattern)));
}

}  // namespace

const CostEntry* CostModel::entry_for(std::string_view backend, const VerifyShape& shape) const {
  if (shape.fp8_math) {
    // Calibrated fp8-math entries, else the exact entry the estimate is derived from.
    if (const CostEntry* e = find(backend, shape.kv_dtype, shape.num_heads, shape.q_len,
                                  shape.deterministic, /*fp8_math=*/true)) {
      return e;
    }
    VerifyShape exact = shape;
    exact.fp8_math = false;
    return entry_for(backend, exact);
  }
  const CostEntry* e =
      find(backend, shape.kv_dtype, shape.num_heads, shape.q_len, shape.deterministic);
  if (e || shape.kv_dtype != DType::kFP8Tile) return e;
  return find(backend, DType::kFP8E4M3, shape.num_heads, shape.q_len, shape.deterministic);
}

std::optional<CostEstimate> CostModel::estimate(std::string_view backend, KvReadPattern pattern,
                                                const VerifyShape& shape) const {
  const CostEntry* e = entry_for(backend, shape);
  if (!e) return std::nullopt;
  if (shape.fp8_math && !e->fp8_math) {
    // fp8 math (VerifyOptions::fp8_math) without fp8-math entries for this backend (a profile
    // calibrated before calibrate measured the mode, or with --no-fp8-math): the exact-math
    // estimate of the same fp8 shape, its time beyond the entry's fixed part scaled by the ratio
    // of the two shapes' roofline work with the FLOPs at e4m3's tensor rate, twice the f16 rate
    // fp8_e4m3's exact kernels run at: the MMA time halved where the shape is tensor-bound,
    // unchanged where it is memory-bound (the same KV bytes). The H100 measured the mode at about
    // bf16's time where tensor-bound: an underprice, hence calibrate's fp8-math entries.
    VerifyShape exact = shape;
    exact.fp8_math = false;
    std::optional<CostEstimate> base = estimate(backend, pattern, exact);
    if (!base) return std::nullopt;
    const CostFeatures f = cost_features(exact, pattern);
    const double w = roofline_work(f);
    const double w8 = std::max(f.kv_mb * 1e6, f.gflops * 1e9 / (2 * kFlopsPerByte));
    CostEstimate out;
    out.us = scaled_by_work(base->us, e->terms.fixed_us, w, w8);
    char note[200];
    std::snprintf(note, sizeof note,
                  "uncalibrated: fp8 math from the exact fp8 estimate %.1f us, x%.3f beyond its "
                  "fixed %.1f us (e4m3 MMAs at twice the f16 rate where tensor-bound)",
                  base->us, w > 0 ? w8 / w : 1.0, e->terms.fixed_us);
    out.derived = base->derived.empty() ? note : std::string(note) + "; " + base->derived;
    return out;
  }
  // The shape's own dtype (and math): calibrated, not derived.
  if (e->kv_dtype == shape.kv_dtype) return CostEstimate{estimate_with(e, pattern, shape), {}};
  // fp8_tile without entries of its own: the fp8_e4m3 estimate of the same shape, its time beyond
  // the fixed part scaled by the ratio of the two shapes' work at the roofline, i.e. by the KV
  // bytes 656 / 576 where the shape is memory-bound and not at all where it is compute-bound. The
  // fp8_tile kernels are the fp8_e4m3 kernels' supply and pipeline (TMA of e4m3 codes, expanding
  // producer warps) with the bf16 kernels' MMAs, which run at fp8_e4m3's f16 rate on Hopper; what
  // the model cannot see is the expansion's extra multiply per value and the scale loads.
  VerifyShape fp8 = shape;
  fp8.kv_dtype = e->kv_dtype;
  const double at_fp8 = estimate_with(e, pattern, fp8);
  const double w_fp8 = roofline_work(cost_features(fp8, pattern));
  const double w = roofline_work(cost_features(shape, pattern));
  CostEstimate out;
  out.us = scaled_by_work(at_fp8, e->terms.fixed_us, w_fp8, w);
  char note[200];
  std::snprintf(note, sizeof note,
                "uncalibrated: no fp8tile entry; the fp8 estimate %.1f us, x%.3f beyond its fixed "
                "%.1f us (roofline work: KV bytes 656/576 where memory-bound)",
                at_fp8, w_fp8 > 0 ? w / w_fp8 : 1.0, e->terms.fixed_us);
  out.derived = note;
  return out;
}

std::optional<double> CostModel::estimate_us(std::string_view backend, KvReadPattern pattern,
                                             const VerifyShape& shape) const {
  std::optional<CostEstimate> e = estimate(backend, pattern, shape);
  return e ? std::optional<double>(e->us) : std::nullopt;
}

std::string Crossover::to_string() const {
  if (!has_model) return "no cost model for both backends";
  if (seq_len == 0) return short_winner + " cheaper at every S";
  std::string s =
      short_winner + " below S=" + std::to_string(seq_len) + ", " + long_winner + " from there";
  if (changes.size() > 1) {
    s += " (cheaper backend changes again at S=";
    for (size_t i = 1; i < changes.size(); ++i) {
      s += (i > 1 ? ", " : "") + std::to_string(changes[i]);
    }
    s += ")";
  }
  return s;
}

Crossover find_crossover(const CostModel& model, std::string_view backend_a, KvReadPattern pat_a,
                         std::string_view backend_b, KvReadPattern pat_b, VerifyShape shape,
                         int64_t max_seq_len) {
  Crossover out;
  const int64_t lo = std::max<int64_t>(shape.q_len, 1);
  const int64_t hi = std::max(lo, max_seq_len);
  auto at = [&](std::string_view name, KvReadPattern pat, int64_t s) {
    shape.max_seq_len = s;
    shape.total_kv = s * shape.batch;
    return model.estimate_us(name, pat, shape);
  };
  // true: A cheaper or equal at S.
  auto a_wins = [&](int64_t s) { return *at(backend_a, pat_a, s) <= *at(backend_b, pat_b, s); };
  if (!at(backend_a, pat_a, lo) || !at(backend_b, pat_b, lo)) return out;
  out.has_model = true;
  const std::string a(backend_a), b(backend_b);

  // Scan points: both ends, the curves' measured S (and one past their ends, where the linear
  // tail takes over), and a geometric grid of 16 points per octave.
  std::vector<int64_t> scan = {lo, hi};
  if (shape.batch == 1) {
    for (std::string_view name : {backend_a, backend_b}) {
      for (const CurvePoint& p : model.entry_for(name, shape)->curve) {
        for (int64_t s : {p.seq_len - 1, p.seq_len, p.seq_len + 1}) {
          if (s >= lo && s <= hi) scan.push_back(s);
        }
      }
    }
  }
  for (double s = static_cast<double>(lo); s < static_cast<double>(hi); s *= std::exp2(1.0 / 16)) {
    scan.push_back(static_cast<int64_t>(s));
  }
  std::sort(scan.begin(), scan.end());
  scan.erase(std::unique(scan.begin(), scan.end()), scan.end());

  const bool first = a_wins(scan.front());
  out.short_winner = first ? a : b;
  out.long_winner = out.short_winner;
  bool prev = first;
  for (size_t i = 1; i < scan.size(); ++i) {
    const bool cur = a_wins(scan[i]);
    if (cur == prev) continue;
    // First S in (scan[i-1], scan[i]] with the new winner.
    int64_t l = scan[i - 1], h = scan[i];
    while (h - l > 1) {
      const int64_t mid = l + (h - l) / 2;
      (a_wins(mid) == cur ? h : l) = mid;
    }
    out.changes.push_back(h);
    if (out.changes.size() == 1) {
      out.seq_len = h;
      out.long_winner = cur ? a : b;
    }
    prev = cur;
  }
  return out;
}

}  // namespace mlaspec::attn
