// Deterministic pseudo-random fill used by the benchmarks: element k of a stream with seed s is
// a function of (s, k) alone, so host and device produce the same values and any element can be
// regenerated. Values are roughly N(0, 1) (sum of four uniforms), never all zeros.
#pragma once

#include <cstdint>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/macros.h"
#include "mlaspec/core/status.h"

namespace mlaspec::bench {

MLASPEC_HD_INLINE uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

MLASPEC_HD_INLINE float random_normalish(uint64_t seed, uint64_t k) {
  const uint64_t h = splitmix64(seed * 0x100000001b3ull ^ splitmix64(k));
  float sum = 0.0f;
  for (int part = 0; part < 4; ++part) sum += static_cast<float>((h >> (16 * part)) & 0xffffu);
  // Four uniforms on [0, 65535]: mean 131070, variance 4 * 65536^2 / 12.
  return (sum - 131070.0f) * (1.7320508f / 65536.0f);
}

// Fills `n` elements at `dst` (host or device memory) with random_normalish(seed, k) * stddev
// stored as `dtype` (bf16, or fp8 codes of value / fp8_scale).
Status fill_random(void* dst, bool on_device, DType dtype, int64_t n, uint64_t seed,
                   float stddev = 1.0f, float fp8_scale = 1.0f);

}  // namespace mlaspec::bench
