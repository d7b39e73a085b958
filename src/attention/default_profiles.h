// Built-in cost-model profiles, used when no profile file has an entry for this machine
// (docs/dispatch.md).
//
// GPU profiles are measurements, kept as data: data/profiles/*.json, each the whole file
// `mlaspec calibrate --out FILE` writes (to a fresh FILE, so it holds only the calibrated GPU).
// The build embeds them (cmake/embed_profiles.cmake); recalibrate whenever the kernels change and
// replace the file.
//
// cpu: the CPU reference on a small multi-core host (~5 GB/s KV, ~10 GFLOP/s); informative only
// (on a CPU-only build it is the only candidate). Rough constants, not a measurement, so they
// stay here beside the GPU fallback.
#pragma once

#include <span>
#include <string_view>

namespace mlaspec::attn::detail {

// One embedded data/profiles file: its name there and its text, byte for byte.
struct EmbeddedProfile {
  std::string_view name;
  std::string_view json;
};

// Every data/profiles/*.json, sorted by name (defined in the source the build generates).
std::span<const EmbeddedProfile> embedded_gpu_profiles();

// ---- CPU ----------------------------------------------------------------------------------------
inline constexpr std::string_view kBuiltinCpuProfileJson = R"json(
{
  "format": "mlaspec-profile",
  "version": 2,
  "machines": {
    "cpu": {
      "source": "rough constants for the CPU reference",
      "provisional": false,
      "models": [
        {"backend": "cpu_reference", "kv": "bf16", "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0},
        {"backend": "cpu_reference", "kv": "fp8",  "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0},
        {"backend": "cpu_reference", "kv": "fp8tile", "heads": 0, "fixed_us": 50.0, "us_per_mb": 200.0, "us_per_gflop": 100000.0}
      ]
    }
  }
}
)json";

// The machine whose built-in constants stand in for a GPU without its own (with a warning).
inline constexpr std::string_view kFallbackGpu = "NVIDIA H200";

}  // namespace mlaspec::attn::detail
