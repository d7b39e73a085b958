// Calibration analysis: fitting the cost model to measured points, crossovers and auto's regret.
#include "mlaspec/attention/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace mlaspec::attn {
namespace {

VerifyShape shape_at(int h, int q, int64_t s, DType kv, bool f8, bool det, int batch = 1) {
  VerifyShape x;
  x.batch = batch;
  x.num_heads = h;
  x.q_len = q;
  x.max_seq_len = s;
  x.total_kv = s * batch;
  x.kv_dtype = kv;
  x.page_size = 64;
  x.deterministic = det;
  x.fp8_math = f8;
  return x;
}

// A measured time as stored in a profile: to 0.001 µs, never 0.
double stored_us(double us) {
  return std::max(1e-3, std::round(us * 1e3) / 1e3);
}

}  // namespace

std::vector<std::pair<DType, bool>> CalibrationGrid::kv_maths() const {
  std::vector<std::pair<DType, bool>> out;
  for (DType kv : dtypes)
    for (bool f8 : maths)
      if (!f8 || kv == DType::kFP8E4M3) out.emplace_back(kv, f8);
  return out;
}

CalibrationFit fit_calibration(const BackendRegistry& reg, std::span<const CalibrationPoint> points,
                               const CalibrationGrid& grid, const std::string& machine,
                               const std::string& source) {
  CalibrationFit out;
  out.model = CostModel(machine, source, {});
  for (bool det : grid.modes) {
    for (int b : grid.backends) {
      for (const auto& [kv, f8] : grid.kv_maths()) {
        for (int h : grid.heads) {
          for (int q : grid.qlens) {
            std::map<int64_t, double> curve;                  // by S (a repeated S keeps the last)
            std::map<std::pair<int, int64_t>, double> batch;  // by (B, S), B > 1
            for (const CalibrationPoint& p : points) {
              if (p.backend != b || p.kv != kv || p.fp8_math != f8 || p.heads != h ||
                  p.q_len != q || p.det != det)
                continue;
              (p.batch == 1 ? curve[p.seq_len] : batch[{p.batch, p.seq_len}]) = p.us;
            }
            if (curve.empty()) continue;
            // The linear terms serve shapes outside the curve and the grid: fitted to both.
            const KvReadPattern reads = reg.entry(b).kv_reads;
            std::vector<CostSample> samples;
            for (const auto& [s, us] : curve) {
              samples.push_back({cost_features(shape_at(h, q, s, kv, f8, det), reads), us});
            }
            for (const auto& [bs, us] : batch) {
              samples.push_back(
                  {cost_features(shape_at(h, q, bs.second, kv, f8, det, bs.first), reads), us});
            }
            const std::string name(reg.caps(b).name);
            Result<CostFit> fit = fit_cost_terms(samples);
            if (!fit.ok()) {
              out.skipped.push_back(name + " kv=" + kv_math_label(kv, f8) +
                                    " H=" + std::to_string(h) + " q=" + std::to_string(q) +
                                    (det ? " det" : " default") +
                                    ": no model: " + fit.status().message());
              continue;
            }
            CostEntry e;
            e.backend = name;
            e.kv_dtype = kv;
            e.heads = h;
            e.q_len = q;
            e.deterministic = det;
            e.fp8_math = f8;
            e.terms = fit.value().terms;
            e.points = fit.value().points;
            e.rms_rel_err = fit.value().rms_rel_err;
            e.max_rel_err = fit.value().max_rel_err;
            for (const auto& [s, us] : curve) e.curve.push_back({s, stored_us(us)});
            for (const auto& [bs, us] : batch) {
              e.batch.push_back({bs.first, bs.second, stored_us(us)});
            }
            // A grid with a hole (a point skipped as unsupported) is not interpolated: keep it
            // out of the profile rather than write one the parser refuses.
            if (!batch_grid_axes(e.batch).complete) e.batch.clear();
            out.model.add(std::move(e));
          }
        }
      }
    }
  }
  return out;
}

std::string BackendComparison::measured() const {
  return measured_seq_len > 0 ? "S=" + std::to_string(measured_seq_len) : "never in grid";
}

GridComparison compare_backends(const BackendRegistry& reg, const CostModel& model,
                                std::span<const CalibrationPoint> points,
                                const CalibrationGrid& grid, const std::string& short_backend,
                                const std::string& long_backend) {
  GridComparison out;
  const Result<int> lng = reg.index_of(long_backend), sht = reg.index_of(short_backend);
  if (!lng.ok() || !sht.ok()) return out;
  const int L = lng.value(), S = sht.value();
  const KvReadPattern l_reads = reg.entry(L).kv_reads, s_reads = reg.entry(S).kv_reads;
  for (bool det : grid.modes) {
    for (const auto& [kv, f8] : grid.kv_maths()) {
      for (int h : grid.heads) {
        for (int q : grid.qlens) {
          BackendComparison row;
          row.kv = kv;
          row.fp8_math = f8;
          row.heads = h;
          row.q_len = q;
          row.det = det;
          row.model = find_crossover(model, short_backend, s_reads, long_backend, l_reads,
                                     shape_at(h, q, q, kv, f8, det));
          std::map<int64_t, std::map<int, double>> by_s;  // B=1 times by S, then backend
          for (const CalibrationPoint& p : points) {
            if (p.kv == kv && p.fp8_math == f8 && p.heads == h && p.q_len == q && p.det == det &&
                p.batch == 1) {
              by_s[p.seq_len][p.backend] = p.us;
            }
          }
          for (const auto& [s, t] : by_s) {
            if (t.count(L) && t.count(S) && t.at(L) < t.at(S)) {
              row.measured_seq_len = s;
              break;
            }
          }
          // Regret of auto's pick (by the model) at each S where both were measured.
          for (const auto& [s, t] : by_s) {
            if (!t.count(L) || !t.count(S)) continue;
            const VerifyShape x = shape_at(h, q, s, kv, f8, det);
            const double best = std::min(t.at(L), t.at(S));
            auto pick_of = [&](const CostModel& m) {
              const std::optional<double> el = m.estimate_us(long_backend, l_reads, x);
              const std::optional<double> es = m.estimate_us(short_backend, s_reads, x);
              return el.value_or(INFINITY) <= es.value_or(INFINITY) ? L : S;
            };
            const int pick = pick_of(model);
            const double regret = t.at(pick) / best - 1;
            row.regret = std::max(row.regret, regret);
            if (regret > out.worst) {
              out.worst = regret;
              out.worst_at = x.to_string() + " (picked " + std::string(reg.caps(pick).name) + ")";
            }
            // Leave-one-out: this S dropped from both curves (out-of-sample for the curve) of
            // the entries the estimates use (an fp8-math estimate may be derived from exact ones).
            CostModel loo(model.machine(), "", {});
            for (const std::string& name : {long_backend, short_backend}) {
              const CostEntry* e = model.entry_for(name, x);
              if (!e) continue;
              CostEntry c = *e;
              // A copy: clang 14 cannot capture a structured binding in a lambda.
              const auto left_out = s;
              std::erase_if(c.curve, [&](const CurvePoint& p) { return p.seq_len == left_out; });
              loo.add(std::move(c));
            }
            const int lpick = pick_of(loo);
            const double lregret = t.at(lpick) / best - 1;
            row.loo_regret = std::max(row.loo_regret, lregret);
            if (lregret > out.loo_worst) {
              out.loo_worst = lregret;
              out.loo_worst_at =
                  x.to_string() + " (picked " + std::string(reg.caps(lpick).name) + ")";
            }
          }
          if (const CostEntry* e = model.find(short_backend, kv, h, q, det, f8)) {
            row.short_fit_err = e->max_rel_err;
          }
          if (const CostEntry* e = model.find(long_backend, kv, h, q, det, f8)) {
            row.long_fit_err = e->max_rel_err;
          }
          out.rows.push_back(std::move(row));
        }
      }
    }
  }
  return out;
}

}  // namespace mlaspec::attn
