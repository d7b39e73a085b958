// The model runtime's own commands (no tokenizer, no drafter):
//   `mlaspec model-logits`: a prefill and teacher-forced decode steps from a JSON file of token
//   ids,
//     every step's last-row logits written as raw f32 (scripts/v2lite_check.py compares them with
//     transformers');
//   `mlaspec bench-model`: prefill chunks, decode steps and verify steps (q_len 2..16) at batch
//     1/8/16, each as a fraction of its floor (PERF.md's engine floor: the bytes of the weights a
//     step touches, each routed expert once, plus its KV reads, over the device's bandwidth; for
//     prefill also FLOPs over the peak when one is given). For long contexts (issue 38,
//     scripts/long_context.py): lists of contexts and KV dtypes in one load, the attention policy,
//     pools sized to the memory left (a batch that does not fit is a "skipped" row with the bytes
//     it needs), and the context made by real prefill or by the KV writer (each row says which).
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/attention/registry.h"
#include "mlaspec/attention/verify.h"
#include "mlaspec/bench/random_fill.h"
#include "mlaspec/core/parallel.h"
#include "mlaspec/kvcache/writer.h"
#include "mlaspec/model/footprint.h"
#include "mlaspec/model/model.h"
#include "tools/commands.h"
#include "tools/output_file.h"
#include "tools/shape_spec.h"

#if defined(MLASPEC_WITH_CUDA)
#include <cuda_runtime.h>
#endif

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
  if (cli.mem_fraction > 0 && device_option(cli.device) != Device::kCUDA) {
    bad_input(invalid_argument("--mem-fraction checks device memory at load; --device " +
                               cli.device + " has none to check (use --device cuda)"));
  }
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
  std::string model, device = "cpu", json, fill = "auto";
  std::vector<std::string> attention = {"auto"};  // policies, each timed on the same context
  std::vector<int> batches = {1, 8, 16};
  std::vector<int> q_lens = {2, 4, 8, 16};
  std::vector<int> prefill = {64, 256};
  std::vector<int> chunk_tokens;  // the prefill rows' chunk lengths; empty: the model's default
  std::vector<std::string> contexts = {"512"};
  std::vector<std::string> kv = {"bf16"};
  int reps = 5;
  double bandwidth_gbs = 0;  // 0: cuda 4200, cpu measured
  double peak_tflops = -1;   // <0: cuda 757, cpu none
  double accept_length = 0;  // 0: no speculative columns
  double mem_limit_gb = 0;   // 0: the device's free memory after the load
  bool deterministic = false;
  bool profile = false;      // per-phase times of one decode and one verify shape per batch
  bool full_logits = false;  // download every logit row (sampling) instead of greedy ids
  bool beyond_max_position = false;
};

// Fills by prefill up to this many context tokens in all (`--fill auto`), by the writer beyond.
constexpr int64_t kPrefillFillTokens = 65536;
// Rows per kv::write_rows call when the writer fills the context.
constexpr int64_t kWriterChunk = 65536;
// Held back from the free device memory for what the sizing does not count (the attention
// backends' split-KV partials, the allocator's rounding).
constexpr int64_t kCudaMarginBytes = int64_t{1} << 30;

// A token count (tools/shape_spec.h parse_token_count: 4k = 4096, 1M = 1048576).
int64_t parse_context(const std::string& text) {
  const std::optional<int64_t> v = parse_token_count(text);
  if (!v) {
    bad_input(invalid_argument("--context " + text +
                               ": expected a token count >= 0 (an integer, or with a k / M "
                               "suffix: 4k = 4096, 1M = 1048576)"));
  }
  // Positions are int32 in the forward; 2^30 leaves room for any q_len.
  if (*v > (int64_t{1} << 30)) {
    bad_input(out_of_range("--context " + text + ": above 2^30 tokens"));
  }
  return *v;
}

DType parse_kv(const std::string& text) {
  if (text == "bf16") return DType::kBF16;
  if (text == "fp8" || text == "fp8_e4m3") return DType::kFP8E4M3;
  bad_input(invalid_argument("--kv " + text +
                             ": not bf16 or fp8 (the KV pool's dtype; fp8 is e4m3 with one scale "
                             "per layer)"));
}

std::string kv_label(DType d) {
  return d == DType::kBF16 ? "bf16" : "fp8";
}

// "auto" or a registered backend's name; anything else is refused before the load.
void check_attention_policy(const std::string& policy) {
  if (policy == "auto") return;
  const auto registry = attn::BackendRegistry::with_builtin_backends();
  if (registry->index_of(policy).ok()) return;
  std::string names;
  for (const std::string& n : registry->names()) names += ", " + n;
  bad_input(invalid_argument("--attention " + policy + ": not auto or a backend (" +
                             names.substr(2) + ")"));
}

// Bytes a new allocation may take on `dev` now: the CUDA device's free memory, or the host's
// available physical memory.
int64_t available_bytes(Device dev) {
#if defined(MLASPEC_WITH_CUDA)
  if (dev == Device::kCUDA) {
    size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
      throw Error(internal_error("cudaMemGetInfo failed"));
    }
    return static_cast<int64_t>(free);
  }
#endif
  (void)dev;
  return int64_t{sysconf(_SC_AVPHYS_PAGES)} * sysconf(_SC_PAGESIZE);
}

// Device memory in use (total - free) on the CUDA device, or -1 (the CPU runtime: not tracked).
int64_t device_bytes_in_use(Device dev) {
#if defined(MLASPEC_WITH_CUDA)
  size_t free = 0, total = 0;
  if (dev == Device::kCUDA && cudaMemGetInfo(&free, &total) == cudaSuccess) {
    return static_cast<int64_t>(total - free);
  }
#endif
  (void)dev;
  return -1;
}

// This process's resident host memory from /proc/self/status: "VmRSS" (now) or "VmHWM" (its
// peak), in bytes; -1 where the file or the key is missing (not Linux).
int64_t host_bytes(const std::string& key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  int64_t out = -1;
  char line[256];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    long long kb = 0;
    if (std::string_view(line).starts_with(key + ":") &&
        std::sscanf(line + key.size() + 1, "%lld", &kb) == 1) {
      out = kb * 1024;
      break;
    }
  }
  std::fclose(f);
  return out;
}

std::string gb(double bytes) {
  char b[32];
  if (bytes >= 1e9) {
    std::snprintf(b, sizeof b, "%.1f GB", bytes / 1e9);
  } else {
    std::snprintf(b, sizeof b, "%.1f MB", bytes / 1e6);
  }
  return b;
}

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

// The context of requests 0 .. batch - 1 (positions [0, ctx)) written without a forward: random
// bf16 rows (bench::fill_random, never zeros) through the engine's own writer, kv::write_rows, in
// chunks of kWriterChunk rows per layer (converted to the pool's dtype as a forward's rows are).
// Only the timing of later steps is meaningful over such a context, not their logits. Returns
// the seconds, the device finished.
double fill_by_writer(kv::KvPool& pool, const Requests& req, int batch, int64_t ctx) {
  const Device dev = pool.device();
  const int64_t row = pool.row_elems(), chunk = std::min(kWriterChunk, ctx);
  // A few extra rows: each call starts at its own offset, so layers and chunks differ.
  const int64_t spare = 1024;
  const auto t0 = Clock::now();
  Buffer rows(static_cast<size_t>((chunk + spare) * row) * 2, dev);
  throw_if_error(bench::fill_random(rows.data(), dev == Device::kCUDA, DType::kBF16,
                                    (chunk + spare) * row, /*seed=*/11));
  // Every request's slots, uploaded once (no buffer is rewritten while a write may read it).
  std::vector<int32_t> slots(static_cast<size_t>(int64_t{batch} * ctx));
  for (int b = 0; b < batch; ++b) {
    for (int64_t p = 0; p < ctx; ++p) {
      slots[static_cast<size_t>(b * ctx + p)] =
          req.pages[static_cast<size_t>(b)][static_cast<size_t>(p / req.page_size)] *
              req.page_size +
          static_cast<int32_t>(p % req.page_size);
    }
  }
  Buffer dslots(slots.size() * 4, dev);
  throw_if_error(dslots.copy_from_host(slots.data(), slots.size() * 4));
  for (int b = 0; b < batch; ++b) {
    for (int64_t start = 0; start < ctx; start += chunk) {
      const int64_t n = std::min(chunk, ctx - start), first = b * ctx + start;
      int32_t* host = slots.data() + first;
      auto* dev_slots = static_cast<int32_t*>(dslots.data()) + first;
      kv::WriteOptions wo;
      if (dev == Device::kCUDA) wo.slots_host = TensorView(host, DType::kI32, {n});
      for (int l = 0; l < pool.num_layers(); ++l) {
        const int64_t off = (l * 131 + b * 17 + start / chunk * 7) % spare;
        const TensorView rv(static_cast<uint16_t*>(rows.data()) + off * row, DType::kBF16, {n, row},
                            dev);
        throw_if_error(kv::write_rows(pool, l, TensorView(dev_slots, DType::kI32, {n}, dev), rv, wo)
                           .with_context("context fill by writer"));
      }
    }
  }
  uint8_t sink = 0;
  throw_if_error(pool.buffer().copy_to_host(&sink, 1));  // waits for the device
  return seconds_since(t0);
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
  std::string step, kv = "bf16", attention = "auto", context_by = "-", served_by = "-", skipped,
                    error;
  int batch = 1, q_len = 1;
  int chunk_tokens = 0;  // prefill rows: the chunk length the prompt ran in
  int64_t context = 0;
  double ms = 0, tokens_per_s = 0, experts = 0, floor_bytes = 0, floor_ms = 0, frac = 0;
  double attention_ms = -1;  // the attention op alone, all layers (decode / verify rows)
  double fill_s = 0;         // the context fill of this row's (kv, context) group
  double itl_ms = -1, out_tokens_per_s = -1;  // per output token; decode, and verify at tau
  bool flop_bound = false;
};

// The backends that served the dispatcher's calls since its last reset ("a+b" when several).
std::string served_by(attn::Dispatcher& d) {
  std::string s;
  for (int i = 0; i < d.registry().size(); ++i) {
    if (d.counters(i).calls > 0) {
      s += (s.empty() ? "" : "+") + std::string(d.registry().caps(i).name);
    }
  }
  return s.empty() ? "-" : s;
}

void run_bench_model(const BenchModelCli& cli) {
  if (cli.reps < 1) bad_input(invalid_argument("--reps must be >= 1"));
  const Device dev = device_option(cli.device);
  if (cli.attention.empty()) bad_input(invalid_argument("--attention: give at least one policy"));
  for (const std::string& p : cli.attention) check_attention_policy(p);
  if (cli.profile && dev != Device::kCUDA) {
    bad_input(invalid_argument("--profile reads the CUDA runtime's phase timers; --device " +
                               cli.device + " has none (use --device cuda)"));
  }
  std::vector<int64_t> contexts;
  for (const std::string& t : cli.contexts) contexts.push_back(parse_context(t));
  std::vector<DType> kvs;
  for (const std::string& t : cli.kv) kvs.push_back(parse_kv(t));
  if (cli.fill != "auto" && cli.fill != "prefill" && cli.fill != "writer") {
    bad_input(invalid_argument("--fill " + cli.fill + ": not auto, prefill or writer"));
  }
  if (cli.accept_length != 0 && !(cli.accept_length >= 1.0)) {
    char v[32];
    std::snprintf(v, sizeof v, "%g", cli.accept_length);
    bad_input(invalid_argument(std::string("--accept-length ") + v +
                               ": below 1 (tau counts the bonus token of every verify step)"));
  }
  for (int b : cli.batches) {
    if (b < 1) bad_input(invalid_argument("--batch " + std::to_string(b) + ": must be >= 1"));
  }
  for (int q : cli.q_lens) {
    if (q < 1) bad_input(invalid_argument("--q-len " + std::to_string(q) + ": must be >= 1"));
  }
  std::vector<int> prefills;  // 0: no prefill rows
  for (int p : cli.prefill) {
    if (p < 0) bad_input(invalid_argument("--prefill " + std::to_string(p) + ": must be >= 0"));
    if (p > 0) prefills.push_back(p);
  }
  std::vector<int> chunks = cli.chunk_tokens;  // the prefill rows' chunk lengths
  if (chunks.empty()) chunks.push_back(model::default_chunk_tokens(dev));
  for (int n : chunks) {
    if (n < 1 || n > attn::kCpuReferenceCaps.max_q_len) {
      bad_input(out_of_range("--chunk-tokens " + std::to_string(n) + ": must be in [1, " +
                             std::to_string(attn::kCpuReferenceCaps.max_q_len) + "]"));
    }
  }
  std::optional<OutputFile> json_file;  // opened before the run: a bad path is refused at once
  if (!cli.json.empty())
    json_file.emplace(value_or_throw(OutputFile::open(cli.json, "--json"), "--json"));
  model::LoadOptions lo;
  lo.device = dev;
  lo.attention_policy = cli.attention.front();
  std::vector<int> batches = cli.batches;
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  const int max_q = *std::max_element(cli.q_lens.begin(), cli.q_lens.end());
  const int max_prefill =
      prefills.empty() ? 0 : *std::max_element(prefills.begin(), prefills.end());
  const int64_t max_context = *std::max_element(contexts.begin(), contexts.end());
  const auto t0 = Clock::now();
  Result<model::Model> loaded = model::Model::load(cli.model, lo);
  if (!loaded.ok()) bad_input(loaded.status().with_context("model " + cli.model));
  model::Model& m = *loaded;
  const double load_s = seconds_since(t0);
  // GPU memory in use after the load (the weights, the process's CUDA context) and the most seen
  // when a row group ends (with the KV pools and scratch buffers), for the run's last line.
  const int64_t mem_after_load = device_bytes_in_use(dev);
  int64_t mem_most = mem_after_load;
  const int64_t host_after_load = host_bytes("VmRSS"), host_peak_load = host_bytes("VmHWM");
  const model::ModelConfig& c = m.config();
  if (max_prefill > c.max_position_embeddings ||
      (max_context + max_q > c.max_position_embeddings && !cli.beyond_max_position)) {
    bad_input(out_of_range("--context " + std::to_string(max_context) + " + q_len " +
                           std::to_string(max_q) + " exceeds the model's context of " +
                           std::to_string(c.max_position_embeddings) +
                           " tokens (--beyond-max-position times such steps anyway)"));
  }

  const double bw = cli.bandwidth_gbs > 0  ? cli.bandwidth_gbs
                    : dev == Device::kCUDA ? 4200.0
                                           : measure_cpu_bandwidth();
  const double peak = cli.peak_tflops >= 0 ? cli.peak_tflops : dev == Device::kCUDA ? 757.0 : 0.0;
  const double bytes_per_param = dev == Device::kCUDA ? 2.0 : 4.0;  // bf16 on the GPU, f32 here
  const model::WeightFootprint fp = model::weight_footprint(c);
  model::ForwardOptions fo;
  fo.deterministic = cli.deterministic;
  // The engine's greedy steps choose their tokens where the forward runs and bring back ids only;
  // sampling (--full-logits) brings back every logit row: batch x q_len x vocab floats.
  fo.argmax_only = !cli.full_logits;
  std::mt19937 rng(7);
  auto random_tokens = [&](int64_t n) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (auto& v : t) v = static_cast<int32_t>(rng() % static_cast<unsigned>(c.vocab_size));
    return t;
  };
  // Runs `batch` requests of `q` tokens at position `first` (pages of requests r0 ..) `reps`
  // times after one warm-up; the median seconds.
  auto time_step = [&](kv::KvPool& pool, const Requests& req, int r0, int batch, int64_t q,
                       int64_t first, model::LogitsMode mode) {
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

  std::string profiles;  // --profile
  std::vector<Row> rows;
  std::string policy = cli.attention.front();  // the dispatcher's policy now (make_row records it)
  auto use_policy = [&](const std::string& p) {
    throw_if_error(m.dispatcher().set_policy(attn::DispatchPolicy::parse(p)));
    policy = p;
  };
  // A row as --json writes it.
  auto row_json = [&](const Row& r) {
    nlohmann::json j = {{"step", r.step},       {"batch", r.batch}, {"q_len", r.q_len},
                        {"context", r.context}, {"kv", r.kv},       {"attention", r.attention}};
    if (r.chunk_tokens > 0) j["chunk_tokens"] = r.chunk_tokens;
    if (!r.skipped.empty() || !r.error.empty()) {
      j[r.skipped.empty() ? "error" : "skipped"] = r.skipped.empty() ? r.error : r.skipped;
      return j;
    }
    j.update({{"ms", r.ms},
              {"tokens_per_s", r.tokens_per_s},
              {"experts_per_layer", r.experts},
              {"floor_bytes", r.floor_bytes},
              {"floor_ms", r.floor_ms},
              {"fraction_of_floor", r.frac},
              {"attention_ms", r.attention_ms},
              {"served_by", r.served_by},
              {"context_by", r.context_by},
              {"fill_s", r.fill_s}});
    if (r.itl_ms >= 0) {
      j.update({{"itl_ms", r.itl_ms}, {"out_tokens_per_s", r.out_tokens_per_s}});
      if (r.step == "verify") j["accept_length"] = cli.accept_length;
    }
    return j;
  };
  // --json holds the rows so far after every (KV dtype, context) group: a run cut short by a time
  // limit (scripts/long_context.py gives each call one) still leaves what it measured.
  auto save_partial = [&] {
    mem_most = std::max(mem_most, device_bytes_in_use(dev));
    if (!json_file) return;
    nlohmann::json so_far = nlohmann::json::array();
    for (const Row& r : rows) so_far.push_back(row_json(r));
    throw_if_error(json_file->replace(so_far.dump(2) + "\n"));
  };
  // kv_tokens_read: KV rows the step reads (every request's); pairs: (query, key) pairs its
  // attention scores.
  auto make_row = [&](const std::string& step, DType kv, int batch, int q, int64_t ctx,
                      int64_t kv_tokens_read, double pairs) {
    Row r;
    r.step = step;
    r.kv = kv_label(kv);
    r.attention = policy;
    r.batch = batch;
    r.q_len = q;
    r.context = ctx;
    r.experts = std::min<double>(c.n_routed_experts,
                                 model::expected_distinct_experts(c, int64_t{batch} * q));
    const double row_bytes =
        static_cast<double>(kv::kv_bytes_per_token(kv::KvLayout::mla(), c.num_hidden_layers, kv));
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
    return r;
  };
  auto set_time = [&](Row& r, double s) {
    r.ms = s * 1e3;
    r.tokens_per_s = static_cast<double>(r.batch) * r.q_len / s;
    r.frac = r.floor_ms / r.ms;
    if (r.step == "decode") {
      r.itl_ms = r.ms;
      r.out_tokens_per_s = r.batch / s;
    } else if (r.step == "verify" && cli.accept_length > 0 && cli.accept_length <= r.q_len) {
      r.itl_ms = r.ms / cli.accept_length;
      r.out_tokens_per_s = cli.accept_length * r.batch / s;
    }
  };
  bool any_error = false;
  std::vector<std::string> fill_lines;  // how each (kv, context) group got its context
  // Times one row; an error (a backend refusing the shape, a failed allocation) is the row's
  // outcome, and the run goes on.
  auto timed = [&](Row r, const std::function<double()>& step,
                   const std::function<double()>& attention) {
    try {
      m.dispatcher().reset_counters();
      set_time(r, step());
      r.served_by = served_by(m.dispatcher());
      if (attention) r.attention_ms = 1e3 * attention();
    } catch (const Error& e) {
      r.error = e.what();
      any_error = true;
      std::fprintf(stderr, "bench-model: %s batch %d q_len %d context %lld: %s\n", r.step.c_str(),
                   r.batch, r.q_len, static_cast<long long>(r.context), e.what());
    }
    rows.push_back(std::move(r));
  };
  auto progress = [&](const std::string& what) {
    std::fprintf(stderr, "[bench-model %6.1f s] %s\n", seconds_since(t0), what.c_str());
  };

  // Prefill chunks over an empty context, in a pool of their own (the first --kv dtype).
  if (max_prefill > 0) {
    const Requests req(1, max_prefill, 64);
    kv::KvPool pool = value_or_throw(
        kv::KvPool::create(m.kv_pool_spec(req.num_pages(), req.page_size, kvs[0])), "KV pool");
    for (int n : chunks) {
      fo.max_chunk_tokens = n;
      for (int p : prefills) {
        Row r = make_row("prefill", kvs[0], 1, p, 0, p, 0.5 * p * (p + 1));
        r.chunk_tokens = n;
        timed(std::move(r),
              [&] { return time_step(pool, req, 0, 1, p, 0, model::LogitsMode::kLast); }, {});
      }
    }
    // Where a prefill's time goes (--profile): the largest prompt's phases, in the last chunk
    // length.
    if (cli.profile) {
      m.set_phase_profiling(true);
      m.phase_report(true);  // resets
      try {
        time_step(pool, req, 0, 1, max_prefill, 0, model::LogitsMode::kLast);
        profiles += "\nprofile: prefill, " + kv_label(kvs[0]) + " KV, " +
                    std::to_string(max_prefill) + " tokens in chunks of " +
                    std::to_string(chunks.back()) + " (" + std::to_string(cli.reps + 1) +
                    " steps)\n" + m.phase_report(true);
      } catch (const Error& e) {
        any_error = true;
        progress(std::string("profile: ") + e.what());
      }
      m.set_phase_profiling(false);
    }
    fo.max_chunk_tokens = 0;
  }

  // Decode and verify rows per KV dtype and context, each in a pool sized for the largest batch
  // that fits the memory left; larger batches are skipped with the bytes they would need.
  for (DType kv : kvs) {
    const double token_bytes =
        static_cast<double>(kv::kv_bytes_per_token(kv::KvLayout::mla(), c.num_hidden_layers, kv));
    for (int64_t ctx : contexts) {
      const Requests one(1, ctx + max_q, 64);
      const double per_request = static_cast<double>(one.num_pages()) * one.page_size * token_bytes;
      const int64_t chunk = std::max<int64_t>(
          {int64_t{model::default_chunk_tokens(dev)}, int64_t{batches.back()} * max_q});
      const double workspace =
          dev == Device::kCUDA
              ? static_cast<double>(model::scratch_bytes(c, chunk, one.per, 32).total() +
                                    (int64_t{64} << 20) + kCudaMarginBytes)
              : 0.0;
      const double avail =
          cli.mem_limit_gb > 0 ? cli.mem_limit_gb * 1e9 : static_cast<double>(available_bytes(dev));
      int fit = 0;
      for (int b : batches) {
        if (b * per_request + workspace <= avail) fit = b;
      }
      for (int b : batches) {
        if (b <= fit) continue;
        char why[256];
        std::snprintf(why, sizeof why,
                      "needs %s (KV %s for %d x %lld tokens of %s + workspace %s), %s available",
                      gb(b * per_request + workspace).c_str(), gb(b * per_request).c_str(), b,
                      static_cast<long long>(ctx + max_q), kv_label(kv).c_str(),
                      gb(workspace).c_str(), gb(avail).c_str());
        progress("skipped: batch " + std::to_string(b) + " at context " + std::to_string(ctx) +
                 " " + why);
        for (const std::string& p : cli.attention) {
          for (int q : [&] {
                 std::vector<int> qs = {0};  // 0: the decode row
                 qs.insert(qs.end(), cli.q_lens.begin(), cli.q_lens.end());
                 return qs;
               }()) {
            Row r = make_row(q == 0 ? "decode" : "verify", kv, b, std::max(q, 1), ctx, 0, 0);
            r.attention = p;
            r.skipped = why;
            rows.push_back(std::move(r));
          }
        }
      }
      if (fit == 0) continue;
      const Requests req(fit, ctx + max_q, 64);
      Result<kv::KvPool> made =
          kv::KvPool::create(m.kv_pool_spec(req.num_pages(), req.page_size, kv));
      if (!made.ok()) {
        any_error = true;
        progress("context " + std::to_string(ctx) + ": KV pool: " + made.status().to_string());
        continue;
      }
      kv::KvPool& pool = *made;
      const bool by_prefill =
          cli.fill == "prefill" || (cli.fill == "auto" && int64_t{fit} * ctx <= kPrefillFillTokens);
      double fill_s = 0;
      try {
        if (by_prefill) {
          const auto tf = Clock::now();
          for (int b = 0; b < fit && ctx > 0; ++b) {
            const std::vector<int32_t> toks = random_tokens(ctx);
            std::vector<int32_t> pos(toks.size());
            std::iota(pos.begin(), pos.end(), 0);
            model::ForwardRequest r{toks, pos, req.pages[b], model::LogitsMode::kNone};
            value_or_throw(m.forward({&r, 1}, pool, fo), "context fill by prefill");
          }
          fill_s = seconds_since(tf);
        } else if (ctx > 0) {
          fill_s = fill_by_writer(pool, req, fit, ctx);
        }
      } catch (const Error& e) {
        any_error = true;
        progress("context " + std::to_string(ctx) + ": " + e.what());
        continue;
      }
      const std::string by = ctx == 0 ? "-" : by_prefill ? "prefill" : "writer";
      char line[200];
      std::snprintf(line, sizeof line,
                    "%s KV, context %lld, batch up to %d: context by %s in %.2f s (%.0f tokens/s)",
                    kv_label(kv).c_str(), static_cast<long long>(ctx), fit, by.c_str(), fill_s,
                    fill_s > 0 ? static_cast<double>(fit) * ctx / fill_s : 0.0);
      progress(line);
      fill_lines.push_back(line);
      // Every policy on this context (one fill): its decode and verify rows per batch.
      for (const std::string& p : cli.attention) {
        use_policy(p);
        for (int b : batches) {
          if (b > fit) break;
          auto mark = [&](Row r) {
            r.context_by = by;
            r.fill_s = fill_s;
            return r;
          };
          timed(
              mark(make_row("decode", kv, b, 1, ctx, int64_t{b} * (ctx + 1),
                            static_cast<double>(b) * (ctx + 1))),
              [&] { return time_step(pool, req, 0, b, 1, ctx, model::LogitsMode::kLast); },
              [&] { return time_attention(m, pool, req, b, 1, ctx + 1, cli.reps); });
          for (int q : cli.q_lens) {
            timed(
                mark(make_row("verify", kv, b, q, ctx, int64_t{b} * (ctx + q),
                              static_cast<double>(b) * q * (ctx + q))),
                [&] { return time_step(pool, req, 0, b, q, ctx, model::LogitsMode::kAll); },
                [&] { return time_attention(m, pool, req, b, q, ctx + q, cli.reps); });
          }
        }
      }
      use_policy(cli.attention.front());
      save_partial();
      // Where the time goes (--profile; after the timed rows, which it would slow): the CUDA
      // runtime's per-phase GPU and host times for a decode and a verify step per batch.
      if (cli.profile) {
        const bool has8 = std::find(cli.q_lens.begin(), cli.q_lens.end(), 8) != cli.q_lens.end();
        m.set_phase_profiling(true);
        for (int b : batches) {
          if (b > fit) break;
          for (const int ql : {1, has8 ? 8 : max_q}) {
            m.phase_report(true);  // resets
            try {
              time_step(pool, req, 0, b, ql, ctx,
                        ql == 1 ? model::LogitsMode::kLast : model::LogitsMode::kAll);
            } catch (const Error& e) {
              any_error = true;
              progress(std::string("profile: ") + e.what());
              continue;
            }
            profiles += "\nprofile: " + std::string(ql == 1 ? "decode" : "verify") + ", " +
                        kv_label(kv) + " KV, batch " + std::to_string(b) + ", q_len " +
                        std::to_string(ql) + ", context " + std::to_string(ctx) + " (" +
                        std::to_string(cli.reps + 1) + " steps)\n" + m.phase_report(true);
          }
        }
        m.set_phase_profiling(false);
      }
    }
  }

  std::string policies;
  for (const std::string& p : cli.attention) policies += (policies.empty() ? "" : ", ") + p;
  std::printf(
      "bench-model: %s on %s, %d layers, hidden %d, %d experts top-%d; %.3g B params "
      "(%.3g B per token with k experts); attention %s\n",
      cli.model.c_str(), cli.device.c_str(), c.num_hidden_layers, c.hidden_size, c.n_routed_experts,
      c.num_experts_per_tok, fp.total_params() / 1e9, fp.step_params(c.num_experts_per_tok) / 1e9,
      policies.c_str());
  std::printf(
      "load %.2f s (%.2f GB of safetensors, %.2f GB/s); bandwidth %.0f GB/s "
      "(%s)%s; %d reps, median; %s mode; %s\n",
      load_s, checkpoint_bytes(cli.model) / 1e9, checkpoint_bytes(cli.model) / 1e9 / load_s, bw,
      cli.bandwidth_gbs > 0  ? "--bandwidth"
      : dev == Device::kCUDA ? "H200 nominal 4.2 TB/s"
                             : "measured here",
      peak > 0 ? (", peak " + std::to_string(static_cast<int>(peak)) + " TFLOP/s").c_str() : "",
      cli.reps, cli.deterministic ? "deterministic" : "default",
      cli.full_logits ? "every logit row downloaded (--full-logits)"
                      : "greedy ids chosen on the device (argmax_only; --full-logits: all logits)");
  if (max_context + max_q > c.max_position_embeddings) {
    std::printf(
        "positions past the model's max_position_embeddings %lld (--beyond-max-position): the "
        "steps are timed, their logits mean nothing\n",
        static_cast<long long>(c.max_position_embeddings));
  }
  for (const std::string& l : fill_lines) std::printf("%s\n", l.c_str());
  std::printf(
      "floor = (weights touched, each routed expert once [expected distinct experts of "
      "uniform routing], + KV rows read) / bandwidth%s\n",
      peak > 0 ? ", or FLOPs / peak when larger (*)" : "");
  if (cli.accept_length > 0) {
    std::printf(
        "ITL and out tokens/s: decode rows 1 token per request per step; verify rows at the "
        "given accept length tau = %.2f (--accept-length, not measured here): ITL = step / tau, "
        "tokens/s = tau x batch / step (verify rows with q_len < tau: -)\n",
        cli.accept_length);
  }
  std::printf(
      "| step | batch | q_len | context | ms | tokens/s | experts/layer | floor MB | "
      "floor ms | %% of floor | attention ms | rest ms | kv | served by | context by | ITL ms | "
      "out tokens/s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  nlohmann::json out = nlohmann::json::array();
  for (const Row& r : rows) {
    nlohmann::json j = row_json(r);
    if (!r.skipped.empty() || !r.error.empty()) {
      const bool skip = !r.skipped.empty();
      std::printf("| %s | %d | %d | %lld | %s: %s | | | | | | | | %s | %s | | | |\n",
                  r.step.c_str(), r.batch, r.q_len, static_cast<long long>(r.context),
                  skip ? "skipped" : "error", skip ? r.skipped.c_str() : r.error.c_str(),
                  r.kv.c_str(), cli.attention.size() > 1 ? (r.attention + ":").c_str() : "");
      out.push_back(std::move(j));
      continue;
    }
    // With several policies the cell names the row's policy too: "cuda_fold: cuda_fold".
    const std::string served =
        cli.attention.size() > 1 ? r.attention + ": " + r.served_by : r.served_by;
    char split[64] = "- | -", spec[64] = "- | -";
    if (r.attention_ms >= 0) {
      std::snprintf(split, sizeof split, "%.3f | %.3f", r.attention_ms, r.ms - r.attention_ms);
    }
    if (r.itl_ms >= 0) {
      std::snprintf(spec, sizeof spec, "%.3f | %.0f", r.itl_ms, r.out_tokens_per_s);
    }
    const std::string step = r.chunk_tokens > 0 && !cli.chunk_tokens.empty()
                                 ? r.step + " (chunks of " + std::to_string(r.chunk_tokens) + ")"
                                 : r.step;
    std::printf(
        "| %s | %d | %d | %lld | %.3f | %.0f | %.1f | %.1f | %.4f%s | %.1f%% | %s | %s | %s | %s "
        "| %s |\n",
        step.c_str(), r.batch, r.q_len, static_cast<long long>(r.context), r.ms, r.tokens_per_s,
        r.experts, r.floor_bytes / 1e6, r.floor_ms, r.flop_bound ? "*" : "", 100.0 * r.frac, split,
        r.kv.c_str(), served.c_str(), r.context_by.c_str(), spec);
    out.push_back(std::move(j));
  }
  std::printf(
      "attention ms: the attention op alone for the step's shape (one call timed, x "
      "layers); rest ms: the step minus it (GEMMs, norms, routing, launches). The GEMM / "
      "rest split inside it: --profile. served by: "
      "the backends the step's attention calls ran on. context by: how the KV context was "
      "made (prefill: real forwards; writer: random rows through kv::write_rows, for timing)\n");
  if (!profiles.empty()) std::fputs(profiles.c_str(), stdout);
  if (mem_after_load >= 0) {
    std::printf(
        "GPU memory in use (cudaMemGetInfo: total - free, all processes): %s after the load, "
        "%s at most at the end of a row group (KV pools and scratch included)\n",
        gb(static_cast<double>(mem_after_load)).c_str(),
        gb(static_cast<double>(std::max(mem_most, device_bytes_in_use(dev)))).c_str());
  }
  if (host_after_load >= 0 && host_peak_load >= 0) {
    // On CUDA the projections go from the mmap'd checkpoint to the device as bf16 and the layers'
    // host parts are freed after the upload (Model::weights): what stays is the embedding and head
    // in f32. The peak counts the checkpoint's pages the load touched (mapped, reclaimable).
    std::printf(
        "host memory (this process's resident set): %s after the load, %s at its peak "
        "during the load\n",
        gb(static_cast<double>(host_after_load)).c_str(),
        gb(static_cast<double>(host_peak_load)).c_str());
  }
  if (json_file) throw_if_error(json_file->write_and_close(out.dump(2) + "\n"));
  if (any_error) throw Error(internal_error("bench-model: some rows failed (see above)"));
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
  b->add_option("--prefill", bc->prefill, "prefill prompt lengths (0: no prefill rows)")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--chunk-tokens", bc->chunk_tokens,
                "chunk lengths the prefill rows run in, each timed (1..1024; default: the "
                "device's, " +
                    std::to_string(model::kDefaultChunkTokens) + " on cpu and " +
                    std::to_string(model::kDefaultCudaChunkTokens) + " on cuda)")
      ->delimiter(',');
  b->add_option("--context", bc->contexts,
                "tokens already in each request's KV, one group of rows per value (4k = 4096, "
                "1M = 1048576)")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--kv", bc->kv,
                "KV pool dtypes, one group of decode / verify rows per value (the prefill rows "
                "use the first): bf16, fp8")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--attention", bc->attention,
                "attention policies of the model: auto (the dispatcher's cost model) or a backend "
                "(cpu_reference, cuda_fold, cuda_rowwise); a list times each one's decode and "
                "verify rows on the same context, in one load")
      ->delimiter(',')
      ->capture_default_str();
  b->add_option("--fill", bc->fill,
                "how the context is made: prefill (real forwards), writer (random KV rows "
                "through the engine's writer: fast, for timing), auto (prefill up to 65536 "
                "context tokens in all, else writer)")
      ->capture_default_str();
  b->add_option("--accept-length", bc->accept_length,
                "accept length tau (>= 1) for the ITL and output tokens/s of the verify rows "
                "(tau x batch / step); given, not measured");
  b->add_option("--mem-limit-gb", bc->mem_limit_gb,
                "memory the KV pools may use, GB (default: the device's free memory after the "
                "load); a batch that does not fit is skipped with the bytes it needs");
  b->add_flag("--beyond-max-position", bc->beyond_max_position,
              "allow contexts past the model's max_position_embeddings (the timing holds; the "
              "logits mean nothing)");
  b->add_option("--reps", bc->reps, "timed repetitions per row (median)")->capture_default_str();
  b->add_option("--bandwidth", bc->bandwidth_gbs,
                "memory bandwidth in GB/s for the floor (default: cuda 4200, cpu measured)");
  b->add_option("--peak-tflops", bc->peak_tflops,
                "peak FLOP/s for the FLOP floor (default: cuda 757, cpu none)");
  b->add_flag("--deterministic", bc->deterministic, "row-invariant GEMMs");
  b->add_flag("--full-logits", bc->full_logits,
              "steps download every logit row (batch x q_len x vocab floats, what sampling "
              "needs); default: greedy token ids chosen on the device, as the engine's greedy "
              "verify does");
  b->add_flag("--profile", bc->profile,
              "then per-phase GPU / host times of the largest prefill chunk and of a decode and "
              "a verify (q_len 8) step per batch (CUDA runtime)");
  b->add_option("--json", bc->json, "also write the rows as JSON");
  b->callback([bc]() { run_bench_model(*bc); });
}

}  // namespace mlaspec::tools
