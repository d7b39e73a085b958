// `mlaspec calibrate`: measures every available CUDA attention backend over a grid of shapes with
// the bench harness (PERF.md protocol), fits the cost model per (backend, KV dtype, math, H,
// q_len, mode) and compares the backends (attention/calibration.h: the analysis is the dispatch
// code's), prints the constants, the crossovers and auto's regret, re-measures PERF.md's S sweep as
// an out-of-sample check, and writes the profile JSON that dispatch policy `auto` reads
// (docs/dispatch.md).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "mlaspec/attention/calibration.h"
#include "mlaspec/attention/registry.h"
#include "mlaspec/bench/harness.h"
#include "mlaspec/core/log.h"
#include "tools/commands.h"
#include "tools/output_file.h"
#include "tools/shape_spec.h"

namespace mlaspec::tools {
namespace {

using nlohmann::json;

struct CalibrateCli {
  std::string out;
  std::string report;
  bool quick = false;
  std::vector<int> heads = {16, 128};
  std::vector<int> qlens = {1, 2, 4, 8};
  std::string kv = "all";
  std::string modes = "both";  // default, det or both
  bool fp8_math = false;       // --fp8-math: fp8 math asked for (an error without fp8 KV)
  bool no_fp8_math = false;    // --no-fp8-math: exact math only
  std::vector<int> batches = {4, 16, 64};              // the batch grid's B (B > 1)
  std::vector<int64_t> batch_seqlens = {4096, 32768};  // ... and S
  bool no_batch = false;
  std::vector<int64_t> seqlens;
  int reps = 30;
  int warmup = 5;
  double check_gflop = 5.0;
  bool no_verify = false;
  std::string refit;  // refit from a profile's stored measurements instead of measuring
};

std::string kv_short(DType t) {
  return std::string(attn::kv_dtype_label(t));
}

using Point = attn::CalibrationPoint;

bench::BenchConfig config_at(int h, int q, int64_t s, DType kv, bool f8, bool det, int batch = 1) {
  return {.batch = batch,
          .num_heads = h,
          .q_len = q,
          .seq_len = s,
          .kv_dtype = kv,
          .deterministic = det,
          .fp8_math = f8};
}

const char* mode_name(bool det) {
  return det ? "det" : "default";
}

template <typename T>
std::string join(const std::vector<T>& v, const char* sep = ", ") {
  std::string out;
  for (const T& x : v) out += (out.empty() ? "" : sep) + std::to_string(x);
  return out;
}

// --modes: which modes to measure, default mode first.
std::vector<bool> modes_option(const std::string& m) {
  if (m == "default") return {false};
  if (m == "det") return {true};
  if (m == "both") return {false, true};
  throw Error(invalid_argument("--modes: expected default, det or both, got \"" + m + "\""));
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string pct(double x) {
  char b[16];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}

struct Analysis {
  attn::CostModel model;
  json crossovers = json::array();
  double worst = 0;      // auto's regret on the grid, estimates from the whole profile
  double loo_worst = 0;  // the same with each grid point left out of the curves it estimates
  std::string md;
};

// Fits the cost model to the points (attn::fit_calibration) and prints its constants, then the
// crossovers and auto's regret on the grid, in-sample and leave-one-out
// (attn::compare_backends), as a table here and as markdown for the report. fp8-math rows carry
// "fp8math" in the kv column.
Analysis analyse(const attn::BackendRegistry& reg, const std::vector<Point>& points,
                 const attn::CalibrationGrid& grid, const std::string& gpu,
                 const std::string& source) {
  attn::CalibrationFit fit = attn::fit_calibration(reg, points, grid, gpu, source);
  for (const std::string& w : fit.skipped) log_warn(w);
  Analysis an;
  an.model = std::move(fit.model);
  std::ostringstream md;
  std::printf(
      "\nfitted cost model per (backend, kv, H, q_len, mode; kv fp8math: fp8 KV in fp8 math) (t = "
      "fixed + us/MB * KV MB read + "
      "us/GFLOP * GFLOPs; B=1 estimates inside the measured S range interpolate the measured "
      "curve):\n");
  std::printf(
      "| backend | kv | H | q | mode | fixed us | us/MB (eff TB/s) | us/GFLOP (eff TFLOP/s) | "
      "points | rms err | max err |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const attn::CostEntry& e : an.model.entries()) {
    std::printf("| %s | %s | %d | %d | %s | %.2f | %.4f (%.2f) | %.4f (%.0f) | %d | %s | %s |\n",
                e.backend.c_str(), attn::kv_math_label(e.kv_dtype, e.fp8_math).c_str(), e.heads,
                e.q_len, mode_name(e.deterministic), e.terms.fixed_us, e.terms.us_per_mb,
                e.terms.us_per_mb > 0 ? 1 / e.terms.us_per_mb : 0.0, e.terms.us_per_gflop,
                e.terms.us_per_gflop > 0 ? 1e3 / e.terms.us_per_gflop : 0.0, e.points,
                pct(e.rms_rel_err).c_str(), pct(e.max_rel_err).c_str());
  }
  std::printf(
      "(fit error: the linear terms against the curve; they serve B>1 and S outside the measured "
      "range)\n");
  const attn::GridComparison cmp =
      attn::compare_backends(reg, an.model, points, grid, "cuda_rowwise", "cuda_fold");
  if (!cmp.rows.empty()) {
    std::printf(
        "\ncrossover (B=1): model = where the estimates cross; measured = first grid S where "
        "cuda_fold was faster; fit err = max relative error of the linear terms (fold / rowwise); "
        "regret = auto's worst on the grid, in-sample and with each S left out of the curves\n"
        "| kv | H | q | mode | model | measured | fit err | regret | regret (left out) |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
    md << "| kv | H | q_len | mode | crossover (model) | first S where fold measured faster | "
          "linear fit max err (fold / rowwise) | auto's regret on the grid | same, each S left "
          "out |\n"
          "|---|---|---|---|---|---|---|---|---|\n";
    for (const attn::BackendComparison& r : cmp.rows) {
      const std::string kv = attn::kv_math_label(r.kv, r.fp8_math);
      auto err = [](double e) { return e < 0 ? std::string("-") : pct(e); };
      const std::string fit_err = err(r.long_fit_err) + " / " + err(r.short_fit_err);
      const std::string model = r.model.to_string(), measured = r.measured();
      std::printf("| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", kv.c_str(), r.heads, r.q_len,
                  mode_name(r.det), model.c_str(), measured.c_str(), fit_err.c_str(),
                  pct(r.regret).c_str(), pct(r.loo_regret).c_str());
      md << "| " << kv << " | " << r.heads << " | " << r.q_len << " | " << mode_name(r.det) << " | "
         << model << " | " << measured << " | " << fit_err << " | " << pct(r.regret) << " | "
         << pct(r.loo_regret) << " |\n";
      an.crossovers.push_back({{"kv", kv_short(r.kv)},
                               {"fp8_math", r.fp8_math},
                               {"heads", r.heads},
                               {"q_len", r.q_len},
                               {"det", r.det},
                               {"model", model},
                               {"model_seq_len", r.model.seq_len},
                               {"measured", measured},
                               {"grid_regret_max", r.regret},
                               {"grid_loo_regret_max", r.loo_regret}});
    }
    an.worst = cmp.worst;
    an.loo_worst = cmp.loo_worst;
    std::printf("\nauto's regret on the calibration grid: max %s%s\n", pct(cmp.worst).c_str(),
                cmp.worst_at.empty() ? "" : (" at " + cmp.worst_at).c_str());
    std::printf(
        "auto's regret on the grid with each point left out of the curves (out-of-sample): max "
        "%s%s\n",
        pct(cmp.loo_worst).c_str(),
        cmp.loo_worst_at.empty() ? "" : (" at " + cmp.loo_worst_at).c_str());
    md << "\nauto's regret on the grid: max " << pct(cmp.worst)
       << "; with each point left out of the curves: max " << pct(cmp.loo_worst) << "\n";
  }
  an.md = md.str();
  return an;
}

void run_refit(const CalibrateCli& cli, const attn::BackendRegistry& reg);

void run_calibrate(const CalibrateCli& cli) {
  if (!cli.refit.empty()) {
    auto reg = attn::BackendRegistry::with_builtin_backends();
    run_refit(cli, *reg);
    return;
  }
  // The options are checked before the machine: a typo is reported as such, not as a missing GPU.
  const std::vector<DType> asked_dtypes = kv_dtypes_option(cli.kv);
  const std::vector<bool> modes = modes_option(cli.modes);
  const bool asked_fp8 =
      std::find(asked_dtypes.begin(), asked_dtypes.end(), DType::kFP8E4M3) != asked_dtypes.end();
  if (cli.fp8_math && !asked_fp8) {
    throw Error(invalid_argument("--fp8-math measures fp8 KV in fp8 math, but --kv " + cli.kv +
                                 " measures no fp8 KV (add fp8, e.g. --kv " + cli.kv + ",fp8)"));
  }
  if (!built_with_cuda()) {
    throw Error(unsupported(
        "calibrate needs a CUDA build and a GPU: mlaspec was built without CUDA (reconfigure with "
        "-DMLASPEC_CUDA=ON on a machine with nvcc, then run it on the GPU to calibrate)"));
  }
  auto reg = attn::BackendRegistry::with_builtin_backends();
  std::vector<int> cuda_backends;
  for (int i = 0; i < reg->size(); ++i) {
    if (reg->caps(i).device != Device::kCUDA) continue;
    const Status a = reg->availability(i);
    if (!a.ok()) throw Error(unsupported("calibrate needs a CUDA build and a GPU: " + a.message()));
    cuda_backends.push_back(i);
  }
  if (cuda_backends.empty()) throw Error(unsupported("calibrate: no CUDA backend is registered"));
  // Each dtype measured must be read by some CUDA backend (their caps list fp8_tile since its
  // kernels exist); `all` keeps those they read.
  std::vector<DType> dtypes;
  for (DType kv : asked_dtypes) {
    const bool read = std::any_of(cuda_backends.begin(), cuda_backends.end(), [&](int b) {
      return (reg->caps(b).kv_dtypes & attn::dtype_bit(kv)) != 0;
    });
    if (read) {
      dtypes.push_back(kv);
    } else if (cli.kv != "all") {
      throw Error(unsupported("calibrate --kv " + cli.kv + ": no CUDA backend reads " +
                              std::string(dtype_name(kv)) + " KV"));
    }
  }
  // fp8 math: on by default wherever fp8 KV is measured and a CUDA backend offers the mode (each
  // backend measures it only if its caps do), off with --no-fp8-math.
  const bool fp8_math_served = std::any_of(cuda_backends.begin(), cuda_backends.end(),
                                           [&](int b) { return reg->caps(b).fp8_math; });
  if (cli.fp8_math && !fp8_math_served) {
    throw Error(unsupported("calibrate --fp8-math: no CUDA backend offers fp8 math"));
  }
  const bool measure_fp8 = std::find(dtypes.begin(), dtypes.end(), DType::kFP8E4M3) != dtypes.end();
  const attn::CalibrationGrid grid{cuda_backends,
                                   dtypes,
                                   cli.heads,
                                   cli.qlens,
                                   modes,
                                   !cli.no_fp8_math && measure_fp8 && fp8_math_served
                                       ? std::vector<bool>{false, true}
                                       : std::vector<bool>{false}};
  // The (kv, math) pairs measured, in the report's order, and the backends serving each.
  const std::vector<std::pair<DType, bool>> kv_maths = grid.kv_maths();
  auto serving = [&](bool f8) {
    std::vector<int> out;
    for (int b : cuda_backends)
      if (!f8 || reg->caps(b).fp8_math) out.push_back(b);
    return out;
  };
  const std::string gpu = attn::detect_gpu_name();
  if (gpu.empty()) {
    throw Error(
        unsupported("calibrate needs a CUDA build and a GPU: no CUDA device found (or set "
                    "MLASPEC_GPU_NAME)"));
  }

  std::vector<int64_t> seqs = cli.seqlens;
  if (seqs.empty()) {
    if (cli.quick) {
      // Small S, then PERF.md's S sweep: auto is exact there even on the quick grid.
      seqs = {2048, 4096, 16384, 65536, 262144, 1048576};
    } else {
      for (int64_t s = 1024; s <= (int64_t{1} << 20); s *= 2) seqs.push_back(s);
    }
  }
  const std::string out_path = cli.out.empty() ? attn::default_profile_path() : cli.out;
  // Refuse before measuring if the existing file could not be merged into.
  std::string existing;
  if (std::ifstream in(out_path); in) {
    std::stringstream ss;
    ss << in.rdbuf();
    existing = ss.str();
    auto parsed = attn::parse_profile(existing, "profile " + out_path);
    if (!parsed.ok()) {
      throw Error(parsed.status().with_context(
          "will not overwrite a malformed profile (delete it or pass --out elsewhere)"));
    }
  }

  // --report is a new file: opened now, so a path that cannot be written is refused before the run.
  std::optional<OutputFile> report;
  if (!cli.report.empty()) {
    Result<OutputFile> f = OutputFile::open(cli.report, "--report");
    throw_if_error(f.status());
    report.emplace(std::move(f.value()));
  }

  bench::TimeOptions topts;
  topts.reps = cli.quick ? std::min(cli.reps, 15) : cli.reps;
  topts.warmup = cli.warmup;
  // --batches and --batch-seqlens are range-checked by CLI11 (2..65536: B = 1 is the curve; S >=
  // 1).
  std::vector<int> batches = cli.no_batch ? std::vector<int>{} : cli.batches;
  const size_t grid_points = batches.size() * cli.batch_seqlens.size();
  size_t backend_kvs = 0;  // (backend, kv, math) triples measured
  for (const auto& [kv, f8] : kv_maths) backend_kvs += serving(f8).size();
  const int total = static_cast<int>(modes.size() * backend_kvs * cli.heads.size() *
                                     cli.qlens.size() * (seqs.size() + grid_points));
  std::printf(
      "mlaspec calibrate: %s; %d measurements (modes x backends x kv (fp8 math%s) x H x q_len x "
      "(S + batch grid)), median of %d reps each; writing %s\n",
      gpu.c_str(), total, grid.maths.size() > 1 ? " included" : " not measured", topts.reps,
      out_path.c_str());
  std::fflush(stdout);

  auto time_one = [&](int b, const bench::BenchConfig& cfg, bool quiet) -> std::optional<double> {
    bench::TimeOptions o = topts;
    const double gflop =
        2.0 * cfg.q_len * cfg.num_heads * (576 + 512) * cfg.seq_len * cfg.batch / 1e9;
    o.check = gflop <= cli.check_gflop;  // the CPU reference check costs the same FLOPs on the host
    auto backend = reg->get(b);
    throw_if_error(backend.status());
    auto t = bench::time_backend(*backend.value(), cfg, o);
    if (!t.ok()) {
      if (t.status().code() == StatusCode::kUnsupported) {
        if (!quiet) std::printf("skipped: %s\n", t.status().message().c_str());
        return std::nullopt;
      }
      throw Error(t.status().with_context(std::string(reg->caps(b).name) + " " + cfg.to_string()));
    }
    return t.value().median_us;
  };

  // ---- Measure ----------------------------------------------------------------------------------
  std::vector<Point> points;
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0;
  for (bool det : modes) {
    for (const auto& [kv, f8] : kv_maths) {
      for (int h : cli.heads) {
        for (int q : cli.qlens) {
          // The B = 1 curve, then the batch grid.
          std::vector<std::pair<int, int64_t>> shapes;
          for (int64_t s : seqs) shapes.emplace_back(1, s);
          for (int bsz : batches)
            for (int64_t s : cli.batch_seqlens) shapes.emplace_back(bsz, s);
          for (const auto& [bsz, s] : shapes) {
            if (s < q) continue;
            for (int b : serving(f8)) {
              const bench::BenchConfig cfg = config_at(h, q, s, kv, f8, det, bsz);
              ++done;
              std::printf("[%4d/%d] %-13s %s: ", done, total,
                          std::string(reg->caps(b).name).c_str(), cfg.to_string().c_str());
              std::fflush(stdout);
              auto us = time_one(b, cfg, false);
              if (!us) continue;
              std::printf("%.1f us\n", *us);
              std::fflush(stdout);
              points.push_back({b, kv, h, q, s, *us, det, bsz, f8});
            }
          }
        }
      }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("measured %zu points in %.0f s\n", points.size(), secs);

  const Analysis an = analyse(*reg, points, grid, gpu,
                              "mlaspec calibrate on " + gpu + ", " + utc_now() +
                                  (cli.quick ? " (--quick grid, " : " (full grid, ") +
                                  std::to_string(topts.reps) + " reps)");
  const attn::CostModel& model = an.model;
  auto fold = reg->index_of("cuda_fold"), row = reg->index_of("cuda_rowwise");
  const double worst = an.worst;
  std::ostringstream md;
  md << an.md;

  // ---- Out-of-sample check: PERF.md's S sweep, measured again ----------------------------------
  json verify = json::array();
  double verify_worst = 0;
  if (!cli.no_verify && fold.ok() && row.ok()) {
    std::printf(
        "\nPERF.md S sweep, measured again: auto's pick against the better backend\n"
        "| config | cuda_fold us | cuda_rowwise us | auto picks | auto us | regret |\n"
        "|---|---|---|---|---|---|\n");
    md << "\n| config | cuda_fold us | cuda_rowwise us | auto picks | regret |\n"
          "|---|---|---|---|---|\n";
    attn::Dispatcher disp(*reg, model);
    for (bool det : modes) {
      for (const auto& [kv, f8] : kv_maths) {
        for (bench::BenchConfig cfg : bench::seqlen_sweep(kv)) {
          cfg.deterministic = det;
          cfg.fp8_math = f8;
          auto tf = time_one(fold.value(), cfg, true);
          auto tr = time_one(row.value(), cfg, true);
          attn::SelectOptions so;
          so.data_device = Device::kCUDA;
          so.quiet = true;
          auto d = disp.select(cfg.shape(), so);
          if (!tf || !tr || !d.ok()) {
            std::printf("| %s | skipped |\n", cfg.to_string().c_str());
            continue;
          }
          const double picked = d.value().backend_index == fold.value() ? *tf : *tr;
          const double regret = picked / std::min(*tf, *tr) - 1;
          verify_worst = std::max(verify_worst, regret);
          std::printf("| %s | %.1f | %.1f | %s | %.1f | %s |\n", cfg.to_string().c_str(), *tf, *tr,
                      std::string(d.value().backend).c_str(), picked, pct(regret).c_str());
          std::fflush(stdout);
          md << "| " << cfg.to_string() << " | " << *tf << " | " << *tr << " | "
             << d.value().backend << " | " << pct(regret) << " |\n";
          verify.push_back({{"config", cfg.to_string()},
                            {"cuda_fold_us", *tf},
                            {"cuda_rowwise_us", *tr},
                            {"pick", std::string(d.value().backend)},
                            {"regret", regret}});
        }
      }
    }
    std::printf("auto's regret on the S sweep: max %s (target <= 5%%)\n",
                pct(verify_worst).c_str());
    if (verify_worst > 0.05) {
      log_warn(
          "auto's regret exceeds 5% on the S sweep: the cost model misses this machine's "
          "behaviour near the crossover (see docs/dispatch.md)");
    }
  }

  // ---- Write ------------------------------------------------------------------------------------
  // The measurements themselves are the models' curves (B=1, per backend, kv, H, q_len).
  const json extra = {{"measured_at", utc_now()},
                      {"reps", topts.reps},
                      {"crossovers", an.crossovers},
                      {"grid_regret_max", worst},
                      {"grid_loo_regret_max", an.loo_worst},
                      {"sweep_check", verify},
                      {"sweep_regret_max", verify_worst}};
  auto text = attn::merge_profile_json(existing, model, extra.dump());
  throw_if_error(text.status());
  std::error_code ec;
  const auto parent = std::filesystem::path(out_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  {
    // Opened only now: truncating the profile before the run would lose it if the run failed.
    Result<OutputFile> f = OutputFile::open(out_path, "--out");
    throw_if_error(f.status());
    throw_if_error(f.value().write_and_close(text.value()));
  }
  std::printf("\nwrote %s (machine \"%s\")\n", out_path.c_str(), gpu.c_str());
  std::printf(
      "to make these the built-in defaults: write to a fresh --out file and put that file, "
      "unchanged, in data/profiles/ (e.g. data/profiles/nvidia-h200.json)\n");
  if (report) {
    std::ostringstream f;
    f << "# Dispatch calibration on " << gpu << " (" << utc_now() << ")\n\n"
      << "Command: mlaspec calibrate" << (cli.quick ? " --quick" : "")
      << (cli.modes != "both" ? " --modes " + cli.modes : std::string())
      << (cli.kv != "all" ? " --kv " + cli.kv : std::string())
      << (cli.no_fp8_math ? " --no-fp8-math" : "")
      << (cli.heads != CalibrateCli{}.heads ? " --heads " + join(cli.heads, " ") : std::string())
      << (cli.qlens != CalibrateCli{}.qlens ? " --qlens " + join(cli.qlens, " ") : std::string())
      << (cli.seqlens.empty() ? std::string() : " --seqlens " + join(cli.seqlens, " "))
      << (cli.no_verify ? " --no-verify" : "") << "; median of " << topts.reps
      << " CUDA-graph replays per point, page 64; B=1 curves"
      << (batches.empty() || cli.batch_seqlens.empty()
              ? std::string(" (no batch grid)")
              : " and a batch grid per entry (B " + join(batches) + " x S " +
                    join(cli.batch_seqlens) + ")")
      << (grid.maths.size() > 1
              ? "; rows of kv fp8math are fp8 KV in fp8 math (VerifyOptions::fp8_math), "
                "priced by their own entries"
              : "")
      << ".\n\n"
      << "auto's regret: max " << pct(worst) << " on the calibration grid (max "
      << pct(an.loo_worst) << " with each point left out of the curves), "
      << (cli.no_verify ? std::string("PERF.md's S sweep not measured again (--no-verify)")
                        : "max " + pct(verify_worst) + " on PERF.md's S sweep (measured again)")
      << ".\n\n"
      << md.str();
    throw_if_error(report->write_and_close(f.str()));
    std::printf("wrote report %s\n", cli.report.c_str());
  }
}

// `--refit FILE`: the fit and the report from measurements stored in a profile (the models'
// curves, or the "samples" array older calibrate runs wrote), without a GPU.
void run_refit(const CalibrateCli& cli, const attn::BackendRegistry& reg) {
  std::ifstream in(cli.refit);
  if (!in) throw Error(not_found("--refit: cannot read " + cli.refit));
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  throw_if_error(attn::parse_profile(text, "profile " + cli.refit).status());
  const json root = json::parse(text);
  // --report is a new file: opened now, so a path that cannot be written is refused before the fit.
  std::optional<OutputFile> report;
  if (!cli.report.empty()) {
    Result<OutputFile> f = OutputFile::open(cli.report, "--report");
    throw_if_error(f.status());
    report.emplace(std::move(f.value()));
  }
  std::string gpu;
  std::vector<Point> points;
  std::string measured_at;
  json sweep_check = json::array();
  for (auto it = root["machines"].begin(); it != root["machines"].end(); ++it) {
    if (it.key() == "cpu") continue;
    std::vector<Point> mine;
    auto add = [&](const std::string& backend, const std::string& kv, int h, int q, int64_t s,
                   double us, bool det, int batch = 1, bool f8 = false) {
      auto b = reg.index_of(backend);
      DType t;
      if (!b.ok() || !parse_dtype(kv, &t) || h <= 0 || q <= 0) return;
      mine.push_back({b.value(), t, h, q, s, us, det, batch, f8});
    };
    for (const json& m : it.value().value("models", json::array())) {
      const bool det = m.value("det", false), f8 = m.value("fp8_math", false);
      for (const json& p : m.value("curve", json::array())) {
        add(m["backend"], m["kv"], m.value("heads", 0), m.value("q_len", 0), p[0], p[1], det, 1,
            f8);
      }
      for (const json& p : m.value("batch", json::array())) {
        add(m["backend"], m["kv"], m.value("heads", 0), m.value("q_len", 0), p[1], p[2], det, p[0],
            f8);
      }
    }
    if (mine.empty()) {
      for (const json& p : it.value().value("samples", json::array())) {
        add(p.value("backend", ""), p.value("kv", ""), p.value("heads", 0), p.value("q_len", 0),
            p.value("seq_len", int64_t{0}), p.value("us", 0.0), false);
      }
    }
    if (mine.empty()) continue;
    // PERF.md's S sweep, measured again by that run: B=1 points too; used where the grid has no
    // measurement at that S (a --quick grid), so the curves pass through them.
    int sweep_added = 0;
    for (const json& c : it.value().value("sweep_check", json::array())) {
      auto shape = parse_shape_spec(c.value("config", ""));
      if (!shape.ok() || shape.value().batch != 1) continue;
      const attn::VerifyShape& x = shape.value();
      for (const char* name : {"cuda_fold", "cuda_rowwise"}) {
        const double us = c.value(std::string(name) + "_us", 0.0);
        auto b = reg.index_of(name);
        if (!b.ok() || !(us > 0)) continue;
        const bool have = std::any_of(mine.begin(), mine.end(), [&](const Point& p) {
          return p.backend == b.value() && p.kv == x.kv_dtype && p.fp8_math == x.fp8_math &&
                 p.heads == x.num_heads && p.q_len == x.q_len && p.seq_len == x.max_seq_len &&
                 p.det == x.deterministic && p.batch == 1;
        });
        if (have) continue;
        mine.push_back({b.value(), x.kv_dtype, x.num_heads, x.q_len, x.max_seq_len, us,
                        x.deterministic, 1, x.fp8_math});
        ++sweep_added;
      }
    }
    if (sweep_added) {
      std::printf("using %d measurements of the stored S-sweep check where the grid has none\n",
                  sweep_added);
    }
    if (!gpu.empty()) {
      throw Error(invalid_argument("--refit: " + cli.refit + " has measurements for both \"" + gpu +
                                   "\" and \"" + it.key() + "\"; keep one"));
    }
    gpu = it.key();
    points = std::move(mine);
    measured_at = it.value().value("measured_at", "");
    sweep_check = it.value().value("sweep_check", json::array());
  }
  if (points.empty()) {
    throw Error(invalid_argument("--refit: " + cli.refit +
                                 " holds no measurements (models' curves or samples)"));
  }
  // The grid the points cover, each axis in the report's order.
  attn::CalibrationGrid grid;
  grid.maths.clear();  // what the points hold
  auto add_unique = [](auto& v, auto x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const Point& p : points) {
    add_unique(grid.backends, p.backend);
    add_unique(grid.dtypes, p.kv);
    add_unique(grid.heads, p.heads);
    add_unique(grid.qlens, p.q_len);
    add_unique(grid.modes, p.det);
    add_unique(grid.maths, p.fp8_math);
  }
  std::sort(grid.modes.begin(), grid.modes.end());  // default mode first
  std::sort(grid.maths.begin(), grid.maths.end());  // exact math first
  std::sort(grid.backends.begin(), grid.backends.end());
  std::sort(grid.heads.begin(), grid.heads.end());
  std::sort(grid.qlens.begin(), grid.qlens.end());
  std::sort(grid.dtypes.begin(), grid.dtypes.end(),
            [](DType a, DType b) { return kv_short(a) < kv_short(b); });
  std::printf("mlaspec calibrate --refit %s: %zu measurements of \"%s\"%s\n", cli.refit.c_str(),
              points.size(), gpu.c_str(),
              measured_at.empty() ? "" : (" made " + measured_at).c_str());
  const Analysis an =
      analyse(reg, points, grid, gpu,
              "mlaspec calibrate on " + gpu +
                  (measured_at.empty() ? std::string() : ", " + measured_at) + ", refitted");
  if (!cli.out.empty()) {
    const json extra = {{"measured_at", measured_at},
                        {"crossovers", an.crossovers},
                        {"grid_regret_max", an.worst},
                        {"grid_loo_regret_max", an.loo_worst}};
    auto out = attn::merge_profile_json("", an.model, extra.dump());
    throw_if_error(out.status());
    Result<OutputFile> f = OutputFile::open(cli.out, "--out");
    throw_if_error(f.status());
    throw_if_error(f.value().write_and_close(out.value()));
    std::printf("\nwrote %s (machine \"%s\")\n", cli.out.c_str(), gpu.c_str());
  }
  if (report) {
    // The fit's tables, then the S-sweep check the measuring run stored (not measured again).
    std::ostringstream f;
    f << "# Dispatch calibration on " << gpu << " (refitted from " << cli.refit
      << (measured_at.empty() ? std::string() : ", last measured " + measured_at) << ")\n\n"
      << "Command: mlaspec calibrate --refit; the fit of the stored curves and batch grids.\n\n"
      << "auto's regret: max " << pct(an.worst) << " on the calibration grid (max "
      << pct(an.loo_worst) << " with each point left out of the curves).\n\n"
      << an.md;
    if (!sweep_check.empty()) {
      f << "\nPERF.md's S sweep as the measuring runs checked it (stored in the profile):\n\n"
        << "| config | cuda_fold us | cuda_rowwise us | auto picked | regret |\n"
           "|---|---|---|---|---|\n";
      for (const json& c : sweep_check) {
        if (!c.is_object()) continue;
        // A record of another shape prints "?" where it differs: the file is free-form there.
        auto cell = [&](const char* k, bool percent = false) {
          const json v = c.value(k, json());
          if (v.is_string()) return v.get<std::string>();
          if (!v.is_number()) return std::string("?");
          if (percent) return pct(v.get<double>());
          std::ostringstream o;
          o << v.get<double>();
          return o.str();
        };
        f << "| " << cell("config") << " | " << cell("cuda_fold_us") << " | "
          << cell("cuda_rowwise_us") << " | " << cell("pick") << " | " << cell("regret", true)
          << " |\n";
      }
    }
    throw_if_error(report->write_and_close(f.str()));
    std::printf("wrote report %s\n", cli.report.c_str());
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto cli = std::make_shared<CalibrateCli>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure the CUDA attention backends on this GPU and write the cost-model profile that "
      "dispatch policy auto uses (needs a CUDA build and a GPU). Grid: H x q_len x S x KV dtype x "
      "mode (default and deterministic) at B=1, and a batch grid (B x S, B > 1) per (H, q_len, "
      "dtype, mode); fp8 KV is measured in exact and in fp8 math (table rows of kv fp8math; "
      "--no-fp8-math skips it); keeps each (backend, dtype, math, H, q_len, mode) curve and batch "
      "grid and fits fixed + per-KV-byte + per-FLOP terms to it; prints the constants, the "
      "rowwise->fold crossover and auto's regret, then re-measures PERF.md's S sweep as a "
      "check.");
  cmd->add_option("--out", cli->out,
                  "Profile to write (merged: other GPUs' entries are kept). Default: "
                  "$MLASPEC_PROFILE, else ~/.cache/mlaspec/profile.json");
  cmd->add_option("--report", cli->report, "Also write a markdown report (for docs/perf/)");
  cmd->add_flag("--quick", cli->quick,
                "6 context lengths (2k and PERF.md's S sweep) instead of 11, and at most 15 reps");
  cmd->add_option("--heads", cli->heads, "Query heads to measure")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--qlens", cli->qlens, "q_len values to measure")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  add_kv_dtypes_option(*cmd, &cli->kv,
                       "KV dtype(s) to measure: bf16, fp8, fp8tile, a comma-separated list, both "
                       "(bf16,fp8) or all (every KV dtype the CUDA backends read)");
  cmd->add_option("--modes", cli->modes,
                  "Modes to measure: default, det (deterministic: fixed split chunks, priced "
                  "apart) or both")
      ->check(CLI::IsMember({"default", "det", "both"}))
      ->capture_default_str();
  CLI::Option* fp8_math =
      cmd->add_flag("--fp8-math", cli->fp8_math,
                    "Measure fp8 KV in fp8 math too (VerifyOptions::fp8_math; its own entries, "
                    "kv fp8math in the tables), for each mode, on the backends that offer it. On "
                    "by default whenever fp8 is among --kv; given explicitly, --kv without fp8 is "
                    "an error");
  cmd->add_flag("--no-fp8-math", cli->no_fp8_math,
                "Measure fp8 KV in exact math only: fp8-math calls are then priced by the rule "
                "derived from the exact fp8 entries (docs/dispatch.md), and a profile's earlier "
                "fp8-math entries are kept")
      ->excludes(fp8_math);
  CLI::Option* batches_opt =
      cmd->add_option("--batches", cli->batches,
                      "Batch sizes (2..65536) of the batch grid, measured at each --batch-seqlens: "
                      "B > 1 shapes inside the grid are interpolated in it")
          ->check(CLI::Range(2, 65536))
          ->capture_default_str();
  CLI::Option* batch_seqlens_opt =
      cmd->add_option("--batch-seqlens", cli->batch_seqlens, "Context lengths of the batch grid")
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
          ->capture_default_str();
  cmd->add_flag("--no-batch", cli->no_batch,
                "Measure no batch grid (B > 1 shapes then use the linear terms only)")
      ->excludes(batches_opt)
      ->excludes(batch_seqlens_opt);
  cmd->add_option("--seqlens", cli->seqlens,
                  "Context lengths (default 1k, 2k, ..., 1M; --quick: 2k, 4k, 16k, 64k, 256k, 1M)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--reps", cli->reps, "Timed replays per point")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--warmup", cli->warmup, "Warm-up replays per point")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("--check-gflop", cli->check_gflop,
                  "Check a point against the CPU reference when its GFLOPs are at most this")
      ->capture_default_str();
  cmd->add_flag("--no-verify", cli->no_verify, "Skip re-measuring PERF.md's S sweep");
  CLI::Option* refit = cmd->add_option(
      "--refit", cli->refit,
      "Measure nothing: refit and report from the measurements stored in this profile "
      "(its models' curves, or an older file's samples); writes --out (a new file) and "
      "--report (the fit's tables and the stored S-sweep check) if given. Needs no "
      "GPU");
  // --refit measures nothing: an option that shapes a measurement is refused beside it rather
  // than ignored.
  for (CLI::Option* o : cmd->get_options()) {
    const std::string& n = o->get_name();
    if (o != refit && n != "--out" && n != "--report" && n != "--help") refit->excludes(o);
  }
  cmd->callback([cli] { run_calibrate(*cli); });
}

}  // namespace mlaspec::tools
