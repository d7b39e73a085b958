// Calibration analysis on synthetic measurements with a known answer.
#include "mlaspec/attention/calibration.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attention/cuda/traits.h"
#include "common/test_helpers.h"
#include "mlaspec/attention/cpu_caps.h"

namespace mlaspec::attn {
namespace {

// A registry with the two CUDA backends' caps and read patterns (never instantiated here).
std::unique_ptr<BackendRegistry> cuda_pair() {
  auto reg = std::make_unique<BackendRegistry>();
  auto none = []() -> Result<std::unique_ptr<Backend>> { return unsupported("not in this test"); };
  throw_if_error(reg->add({cuda::kFoldCaps, KvReadPattern::kOncePerRequest, none}));
  throw_if_error(reg->add({cuda::kRowwiseCaps, KvReadPattern::kOncePerQueryToken, none}));
  return reg;
}

// Rowwise costs 5 + S/1000 µs, fold 20 + S/4000 µs (B=1, q_len 8, H=16, bf16): they cross at
// S = 20000. Measured at powers of two from 1k to 256k, and on a 2x2 batch grid.
std::vector<CalibrationPoint> synthetic(bool det) {
  std::vector<CalibrationPoint> pts;
  for (int64_t s = 1024; s <= (int64_t{1} << 18); s *= 2) {
    pts.push_back({0, DType::kBF16, 16, 8, s, 20 + s / 4000.0, det, 1});
    pts.push_back({1, DType::kBF16, 16, 8, s, 5 + s / 1000.0, det, 1});
  }
  for (int b : {4, 16}) {
    for (int64_t s : {4096, 32768}) {
      pts.push_back({0, DType::kBF16, 16, 8, s, 20 + b * s / 4000.0, det, b});
      pts.push_back({1, DType::kBF16, 16, 8, s, 5 + b * s / 1000.0, det, b});
    }
  }
  return pts;
}

TEST(Calibration, FitKeepsCurvesAndGridsAndComparesTheBackends) {
  auto reg = cuda_pair();
  const std::vector<CalibrationPoint> pts = synthetic(false);
  const CalibrationGrid grid{{0, 1}, {DType::kBF16}, {16}, {8}, {false}};
  const CalibrationFit fit = fit_calibration(*reg, pts, grid, "Test GPU", "synthetic");
  EXPECT_TRUE(fit.skipped.empty());
  ASSERT_EQ(fit.model.entries().size(), 2u);
  const CostEntry* fold = fit.model.find("cuda_fold", DType::kBF16, 16, 8);
  ASSERT_NE(fold, nullptr);
  EXPECT_EQ(fold->curve.size(), 9u);
  EXPECT_EQ(fold->batch.size(), 4u);
  EXPECT_EQ(fold->points, 13);
  EXPECT_NEAR(fold->curve.front().us, 20 + 1024 / 4000.0, 1e-3);

  const GridComparison cmp =
      compare_backends(*reg, fit.model, pts, grid, "cuda_rowwise", "cuda_fold");
  ASSERT_EQ(cmp.rows.size(), 1u);
  const BackendComparison& r = cmp.rows[0];
  EXPECT_EQ(r.measured_seq_len, 32768);  // the first measured S past 20000
  EXPECT_EQ(r.measured(), "S=32768");
  EXPECT_EQ(r.model.short_winner, "cuda_rowwise");
  EXPECT_EQ(r.model.long_winner, "cuda_fold");
  EXPECT_GT(r.model.seq_len, 16384);
  EXPECT_LE(r.model.seq_len, 32768);
  // The curves make the measured points exact: no in-sample regret.
  EXPECT_EQ(r.regret, 0.0);
  EXPECT_EQ(cmp.worst, 0.0);
  EXPECT_TRUE(cmp.worst_at.empty());
  EXPECT_GE(r.loo_regret, 0.0);
  EXPECT_GE(r.short_fit_err, 0.0);
  EXPECT_GE(r.long_fit_err, 0.0);
}

TEST(Calibration, HolesAndUnknownBackendsAreHandled) {
  auto reg = cuda_pair();
  std::vector<CalibrationPoint> pts = synthetic(true);
  // A batch-grid point fold could not serve: its grid is dropped, its curve kept.
  std::erase_if(pts, [](const CalibrationPoint& p) {
    return p.backend == 0 && p.batch == 16 && p.seq_len == 32768;
  });
  const CalibrationGrid grid{{0, 1}, {DType::kBF16}, {16}, {8}, {true}};
  const CalibrationFit fit = fit_calibration(*reg, pts, grid, "Test GPU", "synthetic");
  const CostEntry* fold = fit.model.find("cuda_fold", DType::kBF16, 16, 8, true);
  ASSERT_NE(fold, nullptr);
  EXPECT_TRUE(fold->deterministic);
  EXPECT_TRUE(fold->batch.empty());
  EXPECT_EQ(fold->curve.size(), 9u);
  // Too few points to fit: skipped with the reason, not an entry.
  std::vector<CalibrationPoint> two = {pts[0], pts[2]};
  const CalibrationFit few = fit_calibration(*reg, two, grid, "Test GPU", "synthetic");
  EXPECT_TRUE(few.model.entries().empty());
  ASSERT_EQ(few.skipped.size(), 1u);
  EXPECT_CONTAINS(few.skipped[0], "cuda_fold kv=bf16 H=16 q=8 det: no model");
  // A comparison with a backend that is not registered has no rows.
  EXPECT_TRUE(
      compare_backends(*reg, fit.model, pts, grid, "cuda_rowwise", "cuda_other").rows.empty());
}

// fp8 math is one more dimension of the grid: fp8 KV measured in exact and fp8 math gets an entry
// per math, and a comparison row per (kv, math); other dtypes get no fp8-math rows. Here exact
// fp8 costs what the synthetic bf16 does (crossing at S = 20000); in fp8 math fold costs
// 20 + S/2000 and rowwise 5 + S/1500: they cross at S = 90000.
TEST(Calibration, Fp8MathIsOneMoreDimensionOfTheGrid) {
  auto reg = cuda_pair();
  std::vector<CalibrationPoint> pts = synthetic(false);
  for (CalibrationPoint& p : pts) p.kv = DType::kFP8E4M3;
  std::vector<CalibrationPoint> f8 = pts;
  for (CalibrationPoint& p : f8) {
    p.fp8_math = true;
    const double s = static_cast<double>(p.seq_len) * p.batch;
    p.us = p.backend == 0 ? 20 + s / 2000.0 : 5 + s / 1500.0;
  }
  pts.insert(pts.end(), f8.begin(), f8.end());
  CalibrationGrid grid{{0, 1}, {DType::kBF16, DType::kFP8E4M3}, {16}, {8}, {false}};
  grid.maths = {false, true};
  const CalibrationFit fit = fit_calibration(*reg, pts, grid, "Test GPU", "synthetic");
  EXPECT_TRUE(fit.skipped.empty());
  ASSERT_EQ(fit.model.entries().size(), 4u);  // (fold, rowwise) x (exact, fp8 math); no bf16 points
  const CostEntry* fold8 = fit.model.find("cuda_fold", DType::kFP8E4M3, 16, 8, false, true);
  ASSERT_NE(fold8, nullptr);
  EXPECT_TRUE(fold8->fp8_math);
  EXPECT_NEAR(fold8->curve.front().us, 20 + 1024 / 2000.0, 1e-3);
  EXPECT_EQ(fold8->batch.size(), 4u);
  const CostEntry* fold = fit.model.find("cuda_fold", DType::kFP8E4M3, 16, 8);
  ASSERT_NE(fold, nullptr);
  EXPECT_FALSE(fold->fp8_math);
  EXPECT_NEAR(fold->curve.front().us, 20 + 1024 / 4000.0, 1e-3);

  const GridComparison cmp =
      compare_backends(*reg, fit.model, pts, grid, "cuda_rowwise", "cuda_fold");
  // bf16 (exact only), fp8, fp8 in fp8 math.
  ASSERT_EQ(cmp.rows.size(), 3u);
  EXPECT_EQ(cmp.rows[0].kv, DType::kBF16);
  EXPECT_FALSE(cmp.rows[0].fp8_math);
  EXPECT_FALSE(cmp.rows[0].model.has_model);
  const BackendComparison& exact = cmp.rows[1];
  const BackendComparison& math = cmp.rows[2];
  EXPECT_EQ(exact.kv, DType::kFP8E4M3);
  EXPECT_FALSE(exact.fp8_math);
  EXPECT_EQ(math.kv, DType::kFP8E4M3);
  EXPECT_TRUE(math.fp8_math);
  // Each row from its own points and entries: the first measured S past 20000 and 90000.
  EXPECT_EQ(exact.measured_seq_len, 32768);
  EXPECT_LE(exact.model.seq_len, 32768);
  EXPECT_EQ(math.measured_seq_len, 131072);
  EXPECT_GT(math.model.seq_len, 65536);
  EXPECT_LE(math.model.seq_len, 131072);
  EXPECT_EQ(math.regret, 0.0);
  EXPECT_GE(math.long_fit_err, 0.0);
  EXPECT_GE(math.short_fit_err, 0.0);
}

}  // namespace
}  // namespace mlaspec::attn
