// Calibration analysis: from the times `mlaspec calibrate` measured (or a profile stored) to the
// cost model's entries, and how good the model's picks are on those measurements. Pure functions
// of the points: the command measures and prints, this decides what the numbers mean.
//
// - fit_calibration: one CostEntry per (backend, KV dtype, math, H, q_len, mode) holding the B=1
//   curve, the batch grid (when complete) and linear terms fitted to both (fit_cost_terms).
// - compare_backends: per (kv, math, H, q_len, mode), the crossover the model implies between a
// short
//   and a long backend (cuda_rowwise, cuda_fold), the first measured S where the long one was
//   faster, and auto's regret at each measured S: in-sample, and with that S left out of the
//   curves it estimates (an out-of-sample check of the interpolation).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mlaspec/attention/cost_model.h"
#include "mlaspec/attention/registry.h"

namespace mlaspec::attn {

// One measurement: backend (registry index) at (kv, math, H, q_len, S, mode), B requests of S
// tokens.
struct CalibrationPoint {
  int backend = -1;
  DType kv = DType::kBF16;
  int heads = 0, q_len = 0;
  int64_t seq_len = 0;
  double us = 0;
  bool det = false;       // measured in deterministic mode
  int batch = 1;          // > 1: a batch-grid point
  bool fp8_math = false;  // measured in fp8 math (kv fp8_e4m3 only)
};

// The grid the points cover (the axes to walk, in the order the report lists them).
struct CalibrationGrid {
  std::vector<int> backends;  // registry indices
  std::vector<DType> dtypes;
  std::vector<int> heads, qlens;
  std::vector<bool> modes;  // false = default mode first
  // Exact math (false) first, then fp8 math (true), which pairs with fp8_e4m3 KV only.
  std::vector<bool> maths = {false};
  // The (KV dtype, fp8 math) pairs to walk: each dtype with each of `maths` it has, in order.
  std::vector<std::pair<DType, bool>> kv_maths() const;
};

struct CalibrationFit {
  CostModel model;
  // A (backend, kv, math, H, q_len, mode) whose points could not be fitted, and why.
  std::vector<std::string> skipped;
};
// Curves keep each point's µs rounded to 0.001 (a repeated S keeps the last point); a batch grid
// with a hole (a point the backend could not serve) is left out so the profile stays loadable.
CalibrationFit fit_calibration(const BackendRegistry& registry,
                               std::span<const CalibrationPoint> points,
                               const CalibrationGrid& grid, const std::string& machine,
                               const std::string& source);

// One (kv, math, H, q_len, mode) of compare_backends.
struct BackendComparison {
  DType kv = DType::kBF16;
  bool fp8_math = false;
  int heads = 0, q_len = 0;
  bool det = false;
  Crossover model;               // where the estimates cross (B=1)
  int64_t measured_seq_len = 0;  // first measured S where the long backend was faster; 0 = never
  double short_fit_err = -1;     // max relative error of each entry's linear terms (-1: no entry)
  double long_fit_err = -1;
  double regret = 0;             // auto's worst regret at the measured S of this row
  double loo_regret = 0;         // the same with each S left out of the curves
  std::string measured() const;  // "S=8192" or "never in grid"
};
struct GridComparison {
  std::vector<BackendComparison> rows;
  double worst = 0, loo_worst = 0;     // over all rows
  std::string worst_at, loo_worst_at;  // "B=1,H=16,... (picked cuda_fold)", "" when 0
};
// nullopt-like empty result (no rows) when either backend is not registered.
GridComparison compare_backends(const BackendRegistry& registry, const CostModel& model,
                                std::span<const CalibrationPoint> points,
                                const CalibrationGrid& grid, const std::string& short_backend,
                                const std::string& long_backend);

}  // namespace mlaspec::attn
