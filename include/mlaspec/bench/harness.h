// Benchmark harness for verify attention: the PERF.md protocol in one place.
//
// A config is built as random inputs on the backend's device (never zeros), the output is checked
// against the CPU reference before any timing, and the call is timed as the median of
// TimeOptions::reps replays (30 by default, PERF.md's count) after warm-up: CUDA backends with
// events around CUDA-graph replays of back-to-back calls (launch overhead out), rotating between >=
// 2 input sets when the KV is under 200 MB so the 60 MB L2 does not flatter the result; the CPU
// backend with a steady clock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mlaspec/attention/backend.h"
#include "mlaspec/core/status.h"

namespace mlaspec::bench {

struct BenchConfig {
  int index = -1;  // row of PERF.md's standard set, or -1
  int batch = 1;
  int num_heads = 16;
  int q_len = 1;
  int64_t seq_len = 131072;
  DType kv_dtype = DType::kBF16;
  int page_size = 64;
  bool deterministic = false;
  int num_splits = 0;  // VerifyOptions::num_splits (0: the backend chooses)
  // VerifyOptions::fp8_math (fp8 KV only): e4m3 tensor-core math, checked against the exact
  // reference within fp8_math_row_bound instead of the exact kernels' 1e-2.
  bool fp8_math = false;
  // A ragged batch (VerifyArgs::q_indptr): request b's verify width, in request order; empty for
  // a uniform one. When set, batch == q_lens.size() and q_len is the largest (ragged_config()
  // keeps them so).
  std::vector<int> q_lens = {};
  bool ragged() const { return !q_lens.empty(); }
  int64_t query_rows() const;  // T: the sum of q_lens, or batch * q_len
  // Where request b's query rows start, b = 0..batch ([batch + 1], the last = T): q_indptr.
  std::vector<int32_t> query_starts() const;
  // "B=1,H=16,q=8,S=131072,kv=bf16[,page=16][,det][,fp8math][,splits=4]"; a ragged batch's q is
  // its widths
  // ("q=1/8/3", up to 16 requests) or their range and T ("q=1..16(T=545)").
  std::string to_string() const;
  attn::VerifyShape shape() const;
};

// Machine ceilings for the roofline floor.
struct Roofline {
  std::string machine;     // "NVIDIA H200" or "cpu (2 threads)"
  double bytes_per_s = 0;  // memory bandwidth
  double flops_per_s = 0;  // matrix rate in the compute dtype
};
// PERF.md's measured H200 ceilings (4.21 TB/s copy, 757 TFLOP/s bf16).
Roofline h200_roofline();
// Ceilings of this CPU, measured once per process (a large memcpy; an fp32 FMA loop on all
// threads), each the best of several short runs, cached. Indicative: on a shared machine they
// still move with the load of the neighbours.
Roofline measure_cpu_roofline();

struct Floor {
  double flops = 0, bytes = 0;
  double compute_us = 0, memory_us = 0;
  double us() const { return compute_us > memory_us ? compute_us : memory_us; }
  bool memory_bound() const { return memory_us >= compute_us; }
};
// PERF.md: FLOPs = 2*T*H*S*(576+512) (T = B*q_len, or a ragged batch's query rows); bytes =
// B*S*kv_row_bytes (576 values per token: 1152 bytes bf16, 576 fp8_e4m3; 656 fp8_tile, whose rows
// add four f32 scales and keep the rope in bf16).
Floor roofline_floor(const BenchConfig& cfg, const Roofline& roof);

struct TimeOptions {
  int warmup = 5;
  int reps = 30;
  bool check = true;                               // compare with the CPU reference before timing
  int64_t check_max_kv_tokens = int64_t{1} << 22;  // above this total KV, check a sub-batch only
};

struct Timing {
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int reps = 0;
  // µs per call of each rep in the order they ran (a CUDA rep is one graph replay of several
  // calls): how the time moved during the run, e.g. two modes or a drift as the clock settles.
  std::vector<double> samples_us;
  double max_rel_err = 0;  // of the correctness check (normalised error of out)
  bool checked = false;
};

// The least time one backend's run of `cfg` takes on `roof`: its roofline floor times the calls
// time_backend makes (warm-up, the check, the reps). For warning before a run that will take
// long (GPU-sized configs on the CPU).
double min_run_seconds(const BenchConfig& cfg, const Roofline& roof, const TimeOptions& opts);

// Times one backend on one config (see the file comment). Errors: the guard's reason when the
// backend cannot serve the config, a correctness failure, or a CUDA error.
Result<Timing> time_backend(attn::Backend& backend, const BenchConfig& cfg,
                            const TimeOptions& opts = {});

// PERF.md's standard configuration set (rows 0..11) for one KV dtype, page size 64.
std::vector<BenchConfig> standard_configs(DType kv_dtype);
// The two sweeps: q_len = 1..16 at B=1,H=16,S=131072; S = 4k..1M at B=1,H=16,q_len=8.
std::vector<BenchConfig> qlen_sweep(DType kv_dtype);
std::vector<BenchConfig> seqlen_sweep(DType kv_dtype);

// A ragged batch of the given widths (each >= 1) at one context length.
BenchConfig ragged_config(int num_heads, std::vector<int> q_lens, int64_t seq_len, DType kv_dtype);
// Issue 39's ragged set: ragged batches, each followed by the same requests padded to the batch's
// largest width (the uniform call a caller without ragged support would make): widths 1..8 at
// B=8 (S=64k), and eight 8s through the ragged entry (its overhead); 16 random widths 1..8 in
// arrival order, then sorted by width (fewer runs), at S=32k; q_len 1 mixed with 32 at H=128; 64
// random widths 1..16 at S=8k.
std::vector<BenchConfig> ragged_set(DType kv_dtype);

// The configs at positions `rows` of a set (`set_name` for the message), in the order given; the
// whole set when `rows` is empty. A position outside the set is invalid_argument naming it and
// the set's range.
Result<std::vector<BenchConfig>> select_rows(const std::vector<BenchConfig>& set,
                                             const std::vector<int>& rows,
                                             const std::string& set_name);

}  // namespace mlaspec::bench
