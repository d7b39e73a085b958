// The model runtime's own commands (no tokenizer, no drafter):
//   `mlaspec model-logits`: a prefill and teacher-forced decode steps from a JSON file of token
//   ids,
//     every step's last-row logits written as raw f32 (scripts/v2lite_check.py compares them with
//     transformers');
//   `mlaspec bench-model`: prefill chunks, decode steps and verify steps (q_len 2..16) at batch
//     1/8/16, each as a fraction of its floor (PERF.md's engine floor: the bytes of the weights a
//     step touches, each routed expert once, plus its KV reads, over the device's bandwidth; for
//     prefill also FLOPs over the peak when one is given).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/parallel.h"
#include "mlaspec/model/footprint.h"
#include "mlaspec/model/model.h"
#include "tools/commands.h"
#include "tools/output_file.h"

namespace mlaspec::tools {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

[[noreturn]] void bad_input(Status s) {
  throw InputError(std::move(s));
}

template <typename T>
T value_or_throw(Result<T> r, const std::string& what) {
  if (!r.ok()) throw Error(r.status().with_context(what));
  return std::move(*r);
}

// A results file opened before the work, so an unwritable path is refused (exit 2) at once.
OutputFile open_output(const std::string& path, const std::string& option) {
  Result<OutputFile> f = OutputFile::open(path, option);
  if (!f.ok()) bad_input(f.status());
  return std::move(*f);
}

Device device_option(const std::string& d) {
  if (d == "cpu") return Device::kCPU;
  if (d == "cuda") return Device::kCUDA;
  bad_input(invalid_argument("--device " + d + ": not cpu or cuda"));
}

// Pages of `page_size` for `requests` requests of up to `tokens` tokens each, request r owning
// pages [r * per, (r + 1) * per).
struct Requests {
  int page_size = 64, per = 0;
  std::vector<std::vector<int32_t>> pages;
  Requests(int requests, int64_t tokens, int ps) : page_size(ps) {
    per = static_cast<int>((tokens + ps - 1) / ps);
    for (int r = 0; r < requests; ++r) {
      std::vector<int32_t> p(static_cast<size_t>(per));
      std::iota(p.begin(), p.end(), r * per);
      pages.push_back(std::move(p));
    }
  }
  int num_pages() const { return per * static_cast<int>(pages.size()); }
};

// ---- model-logits -------------------------------------------------------------------------------

struct LogitsCli {
  std::string model, tokens, out, device = "cuda";
  bool deterministic = false;
  double mem_fraction = 0.0;
};

void run_model_logits(const LogitsCli& cli) {
  std::ifstream in(cli.tokens);
  if (!in) bad_input(not_found("--tokens " + cli.tokens + " cannot be opened"));
  std::vector<int32_t> prompt, decode;
  try {
    nlohmann::json j;
    in >> j;
    if (!j.is_object() || !j.contains("prompt") || !j["prompt"].is_array() || j["prompt"].empty()) {
      bad_input(
          invalid_argument("--tokens " + cli.tokens + ": needs a non-empty \"prompt\" array"));
    }
    prompt = j["prompt"].get<std::vector<int32_t>>();
    if (j.contains("decode")) decode = j["decode"].get<std::vector<int32_t>>();
  } catch (const nlohmann::json::exception& e) {  // not JSON, or ids that are not integers
    bad_input(invalid_argument("--tokens " + cli.tokens + ": " + e.what()));
  }
  OutputFile out = open_output(cli.out, "--out");
  const int64_t total = static_cast<int64_t>(prompt.size() + decode.size());

  model::LoadOptions lo;
  lo.device = device_option(cli.device);
  lo.mem_fraction = cli.mem_fraction;
  const Requests req(1, total, 64);
  if (cli.mem_fraction > 0) {
    const model::ModelConfig mc = value_or_throw(model::load_model_config(cli.model), "config");
    lo.target_kv_bytes = int64_t{req.num_pages()} * req.page_size * 576 * 2 * mc.num_hidden_layers;
  }
  const auto t0 = Clock::now();
  Result<model::Model> loaded = model::Model::load(cli.model, lo);
  if (!loaded.ok()) bad_input(loaded.status().with_context("model " + cli.model));
  model::Model& m = *loaded;
  const double load_s = seconds_since(t0);
  const model::ModelConfig& c = m.config();
  kv::KvPool pool = value_or_throw(
      kv::KvPool::create(m.kv_pool_spec(req.num_pages(), req.page_size, DType::kBF16)), "KV pool");

  std::string bytes;  // the logits rows, written at the end
  model::ForwardOptions fo;
  fo.deterministic = cli.deterministic;
  int32_t len = 0;
  double prefill_s = 0, decode_s = 0;
  auto step = [&](std::span<const int32_t> toks) {
    std::vector<int32_t> pos(toks.size());
    std::iota(pos.begin(), pos.end(), len);
    model::ForwardRequest r{toks, pos, req.pages[0], model::LogitsMode::kLast};
    model::ForwardOutput o = value_or_throw(m.forward({&r, 1}, pool, fo), "forward");
    len += static_cast<int32_t>(toks.size());
    const std::vector<float>& l = o.requests[0].logits;
    bytes.append(reinterpret_cast<const char*>(l.data()), l.size() * sizeof(float));
  };
  auto t1 = Clock::now();
  step(prompt);
  prefill_s = seconds_since(t1);
  t1 = Clock::now();
  for (int32_t t : decode) step({&t, 1});
  decode_s = seconds_since(t1);
  throw_if_error(out.write_and_close(bytes));
  std::printf("model-logits: %zu rows x %d vocab (f32) -> %s\n", decode.size() + 1, c.vocab_size,
              cli.out.c_str());
  std::printf("load %.1f s; prefill %zu tokens %.1f ms; %zu decode steps %.2f ms each\n", load_s,
              prompt.size(), prefill_s * 1e3, decode.size(),
              decode.empty() ? 0.0 : decode_s * 1e3 / static_cast<double>(decode.size()));
}

// ---- bench-model --------------------------------------------------------------------------------

struct BenchModelCli {
  std::string model, device = "cpu", json;
  std::vector<int> batches = {1, 8, 16};
  std::vector<int> q_lens = {2, 4, 8, 16};
  std::vector<int> prefill = {64, 256};
  int64_t context = 512;
  int reps = 5;
  double bandwidth_gbs = 0;  // 0: cuda 4200, cpu measured
  double peak_tflops = -1;   // <0: cuda 757, cpu none
  bool deterministic = false;
  bool profile = false;  // per-phase times of one decode and one verify shape per batch
};

// Read bandwidth of this machine's memory, GB/s: the best of 3 parallel sums over 512 MiB (each
// part's sums stay exact: at most 2^24 / 8 ones per accumulator).
double measure_cpu_bandwidth() {
  const int64_t n = int64_t{128} << 20;  // floats
  std::vector<float> a(static_cast<size_t>(n), 1.0f);
  const int64_t parts = std::max(1, num_threads()) * 4;
  std::vector<double> sums(static_cast<size_t>(parts));
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = Clock::now();
    parallel_for(0, parts, [&](int64_t p) {
      const int64_t b = n * p / parts, e = n * (p + 1) / parts;
      float acc[8] = {};  // independent sums: the loop waits on memory, not on one add chain
      int64_t i = b;
      for (; i + 8 <= e; i += 8) {
        for (int u = 0; u < 8; ++u) acc[u] += a[static_cast<size_t>(i + u)];
      }
      double s = 0;
      for (; i < e; ++i) s += a[static_cast<size_t>(i)];
      for (float v : acc) s += v;
      sums[static_cast<size_t>(p)] = s;
    });
    const double s = seconds_since(t0);
    best = std::max(best, static_cast<double>(n) * 4 / s / 1e9);
  }
  if (std::accumulate(sums.begin(), sums.end(), 0.0) != static_cast<double>(n)) {
    throw Error(internal_error("bandwidth probe: wrong sum"));
  }
  return best;
}

// The attention op alone for a decode / verify step: `batch` requests of q queries over seq_len
// keys each (their pages in `pool`, layer 0), through the model's dispatcher as the forward calls
// it (deterministic, as both runtimes ask), median of `reps` after one warm-up, times the layers.
// q is zeros: the time does not depend on the values.
double time_attention(model::Model& m, kv::KvPool& pool, const Requests& req, int batch, int64_t q,
                      int64_t seq_len, int reps) {
  const model::ModelConfig& c = m.config();
  const Device dev = m.device();
  const int64_t H = c.num_attention_heads, row = c.kv_lora_rank + c.qk_rope_head_dim;
  const int64_t latent = c.kv_lora_rank, per = req.per;
  Buffer qb(static_cast<size_t>(batch * q * H * row) * 2, dev);
  throw_if_error(qb.fill_bytes(0));
  Buffer out(static_cast<size_t>(batch * q * H * latent) * 2, dev);
  Buffer lse(static_cast<size_t>(batch * q * H) * 4, dev);
  std::vector<int32_t> table, lens(static_cast<size_t>(batch), static_cast<int32_t>(seq_len));
  for (int b = 0; b < batch; ++b) {
    table.insert(table.end(), req.pages[static_cast<size_t>(b)].begin(),
                 req.pages[static_cast<size_t>(b)].end());
  }
  Buffer dtable(table.size() * 4, dev), dlens(lens.size() * 4, dev);
  throw_if_error(dtable.copy_from_host(table.data(), table.size() * 4));
  throw_if_error(dlens.copy_from_host(lens.data(), lens.size() * 4));
  attn::VerifyArgs a;
  a.q = TensorView(qb.data(), DType::kBF16, {batch, q, H, row}, dev);
  a.kv = pool.layer_view(0);
  a.block_table = TensorView(dtable.data(), DType::kI32, {batch, per}, dev);
  a.seq_lens = TensorView(dlens.data(), DType::kI32, {batch}, dev);
  if (dev == Device::kCUDA) {
    a.block_table_host = TensorView(table.data(), DType::kI32, {batch, per});
    a.seq_lens_host = TensorView(lens.data(), DType::kI32, {batch});
  }
  a.sm_scale = static_cast<float>(c.softmax_scale());
  a.out = TensorView(out.data(), DType::kBF16, {batch, q, H, latent}, dev);
  a.lse = TensorView(lse.data(), DType::kF32, {batch, q, H}, dev);
  attn::VerifyOptions vo;
  vo.deterministic = true;
  std::vector<double> t;
  float sink = 0;
  for (int rep = 0; rep <= reps; ++rep) {
    const auto s = Clock::now();
    throw_if_error(m.dispatcher().run(a, vo));
    throw_if_error(lse.copy_to_host(&sink, sizeof(float)));  // waits for the device
    if (rep > 0) t.push_back(seconds_since(s));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * c.num_hidden_layers;
}

// Bytes of the checkpoint's safetensors files (what a load reads from disk).
double checkpoint_bytes(const std::string& dir) {
  double total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".safetensors") total += static_cast<double>(e.file_size(ec));
  }
  return total;
}

struct Row {
  std::string step;
  int batch = 1, q_len = 1;
  int64_t context = 0;
  double ms = 0, tokens_per_s = 0, experts = 0, floor_bytes = 0, floor_ms = 0, frac = 0;
  double attention_ms = -1;  // the attention op alone, all layers (decode / verify rows)
  bool flop_bound = false;
};

void run_bench_model(const BenchModelCli& cli) {
  if (cli.reps < 1) bad_input(invalid_argument("--reps must be >= 1"));
  const Device dev = device_option(cli.device);
  std::optional<OutputFile> json_file;  // opened before the run: a bad path is refused at once
  if (!cli.json.empty())
    json_file.emplace(value_or_throw(OutputFile::open(cli.json, "--json"), "--json"));
  model::LoadOptions lo;
  lo.device = dev;
  const int max_batch = *std::max_element(cli.batches.begin(), cli.batches.end());
  const int max_q = *std::max_element(cli.q_lens.begin(), cli.q_lens.end());
  const int max_prefill = *std::max_element(cli.prefill.begin(), cli.prefill.end());
  const auto t0 = Clock::now();
  Result<model::Model> loaded = model::Model::load(cli.model, lo);
  if (!loaded.ok()) bad_input(loaded.status().with_context("model " + cli.model));
  model::Model& m = *loaded;
  const double load_s = seconds_since(t0);
  const model::ModelConfig& c = m.config();
  if (cli.context + max_q > c.max_position_embeddings || max_prefill > c.max_position_embeddings) {
    bad_input(out_of_range("--context " + std::to_string(cli.context) + " + q_len " +
                           std::to_string(max_q) + " exceeds the model's context of " +
                           std::to_string(c.max_position_embeddings) + " tokens"));
  }

  const double bw = cli.bandwidth_gbs > 0  ? cli.bandwidth_gbs
                    : dev == Device::kCUDA ? 4200.0
                                           : measure_cpu_bandwidth();
  const double peak = cli.peak_tflops >= 0 ? cli.peak_tflops : dev == Device::kCUDA ? 757.0 : 0.0;
  const double bytes_per_param = dev == Device::kCUDA ? 2.0 : 4.0;  // bf16 on the GPU, f32 here
  const model::WeightFootprint fp = model::weight_footprint(c);
  const double row_bytes = 576.0 * 2 * c.num_hidden_layers;  // a bf16 MLA row, every layer

  // Requests 0 .. max_batch - 1 hold `context` tokens; request max_batch is the prefill scratch.
  const Requests req(max_batch + 1, std::max<int64_t>(cli.context + max_q, max_prefill), 64);
  kv::KvPool pool = value_or_throw(
      kv::KvPool::create(m.kv_pool_spec(req.num_pages(), req.page_size, DType::kBF16)), "KV pool");
  model::ForwardOptions fo;
  fo.deterministic = cli.deterministic;
  std::mt19937 rng(7);
  auto random_tokens = [&](int64_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& v : t) v = static_cast<int32_t>(rng() % static_cast<unsigned>(c.vocab_size));
    return t;
  };
  // Runs `batch` requests of `q` tokens at position `first` (pages of requests r0 ..) `reps`
  // times after one warm-up; the median seconds.
  auto time_step = [&](int r0, int batch, int64_t q, int64_t first, model::LogitsMode mode) {
    std::vector<std::vector<int32_t>> toks, pos;
    std::vector<model::ForwardRequest> rs;
    for (int b = 0; b < batch; ++b) {
      toks.push_back(random_tokens(q));
      std::vector<int32_t> p(static_cast<size_t>(q));
      std::iota(p.begin(), p.end(), static_cast<int32_t>(first));
      pos.push_back(std::move(p));
    }
    for (int b = 0; b < batch; ++b) rs.push_back({toks[b], pos[b], req.pages[r0 + b], mode});
    std::vector<double> t;
    for (int rep = 0; rep <= cli.reps; ++rep) {
      const auto s = Clock::now();
      value_or_throw(m.forward(rs, pool, fo), "forward");
      if (rep > 0) t.push_back(seconds_since(s));
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  };

  // Fill the context of every request (chunks of kDefaultChunkTokens: the forward's own chunking).
  const auto tf = Clock::now();
  for (int b = 0; b < max_batch && cli.context > 0; ++b) {
    const std::vector<int32_t> toks = random_tokens(cli.context);
    std::vector<int32_t> pos(toks.size());
    std::iota(pos.begin(), pos.end(), 0);
    model::ForwardRequest r{toks, pos, req.pages[b], model::LogitsMode::kNone};
    value_or_throw(m.forward({&r, 1}, pool, fo), "context fill");
  }
  const double fill_s = seconds_since(tf);

  std::vector<Row> rows;
  // kv_tokens_read: KV rows the step reads (every request's); pairs: (query, key) pairs its
  // attention scores.
  auto add = [&](const std::string& step, int batch, int q, int64_t ctx, double s,
                 int64_t kv_tokens_read, double pairs) {
    Row r;
    r.step = step;
    r.batch = batch;
    r.q_len = q;
    r.context = ctx;
    r.ms = s * 1e3;
    r.tokens_per_s = static_cast<double>(batch) * q / s;
    r.experts = std::min<double>(c.n_routed_experts,
                                 model::expected_distinct_experts(c, int64_t{batch} * q));
    r.floor_bytes = fp.step_params(r.experts) * bytes_per_param +
                    row_bytes * static_cast<double>(kv_tokens_read);
    const double bytes_s = r.floor_bytes / (bw * 1e9);
    // FLOPs: 2 per weight per token (dense + k experts), and the absorbed attention's
    // 2 * H * (576 + 512) per query and key.
    const double tokens = static_cast<double>(batch) * q;
    const double flops = 2.0 * tokens * fp.step_params(c.num_experts_per_tok) +
                         2.0 * c.num_attention_heads * (576 + 512) * pairs * c.num_hidden_layers;
    const double flops_s = peak > 0 ? flops / (peak * 1e12) : 0.0;
    r.flop_bound = flops_s > bytes_s;
    r.floor_ms = std::max(bytes_s, flops_s) * 1e3;
    r.frac = r.floor_ms / r.ms;
    rows.push_back(r);
  };
  for (int p : cli.prefill) {
    add("prefill", 1, p, 0, time_step(max_batch, 1, p, 0, model::LogitsMode::kLast), p,
        0.5 * p * (p + 1));
  }
  for (int b : cli.batches) {
    add("decode", b, 1, cli.context, time_step(0, b, 1, cli.context, model::LogitsMode::kLast),
        int64_t{b} * (cli.context + 1), static_cast<double>(b) * (cli.context + 1));
    rows.back().attention_ms = 1e3 * time_attention(m, pool, req, b, 1, cli.context + 1, cli.reps);
    for (int q : cli.q_lens) {
      add("verify", b, q, cli.context, time_step(0, b, q, cli.context, model::LogitsMode::kAll),
          int64_t{b} * (cli.context + q), static_cast<double>(b) * q * (cli.context + q));
      rows.back().attention_ms =
          1e3 * time_attention(m, pool, req, b, q, cli.context + q, cli.reps);
    }
  }

  // Where the time goes (--profile; after the timed rows, which it would slow): the CUDA
  // runtime's per-phase GPU and host times for a decode and a verify step per batch.
  std::string profiles;
  if (cli.profile) {
    const int q = std::find(cli.q_lens.begin(), cli.q_lens.end(), 8) != cli.q_lens.end() ? 8 : max_q;
    m.set_phase_profiling(true);
    for (int b : cli.batches) {
      for (const int ql : {1, q}) {
        m.phase_report(true);  // resets
        time_step(0, b, ql, cli.context,
                  ql == 1 ? model::LogitsMode::kLast : model::LogitsMode::kAll);
        profiles += "\nprofile: " + std::string(ql == 1 ? "decode" : "verify") + " batch " +
                    std::to_string(b) + " q_len " + std::to_string(ql) + " context " +
                    std::to_string(cli.context) + " (" + std::to_string(cli.reps + 1) +
                    " steps)\n" + m.phase_report(true);
      }
    }
    m.set_phase_profiling(false);
  }

  std::printf(
      "bench-model: %s on %s, %d layers, hidden %d, %d experts top-%d; %.3g B params "
      "(%.3g B per token with k experts)\n",
      cli.model.c_str(), cli.device.c_str(), c.num_hidden_layers, c.hidden_size, c.n_routed_experts,
      c.num_experts_per_tok, fp.total_params() / 1e9, fp.step_params(c.num_experts_per_tok) / 1e9);
  std::printf(
      "load %.2f s (%.2f GB of safetensors, %.2f GB/s); context fill %.2f s; bandwidth %.0f GB/s "
      "(%s)%s; %d reps, median; %s mode\n",
      load_s, checkpoint_bytes(cli.model) / 1e9, checkpoint_bytes(cli.model) / 1e9 / load_s, fill_s,
      bw,
      cli.bandwidth_gbs > 0  ? "--bandwidth"
      : dev == Device::kCUDA ? "H200 nominal 4.2 TB/s"
                             : "measured here",
      peak > 0 ? (", peak " + std::to_string(static_cast<int>(peak)) + " TFLOP/s").c_str() : "",
      cli.reps, cli.deterministic ? "deterministic" : "default");
  std::printf(
      "floor = (weights touched, each routed expert once [expected distinct experts of "
      "uniform routing], + KV rows read) / bandwidth%s\n",
      peak > 0 ? ", or FLOPs / peak when larger (*)" : "");
  std::printf(
      "| step | batch | q_len | context | ms | tokens/s | experts/layer | floor MB | "
      "floor ms | %% of floor | attention ms | rest ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    char split[64] = "- | -";
    if (r.attention_ms >= 0) {
      std::snprintf(split, sizeof split, "%.3f | %.3f", r.attention_ms, r.ms - r.attention_ms);
    }
    std::printf("| %s | %d | %d | %lld | %.3f | %.0f | %.1f | %.1f | %.4f%s | %.1f%% | %s |\n",
                r.step.c_str(), r.batch, r.q_len, static_cast<long long>(r.context), r.ms,
                r.tokens_per_s, r.experts, r.floor_bytes / 1e6, r.floor_ms, r.flop_bound ? "*" : "",
                100.0 * r.frac, split);
    out.push_back({{"step", r.step},
                   {"batch", r.batch},
                   {"q_len", r.q_len},
                   {"context", r.context},
                   {"ms", r.ms},
                   {"tokens_per_s", r.tokens_per_s},
                   {"experts_per_layer", r.experts},
                   {"floor_bytes", r.floor_bytes},
                   {"floor_ms", r.floor_ms},
                   {"fraction_of_floor", r.frac},
                   {"attention_ms", r.attention_ms}});
  }
  std::printf(
      "attention ms: the attention op alone for the step's shape (one call timed, x "
      "layers); rest ms: the step minus it (GEMMs, norms, routing, launches). The GEMM / "
      "rest split inside it is not measured (no per-piece timers; nsys on the GPU)\n");
  if (!profiles.empty()) std::fputs(profiles.c_str(), stdout);
  if (json_file) throw_if_error(json_file->write_and_close(out.dump(2) + "\n"));
}

}  // namespace

void add_model_commands(CLI::App& app) {
  auto lc = std::make_shared<LogitsCli>();
  CLI::App* l = app.add_subcommand(
      "model-logits",
      "Runs a prefill and teacher-forced decode steps from a JSON file {\"prompt\": [ids], "
      "\"decode\": [ids]} and writes each step's last-row logits as raw f32 [1 + decode, vocab]");
  l->add_option("--model", lc->model, "model directory (config.json + safetensors)")->required();
  l->add_option("--tokens", lc->tokens, "JSON file of token ids")->required();
  l->add_option("--out", lc->out, "output file (raw little-endian f32)")->required();
  l->add_option("--device", lc->device, "cpu or cuda")->capture_default_str();
  l->add_flag("--deterministic", lc->deterministic, "row-invariant GEMMs");
  l->add_option("--mem-fraction", lc->mem_fraction,
                "cuda: refuse at load when weights + KV + workspace exceed this fraction of the "
                "free device memory (0: no check)")
      ->check(CLI::Range(0.0, 1.0));
  l->callback([lc]() { run_model_logits(*lc); });

  auto bc = std::make_shared<BenchModelCli>();
  CLI::App* b = app.add_subcommand(
      "bench-model",
      "Times prefill chunks, decode steps and verify steps of a model, each against its floor "
      "(weights touched + KV read over the bandwidth)");
  b->add_option("--model", bc->model, "model directory")->required();
  b->add_option("--device", bc->device, "cpu or cuda")->capture_default_str();
  b->add_option("--batch", bc->batches, "decode / verify batch sizes")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--q-len", bc->q_lens, "verify block lengths")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--prefill", bc->prefill, "prefill chunk lengths")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--context", bc->context, "tokens already in each request's KV")
      ->capture_default_str();
  b->add_option("--reps", bc->reps, "timed repetitions per row (median)")->capture_default_str();
  b->add_option("--bandwidth", bc->bandwidth_gbs,
                "memory bandwidth in GB/s for the floor (default: cuda 4200, cpu measured)");
  b->add_option("--peak-tflops", bc->peak_tflops,
                "peak FLOP/s for the FLOP floor (default: cuda 757, cpu none)");
  b->add_flag("--deterministic", bc->deterministic, "row-invariant GEMMs");
  b->add_flag("--profile", bc->profile,
              "then per-phase GPU / host times of a decode and a verify (q_len 8) step per batch "
              "(CUDA runtime)");
  b->add_option("--json", bc->json, "also write the rows as JSON");
  b->callback([bc]() { run_bench_model(*bc); });
}

}  // namespace mlaspec::tools
