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

// Value k of a bf16 stream: what fill_random(.., kBF16, ..) stores at element k.
MLASPEC_HD_INLINE uint16_t random_bf16_bits(uint64_t seed, uint64_t k, float stddev) {
  return float_to_bf16_bits(random_normalish(seed, k) * stddev);
}

// Fills `n` elements at `dst` (host or device memory) with random_normalish(seed, k) * stddev
// stored as `dtype`: bf16, or fp8_e4m3 codes of value / fp8_scale. Element types only: fp8_tile
// is a row format (656-byte rows of codes, scales and rope), refused here; fill_random_kv fills it.
Status fill_random(void* dst, bool on_device, DType dtype, int64_t n, uint64_t seed,
                   float stddev = 1.0f, float fp8_scale = 1.0f);

// Fills a KV pool buffer of `bytes` bytes (host or device memory) with random token rows of
// `kv_dtype`, each attn::kv_row_bytes(kv_dtype) bytes; a byte count that is not a whole number
// of rows is refused (invalid_argument naming both). Row r holds values k = 576 r .. 576 r + 575
// of the stream above, so pools of every dtype at one seed hold the same underlying values:
//   bf16, fp8_e4m3: exactly fill_random(dst, .., bytes / element size, ..);
//   fp8_tile: the encoding (encode_fp8_tile_row, core/fp8_tile.h: what the KV writer stores) of
//             the bf16 row fill_random(.., kBF16, ..) draws there; fp8_scale must be 1 (the rows
//             carry their own scales).
// Host and device fills give identical bytes.
Status fill_random_kv(void* dst, bool on_device, DType kv_dtype, int64_t bytes, uint64_t seed,
                      float stddev = 1.0f, float fp8_scale = 1.0f);

}  // namespace mlaspec::bench
