// The per-tile-scaled fp8 KV row (DType::kFP8Tile): FlashMLA's fp8 KV format, the one
// DeepSeek-V3.2-era deployments keep their MLA cache in.
//
// One token's row of 576 values (512 latent + 64 rope) in 656 bytes:
//   bytes [0, 512)    the 512 latent values as e4m3 codes (core/dtype.h)
//   bytes [512, 528)  4 f32 scales, little-endian: scale k serves latent values [128k, 128k + 128)
//   bytes [528, 656)  the 64 rope values as bf16, bit-exact copies of the input
// Reading: latent value d = float(code_d) * scale_{d / 128} (one IEEE f32 multiply); rope value =
// its bf16. Rows are 16-byte aligned in a pool (656 = 41 * 16); the scales sit 4-aligned.
//
// Writing (quantize on write) one bf16 row, block by block (128 latent values each):
//   amax   = the largest |x| over the block's finite values (NaN and +-inf are left out)
//   scale  = the smallest power of two >= amax / 448 (the "ue8m0" rule), at least 2^-126 so it is
//            a normal f32; scale = 1 for a block with amax = 0 (all zeros, or no finite value).
//            Power-of-two scales make x / scale and code * scale exact in f32, so the only error
//            is the e4m3 rounding itself: |read - x| <= half an e4m3 ulp of x / scale, times scale.
//   code   = float_to_fp8e4m3_bits(float(x) / scale): round to nearest even, e4m3 subnormals,
//            -0 kept. The largest finite x of the block lands in (224, 448] (saturating at 448).
//   NaN    -> NaN code with x's sign (0x7f / 0xff): the reader gives NaN, as the per-layer fp8
//             pool does.
//   +-inf  -> +-448 (0x7e / 0xfe), read back as +-448 * scale >= the block's finite amax (no
//             infinities in e4m3; the same saturation as the per-layer fp8 pool).
//   Overflow guard: only scale = 2^120 (amax >= 2^119 * 448 / 2, bf16's top binade) can produce
//             a code whose read-back 256 * 2^120 = 2^128 overflows f32; such codes saturate to
//             0x77 (240), read back as +-240 * 2^120 ~= 3.19e38. There (|x| > 248 * 2^120) the
//             error is up to one ulp instead of half.
// The CPU writer, the CPU reference's reader and any CUDA kernel call these MLASPEC_HD functions,
// so they agree bitwise.
#pragma once

#include <cstdint>
#include <cstring>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/macros.h"

namespace mlaspec {

inline constexpr int kFp8TileLatent = 512;       // e4m3 values per row
inline constexpr int kFp8TileRope = 64;          // bf16 values per row
inline constexpr int kFp8TileBlock = 128;        // latent values per scale
inline constexpr int kFp8TileBlocks = 4;         // scales per row
inline constexpr int kFp8TileScaleOffset = 512;  // bytes
inline constexpr int kFp8TileRopeOffset = 528;   // bytes
inline constexpr int kFp8TileRowBytes = 656;
inline constexpr int kFp8TileRowValues = kFp8TileLatent + kFp8TileRope;  // 576
static_assert(kFp8TileRopeOffset == kFp8TileScaleOffset + 4 * kFp8TileBlocks);
static_assert(kFp8TileRowBytes == kFp8TileRopeOffset + 2 * kFp8TileRope);
static_assert(kFp8TileLatent == kFp8TileBlock * kFp8TileBlocks);

// The block scale for a block whose finite values have largest magnitude `amax` (>= 0).
MLASPEC_HD_INLINE float fp8_tile_scale(float amax) {
  if (!(amax > 0.0f)) return 1.0f;
  uint32_t u = detail::float_bits(amax / kFp8E4M3Max);
  if (u < 0x00800000u) return detail::bits_float(0x00800000u);  // below 2^-126: 2^-126
  if (u & 0x007fffffu) u = (u & 0x7f800000u) + 0x00800000u;     // round up to a power of two
  return detail::bits_float(u);
}

// The e4m3 code of one bf16 value in a block with scale `scale` (see above).
MLASPEC_HD_INLINE uint8_t encode_fp8_tile_value(uint16_t bf16_bits, float scale) {
  if ((bf16_bits & 0x7fffu) > 0x7f80u) {  // NaN: decided on the bits, sign kept
    return static_cast<uint8_t>(((bf16_bits >> 8) & 0x80u) | 0x7fu);
  }
  uint8_t c = float_to_fp8e4m3_bits(bf16_bits_to_float(bf16_bits) / scale);
  // 2^120 is the largest scale a bf16 block can get; 256 * 2^120 would read back as inf.
  if (scale >= 0x1p120f && (c & 0x7fu) > 0x77u) c = static_cast<uint8_t>((c & 0x80u) | 0x77u);
  return c;
}

// Quantizes one row: `src` = 576 bf16 bit patterns, `dst` = 656 bytes.
MLASPEC_HD_INLINE void encode_fp8_tile_row(const uint16_t* src, uint8_t* dst) {
  for (int k = 0; k < kFp8TileBlocks; ++k) {
    const uint16_t* x = src + k * kFp8TileBlock;
    float amax = 0.0f;
    for (int i = 0; i < kFp8TileBlock; ++i) {
      const uint16_t a = x[i] & 0x7fffu;
      if (a < 0x7f80u) {  // finite
        const float v = bf16_bits_to_float(a);
        amax = v > amax ? v : amax;
      }
    }
    const float scale = fp8_tile_scale(amax);
    std::memcpy(dst + kFp8TileScaleOffset + 4 * k, &scale, sizeof scale);
    for (int i = 0; i < kFp8TileBlock; ++i) {
      dst[k * kFp8TileBlock + i] = encode_fp8_tile_value(x[i], scale);
    }
  }
  std::memcpy(dst + kFp8TileRopeOffset, src + kFp8TileLatent, 2 * kFp8TileRope);
}

// Scale k (0..3) of a row.
MLASPEC_HD_INLINE float fp8_tile_row_scale(const uint8_t* row, int k) {
  float s;
  std::memcpy(&s, row + kFp8TileScaleOffset + 4 * k, sizeof s);
  return s;
}

// Value d (0..575) of a row as float.
MLASPEC_HD_INLINE float fp8_tile_row_value(const uint8_t* row, int d) {
  if (d < kFp8TileLatent) {
    return fp8e4m3_bits_to_float(row[d]) * fp8_tile_row_scale(row, d / kFp8TileBlock);
  }
  uint16_t b;
  std::memcpy(&b, row + kFp8TileRopeOffset + 2 * (d - kFp8TileLatent), sizeof b);
  return bf16_bits_to_float(b);
}

}  // namespace mlaspec
