#include "mlaspec/bench/harness.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>

#include "mlaspec/attention/reference.h"
#include "mlaspec/bench/random_fill.h"
#include "mlaspec/core/parallel.h"

#if defined(MLASPEC_WITH_CUDA)
#include "mlaspec/bench/cuda_timer.h"
#endif

namespace mlaspec::bench {

int64_t BenchConfig::query_rows() const {
  if (!ragged()) return int64_t{batch} * q_len;
  return std::accumulate(q_lens.begin(), q_lens.end(), int64_t{0});
}

std::vector<int32_t> BenchConfig::query_starts() const {
  std::vector<int32_t> starts(static_cast<size_t>(batch) + 1, 0);
  for (int b = 0; b < batch; ++b) {
    starts[b + 1] = starts[b] + (ragged() ? q_lens[static_cast<size_t>(b)] : q_len);
  }
  return starts;
}

std::string BenchConfig::to_string() const {
  std::ostringstream os;
  os << "B=" << batch << ",H=" << num_heads << ",q=";
  if (!ragged()) {
    os << q_len;
  } else if (q_lens.size() <= 16) {
    for (size_t b = 0; b < q_lens.size(); ++b) os << (b ? "/" : "") << q_lens[b];
  } else {
    os << *std::min_element(q_lens.begin(), q_lens.end()) << ".." << q_len << "(T=" << query_rows()
       << ")";
  }
  os << ",S=" << seq_len << ",kv=" << attn::kv_dtype_label(kv_dtype);
  if (page_size != 64) os << ",page=" << page_size;
  if (deterministic) os << ",det";
  if (fp8_math) os << ",fp8math";
  if (num_splits > 0) os << ",splits=" << num_splits;
  return os.str();
}

attn::VerifyShape BenchConfig::shape() const {
  attn::VerifyShape s;
  s.batch = batch;
  s.q_len = q_len;
  s.num_heads = num_heads;
  s.page_size = page_size;
  s.kv_dtype = kv_dtype;
  s.max_seq_len = seq_len;
  s.total_kv = seq_len * batch;
  s.deterministic = deterministic;
  s.fp8_math = fp8_math;
  s.ragged = ragged();
  s.total_q = query_rows();
  return s;
}

BenchConfig ragged_config(int num_heads, std::vector<int> q_lens, int64_t seq_len, DType kv) {
  BenchConfig c;
  c.batch = static_cast<int>(q_lens.size());
  c.num_heads = num_heads;
  c.q_len = q_lens.empty() ? 1 : *std::max_element(q_lens.begin(), q_lens.end());
  c.seq_len = seq_len;
  c.kv_dtype = kv;
  c.q_lens = std::move(q_lens);
  return c;
}

std::vector<BenchConfig> ragged_set(DType kv) {
  auto random_widths = [](int n, int max, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<int> w(static_cast<size_t>(n));
    for (int& x : w) x = 1 + static_cast<int>(rng() % static_cast<uint64_t>(max));
    return w;
  };
  auto sorted = [](std::vector<int> w) {
    std::sort(w.begin(), w.end());
    return w;
  };
  std::vector<BenchConfig> out;
  auto add = [&](BenchConfig ragged, bool with_padded) {
    BenchConfig padded = ragged;
    padded.q_lens.clear();
    out.push_back(std::move(ragged));
    if (with_padded) out.push_back(std::move(padded));
  };
  add(ragged_config(16, {1, 2, 3, 4, 5, 6, 7, 8}, 65536, kv), true);
  // Equal widths through the ragged entry (one run): its cost over the uniform call just before.
  add(ragged_config(16, std::vector<int>(8, 8), 65536, kv), false);
  const std::vector<int> w16 = random_widths(16, 8, 39);
  add(ragged_config(16, w16, 32768, kv), false);
  add(ragged_config(16, sorted(w16), 32768, kv), true);
  add(ragged_config(128, {1, 32, 4, 16}, 16384, kv), true);
  add(ragged_config(16, sorted(random_widths(64, 16, 40)), 8192, kv), true);
  return out;
}

Roofline h200_roofline() {
  return Roofline{"NVIDIA H200", 4.21e12, 757e12};
}

Roofline measure_cpu_roofline() {
  static std::once_flag once;
  static Roofline roof;
  std::call_once(once, [] {
    using clock = std::chrono::steady_clock;
    // Each ceiling is the best of several short runs: on a machine shared with other work a
    // single run measures the neighbours as much as the CPU, and the best run is the one they
    // disturbed least (one long run swung about 2x between invocations).
    constexpr int kRuns = 7;
    // Bandwidth: a 128 MB copy (bytes read + written), far beyond any cache.
    const size_t n = size_t{128} << 20;
    std::vector<char> a(n, 1), b(n, 2);
    double best = 1e30;
    for (int rep = 0; rep < kRuns; ++rep) {
      const auto t0 = clock::now();
      std::memcpy(b.data(), a.data(), n);
      best = std::min(best, std::chrono::duration<double>(clock::now() - t0).count());
    }
    roof.bytes_per_s = 2.0 * n / best;
    // Arithmetic: independent fp32 FMA chains on every worker thread.
    const int threads = num_threads();
    const int64_t iters = 4'000'000;
    std::vector<float> sink(threads);
    double best_flop_s = 1e30;
    for (int rep = 0; rep < kRuns; ++rep) {
      const auto t0 = clock::now();
      parallel_for(0, threads, [&](int64_t t) {
        float acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        for (int64_t i = 0; i < iters; ++i) {
          for (float& x : acc) x = x * 0.999999f + 1e-7f;
        }
        sink[t] = std::accumulate(acc, acc + 8, 0.0f);
      });
      best_flop_s = std::min(best_flop_s, std::chrono::duration<double>(clock::now() - t0).count());
    }
    roof.flops_per_s = 2.0 * 8 * iters * threads / best_flop_s;
    roof.machine = "cpu (" + std::to_string(threads) + " threads)";
  });
  return roof;
}

Floor roofline_floor(const BenchConfig& c, const Roofline& roof) {
  Floor f;
  f.flops = 2.0 * static_cast<double>(c.query_rows()) * c.num_heads *
            static_cast<double>(c.seq_len) * (attn::kHeadDimQK + attn::kHeadDimV);
  f.bytes = static_cast<double>(c.batch) * c.seq_len * attn::kv_row_bytes(c.kv_dtype);
  f.compute_us = 1e6 * f.flops / roof.flops_per_s;
  f.memory_us = 1e6 * f.bytes / roof.bytes_per_s;
  return f;
}

double min_run_seconds(const BenchConfig& c, const Roofline& roof, const TimeOptions& opts) {
  const int calls = opts.warmup + opts.reps + (opts.check ? 1 : 0);
  return 1e-6 * roofline_floor(c, roof).us() * calls;
}

std::vector<BenchConfig> standard_configs(DType kv) {
  struct Row {
    int b, h, q;
    int64_t s;
  };
  static constexpr Row kRows[] = {{1, 16, 1, 131072}, {1, 16, 8, 131072},  {1, 16, 8, 1048576},
                                  {1, 16, 4, 131072}, {8, 16, 8, 65536},   {16, 16, 8, 32768},
                                  {64, 16, 1, 8192},  {1, 128, 1, 131072}, {1, 128, 8, 131072},
                                  {16, 128, 8, 8192}, {128, 128, 1, 4096}, {132, 16, 8, 16384}};
  std::vector<BenchConfig> out;
  for (int i = 0; i < 12; ++i) {
    BenchConfig c;
    c.index = i;
    c.batch = kRows[i].b;
    c.num_heads = kRows[i].h;
    c.q_len = kRows[i].q;
    c.seq_len = kRows[i].s;
    c.kv_dtype = kv;
    out.push_back(c);
  }
  return out;
}

std::vector<BenchConfig> qlen_sweep(DType kv) {
  std::vector<BenchConfig> out;
  for (int q = 1; q <= 16; ++q) {
    BenchConfig c;
    c.q_len = q;
    c.kv_dtype = kv;
    out.push_back(c);
  }
  return out;
}

std::vector<BenchConfig> seqlen_sweep(DType kv) {
  std::vector<BenchConfig> out;
  for (int64_t s : {4096, 16384, 65536, 262144, 1048576}) {
    BenchConfig c;
    c.q_len = 8;
    c.seq_len = s;
    c.kv_dtype = kv;
    out.push_back(c);
  }
  return out;
}

namespace {

// One input set: q and a KV pool on the backend's device, plus its outputs.
struct InputSet {
  Buffer q, kv, out, lse;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Compares sampled rows of (out, lse) read back from the device with the CPU reference.
Status check_rows(const attn::VerifyArgs& host_args, const std::vector<uint16_t>& out,
                  const std::vector<float>& lse, const BenchConfig& c, double* max_rel_err) {
  const int64_t rows = c.query_rows() * c.num_heads;
  const std::vector<int32_t> starts = c.query_starts();  // the request of each query row
  // Every element written: the poison (0xffff = NaN) must be gone, and no NaN/inf anywhere.
  for (size_t k = 0; k < out.size(); ++k) {
    if (!std::isfinite(bf16_bits_to_float(out[k]))) {
      return internal_error("out element " + std::to_string(k) +
                            " is not finite (unwritten or NaN) for " + c.to_string());
    }
  }
  for (size_t k = 0; k < lse.size(); ++k) {
    if (!std::isfinite(lse[k])) {
      return internal_error("lse element " + std::to_string(k) + " is not finite for " +
                            c.to_string());
    }
  }
  // Sample rows: the first and last rows and a spread of random ones; fewer at huge contexts.
  const int want = c.seq_len >= (int64_t{1} << 19) ? 6 : 16;
  std::vector<int64_t> sample = {0, rows - 1};
  std::mt19937_64 rng(static_cast<uint64_t>(rows) * 7919u + c.seq_len);
  while (static_cast<int>(sample.size()) < std::min<int64_t>(want, rows))
    sample.push_back(rng() % rows);
  std::vector<double> errs(sample.size(), 0.0);
  std::vector<double> lse_errs(sample.size(), 0.0);
  // fp8 math: each sampled row within its fp8_math_row_bound (the tensor cores' sums, the looser
  // of the two) of the exact f32 result, whose own error (~1e-6) the slack covers.
  std::vector<std::string> out_of_bound(sample.size());
  parallel_for(0, static_cast<int64_t>(sample.size()), [&](int64_t k) {
    const int64_t r = sample[k];
    const int64_t h = r % c.num_heads, t = r / c.num_heads;
    const int64_t b = std::upper_bound(starts.begin(), starts.end(), t) - starts.begin() - 1;
    const int64_t i = t - starts[static_cast<size_t>(b)];
    float ref[attn::kHeadDimV];
    const float ref_lse = attn::cpu_verify_row(host_args, b, i, h, ref);
    double num = 0, den = 0;
    for (int d = 0; d < attn::kHeadDimV; ++d) {
      const double diff = bf16_bits_to_float(out[r * attn::kHeadDimV + d]) - ref[d];
      num += diff * diff;
      den += double(ref[d]) * ref[d];
    }
    errs[k] = std::sqrt(num / std::max(den, 1e-30));
    lse_errs[k] = std::fabs(double(lse[r]) - ref_lse);
    if (c.fp8_math) {
      const attn::Fp8MathRowBound bound = attn::fp8_math_row_bound(
          host_args, b, i, h, ref_lse, attn::Fp8MathSums::kHopperTensorCores);
      double worst = 0, ref_max = 0;
      for (int d = 0; d < attn::kHeadDimV; ++d) {
        const double got = bf16_bits_to_float(out[r * attn::kHeadDimV + d]);
        worst = std::max(worst, std::fabs(got - double(ref[d])));
        ref_max = std::max(ref_max, std::fabs(double(ref[d])));
      }
      if (worst > bound.out_bound + 1e-5 * ref_max ||
          lse_errs[k] > bound.lse_bound + 1e-5 * (1 + std::fabs(ref_lse))) {
        out_of_bound[k] = "row " + std::to_string(r) + ": out error " + std::to_string(worst) +
                          " (bound " + std::to_string(bound.out_bound) + "), lse error " +
                          std::to_string(lse_errs[k]) + " (bound " +
                          std::to_string(bound.lse_bound) + ")";
      }
    }
  });
  if (c.fp8_math) {
    *max_rel_err = *std::max_element(errs.begin(), errs.end());
    for (const std::string& m : out_of_bound) {
      if (!m.empty()) {
        return internal_error(
            "fp8-math output outside fp8_math_row_bound of the exact result for " + c.to_string() +
            ": " + m);
      }
    }
    return Status::Ok();
  }
  *max_rel_err = *std::max_element(errs.begin(), errs.end());
  const double max_lse_err = *std::max_element(lse_errs.begin(), lse_errs.end());
  // bf16 output rounding alone gives ~3e-3; fp32 accumulation order differences are far smaller.
  if (*max_rel_err > 1e-2 || max_lse_err > 1e-2) {
    return internal_error("output differs from the CPU reference for " + c.to_string() +
                          ": normalised error " + std::to_string(*max_rel_err) +
                          " (bound 1e-2), lse error " + std::to_string(max_lse_err) +
                          " (bound 1e-2)");
  }
  return Status::Ok();
}

}  // namespace

Result<Timing> time_backend(attn::Backend& backend, const BenchConfig& c, const TimeOptions& opts) {
  MLASPEC_RETURN_IF_ERROR(attn::can_serve(backend.caps(), c.shape()));
  const Device dev = backend.caps().device;
  const bool on_device = dev == Device::kCUDA;
  const int64_t pages_per_req = (c.seq_len + c.page_size - 1) / c.page_size;
  const int64_t num_pages = pages_per_req * c.batch;
  // Rows of kv_row_width values: 576 bf16 or fp8_e4m3 values, or 656 bytes of fp8_tile.
  const int64_t kv_width = attn::kv_row_width(c.kv_dtype);
  const int64_t kv_bytes = num_pages * c.page_size * attn::kv_row_bytes(c.kv_dtype);
  const int64_t T = c.query_rows();
  const int64_t q_elems = T * c.num_heads * attn::kHeadDimQK;
  const int64_t out_elems = T * c.num_heads * attn::kHeadDimV;
  const int64_t lse_elems = T * c.num_heads;
  // Tensor shapes: [B, q_len, H, d] uniform, [T, H, d] ragged.
  const int64_t B = c.batch, Q = c.q_len, H = c.num_heads;
  auto host_view = [&](void* p, DType t, int64_t d) {
    if (c.ragged()) return d > 0 ? TensorView(p, t, {T, H, d}) : TensorView(p, t, {T, H});
    return d > 0 ? TensorView(p, t, {B, Q, H, d}) : TensorView(p, t, {B, Q, H});
  };
  auto buffer_view = [&](const Buffer& buf, DType t, int64_t d) {
    if (c.ragged()) return d > 0 ? buf.view(t, {T, H, d}) : buf.view(t, {T, H});
    return d > 0 ? buf.view(t, {B, Q, H, d}) : buf.view(t, {B, Q, H});
  };
  // PERF.md: under 200 MB of KV, rotate input sets so the 60 MB L2 cannot hold them all.
  const int sets = on_device && kv_bytes < (int64_t{200} << 20)
                       ? static_cast<int>(std::clamp<int64_t>(
                             (int64_t{400} << 20) / std::max<int64_t>(kv_bytes, 1), 2, 64))
                       : 1;
  // fp8_e4m3 codes of value / 0.05 (the fill's N(0, 1) values use the e4m3 range); bf16 and
  // fp8_tile (whose rows carry their own scales) are unscaled.
  const float kv_scale = c.kv_dtype == DType::kFP8E4M3 ? 0.05f : 1.0f;

  // Metadata: a shuffled page assignment (shared by all sets), host and device copies.
  std::vector<int32_t> table(static_cast<size_t>(num_pages));
  std::iota(table.begin(), table.end(), 0);
  std::shuffle(table.begin(), table.end(), std::mt19937_64(42));
  std::vector<int32_t> lens(static_cast<size_t>(c.batch), static_cast<int32_t>(c.seq_len));
  Buffer table_dev, lens_dev;
  if (on_device) {
    table_dev = Buffer(table.size() * 4, dev);
    lens_dev = Buffer(lens.size() * 4, dev);
    MLASPEC_RETURN_IF_ERROR(table_dev.copy_from_host(table.data(), table.size() * 4));
    MLASPEC_RETURN_IF_ERROR(lens_dev.copy_from_host(lens.data(), lens.size() * 4));
  }
  TensorView table_host(table.data(), DType::kI32, {c.batch, pages_per_req});
  TensorView lens_host(lens.data(), DType::kI32, {c.batch});
  std::vector<int32_t> indptr;
  Buffer indptr_dev;
  if (c.ragged()) {
    indptr = c.query_starts();
    if (on_device) {
      indptr_dev = Buffer(indptr.size() * 4, dev);
      MLASPEC_RETURN_IF_ERROR(indptr_dev.copy_from_host(indptr.data(), indptr.size() * 4));
    }
  }
  TensorView indptr_host(indptr.data(), DType::kI32, {static_cast<int64_t>(indptr.size())});

  std::vector<InputSet> in(sets);
  std::vector<attn::VerifyArgs> args(sets);
  for (int s = 0; s < sets; ++s) {
    in[s].q = Buffer(q_elems * 2, dev);
    in[s].kv = Buffer(kv_bytes, dev);
    in[s].out = Buffer(out_elems * 2, dev);
    in[s].lse = Buffer(lse_elems * 4, dev);
    MLASPEC_RETURN_IF_ERROR(
        fill_random(in[s].q.data(), on_device, DType::kBF16, q_elems, 1000 + s));
    // Every KV dtype holds the same values at one seed (fp8_tile: encoded from the bf16 rows).
    MLASPEC_RETURN_IF_ERROR(
        fill_random_kv(in[s].kv.data(), on_device, c.kv_dtype, kv_bytes, 2000 + s, 1.0f, kv_scale));
    attn::VerifyArgs& a = args[s];
    a.q = buffer_view(in[s].q, DType::kBF16, attn::kHeadDimQK);
    a.kv.pages = in[s].kv.view(c.kv_dtype, {num_pages, c.page_size, kv_width});
    a.kv.kv_scale = kv_scale;
    if (on_device) {
      a.block_table = table_dev.view(DType::kI32, {c.batch, pages_per_req});
      a.seq_lens = lens_dev.view(DType::kI32, {c.batch});
      a.block_table_host = table_host;
      a.seq_lens_host = lens_host;
      if (c.ragged()) {
        a.q_indptr = indptr_dev.view(DType::kI32, {c.batch + 1});
        a.q_indptr_host = indptr_host;
      }
    } else {
      a.block_table = table_host;
      a.seq_lens = lens_host;
      if (c.ragged()) a.q_indptr = indptr_host;
    }
    a.sm_scale = 1.0f / std::sqrt(static_cast<float>(attn::kHeadDimQK));
    a.out = buffer_view(in[s].out, DType::kBF16, attn::kHeadDimV);
    a.lse = buffer_view(in[s].lse, DType::kF32, 0);
  }
  attn::VerifyOptions vopts;
  vopts.deterministic = c.deterministic;
  vopts.num_splits = c.num_splits;
  vopts.fp8_math = c.fp8_math;
  MLASPEC_RETURN_IF_ERROR(backend.prepare(c.shape()));

  Timing t;
  // Correctness first, on set 0 with poisoned outputs.
  MLASPEC_RETURN_IF_ERROR(in[0].out.fill_bytes(0xff));
  MLASPEC_RETURN_IF_ERROR(in[0].lse.fill_bytes(0xff));
  MLASPEC_RETURN_IF_ERROR(backend.run(args[0], vopts));
  if (opts.check) {
    std::vector<uint16_t> out(static_cast<size_t>(out_elems));
    std::vector<float> lse(static_cast<size_t>(lse_elems));
    MLASPEC_RETURN_IF_ERROR(in[0].out.copy_to_host(out.data(), out.size() * 2));
    MLASPEC_RETURN_IF_ERROR(in[0].lse.copy_to_host(lse.data(), lse.size() * 4));
    attn::VerifyArgs host = args[0];
    std::vector<uint16_t> q_host;
    std::vector<uint8_t> kv_host;
    if (on_device) {
      q_host.resize(static_cast<size_t>(q_elems));
      kv_host.resize(static_cast<size_t>(kv_bytes));
      MLASPEC_RETURN_IF_ERROR(in[0].q.copy_to_host(q_host.data(), q_host.size() * 2));
      MLASPEC_RETURN_IF_ERROR(in[0].kv.copy_to_host(kv_host.data(), kv_host.size()));
      host.q = host_view(q_host.data(), DType::kBF16, attn::kHeadDimQK);
      host.kv.pages = TensorView(kv_host.data(), c.kv_dtype, {num_pages, c.page_size, kv_width});
      host.block_table = table_host;
      host.seq_lens = lens_host;
      if (c.ragged()) {
        host.q_indptr = indptr_host;
        host.q_indptr_host = TensorView();
      }
    }
    MLASPEC_RETURN_IF_ERROR(check_rows(host, out, lse, c, &t.max_rel_err));
    t.checked = true;
  }

  std::vector<double> samples;
  if (on_device) {
#if defined(MLASPEC_WITH_CUDA)
    // Back-to-back calls cycling through the sets, >= 8 calls per graph so launch gaps amortise.
    const int calls = std::max(8, 2 * sets);
    auto enqueue = [&](void* stream) -> Status {
      attn::VerifyOptions o = vopts;
      o.stream = stream;
      for (int k = 0; k < calls; ++k) MLASPEC_RETURN_IF_ERROR(backend.run(args[k % sets], o));
      return Status::Ok();
    };
    Result<std::vector<double>> r = time_graph_replays(enqueue, calls, opts.warmup, opts.reps);
    MLASPEC_RETURN_IF_ERROR(r.status());
    samples = std::move(r.value());
#else
    return unsupported("CUDA timing requested but mlaspec was built without CUDA");
#endif
  } else {
    using clock = std::chrono::steady_clock;
    for (int w = 0; w < opts.warmup; ++w) MLASPEC_RETURN_IF_ERROR(backend.run(args[0], vopts));
    for (int k = 0; k < opts.reps; ++k) {
      const auto t0 = clock::now();
      MLASPEC_RETURN_IF_ERROR(backend.run(args[k % sets], vopts));
      samples.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
    }
  }
  t.reps = static_cast<int>(samples.size());
  t.median_us = median(samples);
  t.min_us = *std::min_element(samples.begin(), samples.end());
  t.max_us = *std::max_element(samples.begin(), samples.end());
  t.samples_us = std::move(samples);
  return t;
}

Result<std::vector<BenchConfig>> select_rows(const std::vector<BenchConfig>& set,
                                             const std::vector<int>& rows,
                                             const std::string& set_name) {
  if (rows.empty()) return set;
  std::vector<BenchConfig> out;
  const int n = static_cast<int>(set.size());
  for (int r : rows) {
    if (r < 0 || r >= n) {
      return invalid_argument("--rows " + std::to_string(r) + " is not a row of set '" + set_name +
                              "' (rows 0.." + std::to_string(n - 1) + ")");
    }
    out.push_back(set[static_cast<size_t>(r)]);
  }
  return out;
}

}  // namespace mlaspec::bench
