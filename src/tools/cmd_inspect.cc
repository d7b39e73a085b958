// `mlaspec inspect`: what each attention backend can serve and whether it is available here, the
// cost model in use, and with --explain SHAPE how dispatch decides for one batch shape.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "mlaspec/attention/registry.h"
#include "mlaspec/core/log.h"
#include "tools/commands.h"
#include "tools/shape_spec.h"

namespace mlaspec::tools {
namespace {

struct InspectCli {
  std::string explain;
  bool explain_given = false;  // --explain was given, even empty: explain that shape
  std::string profile;
  std::string gpu;
  std::string backend = "auto";
};

void print_model(const attn::CostModel& m) {
  std::printf(
      "\ncost model entries (t = fixed + us/MB * KV MB read + us/GFLOP * GFLOPs; B=1 inside the "
      "measured S range: the measured curve, log-log interpolated):\n");
  std::printf("  %-14s %-7s %5s %4s %-7s %9s %9s %10s %11s %12s %7s  %s\n", "backend", "kv", "H",
              "q", "mode", "fixed us", "us/MB", "eff TB/s", "us/GFLOP", "eff TFLOP/s", "fit rms",
              "curve");
  for (const attn::CostEntry& e : m.entries()) {
    // 1 MB/us = 1 TB/s; 1 GFLOP/us = 1000 TFLOP/s.
    const double tbs = e.terms.us_per_mb > 0 ? 1.0 / e.terms.us_per_mb : 0;
    const double tfs = e.terms.us_per_gflop > 0 ? 1e3 / e.terms.us_per_gflop : 0;
    char rms[16] = "-";
    if (e.points) std::snprintf(rms, sizeof rms, "%.1f%%", 100 * e.rms_rel_err);
    std::string curve = "-";
    if (!e.curve.empty()) {
      curve = std::to_string(e.curve.size()) + " points, S " +
              std::to_string(e.curve.front().seq_len) + ".." +
              std::to_string(e.curve.back().seq_len);
    }
    if (!e.batch.empty()) {
      const attn::BatchGridAxes a = attn::batch_grid_axes(e.batch);
      curve += "; batch grid B " + std::to_string(a.batches.front()) + ".." +
               std::to_string(a.batches.back()) + " x S " + std::to_string(a.seq_lens.front()) +
               ".." + std::to_string(a.seq_lens.back()) + " (" + std::to_string(e.batch.size()) +
               " points)";
    }
    std::printf("  %-14s %-7s %5s %4s %-7s %9.2f %9.4f %10.2f %11.4f %12.1f %7s  %s\n",
                e.backend.c_str(), attn::kv_math_label(e.kv_dtype, e.fp8_math).c_str(),
                e.heads ? std::to_string(e.heads).c_str() : "any",
                e.q_len ? std::to_string(e.q_len).c_str() : "any",
                e.deterministic ? "det" : "default", e.terms.fixed_us, e.terms.us_per_mb, tbs,
                e.terms.us_per_gflop, tfs, rms, curve.c_str());
  }
}

// Rowwise -> fold crossovers the model implies at B=1 for the calibrated grid.
void print_crossovers(const attn::BackendRegistry& reg, const attn::CostModel& m) {
  auto fold = reg.index_of("cuda_fold"), row = reg.index_of("cuda_rowwise");
  if (!fold.ok() || !row.ok()) return;
  std::printf(
      "\ncrossover by the cost model (B=1): the backend estimated cheaper below the crossover S, "
      "and the one from there on:\n");
  std::printf("  %-8s %5s %4s %-7s  %s\n", "kv", "H", "q", "mode", "crossover");
  // The grid the profile was calibrated on: every (mode, kv, math, H, q_len) with a cuda_fold
  // entry (fp8-math entries give the fp8math rows); fp8tile's (derived from fp8's, marked *) too
  // while the profile has no fp8tile entry.
  std::set<std::tuple<bool, int, bool, int, int>> grid;
  const bool tile_calibrated = m.find("cuda_fold", DType::kFP8Tile, 16) != nullptr;
  for (const attn::CostEntry& e : m.entries()) {
    if (e.backend == "cuda_fold" && e.heads > 0 && e.q_len > 0) {
      grid.emplace(e.deterministic, static_cast<int>(e.kv_dtype), e.fp8_math, e.heads, e.q_len);
      if (e.kv_dtype == DType::kFP8E4M3 && !e.fp8_math && !tile_calibrated) {
        grid.emplace(e.deterministic, static_cast<int>(DType::kFP8Tile), false, e.heads, e.q_len);
      }
    }
  }
  for (const auto& [det, kv, f8, h, q] : grid) {
    attn::VerifyShape s;
    s.batch = 1;
    s.num_heads = h;
    s.q_len = q;
    s.kv_dtype = static_cast<DType>(kv);
    s.deterministic = det;
    s.fp8_math = f8;
    const attn::Crossover c =
        attn::find_crossover(m, "cuda_rowwise", reg.entry(row.value()).kv_reads, "cuda_fold",
                             reg.entry(fold.value()).kv_reads, s);
    const bool derived = s.kv_dtype == DType::kFP8Tile && !tile_calibrated;
    std::printf("  %-8s %5d %4d %-7s  %s\n",
                (attn::kv_math_label(s.kv_dtype, f8) + (derived ? "*" : "")).c_str(), h, q,
                det ? "det" : "default", c.to_string().c_str());
  }
  if (!tile_calibrated) {
    std::printf(
        "  * uncalibrated: fp8tile estimated from the fp8 entries, the time beyond the fixed cost "
        "scaled by the roofline work (KV bytes 656/576 where memory-bound); `mlaspec calibrate "
        "--kv fp8tile` measures it\n");
  }
}

// Where each CUDA backend's estimate of an fp8-math shape comes from: the profile's fp8-math
// entries (calibrate measures the mode) or, without them, the rule derived from the exact fp8
// entries, which the H100 showed underprices the mode.
void print_fp8_math_prices(const attn::BackendRegistry& reg, const attn::CostModel& m,
                           const attn::VerifyShape& shape) {
  for (int i = 0; i < reg.size(); ++i) {
    const attn::BackendCaps& c = reg.caps(i);
    if (c.device != Device::kCUDA || !c.fp8_math) continue;
    const attn::CostEntry* e = m.entry_for(c.name, shape);
    std::string from = "no estimate (no fp8 entry)";
    if (e && e->fp8_math) {
      from = "calibrated: its fp8-math entry (H=" + std::to_string(e->heads) +
             ", q=" + std::to_string(e->q_len) + ", " + (e->deterministic ? "det" : "default") +
             ")";
    } else if (e) {
      from =
          "derived (*) from its exact fp8 estimate: the profile has no fp8-math entries for it "
          "(`mlaspec calibrate` measures them)";
    }
    std::printf("fp8-math price of %s: %s\n", std::string(c.name).c_str(), from.c_str());
  }
}

void run_inspect(const InspectCli& cli) {
  // The shape is checked before anything is printed: a bad spec is an error, not a listing.
  std::optional<Device> dev;
  std::optional<attn::VerifyShape> shape;
  if (cli.explain_given) {
    Result<attn::VerifyShape> parsed = parse_shape_spec(cli.explain, &dev);
    throw_if_error(parsed.status().with_context("--explain"));
    shape = parsed.value();
  }
  attn::DispatchSetupOptions o;
  o.policy = cli.backend;
  o.profile_path = cli.profile;
  o.gpu_name = cli.gpu;
  const std::string detected = attn::detect_gpu_name();
  // On a machine without a GPU, estimate the CUDA backends with the fallback GPU's model so the
  // explanation still shows what a GPU machine would do.
  if (o.gpu_name.empty()) o.gpu_name = detected.empty() ? "NVIDIA H200" : detected;
  o.log_warnings = false;
  auto setup = attn::make_dispatch(o);
  throw_if_error(setup.status());
  attn::BackendRegistry& reg = *setup.value().registry;
  attn::Dispatcher& disp = *setup.value().dispatcher;
  const attn::ResolvedCostModel& cost = setup.value().cost;

  std::printf("mlaspec inspect\n");
  std::printf("build: CUDA %s; GPU: %s\n", built_with_cuda() ? "on" : "off",
              detected.empty() ? "none detected" : detected.c_str());
  std::printf("cost model: %s%s (for %s%s)\n", cost.model.source().c_str(),
              cost.model.provisional() ? " [PROVISIONAL]" : "", cost.model.machine().c_str(),
              detected.empty() && cli.gpu.empty() ? "; no GPU here, --gpu NAME to choose" : "");
  for (const auto& n : cost.notes) std::printf("  note: %s\n", n.c_str());
  for (const auto& w : cost.warnings) std::printf("  warning: %s\n", w.c_str());

  if (!shape) {
    std::printf("\nbackends (capabilities from each kernel's compile-time traits):\n");
    for (int i = 0; i < reg.size(); ++i) {
      const attn::BackendCaps& c = reg.caps(i);
      const Status a = reg.availability(i);
      std::printf("  %-14s %s\n", std::string(c.name).c_str(),
                  a.ok() ? "available here" : a.message().c_str());
      std::printf("  %-14s %s; KV read %s\n", "", attn::describe_caps(c).c_str(),
                  std::string(attn::kv_read_pattern_name(reg.entry(i).kv_reads)).c_str());
    }
    print_model(cost.model);
    print_crossovers(reg, cost.model);
    std::printf("\nexplain a decision: mlaspec inspect --explain B=1,H=16,q=8,S=131072,kv=fp8\n");
    return;
  }

  attn::SelectOptions so;
  so.data_device = dev;
  so.quiet = true;
  std::printf("\nshape: %s   policy: %s\n", shape->to_string().c_str(),
              disp.policy().to_string().c_str());
  auto d = disp.select(*shape, so);
  if (d.ok()) {
    std::printf("%s", d.value().explain().c_str());
    if (shape->fp8_math) {
      // Never the default, so say it where the pick is made.
      std::printf(
          "math: fp8 (VerifyOptions::fp8_math): Q and P rounded to e4m3, not exact; its "
          "error bound per row: attention/reference.h fp8_math_row_bound\n");
    }
  } else {
    // The verdicts still say what each backend makes of the shape.
    std::printf("%s", disp.evaluate(*shape, so).explain().c_str());
    std::printf("no pick: %s\n", d.status().message().c_str());
  }
  if (shape->fp8_math) print_fp8_math_prices(reg, cost.model, *shape);
  // Without a usable GPU here, also show what a machine with the CUDA backends would decide.
  bool cuda_here = false;
  for (int i = 0; i < reg.size(); ++i) {
    cuda_here |= reg.caps(i).device == Device::kCUDA && reg.availability(i).ok();
  }
  if (!cuda_here && dev != Device::kCPU) {
    attn::SelectOptions all = so;
    all.assume_available = true;
    all.data_device = Device::kCUDA;
    auto hypo = disp.select(*shape, all);
    std::printf("\nwith the CUDA backends available (%s model):\n", cost.model.machine().c_str());
    if (hypo.ok()) {
      const attn::Decision& h = hypo.value();
      const std::string& kernel = h.verdicts[h.backend_index].kernel;
      char est[32] = "no cost-model estimate";
      if (h.est_us) std::snprintf(est, sizeof est, "est %.1f us", *h.est_us);
      std::printf("  pick: %s%s, %s%s (%s)\n", std::string(h.backend).c_str(),
                  kernel.empty() ? "" : (" (" + kernel + ")").c_str(), est,
                  h.est_derived.empty() ? "" : (" [" + h.est_derived + "]").c_str(),
                  h.reason.c_str());
    } else {
      std::printf("  no pick: %s\n", hypo.status().message().c_str());
    }
  }
  if (!d.ok()) throw Error(d.status());
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto cli = std::make_shared<InspectCli>();
  CLI::App* cmd = app.add_subcommand(
      "inspect",
      "List the attention backends (what each can serve, whether it is available here) and the "
      "cost model; with --explain, show how dispatch decides for one batch shape.");
  CLI::Option* explain = cmd->add_option(
      "--explain", cli->explain,
      "Shape to explain: B=1,H=16,q=8,S=131072,kv=fp8[,page=64][,det][,fp8math][,dev=cuda|cpu] "
      "(S accepts k/m suffixes; defaults B=1,H=16,q=1,kv=bf16,page=64). Prints each "
      "backend's verdict and estimated cost, and the pick.");
  cmd->add_option("--backend", cli->backend,
                  "With --explain: the dispatch policy to explain, auto (default) or a backend "
                  "name")
      ->capture_default_str()
      ->needs(explain);
  cmd->add_option("--profile", cli->profile,
                  "Cost-model profile JSON (default: $MLASPEC_PROFILE, else "
                  "~/.cache/mlaspec/profile.json, else built-in defaults)");
  cmd->add_option("--gpu", cli->gpu,
                  "Use this GPU's cost model (default: the GPU found here, else NVIDIA H200)");
  cmd->callback([cli, explain] {
    cli->explain_given = explain->count() > 0;
    run_inspect(*cli);
  });
}

}  // namespace mlaspec::tools
