// The cost model: features, the NNLS fit on synthetic data with known constants, lookup,
// crossover, and profiles (parsing errors, resolution order, warnings, merging).
#include "mlaspec/attention/cost_model.h"
#include "common/test_helpers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "attention/default_profiles.h"

namespace mlaspec::attn {
namespace {

using testing::uniform_shape;

TEST(CostFeatures, FoldReadsOnceRowwisePerToken) {
  const VerifyShape s = uniform_shape(2, 16, 8, 1000, DType::kBF16);
  const CostFeatures f = cost_features(s, KvReadPattern::kOncePerRequest);
  const CostFeatures r = cost_features(s, KvReadPattern::kOncePerQueryToken);
  EXPECT_DOUBLE_EQ(f.kv_mb, 2000.0 * 576 * 2 / 1e6);
  EXPECT_DOUBLE_EQ(r.kv_mb, 8 * f.kv_mb);
  EXPECT_DOUBLE_EQ(f.gflops, 2.0 * 8 * 16 * 1088 * 2000 / 1e9);
  EXPECT_DOUBLE_EQ(r.gflops, f.gflops);
  EXPECT_DOUBLE_EQ(
      cost_features(uniform_shape(2, 16, 8, 1000, DType::kFP8E4M3), KvReadPattern::kOncePerRequest)
          .kv_mb,
      f.kv_mb / 2);
}

// Calibration-like samples: H fixed, q in {2,4,8}, S from 1k to 1M.
std::vector<CostSample> synth(const CostTerms& truth, KvReadPattern pat, int heads, double noise,
                              uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<CostSample> out;
  for (int q : {2, 4, 8}) {
    for (int64_t s = 1024; s <= (int64_t{1} << 20); s *= 2) {
      CostSample x;
      x.features = cost_features(uniform_shape(1, heads, q, s), pat);
      x.time_us = truth.estimate_us(x.features) * (1 + u(rng));
      out.push_back(x);
    }
  }
  return out;
}

TEST(CostFit, RecoversKnownConstantsExactly) {
  const CostTerms truth{6.5, 0.27, 1.4};
  auto fit = fit_cost_terms(synth(truth, KvReadPattern::kOncePerRequest, 16, 0, 1));
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_NEAR(fit->terms.fixed_us, 6.5, 1e-6);
  EXPECT_NEAR(fit->terms.us_per_mb, 0.27, 1e-8);
  EXPECT_NEAR(fit->terms.us_per_gflop, 1.4, 1e-8);
  EXPECT_LT(fit->rms_rel_err, 1e-9);
  EXPECT_EQ(fit->points, 33);
}

TEST(CostFit, NoisyDataStaysCloseAndNonNegative) {
  const CostTerms truth{8.0, 0.3, 0.0};  // a true zero term: must not come out negative
  auto fit = fit_cost_terms(synth(truth, KvReadPattern::kOncePerRequest, 128, 0.03, 7));
  ASSERT_TRUE(fit.ok());
  EXPECT_GE(fit->terms.us_per_gflop, 0.0);
  EXPECT_GE(fit->terms.fixed_us, 0.0);
  EXPECT_NEAR(fit->terms.fixed_us, 8.0, 0.8);
  EXPECT_NEAR(fit->terms.us_per_mb, 0.3, 0.03);
  EXPECT_LT(fit->rms_rel_err, 0.03);
  EXPECT_LE(fit->max_rel_err, 0.07);
}

TEST(CostFit, CollinearFeaturesStillPredict) {
  // Rowwise at one H: KV MB and GFLOPs are both proportional to q*S, so only their combination
  // is determined; the fit must still predict exactly and stay non-negative.
  const CostTerms truth{3.0, 0.2, 0.5};
  auto samples = synth(truth, KvReadPattern::kOncePerQueryToken, 16, 0, 3);
  auto fit = fit_cost_terms(samples);
  ASSERT_TRUE(fit.ok()) << fit.status().to_string();
  EXPECT_GE(fit->terms.us_per_mb, 0);
  EXPECT_GE(fit->terms.us_per_gflop, 0);
  EXPECT_NEAR(fit->terms.fixed_us, 3.0, 1e-6);
  for (const auto& s : samples) {
    EXPECT_NEAR(fit->terms.estimate_us(s.features) / s.time_us, 1.0, 1e-9);
  }
}

TEST(CostFit, RejectsUnusableInput) {
  std::vector<CostSample> two(2);
  two[0].time_us = two[1].time_us = 1;
  EXPECT_EQ(fit_cost_terms(two).status().code(), StatusCode::kInvalidArgument);
  auto s = synth({1, 1, 1}, KvReadPattern::kOncePerRequest, 16, 0, 1);
  s[3].time_us = 0;
  EXPECT_CONTAINS(fit_cost_terms(s).status().message(), "measurement 3");
  s[3].time_us = std::nan("");
  EXPECT_FALSE(fit_cost_terms(s).ok());
}

TEST(CostModel, NearestHeadsInLog2) {
  CostModel m("gpu", "test", {});
  auto add = [&](int heads, double fixed) {
    CostEntry e;
    e.backend = "b";
    e.heads = heads;
    e.terms.fixed_us = fixed;
    m.add(e);
  };
  add(16, 1);
  add(128, 2);
  EXPECT_EQ(m.find("b", DType::kBF16, 16)->heads, 16);
  EXPECT_EQ(m.find("b", DType::kBF16, 8)->heads, 16);
  EXPECT_EQ(m.find("b", DType::kBF16, 32)->heads, 16);   // 1 octave vs 2
  EXPECT_EQ(m.find("b", DType::kBF16, 64)->heads, 128);  // 2 octaves vs 1
  EXPECT_EQ(m.find("b", DType::kBF16, 256)->heads, 128);
  EXPECT_EQ(m.find("b", DType::kFP8E4M3, 16), nullptr);
  EXPECT_EQ(m.find("c", DType::kBF16, 16), nullptr);
  EXPECT_FALSE(
      m.estimate_us("c", KvReadPattern::kOncePerRequest, uniform_shape(1, 16, 1, 10)).has_value());
  add(0, 3);  // a generic entry ranks behind measured ones
  EXPECT_EQ(m.find("b", DType::kBF16, 1000)->heads, 128);
}

TEST(CostModel, CrossoverCases) {
  CostModel m("gpu", "test", {});
  auto add = [&](const char* b, double fixed, double mb) {
    CostEntry e;
    e.backend = b;
    e.heads = 16;
    e.terms = {fixed, mb, 0};
    m.add(e);
  };
  add("fast_start", 2, 0.5);
  add("fast_stream", 10, 0.1);
  add("never", 20, 1.0);
  const auto pat = KvReadPattern::kOncePerRequest;
  // 2 + 0.5x = 10 + 0.1x at x = 20 MB = 20e6 / 1152 tokens.
  Crossover c =
      find_crossover(m, "fast_start", pat, "fast_stream", pat, uniform_shape(1, 16, 1, 1));
  ASSERT_TRUE(c.has_model);
  EXPECT_EQ(c.short_winner, "fast_start");
  EXPECT_EQ(c.long_winner, "fast_stream");
  EXPECT_NEAR(static_cast<double>(c.seq_len), 20e6 / 1152, 1.0);
  EXPECT_CONTAINS(c.to_string(), "fast_start below S=");
  c = find_crossover(m, "fast_stream", pat, "fast_start", pat, uniform_shape(1, 16, 1, 1));
  EXPECT_EQ(c.short_winner, "fast_start");
  c = find_crossover(m, "fast_start", pat, "never", pat, uniform_shape(1, 16, 1, 1));
  EXPECT_EQ(c.seq_len, 0);
  EXPECT_EQ(c.short_winner, "fast_start");
  EXPECT_CONTAINS(c.to_string(), "every S");
  EXPECT_FALSE(
      find_crossover(m, "fast_start", pat, "missing", pat, uniform_shape(1, 16, 1, 1)).has_model);
}

TEST(CostModel, CurveInterpolationExactAtPointsMonotoneBetween) {
  const std::vector<CurvePoint> c = {{1024, 20}, {4096, 25}, {16384, 80}, {65536, 60}};
  for (const CurvePoint& p : c) EXPECT_DOUBLE_EQ(*interpolate_curve(c, p.seq_len), p.us);
  EXPECT_FALSE(interpolate_curve(c, 1023).has_value());
  EXPECT_FALSE(interpolate_curve(c, 65537).has_value());
  EXPECT_FALSE(interpolate_curve({}, 1024).has_value());
  // Log-log: the geometric midpoint of S gets the geometric mean of the times.
  EXPECT_NEAR(*interpolate_curve(c, 2048), std::sqrt(20.0 * 25.0), 1e-9);
  // Monotone between neighbours, in the direction of the neighbours (up, up, down).
  for (size_t i = 0; i + 1 < c.size(); ++i) {
    double prev = c[i].us;
    const bool up = c[i + 1].us > c[i].us;
    for (int64_t s = c[i].seq_len + 1; s <= c[i + 1].seq_len; s += 37) {
      const double v = *interpolate_curve(c, s);
      EXPECT_TRUE(up ? v >= prev : v <= prev) << s;
      EXPECT_GE(v, std::min(c[i].us, c[i + 1].us) - 1e-9);
      EXPECT_LE(v, std::max(c[i].us, c[i + 1].us) + 1e-9);
      prev = v;
    }
  }
}

// Backend "b" at H = 16, q_len 8: linear terms and a B=1 curve deliberately far from them.
CostEntry curve_entry() {
  CostEntry e;
  e.backend = "b";
  e.heads = 16;
  e.q_len = 8;
  e.terms = {10, 0.5, 0.1};
  e.curve = {{2048, 100}, {8192, 200}};
  return e;
}

TEST(CostModel, CurveForB1InsideItsRangeLinearTermsElsewhere) {
  CostModel m("gpu", "test", {});
  const CostEntry e = curve_entry();
  m.add(e);
  const auto pat = KvReadPattern::kOncePerQueryToken;
  auto lin = [&](const VerifyShape& x) { return e.terms.estimate_us(cost_features(x, pat)); };
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(1, 16, 8, 2048)), 100);
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(1, 16, 8, 8192)), 200);
  EXPECT_NEAR(*m.estimate_us("b", pat, uniform_shape(1, 16, 8, 4096)), std::sqrt(100.0 * 200),
              1e-9);
  // Outside the measured range: the linear terms.
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(1, 16, 8, 1024)),
                   lin(uniform_shape(1, 16, 8, 1024)));
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(1, 16, 8, 16384)),
                   lin(uniform_shape(1, 16, 8, 16384)));
  // B > 1: the linear terms on the batch's total KV, even with each S inside the curve.
  const VerifyShape b4 = uniform_shape(4, 16, 8, 4096);
  EXPECT_EQ(b4.total_kv, 4 * 4096);
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, b4), lin(b4));
  EXPECT_GT(lin(b4), lin(uniform_shape(1, 16, 8, 4096)));
  // Another q_len served by this entry: the curve beyond the fixed part scaled by the work at the
  // roofline; once per query token both KV bytes and FLOPs halve with q_len.
  EXPECT_NEAR(*m.estimate_us("b", pat, uniform_shape(1, 16, 4, 2048)), 10 + 90 * 0.5, 1e-9);
}

TEST(CostModel, BatchGridInterpolationExactAtPointsBetweenCornersElsewhereNone) {
  // B in {4, 16}, S in {4096, 32768}, in no particular order.
  const std::vector<BatchPoint> g = {
      {16, 32768, 800}, {4, 4096, 30}, {16, 4096, 90}, {4, 32768, 210}};
  for (const BatchPoint& p : g) {
    EXPECT_DOUBLE_EQ(*interpolate_batch_grid(g, p.batch, static_cast<double>(p.seq_len)), p.us);
  }
  // The geometric midpoints: the geometric mean of the two (or four) neighbours.
  EXPECT_NEAR(*interpolate_batch_grid(g, 8, 4096), std::sqrt(30.0 * 90), 1e-9);
  EXPECT_NEAR(*interpolate_batch_grid(g, 4, std::sqrt(4096.0 * 32768)), std::sqrt(30.0 * 210),
              1e-9);
  EXPECT_NEAR(*interpolate_batch_grid(g, 8, std::sqrt(4096.0 * 32768)),
              std::pow(30.0 * 90 * 210 * 800, 0.25), 1e-9);
  for (int b = 4; b <= 16; ++b) {
    for (double s = 4096; s <= 32768; s *= 1.3) {
      const double v = *interpolate_batch_grid(g, b, s);
      EXPECT_GE(v, 30 - 1e-9);
      EXPECT_LE(v, 800 + 1e-9);
    }
  }
  EXPECT_FALSE(interpolate_batch_grid(g, 3, 4096).has_value());
  EXPECT_FALSE(interpolate_batch_grid(g, 17, 4096).has_value());
  EXPECT_FALSE(interpolate_batch_grid(g, 8, 4095).has_value());
  EXPECT_FALSE(interpolate_batch_grid(g, 8, 32769).has_value());
  EXPECT_FALSE(interpolate_batch_grid({}, 8, 4096).has_value());
  // The axes: sorted distinct values; complete only for every pair exactly once. A repeat that
  // makes up for a hole has as many points as pairs and is still not a grid.
  const BatchGridAxes ax = batch_grid_axes(g);
  EXPECT_EQ(ax.batches, (std::vector<int>{4, 16}));
  EXPECT_EQ(ax.seq_lens, (std::vector<int64_t>{4096, 32768}));
  EXPECT_TRUE(ax.complete);
  EXPECT_FALSE(batch_grid_axes({}).complete);
  const std::vector<BatchPoint> masked = {
      {4, 4096, 30}, {4, 4096, 31}, {16, 4096, 90}, {4, 32768, 210}};
  EXPECT_FALSE(batch_grid_axes(masked).complete);
  EXPECT_FALSE(interpolate_batch_grid(masked, 8, 8192).has_value());
  // A hole (three corners) or a repeated point is not a grid.
  EXPECT_FALSE(interpolate_batch_grid(std::span(g).first(3), 4, 4096).has_value());
  std::vector<BatchPoint> rep = g;
  rep.push_back(g[0]);
  EXPECT_FALSE(interpolate_batch_grid(rep, 4, 4096).has_value());
  // One B: exact at it, nothing at another B.
  const std::vector<BatchPoint> one = {{8, 1024, 10}, {8, 4096, 40}};
  EXPECT_NEAR(*interpolate_batch_grid(one, 8, 2048), 20, 1e-9);
  EXPECT_FALSE(interpolate_batch_grid(one, 9, 2048).has_value());
}

TEST(CostModel, BatchGridForBInsideItLinearTermsElsewhere) {
  CostModel m("gpu", "test", {});
  CostEntry e = curve_entry();
  e.batch = {{4, 2048, 300}, {4, 8192, 900}, {16, 2048, 1000}, {16, 8192, 3000}};
  m.add(e);
  const auto pat = KvReadPattern::kOncePerRequest;
  auto lin = [&](const VerifyShape& x) { return e.terms.estimate_us(cost_features(x, pat)); };
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(4, 16, 8, 2048)), 300);
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(16, 16, 8, 8192)), 3000);
  EXPECT_NEAR(*m.estimate_us("b", pat, uniform_shape(8, 16, 8, 2048)), std::sqrt(300.0 * 1000),
              1e-9);
  // Ragged: the mean S (total_kv / B) places the batch in the grid.
  VerifyShape ragged = uniform_shape(4, 16, 8, 8192);
  ragged.total_kv = 4 * 2048;  // max 8192, mean 2048
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, ragged), 300);
  // Outside the box: the linear terms; B = 1 keeps the curve.
  for (const VerifyShape& x : {uniform_shape(2, 16, 8, 4096), uniform_shape(32, 16, 8, 4096),
                               uniform_shape(8, 16, 8, 1024), uniform_shape(8, 16, 8, 16384)}) {
    EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, x), lin(x)) << x.to_string();
  }
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", pat, uniform_shape(1, 16, 8, 2048)), 100);
  // Another q_len: the grid's estimate at the entry's own q_len, scaled beyond the fixed part
  // (read once per query token, both the KV bytes and the FLOPs halve with q_len).
  EXPECT_NEAR(*m.estimate_us("b", KvReadPattern::kOncePerQueryToken, uniform_shape(4, 16, 4, 2048)),
              10 + 290 * 0.5, 1e-9);
}

// An entry serving another H or q_len scales by the work of whichever bound (KV bytes or FLOPs at
// the machine balance) the shape has, not by the fitted terms: a fit whose slope sits on the KV
// bytes alone must still price a compute-bound q_len 1 at half of q_len 2 when the KV is read
// once per request (cuda_fold at H = 128 was priced 2x too high), and keep a memory-bound one.
TEST(CostModel, OtherQlenOrHeadsScaleByTheRooflineWork) {
  CostModel m("gpu", "test", {});
  const auto once = KvReadPattern::kOncePerRequest;
  CostEntry e;
  e.backend = "fold";
  e.heads = 128;
  e.q_len = 2;
  e.terms = {16, 0.8, 0};  // all of the slope on the KV bytes, as the fit of one (H, q_len) has it
  e.curve = {{1024, 17}, {1 << 20, 900}};
  m.add(e);
  CostEntry h16 = e;
  h16.heads = 16;
  m.add(h16);
  const double at_q2 = *m.estimate_us("fold", once, uniform_shape(1, 128, 2, 131072));
  // H = 128: 2 * q * 128 * 1088 FLOPs per KV token against 1152 bytes: compute-bound at q_len 1
  // and 2, so q_len 1 costs half of q_len 2 beyond the fixed part (B = 1 and B = 128 alike).
  EXPECT_NEAR(*m.estimate_us("fold", once, uniform_shape(1, 128, 1, 131072)),
              16 + (at_q2 - 16) * 0.5, 1e-9);
  const VerifyShape b128 = uniform_shape(128, 128, 1, 4096);
  const double lin_q2 = e.terms.estimate_us(cost_features(uniform_shape(128, 128, 2, 4096), once));
  EXPECT_NEAR(*m.estimate_us("fold", once, b128), 16 + (lin_q2 - 16) * 0.5, 1e-9);
  // H = 16 (the other entry): memory-bound at q_len 1 and 2, the same KV bytes: the same cost.
  EXPECT_DOUBLE_EQ(*m.estimate_us("fold", once, uniform_shape(1, 16, 1, 131072)),
                   *m.estimate_us("fold", once, uniform_shape(1, 16, 2, 131072)));
  // H = 32 at q_len 8, served by the H = 16 entry (nearest in log2): compute-bound, 32 * 8 / (16 *
  // 2) = 8x the FLOPs, against the entry's memory-bound own work (its FLOPs at the balance below
  // its bytes).
  const VerifyShape own = uniform_shape(1, 16, 2, 131072);
  const VerifyShape h32 = uniform_shape(1, 32, 8, 131072);
  const CostFeatures fo = cost_features(own, once), fh = cost_features(h32, once);
  const double balance = 757e12 / 4.21e12;
  const double w_own = std::max(fo.kv_mb * 1e6, fo.gflops * 1e9 / balance);
  const double w_h32 = std::max(fh.kv_mb * 1e6, fh.gflops * 1e9 / balance);
  EXPECT_EQ(w_own, fo.kv_mb * 1e6);
  EXPECT_GT(w_h32 / w_own, 2.0);
  const double at_own = *m.estimate_us("fold", once, own);
  EXPECT_NEAR(*m.estimate_us("fold", once, h32), 16 + (at_own - 16) * (w_h32 / w_own), 1e-6);
}

// fp8_tile before calibration: priced from the backend's fp8_e4m3 entry, the time beyond the fixed
// part scaled by the roofline work (656 / 576 bytes where memory-bound, 1 where compute-bound),
// and said to be derived; a calibrated fp8_tile entry, once there, prices it alone.
TEST(CostModel, Fp8TileDerivedFromFp8UntilCalibrated) {
  CostModel m("gpu", "test", {});
  const auto once = KvReadPattern::kOncePerRequest;
  auto add = [&](DType kv, double fixed, double us_per_mb, bool det = false) {
    CostEntry e;
    e.backend = "fold";
    e.kv_dtype = kv;
    e.heads = 16;
    e.q_len = 1;
    e.deterministic = det;
    e.terms = {fixed, us_per_mb, 0};
    m.add(e);
    return e;
  };
  const CostEntry bf16 = add(DType::kBF16, 10, 0.25);
  const CostEntry fp8 = add(DType::kFP8E4M3, 12, 0.30);
  // B=1, H=16, q=1, S=128k: 2 * 16 * 1088 FLOPs per token against 576 bytes (fp8): memory-bound.
  const VerifyShape mem = uniform_shape(1, 16, 1, 131072, DType::kFP8Tile);
  VerifyShape mem_fp8 = mem, mem_bf16 = mem;
  mem_fp8.kv_dtype = DType::kFP8E4M3;
  mem_bf16.kv_dtype = DType::kBF16;
  const std::optional<CostEstimate> tile = m.estimate("fold", once, mem);
  ASSERT_TRUE(tile.has_value());
  EXPECT_GT(tile->us, 0.0);
  EXPECT_CONTAINS(tile->derived, "uncalibrated: no fp8tile entry");
  EXPECT_EQ(m.entry_for("fold", mem)->kv_dtype, DType::kFP8E4M3);
  const double at_fp8 = fp8.terms.estimate_us(cost_features(mem_fp8, once));
  EXPECT_NEAR(tile->us, 12 + (at_fp8 - 12) * 656.0 / 576.0, 1e-9);
  EXPECT_DOUBLE_EQ(*m.estimate_us("fold", once, mem), tile->us);
  // Ordered by the bytes read: fp8 < fp8_tile < bf16 (these constants price bf16's bytes lower
  // per MB, as the calibrated H200 entries do, but 2x the bytes still cost more).
  const double t_fp8 = *m.estimate_us("fold", once, mem_fp8);
  const double t_bf16 = *m.estimate_us("fold", once, mem_bf16);
  EXPECT_LT(t_fp8, tile->us);
  EXPECT_LT(tile->us, t_bf16);
  EXPECT_NEAR(t_bf16, bf16.terms.estimate_us(cost_features(mem_bf16, once)), 1e-9);
  // Own-dtype estimates are not derived.
  EXPECT_TRUE(m.estimate("fold", once, mem_fp8)->derived.empty());
  // H = 128, q = 8 (the H = 16, q = 1 entry, scaled to this shape first): compute-bound for both
  // layouts, so fp8_tile costs what fp8 does.
  VerifyShape flop = uniform_shape(1, 128, 8, 131072, DType::kFP8Tile), flop_fp8 = flop;
  flop_fp8.kv_dtype = DType::kFP8E4M3;
  EXPECT_NEAR(*m.estimate_us("fold", once, flop), *m.estimate_us("fold", once, flop_fp8), 1e-9);
  // The crossover search reads the curves of the entry the estimate uses (fp8's here).
  CostEntry row = fp8;
  row.backend = "row";
  row.terms = {2, 0.30, 0};
  m.add(row);
  const Crossover c = find_crossover(m, "row", KvReadPattern::kOncePerQueryToken, "fold", once,
                                     uniform_shape(1, 16, 2, 1, DType::kFP8Tile));
  EXPECT_TRUE(c.has_model);
  EXPECT_EQ(c.short_winner, "row");
  // A backend without fp8 entries has no fp8_tile estimate either.
  EXPECT_FALSE(m.estimate("other", once, mem).has_value());
  // Calibrated: a det-only fp8_tile entry already takes precedence over deriving (the other-mode
  // rule of find), then the default-mode one prices default calls.
  const CostEntry tile_det = add(DType::kFP8Tile, 30, 0.5, /*det=*/true);
  std::optional<CostEstimate> cal = m.estimate("fold", once, mem);
  ASSERT_TRUE(cal.has_value());
  EXPECT_TRUE(cal->derived.empty());
  EXPECT_NEAR(cal->us, tile_det.terms.estimate_us(cost_features(mem, once)), 1e-9);
  const CostEntry tile_default = add(DType::kFP8Tile, 7, 0.2);
  cal = m.estimate("fold", once, mem);
  EXPECT_TRUE(cal->derived.empty());
  EXPECT_NEAR(cal->us, tile_default.terms.estimate_us(cost_features(mem, once)), 1e-9);
  EXPECT_EQ(m.entry_for("fold", mem)->kv_dtype, DType::kFP8Tile);
}

// The shipped H200 profile has no fp8_tile entries yet: both CUDA backends get a derived, positive
// estimate (`inspect --explain 'B=1,H=16,q=8,S=4k,kv=fp8tile'` showed 0.0 us before), at least
// fp8's, and above it by the bytes where the shape is memory-bound for the backend (rowwise reads
// the KV q_len times). Not below bf16's: on the H200 the fp8 kernels measured slower than bf16's
// (their expansion, not the bytes, bounds them), and fp8_tile's inherit that supply.
TEST(CostModel, BuiltinH200PricesFp8TileFromItsFp8Entries) {
  const CostModel* h200 = builtin_profile().find("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  ASSERT_EQ(h200->find("cuda_fold", DType::kFP8Tile, 16), nullptr)
      << "the profile has fp8tile entries now: this test's premise is gone";
  for (int64_t s : {4096, 131072}) {
    const VerifyShape tile = uniform_shape(1, 16, 8, s, DType::kFP8Tile);
    VerifyShape fp8 = tile;
    fp8.kv_dtype = DType::kFP8E4M3;
    for (auto [name, pat] : {std::pair{"cuda_fold", KvReadPattern::kOncePerRequest},
                             std::pair{"cuda_rowwise", KvReadPattern::kOncePerQueryToken}}) {
      const std::optional<CostEstimate> e = h200->estimate(name, pat, tile);
      ASSERT_TRUE(e.has_value()) << name;
      EXPECT_GT(e->us, 1.0) << name;
      EXPECT_FALSE(e->derived.empty()) << name;
      EXPECT_GE(e->us, *h200->estimate_us(name, pat, fp8)) << name << " S=" << s;
    }
    const KvReadPattern row = KvReadPattern::kOncePerQueryToken;
    const double t_fp8 = *h200->estimate_us("cuda_rowwise", row, fp8);
    const double fixed = h200->entry_for("cuda_rowwise", tile)->terms.fixed_us;
    EXPECT_NEAR(*h200->estimate_us("cuda_rowwise", row, tile),
                fixed + (t_fp8 - fixed) * 656.0 / 576.0, 1e-6)
        << "S=" << s;
  }
}

TEST(CostModel, NearestHeadsThenQlen) {
  CostModel m("gpu", "test", {});
  auto add = [&](int heads, int q) {
    CostEntry e;
    e.backend = "b";
    e.heads = heads;
    e.q_len = q;
    e.terms.fixed_us = heads * 100 + q;
    m.add(e);
  };
  for (int h : {16, 128})
    for (int q : {2, 4, 8}) add(h, q);
  add(64, 0);  // H=64 measured without q_len: serves every q_len at H=64
  auto pick = [&](int h, int q) {
    const CostEntry* e = m.find("b", DType::kBF16, h, q);
    return e ? std::make_pair(e->heads, e->q_len) : std::make_pair(-1, -1);
  };
  EXPECT_EQ(pick(16, 8), std::make_pair(16, 8));
  EXPECT_EQ(pick(16, 2), std::make_pair(16, 2));
  EXPECT_EQ(pick(16, 1), std::make_pair(16, 2));
  EXPECT_EQ(pick(16, 5), std::make_pair(16, 4));
  EXPECT_EQ(pick(16, 3), std::make_pair(16, 4));  // tie 2|4: the larger q_len
  EXPECT_EQ(pick(16, 6), std::make_pair(16, 8));  // tie 4|8: the larger q_len
  EXPECT_EQ(pick(16, 32), std::make_pair(16, 8));
  EXPECT_EQ(pick(24, 4), std::make_pair(16, 4));  // H first (log2: 24 nearer 16 than 64)
  EXPECT_EQ(pick(32, 4), std::make_pair(16, 4));  // tie 16|64 in log2: the smaller H
  EXPECT_EQ(pick(48, 4), std::make_pair(64, 0));  // H=64's only entry, whatever q_len
  EXPECT_EQ(pick(128, 7), std::make_pair(128, 8));
  EXPECT_EQ(pick(128, 0), std::make_pair(128, 2));  // q_len unknown: the smallest
  add(128, 0);
  EXPECT_EQ(pick(128, 0), std::make_pair(128, 0));  // ... or the any-q_len entry
  EXPECT_EQ(pick(128, 7), std::make_pair(128, 8));  // which ranks behind measured q_len
  // estimate_us passes the shape's q_len.
  EXPECT_DOUBLE_EQ(*m.estimate_us("b", KvReadPattern::kOncePerRequest, uniform_shape(1, 16, 3, 10)),
                   16 * 100 + 4);
}

// An entry that costs `fixed` µs at every shape it prices (no curve, no slope).
CostEntry fixed_cost_entry(const char* backend, DType kv, int heads, int q, double fixed,
                           bool det = false, bool fp8_math = false) {
  return {.backend = backend,
          .kv_dtype = kv,
          .heads = heads,
          .q_len = q,
          .deterministic = det,
          .fp8_math = fp8_math,
          .terms = {.fixed_us = fixed},
          .curve = {},
          .batch = {}};
}

// Deterministic calls are priced by the deterministic entries where a backend has any, else by the
// default ones (a profile calibrated before version 3); default calls never use det entries while
// default ones exist.
TEST(CostModel, DeterministicEntriesPriceDeterministicCalls) {
  CostModel m("gpu", "test", {});
  auto add = [&](const char* backend, int heads, int q, bool det, double fixed) {
    m.add(fixed_cost_entry(backend, DType::kBF16, heads, q, fixed, det));
  };
  add("a", 16, 8, false, 100);
  add("a", 128, 8, false, 200);
  add("a", 16, 8, true, 130);   // det measured at H = 16 only
  add("b", 16, 8, false, 120);  // b has no det entries
  VerifyShape s = uniform_shape(1, 16, 8, 4096);
  auto est = [&](const char* backend, const VerifyShape& x) {
    return *m.estimate_us(backend, KvReadPattern::kOncePerRequest, x);
  };
  EXPECT_DOUBLE_EQ(est("a", s), 100);
  EXPECT_DOUBLE_EQ(est("b", s), 120);
  s.deterministic = true;
  EXPECT_DOUBLE_EQ(est("a", s), 130);
  EXPECT_DOUBLE_EQ(est("b", s), 120);  // falls back to the default entry
  // H = 128 det: the nearest det entry (H = 16), scaled by the work, not the default H = 128 one.
  const CostEntry* e = m.find("a", DType::kBF16, 128, 8, true);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->deterministic);
  EXPECT_EQ(e->heads, 16);
  EXPECT_FALSE(m.find("a", DType::kBF16, 128, 8, false)->deterministic);
  // The crossover follows the mode: a is cheaper by default, b in deterministic mode.
  VerifyShape c = uniform_shape(1, 16, 8, 8);
  EXPECT_EQ(find_crossover(m, "a", KvReadPattern::kOncePerRequest, "b",
                           KvReadPattern::kOncePerRequest, c, 1 << 16)
                .short_winner,
            "a");
  c.deterministic = true;
  EXPECT_EQ(find_crossover(m, "a", KvReadPattern::kOncePerRequest, "b",
                           KvReadPattern::kOncePerRequest, c, 1 << 16)
                .short_winner,
            "b");
}

// fp8-math calls are priced by the backend's fp8-math entries where the profile has any (the same
// H, q_len and mode rules as exact entries), else derived from the exact fp8 estimate and marked;
// exact calls never use fp8-math entries, whatever else the profile lacks.
TEST(CostModel, Fp8MathShapesUseFp8MathEntriesWhenCalibrated) {
  CostModel m("gpu", "test", {});
  const auto once = KvReadPattern::kOncePerRequest;
  auto add = [&](const char* backend, int heads, int q, bool f8, double fixed, bool det = false) {
    m.add(fixed_cost_entry(backend, DType::kFP8E4M3, heads, q, fixed, det, f8));
  };
  add("a", 16, 8, false, 100);
  add("a", 16, 8, true, 170);  // the mode measured slower than exact, as on the H100
  add("a", 128, 8, true, 400);
  add("a", 16, 2, true, 150);
  add("b", 16, 8, false, 120);  // b: exact entries only
  add("c", 16, 8, true, 90);    // c: fp8-math entries only
  VerifyShape s = uniform_shape(1, 16, 8, 4096, DType::kFP8E4M3);
  VerifyShape f8 = s;
  f8.fp8_math = true;
  // Calibrated: the fp8-math entry, not derived.
  const std::optional<CostEstimate> a8 = m.estimate("a", once, f8);
  ASSERT_TRUE(a8.has_value());
  EXPECT_DOUBLE_EQ(a8->us, 170);
  EXPECT_TRUE(a8->derived.empty()) << a8->derived;
  ASSERT_NE(m.entry_for("a", f8), nullptr);
  EXPECT_TRUE(m.entry_for("a", f8)->fp8_math);
  // The same selection rules: nearest H in log2, then q_len (ties: the larger).
  VerifyShape big = f8;
  big.num_heads = 128;
  EXPECT_EQ(m.entry_for("a", big)->heads, 128);
  VerifyShape q3 = f8;
  q3.q_len = 3;
  EXPECT_EQ(m.entry_for("a", q3)->q_len, 2);
  q3.q_len = 5;
  EXPECT_EQ(m.entry_for("a", q3)->q_len, 8);
  EXPECT_TRUE(m.entry_for("a", q3)->fp8_math);
  // ... and the other mode's fp8-math entries before deriving from the exact ones.
  VerifyShape f8det = f8;
  f8det.deterministic = true;
  EXPECT_DOUBLE_EQ(*m.estimate_us("a", once, f8det), 170);
  add("a", 16, 8, true, 210, /*det=*/true);
  EXPECT_DOUBLE_EQ(*m.estimate_us("a", once, f8det), 210);
  EXPECT_DOUBLE_EQ(*m.estimate_us("a", once, f8), 170);
  // Exact calls never use fp8-math entries: a's exact entry, and c (fp8-math entries only) has
  // no exact estimate at all.
  EXPECT_DOUBLE_EQ(*m.estimate_us("a", once, s), 100);
  EXPECT_FALSE(m.entry_for("a", s)->fp8_math);
  EXPECT_FALSE(m.estimate("c", once, s).has_value());
  EXPECT_EQ(m.entry_for("c", s), nullptr);
  EXPECT_EQ(m.find("c", DType::kFP8E4M3, 16, 8), nullptr);
  EXPECT_DOUBLE_EQ(*m.estimate_us("c", once, f8), 90);
  // Without fp8-math entries (b): the derived rule from the exact entry, marked, and entry_for
  // names the exact entry it is derived from. Fixed cost only here: the derived price is 120.
  const std::optional<CostEstimate> b8 = m.estimate("b", once, f8);
  ASSERT_TRUE(b8.has_value());
  EXPECT_DOUBLE_EQ(b8->us, 120);
  EXPECT_CONTAINS(b8->derived, "uncalibrated: fp8 math from the exact fp8 estimate");
  ASSERT_NE(m.entry_for("b", f8), nullptr);
  EXPECT_FALSE(m.entry_for("b", f8)->fp8_math);
  // The crossover follows the math: exact, a (100) is cheaper than b (120); in fp8 math, b's
  // derived 120 beats a's measured 170.
  VerifyShape c = uniform_shape(1, 16, 8, 8, DType::kFP8E4M3);
  EXPECT_EQ(find_crossover(m, "a", once, "b", once, c, 1 << 16).short_winner, "a");
  c.fp8_math = true;
  EXPECT_EQ(find_crossover(m, "a", once, "b", once, c, 1 << 16).short_winner, "b");
}

TEST(CostModel, CrossoverWithCurvesMatchesABruteForceScan) {
  CostModel m("gpu", "test", {});
  auto add = [&](const char* b, double linear_fixed, std::vector<CurvePoint> curve) {
    CostEntry e;
    e.backend = b;
    e.heads = 16;
    e.q_len = 1;
    e.terms = {linear_fixed, 0, 0};
    e.curve = std::move(curve);
    m.add(e);
  };
  // A: cheap, then rising past B's flat 20 after S=4000; past its curve its linear tail (5) is
  // cheaper again. B: 20 everywhere.
  add("A", 5, {{1000, 10}, {4000, 20}, {16000, 40}});
  add("B", 20, {{1000, 20}, {16000, 20}});
  const auto pat = KvReadPattern::kOncePerRequest;
  const Crossover c = find_crossover(m, "A", pat, "B", pat, uniform_shape(1, 16, 1, 1), 40000);
  ASSERT_TRUE(c.has_model);
  EXPECT_EQ(c.short_winner, "A");
  EXPECT_EQ(c.long_winner, "B");
  EXPECT_EQ(c.seq_len, 4001);  // A == B at 4000 (ties go to the short winner)
  EXPECT_EQ(c.changes, (std::vector<int64_t>{4001, 16001}));
  EXPECT_CONTAINS(c.to_string(), "A below S=4001, B from there");
  EXPECT_CONTAINS(c.to_string(), "changes again at S=16001");
  // Brute force over every S.
  std::vector<int64_t> brute;
  bool prev = true;
  for (int64_t s = 1; s <= 40000; ++s) {
    const VerifyShape x = uniform_shape(1, 16, 1, s);
    const bool a = *m.estimate_us("A", pat, x) <= *m.estimate_us("B", pat, x);
    if (a != prev) brute.push_back(s);
    prev = a;
  }
  EXPECT_EQ(c.changes, brute);
  // B > 1 ignores the curves: linear 5 vs 20, A everywhere.
  EXPECT_EQ(find_crossover(m, "A", pat, "B", pat, uniform_shape(2, 16, 1, 1), 40000).seq_len, 0);
}

// Measurements of an H200 `calibrate --quick` run on an earlier kernel, H=16, q_len=8, B=1, built
// into a model the way calibrate builds it (per q_len: fitted terms plus the curve). Real data
// with a crossover between two grid points, which is what the interpolation must get right.
CostModel quick_grid_h16_q8(bool with_sweep_points) {
  struct Row {
    const char* backend;
    DType kv;
    std::vector<CurvePoint> grid, sweep;
  };
  const std::vector<Row> rows = {
      {"cuda_fold",
       DType::kBF16,
       {{2048, 29.1}, {8192, 30.7}, {32768, 46.5}, {131072, 112.0}, {524288, 384.9}},
       {{4096, 29.6}, {16384, 35.3}, {65536, 68.8}, {262144, 199.7}, {1048576, 746.0}}},
      {"cuda_rowwise",
       DType::kBF16,
       {{2048, 20.4}, {8192, 38.3}, {32768, 116.2}, {131072, 339.9}, {524288, 1293.3}},
       {{4096, 21.2}, {16384, 74.4}, {65536, 192.1}, {262144, 658.7}, {1048576, 2647.9}}},
      {"cuda_fold",
       DType::kFP8E4M3,
       {{2048, 33.5}, {8192, 34.8}, {32768, 55.5}, {131072, 160.6}, {524288, 583.1}},
       {{4096, 34.4}, {16384, 38.4}, {65536, 89.6}, {262144, 300.7}, {1048576, 1147.1}}},
      {"cuda_rowwise",
       DType::kFP8E4M3,
       {{2048, 25.5}, {8192, 47.8}, {32768, 153.6}, {131072, 524.8}, {524288, 1934.7}},
       {{4096, 26.2}, {16384, 90.5}, {65536, 278.0}, {262144, 993.1}, {1048576, 3766.8}}},
  };
  CostModel m("NVIDIA H200", "r12", {});
  for (const Row& r : rows) {
    std::vector<CurvePoint> pts = r.grid;
    if (with_sweep_points) pts.insert(pts.end(), r.sweep.begin(), r.sweep.end());
    std::sort(pts.begin(), pts.end(),
              [](const CurvePoint& a, const CurvePoint& b) { return a.seq_len < b.seq_len; });
    const auto pat = std::string(r.backend) == "cuda_fold" ? KvReadPattern::kOncePerRequest
                                                           : KvReadPattern::kOncePerQueryToken;
    std::vector<CostSample> samples;
    for (const CurvePoint& p : pts) {
      samples.push_back({cost_features(uniform_shape(1, 16, 8, p.seq_len, r.kv), pat), p.us});
    }
    auto fit = fit_cost_terms(samples);
    EXPECT_TRUE(fit.ok());
    CostEntry e;
    e.backend = r.backend;
    e.kv_dtype = r.kv;
    e.heads = 16;
    e.q_len = 8;
    e.terms = fit->terms;
    e.curve = pts;
    m.add(e);
  }
  return m;
}

std::string pick(const CostModel& m, int64_t s, DType kv) {
  const VerifyShape x = uniform_shape(1, 16, 8, s, kv);
  const double f = *m.estimate_us("cuda_fold", KvReadPattern::kOncePerRequest, x);
  const double r = *m.estimate_us("cuda_rowwise", KvReadPattern::kOncePerQueryToken, x);
  return f <= r ? "cuda_fold" : "cuda_rowwise";  // the dispatcher's rule: ties to the first
}

TEST(CostModel, H200QuickGridPicksRowwiseAt4kAndFoldAt16k) {
  // Grid points only (2k, 8k, ... 512k): S=4096 and 16384 are interpolated.
  const CostModel m = quick_grid_h16_q8(false);
  EXPECT_EQ(pick(m, 4096, DType::kBF16), "cuda_rowwise");  // measured 21.2 vs fold 29.6
  EXPECT_EQ(pick(m, 16384, DType::kBF16), "cuda_fold");    // measured 35.3 vs rowwise 74.4
  for (int64_t s : {65536, 262144, 1048576}) EXPECT_EQ(pick(m, s, DType::kBF16), "cuda_fold");
  for (int64_t s : {16384, 65536, 262144, 1048576})
    EXPECT_EQ(pick(m, s, DType::kFP8E4M3), "cuda_fold");
  // With that run's S-sweep measurements in the curves (as the built-in defaults have them),
  // every PERF.md sweep point, bf16 and fp8, is picked right.
  const CostModel w = quick_grid_h16_q8(true);
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    EXPECT_EQ(pick(w, 4096, kv), "cuda_rowwise");
    for (int64_t s : {16384, 65536, 262144, 1048576}) EXPECT_EQ(pick(w, s, kv), "cuda_fold");
  }
  // The same from the built-in H200 profile.
  const CostModel* b = builtin_profile().find("NVIDIA H200");
  ASSERT_NE(b, nullptr);
  EXPECT_FALSE(b->provisional());
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    EXPECT_EQ(pick(*b, 4096, kv), "cuda_rowwise");
    for (int64_t s : {16384, 65536, 262144, 1048576}) EXPECT_EQ(pick(*b, s, kv), "cuda_fold");
  }
}

// ---- Profiles -----------------------------------------------------------------------------------

TEST(Profile, BuiltinParsesAndCoversTheH200) {
  const Profile& p = builtin_profile();
  const CostModel* h200 = p.find("NVIDIA H200");
  ASSERT_NE(h200, nullptr);
  for (const char* b : {"cuda_fold", "cuda_rowwise"}) {
    for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
      for (int h : {16, 128}) {
        for (int q : {2, 4, 8}) {
          for (bool det : {false, true}) {
            const CostEntry* e = h200->find(b, kv, h, q, det);
            ASSERT_NE(e, nullptr) << b;
            EXPECT_EQ(e->heads, h);
            EXPECT_EQ(e->q_len, q);
            EXPECT_EQ(e->deterministic, det);
            EXPECT_GE(e->curve.size(), 5u);
            EXPECT_EQ(e->batch.size(), 6u);  // B 4|16|64 x S 4096|32768
          }
        }
      }
    }
  }
  EXPECT_FALSE(h200->provisional());
  // A measurement, not hand-made numbers: the source names the calibration run.
  EXPECT_CONTAINS(h200->source(), "mlaspec calibrate on NVIDIA H200");
  EXPECT_CONTAINS(h200->source(), "full grid");
  ASSERT_NE(p.find("cpu"), nullptr);
  EXPECT_NE(p.find("cpu")->find("cpu_reference", DType::kFP8E4M3, 16), nullptr);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_same_entries(const CostModel& a, const CostModel& b) {
  ASSERT_EQ(a.entries().size(), b.entries().size()) << a.machine();
  for (size_t i = 0; i < a.entries().size(); ++i) {
    const CostEntry& x = a.entries()[i];
    const CostEntry& y = b.entries()[i];
    SCOPED_TRACE(a.machine() + " entry " + std::to_string(i));
    EXPECT_EQ(x.backend, y.backend);
    EXPECT_EQ(x.kv_dtype, y.kv_dtype);
    EXPECT_EQ(x.heads, y.heads);
    EXPECT_EQ(x.q_len, y.q_len);
    EXPECT_EQ(x.deterministic, y.deterministic);
    EXPECT_EQ(x.fp8_math, y.fp8_math);
    EXPECT_EQ(x.terms.fixed_us, y.terms.fixed_us);
    EXPECT_EQ(x.terms.us_per_mb, y.terms.us_per_mb);
    EXPECT_EQ(x.terms.us_per_gflop, y.terms.us_per_gflop);
    EXPECT_EQ(x.points, y.points);
    EXPECT_EQ(x.rms_rel_err, y.rms_rel_err);
    EXPECT_EQ(x.max_rel_err, y.max_rel_err);
    ASSERT_EQ(x.curve.size(), y.curve.size());
    for (size_t k = 0; k < x.curve.size(); ++k) {
      EXPECT_EQ(x.curve[k].seq_len, y.curve[k].seq_len);
      EXPECT_EQ(x.curve[k].us, y.curve[k].us);
    }
    ASSERT_EQ(x.batch.size(), y.batch.size());
    for (size_t k = 0; k < x.batch.size(); ++k) {
      EXPECT_EQ(x.batch[k].batch, y.batch[k].batch);
      EXPECT_EQ(x.batch[k].seq_len, y.batch[k].seq_len);
      EXPECT_EQ(x.batch[k].us, y.batch[k].us);
    }
  }
}

// The library embeds data/profiles/*.json at build time: the embedded text is each file byte for
// byte, and the built-in profile holds what the files hold.
TEST(Profile, EmbeddedProfilesAreTheDataFiles) {
  const std::string dir = std::string(MLASPEC_SOURCE_DIR) + "/data/profiles";
  std::vector<std::string> on_disk;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() == ".json") on_disk.push_back(f.path().filename().string());
  }
  std::sort(on_disk.begin(), on_disk.end());
  std::vector<std::string> embedded;
  for (const detail::EmbeddedProfile& e : detail::embedded_gpu_profiles()) {
    embedded.emplace_back(e.name);
  }
  EXPECT_EQ(embedded, on_disk) << "rebuild after adding or removing a data/profiles file";
  ASSERT_FALSE(embedded.empty());
  for (const detail::EmbeddedProfile& e : detail::embedded_gpu_profiles()) {
    const std::string text = read_file(dir + "/" + std::string(e.name));
    EXPECT_EQ(e.json, text) << e.name;
    auto file = load_profile_file(dir + "/" + std::string(e.name));
    ASSERT_TRUE(file.ok()) << file.status().message();
    for (const CostModel& m : file->machines) {
      const CostModel* b = builtin_profile().find(m.machine());
      ASSERT_NE(b, nullptr) << m.machine();
      EXPECT_EQ(b->provisional(), m.provisional());
      expect_same_entries(*b, m);
    }
  }
}

// Each shipped profile is exactly what `mlaspec calibrate --out` writes: the writer,
// merge_profile_json, given a file's models and its other per-machine keys, reproduces the file
// byte for byte, and what it writes reads back into the same profile.
TEST(Profile, ShippedProfilesAreWhatCalibrateWrites) {
  using nlohmann::json;
  for (const detail::EmbeddedProfile& e : detail::embedded_gpu_profiles()) {
    SCOPED_TRACE(std::string(e.name));
    auto parsed = parse_profile(e.json, "shipped");
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    const json root = json::parse(e.json);
    std::string rewritten;
    for (const CostModel& m : parsed->machines) {
      json extra = root["machines"][m.machine()];
      const std::string source = extra.value("source", "");
      for (const char* k : {"models", "source", "provisional"}) extra.erase(k);
      CostModel fresh(m.machine(), source, {m.entries().begin(), m.entries().end()});
      fresh.set_provisional(m.provisional());
      auto text = merge_profile_json(rewritten, fresh, extra.dump());
      ASSERT_TRUE(text.ok()) << text.status().message();
      rewritten = *text;
    }
    EXPECT_EQ(rewritten, e.json);
    auto back = parse_profile(rewritten, "shipped");
    ASSERT_TRUE(back.ok()) << back.status().message();
    ASSERT_EQ(back->machines.size(), parsed->machines.size());
    for (size_t i = 0; i < parsed->machines.size(); ++i) {
      EXPECT_EQ(back->machines[i].source(), parsed->machines[i].source());
      expect_same_entries(back->machines[i], parsed->machines[i]);
    }
  }
}

std::string model_json(const std::string& extra_field, const std::string& value) {
  return R"({"format": "mlaspec-profile", "version": 1, "machines": {"G": {"models": [
      {"backend": "cuda_fold", "kv": "bf16", "heads": 16, "fixed_us": 1, "us_per_mb": 1,
       "us_per_gflop": 1)" +
         (extra_field.empty() ? std::string() : ", \"" + extra_field + "\": " + value) + "}]}}}";
}

TEST(Profile, MalformedProfilesSayWhatAndWhere) {
  auto msg = [](const std::string& text) {
    auto p = parse_profile(text, "p.json");
    EXPECT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status().code(), StatusCode::kDataLoss);
    return p.status().message();
  };
  EXPECT_TRUE(parse_profile(model_json("", ""), "p.json").ok());
  EXPECT_CONTAINS(msg("{\"version\": 1, \"machines\": {"), "p.json: not valid JSON");
  // A number JSON allows but a double cannot hold is an error, not an exception out of the
  // parser (the profile fuzz target's first finding: it ended the process).
  EXPECT_CONTAINS(msg("{\"version\": 3, \"machines\": {\"G\": {\"x\": 1e400}}}"),
                  "p.json: not valid JSON");
  EXPECT_CONTAINS(msg("[]"), "expected an object");
  EXPECT_CONTAINS(msg("{\"machines\": {}}"), "version");
  EXPECT_CONTAINS(msg("{\"version\": 4, \"machines\": {}}"), "unsupported version 4");
  EXPECT_CONTAINS(msg("{\"version\": 0, \"machines\": {}}"), "unsupported version 0");
  EXPECT_CONTAINS(msg("{\"version\": 1}"), "machines");
  EXPECT_CONTAINS(msg("{\"version\": 1, \"format\": \"x\", \"machines\": {}}"), "format");
  EXPECT_CONTAINS(msg("{\"version\": 1, \"machines\": {\"G\": {}}}"), "machines.\"G\".models");
  std::string bad = model_json("", "");
  bad.replace(bad.find("\"us_per_mb\": 1"), 14, "\"us_per_mb\": \"fast\"");
  const std::string m = msg(bad);
  EXPECT_CONTAINS(m, "machines.\"G\".models[0].us_per_mb");
  EXPECT_CONTAINS(m, "expected a finite number >= 0, got \"fast\"");
  bad = model_json("", "");
  bad.replace(bad.find("\"fixed_us\": 1"), 13, "\"fixed_us\": -1");
  EXPECT_CONTAINS(msg(bad), "fixed_us");
  EXPECT_CONTAINS(msg(model_json("us_per_MB", "1")), "unknown key \"us_per_MB\"");
  bad = model_json("", "");
  bad.replace(bad.find("\"kv\": \"bf16\""), 12, "\"kv\": \"f32\"");
  EXPECT_CONTAINS(msg(bad), "models[0].kv: expected \"bf16\", \"fp8\" or \"fp8tile\"");
  bad = model_json("", "");
  bad.replace(bad.find("\"fixed_us\": 1,"), 14, "");
  EXPECT_CONTAINS(msg(bad), "missing \"fixed_us\"");
  std::string dup = R"({"version": 1, "machines": {"G": {"models": [
      {"backend": "a", "kv": "bf16", "fixed_us": 1, "us_per_mb": 1, "us_per_gflop": 1},
      {"backend": "a", "kv": "bf16", "fixed_us": 2, "us_per_mb": 1, "us_per_gflop": 1}]}}})";
  EXPECT_CONTAINS(msg(dup), "duplicate model for backend a");
  // The same backend, kv and H at two q_len is not a duplicate; the same q_len is.
  std::string two_q = R"({"version": 2, "machines": {"G": {"models": [
      {"backend": "a", "kv": "bf16", "q_len": 2, "fixed_us": 1, "us_per_mb": 1, "us_per_gflop": 1},
      {"backend": "a", "kv": "bf16", "q_len": 4, "fixed_us": 2, "us_per_mb": 1, "us_per_gflop": 1}]}}})";
  EXPECT_TRUE(parse_profile(two_q, "p.json").ok());
  std::string dup_q = two_q;
  dup_q.replace(dup_q.find("\"q_len\": 4"), 10, "\"q_len\": 2");
  EXPECT_CONTAINS(msg(dup_q), "duplicate model for backend a, kv bf16, heads 0, q_len 2");
  // ... nor are the same backend, kv, H and q_len in the two modes; the same mode twice is.
  std::string two_modes = two_q;
  two_modes.replace(two_modes.find("\"q_len\": 4"), 10, "\"q_len\": 2, \"det\": true");
  EXPECT_TRUE(parse_profile(two_modes, "p.json").ok());
  std::string dup_det = two_modes;
  dup_det.replace(dup_det.find("\"q_len\": 2,"), 12, "\"q_len\": 2, \"det\": true,");
  EXPECT_CONTAINS(msg(dup_det),
                  "duplicate model for backend a, kv bf16, heads 0, q_len 2, deterministic");
  EXPECT_CONTAINS(msg(model_json("det", "1")),
                  "models[0].det: expected true (measured in deterministic mode) or false, got 1");
  EXPECT_CONTAINS(msg(model_json("q_len", "-1")), "models[0].q_len: expected an integer >= 0");
  EXPECT_CONTAINS(msg(model_json("q_len", "2.5")), "models[0].q_len");
  // points is a count: a huge or fractional one is refused, not converted (fuzz.profile found
  // 1.16e17 converted to int, undefined behaviour).
  EXPECT_TRUE(parse_profile(model_json("points", "17"), "p.json").ok());
  EXPECT_CONTAINS(msg(model_json("points", "1.1647e17")),
                  "models[0].points: expected an integer 0..16777216, got 1.1647e+17");
  EXPECT_CONTAINS(msg(model_json("points", "2.5")), "models[0].points: expected an integer");
  EXPECT_CONTAINS(msg(model_json("points", "-1")), "models[0].points: expected an integer");
}

TEST(Profile, BadCurvesSayWhereAndWhy) {
  auto msg = [](const std::string& curve) {
    auto p = parse_profile(model_json("curve", curve), "p.json");
    EXPECT_FALSE(p.ok()) << curve;
    return p.status().message();
  };
  EXPECT_TRUE(parse_profile(model_json("curve", "[[1, 5], [2, 6.5], [1024, 7]]"), "p.json").ok());
  EXPECT_TRUE(parse_profile(model_json("curve", "[]"), "p.json").ok());
  EXPECT_CONTAINS(msg("{}"), "models[0].curve: expected an array of [seq_len, us] pairs");
  EXPECT_CONTAINS(msg("[[1024, 5], 7]"), "models[0].curve[1]: expected a [seq_len, us] pair");
  EXPECT_CONTAINS(msg("[[1024, 5, 6]]"), "models[0].curve[0]: expected a [seq_len, us] pair");
  EXPECT_CONTAINS(msg("[[0, 5]]"), "curve[0]: seq_len: expected an integer >= 1, got 0");
  EXPECT_CONTAINS(msg("[[1.5, 5]]"), "curve[0]: seq_len: expected an integer >= 1");
  EXPECT_CONTAINS(msg("[[1024, 5], [2048, 0]]"), "curve[1]: us: expected a finite number > 0");
  EXPECT_CONTAINS(msg("[[1024, -3]]"), "curve[0]: us: expected a finite number > 0");
  EXPECT_CONTAINS(msg("[[1024, \"slow\"]]"), "curve[0]: us: expected a finite number > 0");
  EXPECT_CONTAINS(msg("[[2048, 5], [1024, 6]]"),
                  "curve[1]: seq_len 1024 is not greater than the previous point's 2048");
  EXPECT_CONTAINS(msg("[[1024, 5], [1024, 6]]"), "curve[1]: seq_len 1024 is not greater");
}

TEST(Profile, BadBatchGridsSayWhereAndWhy) {
  auto msg = [](const std::string& grid) {
    auto p = parse_profile(model_json("batch", grid), "p.json");
    EXPECT_FALSE(p.ok()) << grid;
    return p.status().message();
  };
  auto ok = parse_profile(model_json("batch",
                                     "[[4, 1024, 5], [8, 1024, 9], [4, 4096, 12], "
                                     "[8, 4096, 20]]"),
                          "p.json");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->find("G")->entries()[0].batch.size(), 4u);
  EXPECT_CONTAINS(msg("{}"), "models[0].batch: expected an array of [batch, seq_len, us] triples");
  EXPECT_CONTAINS(msg("[[4, 1024]]"), "models[0].batch[0]: expected a [batch, seq_len, us] triple");
  EXPECT_CONTAINS(msg("[[1, 1024, 5]]"), "batch[0]: batch: expected an integer 2..65536, got 1");
  EXPECT_CONTAINS(msg("[[4, 0, 5]]"), "batch[0]: seq_len: expected an integer >= 1, got 0");
  EXPECT_CONTAINS(msg("[[4, 1024, 0]]"), "batch[0]: us: expected a finite number > 0");
  EXPECT_CONTAINS(msg("[[4, 1024, 5], [4, 1024, 6]]"),
                  "batch[1]: batch 4, seq_len 1024 is measured twice");
  EXPECT_CONTAINS(msg("[[4, 1024, 5], [8, 1024, 9], [4, 4096, 12]]"),
                  "models[0].batch: holds 3 points where its 2 batch sizes x 2 seq_lens make 4 (a "
                  "batch grid measures every pair)");
}

TEST(Profile, OldFormatStillLoadsAndNewFormatRoundTrips) {
  // Version 1, as the first calibrate wrote it: no q_len, no curve.
  auto old = parse_profile(model_json("points", "15"), "old.json");
  ASSERT_TRUE(old.ok()) << old.status().message();
  const CostEntry* e = old->find("G")->find("cuda_fold", DType::kBF16, 16, 8);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->q_len, 0);
  EXPECT_TRUE(e->curve.empty());
  EXPECT_EQ(e->points, 15);
  // Without a curve the estimate is the linear model at every S.
  EXPECT_DOUBLE_EQ(*old->find("G")->estimate_us("cuda_fold", KvReadPattern::kOncePerRequest,
                                                uniform_shape(1, 16, 8, 4096)),
                   e->terms.estimate_us(cost_features(uniform_shape(1, 16, 8, 4096),
                                                      KvReadPattern::kOncePerRequest)));
  // Version 2 round trip through merge_profile_json keeps q_len and the curve exactly.
  CostModel m("G", "test", {});
  CostEntry n;
  n.backend = "cuda_rowwise";
  n.heads = 16;
  n.q_len = 8;
  n.terms = {15, 0.28, 0};
  n.curve = {{2048, 20.4}, {8192, 38.3}, {32768, 116.2}};
  n.batch = {{4, 2048, 40.5}, {4, 8192, 120.25}};
  m.add(n);
  auto text = merge_profile_json("", m);
  ASSERT_TRUE(text.ok());
  EXPECT_CONTAINS(*text, "[2048, 20.4]");  // one pair per line
  EXPECT_CONTAINS(*text, "\"version\": 3");
  EXPECT_EQ(text->find("\"det\""), std::string::npos);  // written only for det entries
  auto back = parse_profile(*text, "round trip");
  ASSERT_TRUE(back.ok()) << back.status().message();
  const CostEntry* r = back->find("G")->find("cuda_rowwise", DType::kBF16, 16, 8);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->q_len, 8);
  ASSERT_EQ(r->curve.size(), 3u);
  EXPECT_EQ(r->curve[1].seq_len, 8192);
  EXPECT_DOUBLE_EQ(r->curve[1].us, 38.3);
  ASSERT_EQ(r->batch.size(), 2u);
  EXPECT_EQ(r->batch[1].batch, 4);
  EXPECT_EQ(r->batch[1].seq_len, 8192);
  EXPECT_DOUBLE_EQ(r->batch[1].us, 120.25);
  EXPECT_CONTAINS(*text, "[4, 2048, 40.5]");
  // Merging a version-1 file: its entries stay (q_len 0) beside the new q_len-8 one.
  auto merged = merge_profile_json(model_json("", ""), m);
  ASSERT_TRUE(merged.ok());
  auto mp = parse_profile(*merged, "merged");
  ASSERT_TRUE(mp.ok()) << mp.status().message();
  EXPECT_EQ(mp->find("G")->entries().size(), 2u);
  // A deterministic entry round-trips with "det": true, and merging it keeps the default one.
  CostModel d("G", "test", {});
  CostEntry de = n;
  de.deterministic = true;
  de.terms.fixed_us = 30;
  d.add(de);
  auto both = merge_profile_json(*text, d);
  ASSERT_TRUE(both.ok());
  EXPECT_CONTAINS(*both, "\"det\": true");
  auto bp = parse_profile(*both, "both modes");
  ASSERT_TRUE(bp.ok()) << bp.status().message();
  ASSERT_EQ(bp->find("G")->entries().size(), 2u);
  EXPECT_DOUBLE_EQ(bp->find("G")->find("cuda_rowwise", DType::kBF16, 16, 8, true)->terms.fixed_us,
                   30);
  EXPECT_DOUBLE_EQ(bp->find("G")->find("cuda_rowwise", DType::kBF16, 16, 8, false)->terms.fixed_us,
                   15);
  // Re-merging the default-mode model replaces the default entry only.
  n.terms.fixed_us = 16;
  CostModel n2("G", "test", {});
  n2.add(n);
  auto again = parse_profile(*merge_profile_json(*both, n2), "again");
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->find("G")->entries().size(), 2u);
  EXPECT_DOUBLE_EQ(
      again->find("G")->find("cuda_rowwise", DType::kBF16, 16, 8, false)->terms.fixed_us, 16);
  EXPECT_DOUBLE_EQ(
      again->find("G")->find("cuda_rowwise", DType::kBF16, 16, 8, true)->terms.fixed_us, 30);
}

// A calibrate run of one mode, one dtype or without the S-sweep check (--no-verify) keeps the
// machine's other crossovers and sweep checks beside its own, replaces the ones it measured
// again, and the worst regrets are over what is kept. Old records of another shape neither throw
// nor vanish.
TEST(Profile, MergeKeepsTheCrossoversAndSweepChecksARunDidNotMeasure) {
  using nlohmann::json;
  CostEntry e;
  e.backend = "cuda_fold";
  e.heads = 16;
  e.q_len = 8;
  e.terms = {15, 0.28, 0};
  CostModel run("G", "test", {e});
  auto crossover = [](const char* kv, bool det, double regret) {
    return json{{"kv", kv},
                {"fp8_math", false},
                {"heads", 16},
                {"q_len", 8},
                {"det", det},
                {"grid_regret_max", regret},
                {"grid_loo_regret_max", 2 * regret}};
  };
  auto sweep = [](const char* config, double regret) {
    return json{{"config", config}, {"regret", regret}};
  };
  auto machine = [](const std::string& text) { return json::parse(text)["machines"]["G"]; };
  // The default mode, with its sweep check.
  const json first = {{"crossovers", {crossover("bf16", false, 0.02)}},
                      {"grid_regret_max", 0.02},
                      {"grid_loo_regret_max", 0.04},
                      {"sweep_check", {sweep("B=1,H=16,q=8,S=4096,kv=bf16", 0.01)}},
                      {"sweep_regret_max", 0.01}};
  auto a = merge_profile_json("", run, first.dump());
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(machine(*a)["grid_regret_max"], 0.02);
  // Then the deterministic mode with --no-verify: both modes' crossovers, the first sweep check.
  const json second = {{"crossovers", {crossover("bf16", true, 0.05)}},
                       {"grid_regret_max", 0.05},
                       {"grid_loo_regret_max", 0.1},
                       {"sweep_check", json::array()},
                       {"sweep_regret_max", 0}};
  auto b = merge_profile_json(*a, run, second.dump());
  ASSERT_TRUE(b.ok()) << b.status().message();
  json mb = machine(*b);
  ASSERT_EQ(mb["crossovers"].size(), 2u);
  EXPECT_EQ(mb["crossovers"][0]["det"], true);  // this run's first
  EXPECT_EQ(mb["crossovers"][1]["det"], false);
  EXPECT_EQ(mb["grid_regret_max"], 0.05);
  EXPECT_EQ(mb["grid_loo_regret_max"], 0.1);
  ASSERT_EQ(mb["sweep_check"].size(), 1u);
  EXPECT_EQ(mb["sweep_regret_max"], 0.01);
  // The default mode again, better: its crossover and sweep check are replaced, not repeated;
  // the worst regret is now the deterministic one kept.
  const json third = {{"crossovers", {crossover("bf16", false, 0.0)}},
                      {"grid_regret_max", 0.0},
                      {"grid_loo_regret_max", 0.0},
                      {"sweep_check", {sweep("B=1,H=16,q=8,S=4096,kv=bf16", 0.0)}},
                      {"sweep_regret_max", 0.0}};
  auto c = merge_profile_json(*b, run, third.dump());
  ASSERT_TRUE(c.ok()) << c.status().message();
  json mc = machine(*c);
  ASSERT_EQ(mc["crossovers"].size(), 2u);
  EXPECT_EQ(mc["crossovers"][0]["grid_regret_max"], 0.0);
  EXPECT_EQ(mc["grid_regret_max"], 0.05);
  ASSERT_EQ(mc["sweep_check"].size(), 1u);
  EXPECT_EQ(mc["sweep_check"][0]["regret"], 0.0);
  EXPECT_EQ(mc["sweep_regret_max"], 0.0);
  // Another dtype's crossover (fp8 in fp8 math) lives beside bf16's of the same H, q_len, mode.
  json other = third;
  other["crossovers"][0]["kv"] = "fp8";
  other["crossovers"][0]["fp8_math"] = true;
  auto d = merge_profile_json(*c, run, other.dump());
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(machine(*d)["crossovers"].size(), 3u);
  // Records of another shape (a number, a regret that is text) are kept and priced as 0.
  json odd = json::parse(*c);
  odd["machines"]["G"]["crossovers"].push_back(7);
  odd["machines"]["G"]["sweep_check"].push_back(sweep("B=2", 0.5));
  odd["machines"]["G"]["sweep_check"].back()["regret"] = "high";
  auto e2 = merge_profile_json(odd.dump(), run, third.dump());
  ASSERT_TRUE(e2.ok()) << e2.status().message();
  json me = machine(*e2);
  EXPECT_EQ(me["crossovers"].size(), 3u);
  EXPECT_EQ(me["sweep_check"].size(), 2u);
  EXPECT_EQ(me["sweep_regret_max"], 0.0);
  // A first run (no file yet) writes its extra unchanged.
  EXPECT_EQ(machine(*a)["crossovers"].size(), 1u);
  EXPECT_EQ(machine(*a)["sweep_regret_max"], 0.01);
}

// fp8-math entries ("fp8_math": true) round-trip, live beside the exact entries of the same
// (backend, kv, H, q_len, mode), are merged by math, and exist for fp8 KV only; files without
// the key read as exact math.
TEST(Profile, Fp8MathEntriesRoundTripMergeByMathAndNeedFp8Kv) {
  // Without the key (every file written before calibrate measured the mode): exact math.
  auto old = parse_profile(model_json("", ""), "old.json");
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_FALSE(old->find("G")->entries()[0].fp8_math);
  CostEntry exact;
  exact.backend = "cuda_fold";
  exact.kv_dtype = DType::kFP8E4M3;
  exact.heads = 16;
  exact.q_len = 8;
  exact.terms = {20, 0.3, 0};
  exact.curve = {{4096, 30.5}, {65536, 180.25}};
  CostEntry f8 = exact;
  f8.fp8_math = true;
  f8.terms.fixed_us = 25;
  f8.curve = {{4096, 33.5}, {65536, 190.75}};
  CostModel both("G", "test", {exact, f8});
  auto text = merge_profile_json("", both);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_CONTAINS(*text, "\"fp8_math\": true");
  EXPECT_CONTAINS(*text, "\"version\": 3");  // no new version: absent = exact math
  auto back = parse_profile(*text, "round trip");
  ASSERT_TRUE(back.ok()) << back.status().message();
  expect_same_entries(*back->find("G"), both);
  EXPECT_DOUBLE_EQ(
      back->find("G")->find("cuda_fold", DType::kFP8E4M3, 16, 8, false, true)->curve[1].us, 190.75);
  EXPECT_DOUBLE_EQ(back->find("G")->find("cuda_fold", DType::kFP8E4M3, 16, 8)->curve[1].us, 180.25);
  // Merges one entry into `existing`; the merged file's (exact, fp8-math) fixed_us, -1 if absent,
  // and its text.
  auto merge_one = [](const std::string& existing, const CostEntry& e) {
    auto merged = merge_profile_json(existing, CostModel("G", "again", {e}));
    EXPECT_TRUE(merged.ok()) << merged.status().message();
    const std::string out = merged.ok() ? *merged : std::string();
    auto p = parse_profile(out, "merged");
    EXPECT_TRUE(p.ok()) << p.status().message();
    if (!p.ok()) return std::make_tuple(-1.0, -1.0, out);
    EXPECT_EQ(p->find("G")->entries().size(), 2u);
    auto fixed = [&](bool f8) {
      const CostEntry* x = p->find("G")->find("cuda_fold", DType::kFP8E4M3, 16, 8, false, f8);
      return x && x->fp8_math == f8 ? x->terms.fixed_us : -1.0;
    };
    return std::make_tuple(fixed(false), fixed(true), out);
  };
  // Merging a run without fp8 math keeps the fp8-math entry and replaces the exact one ...
  CostEntry exact2 = exact;
  exact2.terms.fixed_us = 21;
  const auto [e1, m1, merged] = merge_one(*text, exact2);
  EXPECT_DOUBLE_EQ(e1, 21);
  EXPECT_DOUBLE_EQ(m1, 25);
  // ... and one of fp8 math replaces the fp8-math entry only.
  CostEntry f8b = f8;
  f8b.terms.fixed_us = 26;
  const auto [e2, m2, merged2] = merge_one(merged, f8b);
  EXPECT_DOUBLE_EQ(e2, 21);
  EXPECT_DOUBLE_EQ(m2, 26);
  // An fp8-math entry on other KV than fp8 is refused, naming the entry; so is a non-boolean
  // key, and the same fp8-math entry twice.
  auto msg = [](const std::string& json_text) {
    auto p = parse_profile(json_text, "p.json");
    EXPECT_FALSE(p.ok()) << json_text;
    return p.status().message();
  };
  EXPECT_CONTAINS(msg(model_json("fp8_math", "true")),
                  "p.json: machines.\"G\".models[0].fp8_math: the cuda_fold entry (kv bf16, "
                  "heads 16, q_len 0) is marked fp8 math, which exists for kv \"fp8\" only");
  EXPECT_TRUE(parse_profile(model_json("fp8_math", "false"), "p.json").ok());
  EXPECT_CONTAINS(msg(model_json("fp8_math", "1")),
                  "models[0].fp8_math: expected true (measured in fp8 math) or false, got 1");
  std::string dup = *text;
  const size_t at = dup.find("\"fixed_us\": 20");
  ASSERT_NE(at, std::string::npos);
  dup.insert(at, "\"fp8_math\": true, ");
  EXPECT_CONTAINS(msg(dup),
                  "duplicate model for backend cuda_fold, kv fp8, heads 16, q_len 8, fp8 math");
}

class ProfileFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("mlaspec_profile_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(ProfileFiles, MalformedFileIsAnErrorWhenExplicitElseDefaultsWithAWarning) {
  const std::string path = write("bad.json", "{\"version\": 1, \"machines\": ");
  auto strict = resolve_cost_model({path, "NVIDIA H200", true});
  ASSERT_FALSE(strict.ok());
  EXPECT_EQ(strict.status().code(), StatusCode::kDataLoss);
  EXPECT_CONTAINS(strict.status().message(), path);
  EXPECT_CONTAINS(strict.status().message(), "not valid JSON");

  auto lenient = resolve_cost_model({path, "NVIDIA H200", false});
  ASSERT_TRUE(lenient.ok());
  ASSERT_FALSE(lenient->warnings.empty());
  EXPECT_CONTAINS(lenient->warnings[0], path);
  EXPECT_CONTAINS(lenient->warnings[0], "using built-in defaults");
  EXPECT_NE(lenient->model.find("cuda_fold", DType::kBF16, 16), nullptr);
  EXPECT_EQ(lenient->model.machine(), "NVIDIA H200");
}

TEST_F(ProfileFiles, ProfileForThisGpuIsUsedWithoutWarnings) {
  CostModel m("Test GPU", "mlaspec calibrate (test)", {});
  CostEntry e;
  e.backend = "cuda_fold";
  e.heads = 16;
  e.terms = {5, 0.2, 0.1};
  m.add(e);
  auto text = merge_profile_json("", m);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  const std::string path = write("p.json", *text);
  auto r = resolve_cost_model({path, "Test GPU", true});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->warnings.empty()) << r->warnings[0];
  const CostEntry* got = r->model.find("cuda_fold", DType::kBF16, 16);
  ASSERT_NE(got, nullptr);
  EXPECT_DOUBLE_EQ(got->terms.fixed_us, 5);
  EXPECT_DOUBLE_EQ(got->terms.us_per_mb, 0.2);
  EXPECT_CONTAINS(r->model.source(), path);
  // CPU backends come along from the built-in "cpu" section.
  EXPECT_NE(r->model.find("cpu_reference", DType::kBF16, 16), nullptr);
}

TEST_F(ProfileFiles, UnknownGpuAndProvisionalDefaultsWarn) {
  auto r = resolve_cost_model({(dir_ / "missing.json").string(), "NVIDIA B300", false});
  ASSERT_TRUE(r.ok());
  bool uncalibrated = false;
  for (const auto& w : r->warnings) uncalibrated |= w.find("NVIDIA B300") != std::string::npos;
  EXPECT_TRUE(uncalibrated);
  EXPECT_NE(r->model.find("cuda_rowwise", DType::kFP8E4M3, 128), nullptr);
  ASSERT_FALSE(r->notes.empty());
  EXPECT_CONTAINS(r->notes[0], "no profile file at");
  // An explicit missing file is an error.
  auto strict = resolve_cost_model({(dir_ / "missing.json").string(), "NVIDIA H200", true});
  EXPECT_EQ(strict.status().code(), StatusCode::kNotFound);
  // CPU only: the built-in cpu model, no warning.
  auto cpu = resolve_cost_model({(dir_ / "missing.json").string(), "", false});
  ASSERT_TRUE(cpu.ok());
  EXPECT_TRUE(cpu->warnings.empty());
  EXPECT_EQ(cpu->model.machine(), "cpu");
}

TEST_F(ProfileFiles, MergeKeepsOtherMachines) {
  CostModel a("GPU A", "a", {});
  CostModel b("GPU B", "b", {});
  CostEntry e;
  e.backend = "cuda_fold";
  e.kv_dtype = DType::kFP8E4M3;
  e.heads = 128;
  e.terms = {1, 2, 3};
  e.points = 30;
  e.rms_rel_err = 0.02;
  a.add(e);
  b.add(e);
  auto one = merge_profile_json("", a);
  ASSERT_TRUE(one.ok());
  auto two = merge_profile_json(*one, b, R"({"samples": [1, 2]})");
  ASSERT_TRUE(two.ok());
  auto p = parse_profile(*two, "merged");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  ASSERT_NE(p->find("GPU A"), nullptr);
  ASSERT_NE(p->find("GPU B"), nullptr);
  const CostEntry* got = p->find("GPU B")->find("cuda_fold", DType::kFP8E4M3, 128);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->points, 30);
  EXPECT_DOUBLE_EQ(got->terms.us_per_gflop, 3);
  EXPECT_CONTAINS(*two, "\"samples\"");
  // Re-calibrating one dtype of a machine keeps its other entries and replaces the same ones.
  CostModel b2("GPU B", "b2", {});
  CostEntry bf = e;
  bf.kv_dtype = DType::kBF16;
  b2.add(bf);
  CostEntry fp = e;
  fp.terms = {9, 9, 9};
  b2.add(fp);
  auto three = merge_profile_json(*two, b2);
  ASSERT_TRUE(three.ok());
  auto p3 = parse_profile(*three, "merged");
  ASSERT_TRUE(p3.ok()) << p3.status().to_string();
  EXPECT_EQ(p3->find("GPU B")->entries().size(), 2u);
  EXPECT_DOUBLE_EQ(p3->find("GPU B")->find("cuda_fold", DType::kFP8E4M3, 128)->terms.fixed_us, 9);
  EXPECT_NE(p3->find("GPU B")->find("cuda_fold", DType::kBF16, 128), nullptr);
  CostModel b3("GPU B", "b3", {});
  CostEntry h16 = e;
  h16.heads = 16;
  b3.add(h16);
  auto four = merge_profile_json(*three, b3);
  ASSERT_TRUE(four.ok());
  EXPECT_EQ(parse_profile(*four, "merged")->find("GPU B")->entries().size(), 3u);
  EXPECT_FALSE(merge_profile_json("{oops", b).ok());
}

TEST(Profile, DefaultPathHonoursTheEnvironment) {
  const char* saved = std::getenv("MLASPEC_PROFILE");
  const std::string keep = saved ? saved : "";
  setenv("MLASPEC_PROFILE", "/tmp/x/profile.json", 1);
  EXPECT_EQ(default_profile_path(), "/tmp/x/profile.json");
  unsetenv("MLASPEC_PROFILE");
  EXPECT_CONTAINS(default_profile_path(), "mlaspec/profile.json");
  if (saved) setenv("MLASPEC_PROFILE", keep.c_str(), 1);
}

}  // namespace
}  // namespace mlaspec::attn
