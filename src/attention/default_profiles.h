// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md). Same JSON format as the file `mlaspec calibrate` writes.
//
// To install measured constants: run `mlaspec calibrate --out h200.json` on the H200 and replace
// the "NVIDIA H200" section below with the one from h200.json (the "models" array; drop
// "samples"), and set "provisional" to false. This string is the only place to edit.
//
// NVIDIA H200 — PROVISIONAL, NOT MEASURED. Derived by hand from PERF.md: the fold path at ~85% of
// the 4.21 TB/s copy rate (0.28 us/MB), a matrix term of 0.9 us/GFLOP (partial overlap with the
// KV stream; 757 TFLOP/s would be 1.32) and the <= 10 us fixed cost PERF.md targets (7 us,
// planning + combine); rowwise the same rates but a smaller fixed cost (4 us, no fold tiling) and
// the KV read once per query token. These put the rowwise -> fold crossover at S ~ 1.3k for
// q_len 8 and ~ 9k for q_len 2 (H=16, bf16); they only decide between two correct backends, and
// using them logs a warning until calibrated constants replace them.
//
// cpu: the CPU reference on a small multi-core host (~5 GB/s KV, ~10 GFLOP/s); informative only
// (on a CPU-only build it is the only candidate).
#pragma once

#include <string_view>

namespace mlaspec::attn::detail {

inline constexpr std::string_view kBuiltinProfileJson = R"json(
{
  "format": "mlaspec-profile",
  "version": 1,
  "machines": {
    "NVIDIA H200": {
      "source": "provisional constants derived from PERF.md, not measured",
      "provisional": true,
      "models": [
        {"backend": "cuda_fold",    "kv": "bf16", "heads": 16,  "fixed_us": 7.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_fold",    "kv": "fp8",  "heads": 16,  "fixed_us": 7.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_fold",    "kv": "bf16", "heads": 128, "fixed_us": 7.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_fold",    "kv": "fp8",  "heads": 128, "fixed_us": 7.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_rowwise", "kv": "bf16", "heads": 16,  "fixed_us": 4.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_rowwise", "kv": "fp8",  "heads": 16,  "fixed_us": 4.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_rowwise", "kv": "bf16", "heads": 128, "fixed_us": 4.0, "us_per_mb": 0.28, "us_per_gflop": 0.9},
        {"backend": "cuda_rowwise", "kv": "fp8",  "heads": 128, "fixed_us": 4.0, "us_per_mb": 0.28, "us_per_gflop": 0.9}
      ]
    },
    "cpu": {
      "source": "rough constants for the CPU reference",
      "provisional": false,
      "models": [
        {"backend": "cpu_reference", "kv": "bf16", "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0},
        {"backend": "cpu_reference", "kv": "fp8",  "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0}
      ]
    }
  }
}
)json";

// The machine whose built-in constants stand in for a GPU without its own (with a warning).
inline constexpr std::string_view kFallbackGpu = "NVIDIA H200";

}  // namespace mlaspec::attn::detail
