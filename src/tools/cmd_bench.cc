// `mlaspec bench`: times verify-attention backends with PERF.md's protocol and prints one table:
// the roofline floor, each backend's median time and % of floor, and the ratio between backends
// measured in the same run (and each KV dtype against bf16, fp8tile against fp8, and fp8 KV in
// fp8 math against bf16 and exact fp8, when the run times them).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/registry.h"
#include "mlaspec/bench/harness.h"
#include "mlaspec/core/log.h"
#include "tools/commands.h"
#include "tools/output_file.h"
#include "tools/shape_spec.h"

#if defined(MLASPEC_WITH_CUDA)
#include "mlaspec/bench/cuda_timer.h"
#endif

namespace mlaspec::tools {
namespace {

// A CPU run expected to take longer than this (at the roofline) is announced with a warning.
constexpr double kLongCpuRunSeconds = 30;

struct BenchCli {
  std::string device = "cpu";
  std::vector<std::string> backends;
  std::string set;  // default depends on device
  std::string kv = "bf16";
  int reps = 0;
  int warmup = 3;
  bool no_check = false;
  bool deterministic = false;
  bool fp8_math = false;  // also time fp8 KV in fp8 math (VerifyOptions::fp8_math)
  int num_splits = 0;
  std::string json_path;
  std::string profile;
  std::vector<int> rows;             // positions in the set; empty = all
  std::vector<std::string> configs;  // --config shape specs (instead of a set)
};

// Small configs the CPU reference finishes in seconds; the built-in default job.
std::vector<bench::BenchConfig> cpu_small_configs(DType kv) {
  std::vector<bench::BenchConfig> out;
  struct Row {
    int b, h, q;
    int64_t s;
  };
  for (Row r :
       {Row{1, 16, 1, 4096}, Row{1, 16, 8, 4096}, Row{4, 16, 8, 2048}, Row{1, 128, 8, 1024}}) {
    out.push_back({.batch = r.b, .num_heads = r.h, .q_len = r.q, .seq_len = r.s, .kv_dtype = kv});
  }
  return out;
}

Result<std::vector<bench::BenchConfig>> configs_for(const std::string& set, DType kv) {
  if (set == "small") return cpu_small_configs(kv);
  if (set == "standard") return bench::standard_configs(kv);
  if (set == "qsweep") return bench::qlen_sweep(kv);
  if (set == "ssweep") return bench::seqlen_sweep(kv);
  if (set == "ragged") return bench::ragged_set(kv);
  if (set == "all") {
    std::vector<bench::BenchConfig> all = bench::standard_configs(kv);
    for (auto& c : bench::qlen_sweep(kv)) all.push_back(c);
    for (auto& c : bench::seqlen_sweep(kv)) all.push_back(c);
    return all;
  }
  return invalid_argument("unknown config set '" + set +
                          "' (expected small, standard, qsweep, ssweep, ragged or all)");
}

// --config: each shape spec (inspect --explain's syntax, without kv and dev, which --kv and
// --device give) as a config of KV dtype `kv`, in the order given.
Result<std::vector<bench::BenchConfig>> spec_configs(const std::vector<std::string>& specs,
                                                     DType kv) {
  std::vector<bench::BenchConfig> out;
  for (const std::string& spec : specs) {
    // The spec's keys as parse_shape_spec reads them: comma-separated items, spaces trimmed.
    std::stringstream items(spec);
    for (std::string item; std::getline(items, item, ',');) {
      const size_t first = item.find_first_not_of(' ');
      const std::string key = first == std::string::npos
                                  ? ""
                                  : item.substr(first, item.find_first_of(" =", first) - first);
      if (key == "kv" || key == "dev") {
        return invalid_argument(
            "--config " + spec + ": give " +
            (key == "kv" ? "the KV dtype with --kv" : "the device with --device") + ", not " + key +
            "= in the shape");
      }
    }
    Result<attn::VerifyShape> shape = parse_shape_spec(spec);
    if (!shape.ok()) return shape.status().with_context("--config");
    const attn::VerifyShape& x = shape.value();
    out.push_back({.batch = x.batch,
                   .num_heads = x.num_heads,
                   .q_len = x.q_len,
                   .seq_len = x.max_seq_len,
                   .kv_dtype = kv,
                   .page_size = x.page_size,
                   .deterministic = x.deterministic,
                   .fp8_math = x.fp8_math});
  }
  return out;
}

// The configs of `set` at the positions `rows` (all when empty), in the order given; with
// --config, those shapes instead.
Result<std::vector<bench::BenchConfig>> selected_configs(const BenchCli& cli,
                                                         const std::string& set, DType kv) {
  if (!cli.configs.empty()) return spec_configs(cli.configs, kv);
  const std::vector<int>& rows = cli.rows;
  Result<std::vector<bench::BenchConfig>> all = configs_for(set, kv);
  if (!all.ok()) return all;
  return bench::select_rows(all.value(), rows, set);
}

// One row of a ratio table: per backend numerator time / denominator time (µs; <= 0: not
// measured, printed "-").
struct RatioRow {
  std::string label;
  std::vector<double> num, den;
};

void print_ratio_table(const std::string& title, const std::vector<attn::Backend*>& backends,
                       const std::vector<RatioRow>& rows) {
  std::printf("\n%s\n| config |", title.c_str());
  for (const attn::Backend* b : backends) std::printf(" %s |", std::string(b->name()).c_str());
  std::printf("\n|---|");
  for (size_t k = 0; k < backends.size(); ++k) std::printf("---|");
  std::printf("\n");
  for (const RatioRow& r : rows) {
    std::printf("| %s |", r.label.c_str());
    for (size_t k = 0; k < backends.size(); ++k) {
      if (r.num[k] > 0 && r.den[k] > 0)
        std::printf(" %.2f |", r.num[k] / r.den[k]);
      else
        std::printf(" - |");
    }
    std::printf("\n");
  }
}

// What one pass over the configs times: a KV dtype, in exact math or (fp8 only) in fp8 math.
struct KvVariant {
  DType kv = DType::kBF16;
  bool fp8_math = false;
  std::string label() const { return fp8_math ? "fp8math" : std::string(attn::kv_dtype_label(kv)); }
};

// The (numerator, denominator) positions in `variants` of the ratio tables: each dtype over bf16,
// fp8tile over fp8, and fp8 math over bf16 and over exact fp8, for those the run times.
std::vector<std::pair<int, int>> kv_ratio_pairs(const std::vector<KvVariant>& variants) {
  auto at = [&](DType t, bool math) {
    for (size_t k = 0; k < variants.size(); ++k) {
      if (variants[k].kv == t && variants[k].fp8_math == math) return static_cast<int>(k);
    }
    return -1;
  };
  const int bf16 = at(DType::kBF16, false), fp8 = at(DType::kFP8E4M3, false);
  const int tile = at(DType::kFP8Tile, false), math = at(DType::kFP8E4M3, true);
  std::vector<std::pair<int, int>> pairs;
  for (int num : {fp8, tile, math}) {
    if (num >= 0 && bf16 >= 0) pairs.emplace_back(num, bf16);
  }
  for (int num : {tile, math}) {
    if (num >= 0 && fp8 >= 0) pairs.emplace_back(num, fp8);
  }
  return pairs;
}

void run_bench(const BenchCli& cli) {
  if (cli.device != "cpu" && cli.device != "cuda") {
    throw Error(invalid_argument("--device " + cli.device + " is not cpu or cuda"));
  }
  const bool cuda = cli.device == "cuda";
  if (cli.num_splits > 0 && !cuda) {
    throw Error(invalid_argument("--num-splits " + std::to_string(cli.num_splits) +
                                 " needs --device cuda (the CPU reference has no split-KV)"));
  }
  if (!cli.configs.empty() && (!cli.set.empty() || !cli.rows.empty())) {
    throw Error(invalid_argument(
        "--config names the shapes to time; it does not combine with --set or --rows"));
  }
  // Every spec is checked before anything runs.
  const Result<std::vector<bench::BenchConfig>> specs = spec_configs(cli.configs, DType::kBF16);
  throw_if_error(specs.status());
  for (const bench::BenchConfig& c : specs.value()) {
    if (c.deterministic && cli.num_splits > 0) {
      throw Error(invalid_argument("--num-splits " + std::to_string(cli.num_splits) +
                                   " conflicts with the deterministic shape " + c.to_string() +
                                   ", whose splits sit at fixed KV positions"));
    }
  }
  if (cli.num_splits > 0 && cli.deterministic) {
    throw Error(invalid_argument("--num-splits " + std::to_string(cli.num_splits) +
                                 " conflicts with --deterministic, whose splits sit at fixed KV "
                                 "positions"));
  }
  std::vector<std::string> names = cli.backends;
  if (names.empty()) {
    names = cuda ? std::vector<std::string>{"cuda_fold", "cuda_rowwise"}
                 : std::vector<std::string>{"cpu_reference"};
  }
  // The registry resolves names (and says why a backend is unavailable here); the dispatcher
  // reports what `auto` would pick for each config.
  attn::DispatchSetupOptions dso;
  dso.profile_path = cli.profile;
  Result<attn::DispatchSetup> setup = attn::make_dispatch(dso);
  throw_if_error(setup.status());
  attn::BackendRegistry& registry = *setup.value().registry;
  attn::Dispatcher& dispatcher = *setup.value().dispatcher;
  for (const auto& n : names) {
    if (n == "auto") {
      std::string known;
      for (const std::string& k : registry.names()) known += (known.empty() ? "" : ", ") + k;
      throw Error(invalid_argument(
          "--backend auto: bench times named backends (" + known +
          "); the table's \"auto picks\" column shows auto's choice for each config"));
    }
  }
  // Every --kv dtype in exact math, then (--fp8-math) fp8 KV in fp8 math on the same configs.
  std::vector<KvVariant> dtypes;
  for (DType kv : kv_dtypes_option(cli.kv)) dtypes.push_back({kv, false});
  if (cli.fp8_math) dtypes.push_back({DType::kFP8E4M3, true});
  const std::string set = !cli.configs.empty() ? "custom"
                          : cli.set.empty()    ? (cuda ? "standard" : "small")
                                               : cli.set;
  // The configs of every variant, resolved (--set, --rows) before anything is measured.
  std::vector<std::vector<bench::BenchConfig>> configs;
  for (const KvVariant& v : dtypes) {
    Result<std::vector<bench::BenchConfig>> cfgs = selected_configs(cli, set, v.kv);
    throw_if_error(cfgs.status());
    for (bench::BenchConfig& c : cfgs.value()) {
      if (cli.fp8_math && !v.fp8_math && c.fp8_math) {
        // The exact variant would run in fp8 math too: its fp8math/fp8 ratio would compare the
        // mode with itself.
        throw Error(invalid_argument(
            "--config " + c.to_string() +
            " asks for fp8 math itself; --fp8-math adds an fp8-math run of every config beside "
            "its exact one: give one or the other"));
      }
      c.deterministic = c.deterministic || cli.deterministic;
      c.fp8_math = c.fp8_math || v.fp8_math;
      c.num_splits = cli.num_splits;
    }
    configs.push_back(std::move(cfgs.value()));
  }
  std::vector<attn::Backend*> backends;
  std::vector<int> backend_index;
  for (const auto& n : names) {
    Result<int> index = registry.index_of(n);
    throw_if_error(index.status());
    Result<attn::Backend*> b = registry.get(index.value());
    throw_if_error(b.status());
    if ((b.value()->caps().device == Device::kCUDA) != cuda) {
      throw Error(invalid_argument("backend " + n + " runs on " +
                                   std::string(device_name(b.value()->caps().device)) +
                                   ", but --device is " + cli.device));
    }
    backends.push_back(b.value());
    backend_index.push_back(index.value());
  }
  // A config that none of the backends can serve would measure nothing: refused up front with
  // each backend's reason.
  for (const auto& cfgs : configs) {
    for (const bench::BenchConfig& c : cfgs) {
      std::string reasons;
      for (const attn::Backend* b : backends) {
        const Status st = attn::can_serve(b->caps(), c.shape());
        if (st.ok()) {
          reasons.clear();
          break;
        }
        reasons += (reasons.empty() ? "" : "; ") + st.message();
      }
      if (!reasons.empty()) {
        throw Error(
            unsupported("no backend timed here can serve " + c.to_string() + ": " + reasons));
      }
    }
  }
  // A single explicitly requested backend that cannot serve a config is an error with the
  // guard's reason; with several, the table shows the reason in that backend's cell.
  const bool single_forced = cli.backends.size() == 1;
  // --json is opened now, so a path that cannot be written is refused before the run.
  std::optional<OutputFile> json_out;
  if (!cli.json_path.empty()) {
    Result<OutputFile> f = OutputFile::open(cli.json_path, "--json");
    throw_if_error(f.status());
    json_out.emplace(std::move(f.value()));
  }
  const int reps = cli.reps > 0 ? cli.reps : (cuda ? 30 : 5);

  bench::Roofline roof;
  if (cuda) {
#if defined(MLASPEC_WITH_CUDA)
    Result<std::string> name = bench::cuda_device_name();
    throw_if_error(name.status());
    roof = bench::h200_roofline();
    if (name.value().find("H200") == std::string::npos) {
      log_warn("device is " + name.value() + ", floors use PERF.md's H200 ceilings");
    }
    roof.machine = name.value();
#endif
  } else {
    std::fprintf(stderr, "measuring this CPU's ceilings (memcpy bandwidth, fp32 FMA rate)...\n");
    roof = bench::measure_cpu_roofline();
  }
  std::printf("mlaspec bench: %s, ceilings %.1f GB/s, %.1f GFLOP/s%s; set %s; median of %d reps\n",
              roof.machine.c_str(), roof.bytes_per_s / 1e9, roof.flops_per_s / 1e9,
              cuda ? "" : " (indicative: best of short runs on a CPU that may be shared)",
              set.c_str(), reps);

  bench::TimeOptions topts;
  topts.reps = reps;
  topts.warmup = cli.warmup;
  topts.check = !cli.no_check;

  // On the CPU a set of GPU-sized rows runs for minutes: say so up front, with a lower bound
  // from the roofline floor, and report progress row by row.
  const size_t rows_total = configs.size() * configs[0].size();
  if (!cuda) {
    double floor_s = 0;
    for (const auto& cfgs : configs) {
      for (const bench::BenchConfig& c : cfgs) {
        floor_s += bench::min_run_seconds(c, roof, topts) * static_cast<double>(backends.size());
      }
    }
    if (floor_s > kLongCpuRunSeconds) {
      log_warn("set " + set + " on the CPU: " + std::to_string(rows_total) +
               " rows take at least " + std::to_string(static_cast<long long>(floor_s)) +
               " s at this CPU's roofline (the CPU reference runs well below it); progress goes "
               "to stderr row by row; --set small or --rows N runs less");
    }
  }

  nlohmann::json results = nlohmann::json::array();
  // time[(dtype, config index in set)][backend] for the dtype ratio tables.
  std::map<std::pair<int, size_t>, std::vector<double>> times;

  // Header.
  std::string header = "| # | config | floor us | bound |";
  std::string rule = "|---|---|---|---|";
  for (const auto& b : backends) {
    header += " " + std::string(b->name()) + " us | % floor |";
    rule += "---|---|";
  }
  if (backends.size() == 2) {
    header +=
        " " + std::string(backends[0]->name()) + "/" + std::string(backends[1]->name()) + " |";
    rule += "---|";
  }
  header += " auto picks | auto regret |";
  rule += "---|---|";
  std::printf("\n%s\n%s\n", header.c_str(), rule.c_str());
  std::fflush(stdout);

  size_t rows_done = 0;
  for (size_t di = 0; di < dtypes.size(); ++di) {
    for (size_t ci = 0; ci < configs[di].size(); ++ci) {
      const bench::BenchConfig& c = configs[di][ci];
      if (!cuda) {
        std::fprintf(stderr, "[%zu/%zu] %s\n", ++rows_done, rows_total, c.to_string().c_str());
      }
      const bench::Floor floor = bench::roofline_floor(c, roof);
      char floor_cell[32];
      std::snprintf(floor_cell, sizeof floor_cell, "%.1f", floor.us());
      std::string line = "| " + (c.index >= 0 ? std::to_string(c.index) : std::string("-")) +
                         " | " + c.to_string() + " | " + floor_cell + " | " +
                         (floor.memory_bound() ? "mem" : "flop") + " |";
      std::vector<double> t_us;
      nlohmann::json row = {{"config", c.to_string()}, {"kv", attn::kv_dtype_label(c.kv_dtype)},
                            {"fp8_math", c.fp8_math},  {"index", c.index},
                            {"floor_us", floor.us()},  {"memory_bound", floor.memory_bound()}};
      for (const auto& b : backends) {
        Result<bench::Timing> t = bench::time_backend(*b, c, topts);
        if (!t.ok()) {
          // A backend that cannot serve a config is a table entry, not a crash (unless it was the
          // one backend asked for); a wrong result is fatal.
          if (t.status().code() != StatusCode::kUnsupported || single_forced) {
            throw Error(t.status().with_context(std::string(b->name()) + " on " + c.to_string()));
          }
          line += " n/a | " + t.status().message() + " |";
          t_us.push_back(-1);
          row[std::string(b->name())] = {{"error", t.status().message()}};
          continue;
        }
        char cell[96];
        std::snprintf(cell, sizeof cell, " %.1f | %.0f%% |", t.value().median_us,
                      100.0 * floor.us() / t.value().median_us);
        line += cell;
        t_us.push_back(t.value().median_us);
        row[std::string(b->name())] = {{"median_us", t.value().median_us},
                                       {"min_us", t.value().min_us},
                                       {"max_us", t.value().max_us},
                                       {"reps", t.value().reps},
                                       {"pct_floor", 100.0 * floor.us() / t.value().median_us},
                                       {"checked", t.value().checked},
                                       {"max_rel_err", t.value().max_rel_err},
                                       {"samples_us", t.value().samples_us}};
      }
      if (backends.size() == 2) {
        char cell[32];
        if (t_us[0] > 0 && t_us[1] > 0)
          std::snprintf(cell, sizeof cell, " %.2f |", t_us[0] / t_us[1]);
        else
          std::snprintf(cell, sizeof cell, " - |");
        line += cell;
      }
      // What auto would pick for this batch, and how much slower that is than the best backend
      // measured here (its regret).
      attn::SelectOptions so;
      so.data_device = cuda ? Device::kCUDA : Device::kCPU;
      so.quiet = true;
      Result<attn::Decision> pick = dispatcher.select(c.shape(), so);
      if (!pick.ok()) {
        line += " none | - |";
        row["auto"] = {{"error", pick.status().message()}};
      } else {
        double best = -1, picked = -1;
        for (size_t k = 0; k < backends.size(); ++k) {
          if (t_us[k] > 0 && (best < 0 || t_us[k] < best)) best = t_us[k];
          if (backend_index[k] == pick.value().backend_index) picked = t_us[k];
        }
        char cell[96];
        if (picked > 0 && best > 0) {
          std::snprintf(cell, sizeof cell, " %s | %.1f%% |",
                        std::string(pick.value().backend).c_str(), 100.0 * (picked / best - 1.0));
          row["auto"] = {{"backend", pick.value().backend}, {"regret", picked / best - 1.0}};
        } else {
          std::snprintf(cell, sizeof cell, " %s | - |", std::string(pick.value().backend).c_str());
          row["auto"] = {{"backend", pick.value().backend}};
        }
        line += cell;
      }
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      times[{static_cast<int>(di), ci}] = t_us;
      results.push_back(row);
    }
  }

  // Each KV dtype against bf16, fp8tile against fp8 (the per-tile scales' cost over one scale per
  // layer), and fp8 math against bf16 and exact fp8, on the same configs (every variant runs the
  // same set).
  nlohmann::json kv_ratios = nlohmann::json::array();
  for (const auto& [num, den] : kv_ratio_pairs(dtypes)) {
    const std::string num_name = dtypes[num].label();
    const std::string den_name = dtypes[den].label();
    std::vector<RatioRow> ratios;
    for (size_t ci = 0; ci < configs[num].size(); ++ci) {
      const std::string cfg = configs[num][ci].to_string();
      RatioRow r{cfg.substr(0, cfg.find(",kv=")), times[{num, ci}], times[{den, ci}]};
      nlohmann::json j = {{"config", r.label}, {"num", num_name}, {"den", den_name}};
      for (size_t k = 0; k < backends.size(); ++k) {
        if (r.num[k] > 0 && r.den[k] > 0) j[std::string(backends[k]->name())] = r.num[k] / r.den[k];
      }
      kv_ratios.push_back(std::move(j));
      ratios.push_back(std::move(r));
    }
    print_ratio_table(num_name + "/" + den_name + " time ratio (same config, same backend)",
                      backends, ratios);
  }

  // Each ragged batch against the same requests padded to its largest width (the uniform row
  // of equal B, H, S and q_len = that width), when the run timed both.
  std::vector<RatioRow> ragged;
  for (size_t di = 0; di < dtypes.size(); ++di) {
    for (size_t ci = 0; ci < configs[di].size(); ++ci) {
      const bench::BenchConfig& r = configs[di][ci];
      if (!r.ragged()) continue;
      for (size_t pi = 0; pi < configs[di].size(); ++pi) {
        const bench::BenchConfig& p = configs[di][pi];
        if (!p.ragged() && p.batch == r.batch && p.num_heads == r.num_heads &&
            p.seq_len == r.seq_len && p.q_len == r.q_len && p.page_size == r.page_size) {
          const int d = static_cast<int>(di);
          ragged.push_back({r.to_string(), times[{d, ci}], times[{d, pi}]});
          break;
        }
      }
    }
  }
  if (!ragged.empty()) {
    print_ratio_table(
        "ragged / padded time (the ragged batch vs its requests padded to the largest width, same "
        "backend; < 1: ragged faster)",
        backends, ragged);
  }

  if (json_out) {
    throw_if_error(json_out->write_and_close(nlohmann::json{{"machine", roof.machine},
                                                            {"bytes_per_s", roof.bytes_per_s},
                                                            {"flops_per_s", roof.flops_per_s},
                                                            {"set", set},
                                                            {"results", results},
                                                            {"kv_ratios", kv_ratios}}
                                                 .dump(2) +
                                             "\n"));
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto cli = std::make_shared<BenchCli>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Time verify-attention backends (PERF.md protocol: outputs checked against the CPU "
      "reference first, median of 30 CUDA-graph replays on the GPU unless --reps says otherwise), "
      "printing the roofline "
      "floor, time, % of floor and the ratio between backends.");
  cmd->add_option("--device", cli->device, "cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--backend", cli->backends,
                  "Backend(s) to time: cpu_reference, cuda_fold, cuda_rowwise (repeatable). "
                  "Default: cpu_reference on cpu, cuda_fold and cuda_rowwise on cuda. A single "
                  "backend that cannot serve a config is an error with the guard's reason.");
  cmd->add_option("--set", cli->set,
                  "Config set: small (CPU default), standard (PERF.md rows 0-11, cuda default), "
                  "qsweep (q_len 1..16), ssweep (S 4k..1M), ragged (per-request q_len, each "
                  "batch followed by its requests padded to the largest width), all (standard, "
                  "qsweep and ssweep)");
  add_kv_dtypes_option(*cmd, &cli->kv,
                       "KV dtype(s), each timed on the same configs: bf16, fp8 (one scale per "
                       "layer), fp8tile (656-byte rows, one scale per 128 values), a "
                       "comma-separated list (bf16,fp8tile), both (bf16,fp8) or all");
  cmd->add_option("--reps", cli->reps, "Timed repetitions (default 30 on cuda, 5 on cpu)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", cli->warmup, "Warm-up calls")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_flag("--no-check", cli->no_check,
                "Skip the correctness check against the CPU reference");
  cmd->add_option("--rows", cli->rows,
                  "Only these rows of the set (positions from 0; for standard, PERF.md's row "
                  "numbers), e.g. --rows 8,9")
      ->delimiter(',');
  cmd->add_option(
      "--config", cli->configs,
      "Time these shapes instead of a set (repeatable): B=1,H=8,q=2,S=128k[,page=16]"
      "[,det], inspect --explain's syntax; the KV dtype comes from --kv. Not with --set "
      "or --rows");
  cmd->add_flag("--deterministic", cli->deterministic, "Run the backends in deterministic mode");
  cmd->add_flag(
      "--fp8-math", cli->fp8_math,
      "Also time fp8 KV in fp8 math (VerifyOptions::fp8_math: Q and P rounded to e4m3, "
      "e4m3 tensor-core MMAs) on the same configs, checked within fp8_math_row_bound, and "
      "print fp8math/bf16 and fp8math/fp8 ratio tables for the --kv dtypes timed");
  cmd->add_option("--num-splits", cli->num_splits,
                  "Split-KV splits per request for the CUDA backends (VerifyOptions::num_splits; "
                  "default 0: each backend chooses). For experiments on the split plan; not with "
                  "--deterministic, whose splits sit at fixed KV positions")
      ->check(CLI::Range(0, 65536));
  cmd->add_option("--json", cli->json_path, "Also write the results as JSON to this file");
  cmd->add_option("--profile", cli->profile,
                  "Dispatch cost-model profile (JSON from `mlaspec calibrate`) used for the auto "
                  "column; default: $MLASPEC_PROFILE, ~/.cache/mlaspec/profile.json, built-in");
  cmd->callback([cli] { run_bench(*cli); });
}

}  // namespace mlaspec::tools
