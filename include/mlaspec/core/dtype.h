// Element types and exact conversions.
//
// bf16: the upper 16 bits of an IEEE float32. float -> bf16 rounds to nearest, ties to even;
//   overflow rounds to +-inf as IEEE does; NaN stays NaN (quiet, sign kept: 0x7fc0 / 0xffc0).
// fp8 e4m3 (OCP "fn"): 1 sign, 4 exponent (bias 7), 3 mantissa bits. Largest finite +-448
//   (0x7e/0xfe), smallest normal 2^-6, smallest subnormal 2^-9; no infinities; 0x7f/0xff are NaN.
//   float -> fp8 rounds to nearest, ties to even, and saturates: any finite value whose magnitude
//   exceeds 448 and +-inf become +-448 (like PTX cvt.rn.satfinite); NaN becomes 0x7f (positive)
//   or 0xff (negative sign bit). Every fp8 code converts to float exactly.
// fp8_tile: not an element type but a KV storage format (core/fp8_tile.h): a row of 656 bytes
//   holding 576 values (512 e4m3 codes with one f32 scale per 128, then 64 bf16). A tensor of it
//   is bytes (element size 1) whose last dimension is 656; only KV pools and the verify op's KV
//   view use it.
//
// The functions are MLASPEC_HD so CUDA kernels (e.g. the KV writer) use exactly this code and
// therefore match the CPU bitwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "mlaspec/core/macros.h"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#else
#include <cmath>
#endif

namespace mlaspec {

// kFP8Tile is last so the earlier values (and their caps bits) keep their numbers.
enum class DType : uint8_t { kBF16, kFP8E4M3, kF32, kI32, kFP8Tile };

constexpr int dtype_size(DType t) {
  switch (t) {
    case DType::kBF16:
      return 2;
    case DType::kFP8E4M3:
    case DType::kFP8Tile:  // bytes of 656-byte rows
      return 1;
    case DType::kF32:
    case DType::kI32:
      return 4;
  }
  return 0;
}

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::kBF16:
      return "bf16";
    case DType::kFP8E4M3:
      return "fp8_e4m3";
    case DType::kF32:
      return "f32";
    case DType::kI32:
      return "i32";
    case DType::kFP8Tile:
      return "fp8_tile";
  }
  return "?";
}

// Parses "bf16", "fp8", "fp8_e4m3", "fp8_tile" (or "fp8tile"), "f32", "i32". Returns false if
// unknown.
bool parse_dtype(std::string_view text, DType* out);

namespace detail {
MLASPEC_HD_INLINE uint32_t float_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}
MLASPEC_HD_INLINE float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}
}  // namespace detail

// ---- bf16 ------------------------------------------------------------------------------------

MLASPEC_HD_INLINE uint16_t float_to_bf16_bits(float f) {
  uint32_t u = detail::float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds to nearest, ties to even; a carry into the
  // exponent is the correct result (including overflow to inf).
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

MLASPEC_HD_INLINE float bf16_bits_to_float(uint16_t b) {
  return detail::bits_float(static_cast<uint32_t>(b) << 16);
}

// ---- fp8 e4m3fn --------------------------------------------------------------------------------

inline constexpr float kFp8E4M3Max = 448.0f;

MLASPEC_HD_INLINE uint8_t float_to_fp8e4m3_bits(float f) {
  const uint32_t u = detail::float_bits(f);
  const uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);   // NaN
  if (a >= 0x43e00000u) return static_cast<uint8_t>(sign | 0x7eu);  // >= 448 or inf: saturate
  if (a >= 0x3c800000u) {                                           // >= 2^-6: normal
    // Round the 23-bit mantissa to 3 bits (keep bits 20..22), ties to even.
    const uint32_t r = a + 0x7ffffu + ((a >> 20) & 1u);
    const uint32_t e = (r >> 23) - 120u;  // rebias 127 -> 7
    const uint32_t m = (r >> 20) & 7u;
    // Values in (448, 464] would round to 448 anyway; above were caught by the saturation test,
    // so e <= 15 and (e, m) != (15, 7) here.
    return static_cast<uint8_t>(sign | (e << 3) | m);
  }
  // Subnormal range: value = m * 2^-9, m = 0..8 (8 is the smallest normal, code 0x08).
  // f * 512 is exact; rintf rounds half to even in the default rounding mode.
  const float scaled = detail::bits_float(a) * 512.0f;
  const uint32_t m = static_cast<uint32_t>(rintf(scaled));
  return static_cast<uint8_t>(sign | m);
}

MLASPEC_HD_INLINE float fp8e4m3_bits_to_float(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xfu;
  const uint32_t m = b & 7u;
  if (e == 15u && m == 7u) return detail::bits_float(sign | 0x7fc00000u);
  if (e == 0u) {
    const float v = static_cast<float>(m) * (1.0f / 512.0f);
    return (b & 0x80u) ? -v : v;
  }
  return detail::bits_float(sign | ((e + 120u) << 23) | (m << 20));
}

// Storage types: plain 1- and 2-byte values so arrays of them have the expected layout.
struct bf16 {
  uint16_t bits;
  MLASPEC_HD_INLINE static bf16 from_float(float f) { return bf16{float_to_bf16_bits(f)}; }
  MLASPEC_HD_INLINE float to_float() const { return bf16_bits_to_float(bits); }
};
static_assert(sizeof(bf16) == 2);

struct fp8e4m3 {
  uint8_t bits;
  MLASPEC_HD_INLINE static fp8e4m3 from_float(float f) { return fp8e4m3{float_to_fp8e4m3_bits(f)}; }
  MLASPEC_HD_INLINE float to_float() const { return fp8e4m3_bits_to_float(bits); }
};
static_assert(sizeof(fp8e4m3) == 1);

}  // namespace mlaspec
