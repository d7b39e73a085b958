// Exhaustive tests of the bf16 and fp8 e4m3 conversions against independent oracles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "mlaspec/core/dtype.h"

namespace mlaspec {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---- bf16 -----------------------------------------------------------------------------------

TEST(Bf16, EveryCodeRoundTrips) {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const float f = bf16_bits_to_float(static_cast<uint16_t>(c));
    ASSERT_EQ(bits(f), c << 16);
    const uint16_t back = float_to_bf16_bits(f);
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(bf16_bits_to_float(back))) << std::hex << c;
      ASSERT_EQ(back & 0x8000, c & 0x8000) << "NaN keeps its sign";
      ASSERT_TRUE(back & 0x0040) << "NaN comes back quiet";
    } else {
      ASSERT_EQ(back, c) << std::hex << c;
    }
  }
}

// Independent oracle: the nearest bf16 by comparing distances in double, ties to even.
uint16_t bf16_oracle(float f) {
  const uint16_t lo = static_cast<uint16_t>(bits(f) >> 16);  // truncation (toward zero)
  const uint16_t hi = static_cast<uint16_t>(lo + 1);         // next code away from zero
  const double d_lo = std::fabs(double(f) - double(bf16_bits_to_float(lo)));
  const double hi_val = double(bf16_bits_to_float(hi));
  const double d_hi = std::fabs(double(f) - hi_val);
  if (d_lo < d_hi) return lo;
  if (d_hi < d_lo) return hi;
  return (lo & 1) ? hi : lo;
}

TEST(Bf16, RoundsToNearestEvenOnMidpointsAndNeighbours) {
  // Every finite code pair: the midpoint ties to the even code, one float ulp either side goes to
  // the nearer code.
  for (uint32_t c = 0; c < 0x7f7f; ++c) {
    for (uint32_t sign : {0u, 0x8000u}) {
      const uint32_t code = c | sign;
      const uint32_t mid = (code << 16) | 0x8000u;
      const uint16_t even =
          (code & 1) ? static_cast<uint16_t>(code + 1) : static_cast<uint16_t>(code);
      ASSERT_EQ(float_to_bf16_bits(from_bits(mid)), even) << std::hex << code;
      ASSERT_EQ(float_to_bf16_bits(from_bits(mid - 1)), code);
      ASSERT_EQ(float_to_bf16_bits(from_bits(mid + 1)), static_cast<uint16_t>(code + 1));
    }
  }
}

TEST(Bf16, MatchesOracleOnSampledFloats) {
  // Every 251st bit pattern of all finite floats (17M values) against the distance oracle.
  for (uint64_t u = 0; u < 0x100000000ull; u += 251) {
    const float f = from_bits(static_cast<uint32_t>(u));
    if (!std::isfinite(f)) continue;
    if (std::fabs(f) >= 3.3961e38f) continue;  // overflow checked separately below
    ASSERT_EQ(float_to_bf16_bits(f), bf16_oracle(f)) << std::hex << u;
  }
}

TEST(Bf16, OverflowInfinityAndNaN) {
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // rounds to +inf
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::max()), 0xff80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()), 0x7fc0);
  EXPECT_EQ(float_to_bf16_bits(-std::numeric_limits<float>::quiet_NaN()), 0xffc0);
  // A signalling NaN whose payload sits only in the dropped bits must stay NaN, not become inf.
  EXPECT_TRUE(std::isnan(bf16_bits_to_float(float_to_bf16_bits(from_bits(0x7f800001u)))));
  EXPECT_EQ(float_to_bf16_bits(from_bits(0x7f7fffffu)), 0x7f80);
  EXPECT_EQ(float_to_bf16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
}

// ---- fp8 e4m3fn -------------------------------------------------------------------------------

double fp8_formula(uint8_t c) {
  const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(1.0 + m / 8.0, e - 7);
  return s ? -mag : mag;
}

TEST(Fp8E4M3, EveryCodeDecodesExactly) {
  for (int c = 0; c < 256; ++c) {
    const float f = fp8e4m3_bits_to_float(static_cast<uint8_t>(c));
    if ((c & 0x7f) == 0x7f) {
      EXPECT_TRUE(std::isnan(f)) << c;
      continue;
    }
    EXPECT_EQ(double(f), fp8_formula(static_cast<uint8_t>(c))) << c;
    EXPECT_EQ(float_to_fp8e4m3_bits(f), c) << "round trip of code " << c;
  }
  EXPECT_EQ(fp8e4m3_bits_to_float(0x7e), 448.0f);
  EXPECT_EQ(fp8e4m3_bits_to_float(0xfe), -448.0f);
  EXPECT_EQ(fp8e4m3_bits_to_float(0x08), std::ldexp(1.0f, -6));
  EXPECT_EQ(fp8e4m3_bits_to_float(0x01), std::ldexp(1.0f, -9));
}

// Independent oracle: nearest finite code by distance (ties to the even code), saturating.
uint8_t fp8_oracle(float f) {
  if (std::isnan(f)) return std::signbit(f) ? 0xff : 0x7f;
  const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  const double a = std::fabs(double(f));
  if (a >= 448.0) return sign | 0x7e;
  uint8_t best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (int c = 0; c <= 0x7e; ++c) {
    const double d = std::fabs(a - fp8_formula(static_cast<uint8_t>(c)));
    if (d < best_d || (d == best_d && (c & 1) == 0)) {
      best_d = d;
      best = static_cast<uint8_t>(c);
    }
  }
  return sign | best;
}

TEST(Fp8E4M3, MidpointsTieToEvenAndNeighboursGoToNearest) {
  for (int c = 0; c < 0x7e; ++c) {
    const double lo = fp8_formula(static_cast<uint8_t>(c)),
                 hi = fp8_formula(static_cast<uint8_t>(c + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float
    ASSERT_EQ(double(mid), (lo + hi) / 2);
    const int even = (c & 1) ? c + 1 : c;
    for (float sign : {1.0f, -1.0f}) {
      const uint8_t sb = sign < 0 ? 0x80 : 0;
      ASSERT_EQ(float_to_fp8e4m3_bits(sign * mid), sb | even) << c;
      ASSERT_EQ(float_to_fp8e4m3_bits(sign * std::nextafter(mid, 0.0f)), sb | c) << c;
      ASSERT_EQ(float_to_fp8e4m3_bits(sign * std::nextafter(mid, 1e9f)), sb | (c + 1)) << c;
    }
  }
}

TEST(Fp8E4M3, MatchesOracleOnSampledFloats) {
  // Every 4099th bit pattern of all floats (1M values, NaN and inf included).
  for (uint64_t u = 0; u < 0x100000000ull; u += 4099) {
    const float f = from_bits(static_cast<uint32_t>(u));
    ASSERT_EQ(float_to_fp8e4m3_bits(f), fp8_oracle(f)) << std::hex << u << " = " << f;
  }
}

TEST(Fp8E4M3, SaturationInfinityNaNAndUnderflow) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(float_to_fp8e4m3_bits(448.0f), 0x7e);
  EXPECT_EQ(float_to_fp8e4m3_bits(449.0f), 0x7e);
  EXPECT_EQ(float_to_fp8e4m3_bits(464.0f), 0x7e);  // midpoint 448|480: saturates anyway
  EXPECT_EQ(float_to_fp8e4m3_bits(1e30f), 0x7e);
  EXPECT_EQ(float_to_fp8e4m3_bits(-1e30f), 0xfe);
  EXPECT_EQ(float_to_fp8e4m3_bits(inf), 0x7e);
  EXPECT_EQ(float_to_fp8e4m3_bits(-inf), 0xfe);
  EXPECT_EQ(float_to_fp8e4m3_bits(std::numeric_limits<float>::quiet_NaN()), 0x7f);
  EXPECT_EQ(float_to_fp8e4m3_bits(-std::numeric_limits<float>::quiet_NaN()), 0xff);
  EXPECT_EQ(float_to_fp8e4m3_bits(std::ldexp(1.0f, -10)), 0x00);  // half the smallest: ties to 0
  EXPECT_EQ(float_to_fp8e4m3_bits(std::nextafter(std::ldexp(1.0f, -10), 1.0f)), 0x01);
  EXPECT_EQ(float_to_fp8e4m3_bits(std::ldexp(3.0f, -10)), 0x02);  // 1.5 * 2^-9 ties to even 2
  EXPECT_EQ(float_to_fp8e4m3_bits(-0.0f), 0x80);
  EXPECT_EQ(float_to_fp8e4m3_bits(1e-30f), 0x00);
}

TEST(DType, NamesSizesAndParsing) {
  EXPECT_EQ(dtype_size(DType::kBF16), 2);
  EXPECT_EQ(dtype_size(DType::kFP8E4M3), 1);
  EXPECT_EQ(dtype_name(DType::kFP8E4M3), "fp8_e4m3");
  DType t;
  EXPECT_TRUE(parse_dtype("fp8", &t));
  EXPECT_EQ(t, DType::kFP8E4M3);
  EXPECT_TRUE(parse_dtype("bf16", &t));
  EXPECT_EQ(t, DType::kBF16);
  EXPECT_FALSE(parse_dtype("fp16", &t));
}

}  // namespace
}  // namespace mlaspec
