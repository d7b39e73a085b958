// The per-tile-scaled fp8 KV row (core/fp8_tile.h) and its pool: the writer's round-trip bound,
// its edge cases (zero blocks, huge dynamic range, NaN/inf, bf16's largest values), the pool's
// layout and scatter, and that the CPU reference reads a pool of it exactly as the dequantized
// values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kvcache/mla_pool_spec.h"
#include "mlaspec/attention/reference.h"
#include "mlaspec/core/fp8_tile.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv {
namespace {

uint16_t bf(float f) {
  return float_to_bf16_bits(f);
}

struct Row {
  std::vector<uint8_t> bytes = std::vector<uint8_t>(kFp8TileRowBytes, 0xA5);
  float value(int d) const { return fp8_tile_row_value(bytes.data(), d); }
  float scale(int k) const { return fp8_tile_row_scale(bytes.data(), k); }
};

Row encode(const std::vector<uint16_t>& x) {
  Row r;
  encode_fp8_tile_row(x.data(), r.bytes.data());
  return r;
}

// Half an e4m3 ulp at magnitude v (the binade of v; subnormal steps below 2^-6).
double half_ulp(double v) {
  if (v < 0x1p-6) return 0x1p-10;
  int e = 0;
  std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1): binade 2^(e-1), ulp 2^(e-1-3)
  return std::ldexp(1.0, e - 5);
}

// Per element: |read - x| <= half an e4m3 ulp of |x| / scale, times scale; rope bit-exact;
// scale a power of two in [amax / 448, 2 * amax / 448) and >= 2^-126 (or 1 for amax = 0).
void expect_round_trip(const std::vector<uint16_t>& x, const char* what) {
  SCOPED_TRACE(what);
  const Row r = encode(x);
  for (int k = 0; k < kFp8TileBlocks; ++k) {
    double amax = 0;
    for (int i = 0; i < kFp8TileBlock; ++i) {
      const double v = std::fabs(bf16_bits_to_float(x[k * kFp8TileBlock + i]));
      if (std::isfinite(v)) amax = std::max(amax, v);
    }
    const double s = r.scale(k);
    int e = 0;
    ASSERT_EQ(std::frexp(s, &e), 0.5) << "scale " << s << " of block " << k << " is not 2^n";
    if (amax == 0) {
      ASSERT_EQ(s, 1.0) << "block " << k;
    } else {
      ASSERT_GE(s, std::max(amax / 448, 0x1p-126)) << "block " << k;
      if (amax / 448 >= 0x1p-126) {
        ASSERT_LT(s, 2 * amax / 448) << "block " << k << " not tight";
      }
    }
    for (int i = 0; i < kFp8TileBlock; ++i) {
      const int d = k * kFp8TileBlock + i;
      const double xv = bf16_bits_to_float(x[d]);
      const double back = r.value(d);
      ASSERT_TRUE(std::isfinite(back)) << "d " << d << " x " << xv;
      ASSERT_LE(std::fabs(back - xv), half_ulp(std::fabs(xv) / s) * s)
          << "d " << d << " x " << xv << " scale " << s << " read " << back;
      ASSERT_EQ(std::signbit(back), std::signbit(xv)) << "d " << d << " x " << xv;
    }
  }
  for (int d = kFp8TileLatent; d < kFp8TileRowValues; ++d) {
    uint16_t got;
    std::memcpy(&got, r.bytes.data() + kFp8TileRopeOffset + 2 * (d - kFp8TileLatent), 2);
    ASSERT_EQ(got, x[d]) << "rope value " << d << " not bit-exact";
  }
}

TEST(Fp8Tile, LayoutConstants) {
  EXPECT_EQ(kFp8TileRowBytes, 656);
  EXPECT_EQ(attn::kv_row_width(DType::kFP8Tile), 656);
  EXPECT_EQ(attn::kv_row_bytes(DType::kFP8Tile), 656);
  EXPECT_EQ(attn::kv_row_bytes(DType::kFP8E4M3), 576);
  EXPECT_EQ(attn::kv_row_bytes(DType::kBF16), 1152);
  EXPECT_EQ(dtype_name(DType::kFP8Tile), "fp8_tile");
  DType t = DType::kBF16;
  ASSERT_TRUE(parse_dtype("fp8tile", &t));
  EXPECT_EQ(t, DType::kFP8Tile);
}

TEST(Fp8Tile, RoundTripIsWithinHalfAnUlpTimesTheBlockScale) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> mag(-140, 120);
  for (int t = 0; t < 400; ++t) {
    std::vector<uint16_t> x(kFp8TileRowValues);
    for (int k = 0; k < kFp8TileBlocks; ++k) {
      // Block magnitudes across bf16's whole range, including the subnormal scales' region.
      const float m = std::ldexp(1.0f, t < 200 ? mag(rng) % 12 : mag(rng));
      for (int i = 0; i < kFp8TileBlock; ++i) x[k * kFp8TileBlock + i] = bf(normal(rng) * m);
    }
    for (int d = kFp8TileLatent; d < kFp8TileRowValues; ++d) x[d] = bf(normal(rng) * 3.0f);
    expect_round_trip(x, "random row");
    if (HasFatalFailure()) return;
  }
  // Every bf16 bit pattern of a normal-ish magnitude as a block's element next to an amax that
  // puts it anywhere in e4m3's range (ties included).
  std::vector<uint16_t> x(kFp8TileRowValues, 0);
  for (uint32_t b = 0x3000; b < 0x4400; b += 3) {
    for (int k = 0; k < kFp8TileBlocks; ++k) {
      x[k * kFp8TileBlock] = bf(k == 0 ? 1.0f : k == 1 ? 100.0f : k == 2 ? 0.01f : 448.0f);
      for (int i = 1; i < kFp8TileBlock; ++i)
        x[k * kFp8TileBlock + i] = static_cast<uint16_t>((b + i) & 0x7fffu);
    }
    expect_round_trip(x, "bit-pattern sweep");
    if (HasFatalFailure()) return;
  }
}

TEST(Fp8Tile, AllZeroBlockHasScaleOneAndKeepsSigns) {
  std::vector<uint16_t> x(kFp8TileRowValues, 0);
  for (int i = 0; i < kFp8TileBlock; i += 2) x[kFp8TileBlock + i] = 0x8000;  // -0 in block 1
  x[2 * kFp8TileBlock] = bf(5.0f);                                           // block 2 not zero
  const Row r = encode(x);
  EXPECT_EQ(r.scale(0), 1.0f);
  EXPECT_EQ(r.scale(1), 1.0f);
  EXPECT_EQ(r.scale(3), 1.0f);
  for (int i = 0; i < kFp8TileBlock; ++i) {
    EXPECT_EQ(r.bytes[i], 0x00);
    EXPECT_EQ(r.bytes[kFp8TileBlock + i], i % 2 == 0 ? 0x80 : 0x00);
  }
  EXPECT_TRUE(std::signbit(r.value(kFp8TileBlock)));
  EXPECT_EQ(r.value(kFp8TileBlock), 0.0f);
  expect_round_trip(x, "zero blocks");
}

TEST(Fp8Tile, HugeDynamicRangeBlockFlushesOnlyBelowHalfAStep) {
  std::vector<uint16_t> x(kFp8TileRowValues, bf(1.0f));
  // Block 0: 1e30 next to values from 1e-10 to 1e29; small ones read back as 0 (within the bound).
  x[0] = bf(1e30f);
  for (int i = 1; i < kFp8TileBlock; ++i) x[i] = bf(std::pow(10.0f, -10.0f + 0.3f * i));
  const Row r = encode(x);
  EXPECT_EQ(r.value(1), 0.0f);        // 1e-10 << half a subnormal step of 1e30 / 448
  EXPECT_EQ(r.scale(1), 1.0f / 256);  // block 1 (all 1.0) is not affected by block 0: 2^-8
  EXPECT_EQ(r.value(kFp8TileBlock), 1.0f);
  expect_round_trip(x, "huge range");
  // The per-layer scale 1e30/448 for the whole row would flush block 1 (all 1.0) to 0; the tile
  // layout keeps it exact. That is the point of the layout.
}

TEST(Fp8Tile, NaNAndInfinityAreHandledAsDocumented) {
  std::vector<uint16_t> x(kFp8TileRowValues, bf(2.0f));
  x[0] = 0x7fc0;     // NaN
  x[1] = 0xffc1;     // negative NaN with a payload
  x[2] = 0x7f80;     // +inf
  x[3] = 0xff80;     // -inf
  x[4] = bf(96.0f);  // the block's finite amax
  for (int i = 0; i < kFp8TileBlock; ++i) x[kFp8TileBlock + i] = 0x7f80;  // block 1: all inf
  x[kFp8TileLatent] = 0xffc0;                                             // rope NaN kept
  x[kFp8TileLatent + 1] = 0x7f80;                                         // rope inf kept
  const Row r = encode(x);
  EXPECT_EQ(r.scale(0), 0.25f);  // 96 / 448 -> 2^-2: infinities and NaNs left out of amax
  EXPECT_EQ(r.bytes[0], 0x7f);
  EXPECT_EQ(r.bytes[1], 0xff);
  EXPECT_EQ(r.bytes[2], 0x7e);
  EXPECT_EQ(r.bytes[3], 0xfe);
  EXPECT_TRUE(std::isnan(r.value(0)));
  EXPECT_TRUE(std::isnan(r.value(1)));
  EXPECT_EQ(r.value(2), 448.0f * 0.25f);
  EXPECT_EQ(r.value(3), -448.0f * 0.25f);
  EXPECT_EQ(r.value(4), 96.0f);
  EXPECT_EQ(r.scale(1), 1.0f);  // no finite value
  EXPECT_EQ(r.value(kFp8TileBlock), 448.0f);
  EXPECT_TRUE(std::isnan(r.value(kFp8TileLatent)));
  EXPECT_EQ(r.value(kFp8TileLatent + 1), std::numeric_limits<float>::infinity());
}

TEST(Fp8Tile, LargestBf16ValuesSaturateToAFiniteRead) {
  std::vector<uint16_t> x(kFp8TileRowValues, 0);
  x[0] = 0x7f7f;  // bf16 max, (2 - 2^-7) * 2^127
  x[1] = 0xff7f;
  x[2] = bf(0x1p127f * 1.875f);  // 240 * 2^120: exact
  x[3] = bf(0x1p127f);           // 128 * 2^120
  const Row r = encode(x);
  EXPECT_EQ(r.scale(0), 0x1p120f);
  EXPECT_EQ(r.value(0), 240.0f * 0x1p120f);  // 256 * 2^120 would be inf: saturates to 240
  EXPECT_EQ(r.value(1), -240.0f * 0x1p120f);
  EXPECT_EQ(r.value(2), 240.0f * 0x1p120f);
  EXPECT_EQ(r.value(3), 0x1p127f);
  // The documented exception: error up to one ulp (16 * 2^120) instead of half.
  EXPECT_LE(std::fabs(double(r.value(0)) - double(bf16_bits_to_float(0x7f7f))),
            16.0 * std::ldexp(1.0, 120));
}

KvPoolSpec tile_spec(int layers, int pages, int page_size) {
  return mla_spec(DType::kFP8Tile, layers, pages, page_size);
}

TEST(Fp8TilePool, LayoutAndSpecErrors) {
  KvPool pool = KvPool::create(tile_spec(3, 5, 8)).value();
  EXPECT_EQ(pool.row_bytes(), 656);
  EXPECT_EQ(pool.row_elems(), 576);
  EXPECT_EQ(pool.layer_bytes(), 5 * 8 * 656);
  EXPECT_EQ(pool.bytes(), size_t{3} * 5 * 8 * 656);
  EXPECT_EQ(pool.bytes_per_token(), 3 * 656);
  EXPECT_EQ(kv_bytes_per_token(KvLayout::mla(), 61, DType::kFP8Tile), 61 * 656);
  const TensorView t = pool.layer_tensor(2);
  EXPECT_EQ(t.dtype(), DType::kFP8Tile);
  EXPECT_EQ(t.size(2), 656);
  EXPECT_EQ(static_cast<const uint8_t*>(t.data()) - static_cast<const uint8_t*>(pool.data()),
            2 * pool.layer_bytes());
  const attn::KvCacheView v = pool.layer_view(1);
  EXPECT_EQ(v.kv_scale, 1.0f);
  EXPECT_NE(pool.describe().find("fp8_tile"), std::string::npos);

  Status st = pool.set_layer_scale(0, 0.5f);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("scale 0.500000 must be 1 for a fp8_tile pool"), std::string::npos)
      << st.message();
  KvPoolSpec gqa = tile_spec(1, 1, 4);
  gqa.layout = KvLayout::gqa(8, 128);
  st = KvPool::create(gqa).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("fp8_tile is an MLA row format"), std::string::npos) << st.message();
  KvPoolSpec scaled = tile_spec(2, 1, 4);
  scaled.layer_scales = {1.0f, 2.0f};
  EXPECT_EQ(KvPool::create(scaled).status().code(), StatusCode::kInvalidArgument);
}

TEST(Fp8TilePool, WriterScattersEncodedRowsOnly) {
  KvPoolSpec s = tile_spec(3, 6, 4);
  s.zero_fill = false;
  KvPool pool = KvPool::create(s).value();
  ASSERT_TRUE(pool.buffer().fill_bytes(0xA5).ok());
  const int n = 6;
  std::vector<int32_t> slots = {3, 17, -1, 0, 23, 9};
  const int64_t stride = 600;
  std::vector<uint16_t> rows(static_cast<size_t>(n) * stride, 0xdead);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 10.0f);
  for (int i = 0; i < n; ++i)
    for (int e = 0; e < 576; ++e) rows[static_cast<size_t>(i) * stride + e] = bf(normal(rng));
  rows[5] = 0xffc1;
  ASSERT_TRUE(write_rows(pool, 1, TensorView(slots.data(), DType::kI32, {n}),
                         TensorView(rows.data(), DType::kBF16, {n, 576}, {stride, 1}))
                  .ok());
  const auto* base = static_cast<const uint8_t*>(pool.data());
  for (int l = 0; l < 3; ++l) {
    for (int64_t slot = 0; slot < pool.num_slots(); ++slot) {
      int src = -1;
      for (int i = 0; i < n; ++i)
        if (l == 1 && slots[i] == slot) src = i;
      const uint8_t* row = base + l * pool.layer_bytes() + slot * 656;
      if (src < 0) {
        for (int b = 0; b < 656; ++b)
          ASSERT_EQ(row[b], 0xA5) << "layer " << l << " slot " << slot << " byte " << b;
        continue;
      }
      std::vector<uint8_t> expect(656);
      encode_fp8_tile_row(rows.data() + static_cast<size_t>(src) * stride, expect.data());
      ASSERT_EQ(0, std::memcmp(row, expect.data(), 656)) << "slot " << slot;
    }
  }
  EXPECT_EQ(base[pool.layer_bytes() + 3 * 656 + 5], 0xff);  // the negative NaN
}

// The CPU reference on an fp8_tile pool gives the same bits as on a bf16 pool that holds the
// dequantized values (they are bf16-exact here: 4 significant bits, normal magnitudes), for the
// full call and the partial: it reads code * scale and nothing else.
TEST(Fp8TilePool, ReferenceReadsExactlyTheDequantizedValues) {
  const int pages = 6, page_size = 16, H = 16, q_len = 3;
  KvPool tile = KvPool::create(tile_spec(1, pages, page_size)).value();
  KvPoolSpec bs = tile_spec(1, pages, page_size);
  bs.dtype = DType::kBF16;
  KvPool plain = KvPool::create(bs).value();
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int n = pages * page_size;
  std::vector<uint16_t> rows(static_cast<size_t>(n) * 576);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 4; ++k) {
      const float m = std::ldexp(1.0f, static_cast<int>(rng() % 9) - 4);
      for (int j = 0; j < 128; ++j) rows[i * 576 + k * 128 + j] = bf(normal(rng) * m);
    }
    for (int j = 512; j < 576; ++j) rows[i * 576 + j] = bf(normal(rng));
  }
  std::vector<int32_t> slots(n);
  for (int i = 0; i < n; ++i) slots[i] = i;
  ASSERT_TRUE(write_rows(tile, 0, TensorView(slots.data(), DType::kI32, {n}),
                         TensorView(rows.data(), DType::kBF16, {n, 576}))
                  .ok());
  // The dequantized rows, as bf16, into the plain pool.
  std::vector<uint16_t> deq(rows.size());
  const auto* tb = static_cast<const uint8_t*>(tile.data());
  for (int i = 0; i < n; ++i) {
    for (int d = 0; d < 576; ++d) {
      const float v = fp8_tile_row_value(tb + i * 656, d);
      deq[i * 576 + d] = bf(v);
      ASSERT_EQ(bf16_bits_to_float(deq[i * 576 + d]), v) << "not bf16-exact: " << v;
    }
  }
  ASSERT_TRUE(write_rows(plain, 0, TensorView(slots.data(), DType::kI32, {n}),
                         TensorView(deq.data(), DType::kBF16, {n, 576}))
                  .ok());
  std::vector<uint16_t> q(static_cast<size_t>(2) * q_len * H * 576);
  for (auto& v : q) v = bf(normal(rng));
  std::vector<int32_t> table = {5, 0, 3, 1, 2, 4, -1, -1};  // two requests of 4 pages
  std::vector<int32_t> lens = {61, 3};
  auto run = [&](const KvPool& pool, std::vector<uint16_t>& out, std::vector<float>& lse) {
    out.assign(static_cast<size_t>(2) * q_len * H * 512, 0xffff);
    lse.assign(static_cast<size_t>(2) * q_len * H, std::nanf(""));
    attn::VerifyArgs a;
    a.q = TensorView(q.data(), DType::kBF16, {2, q_len, H, 576});
    a.kv = pool.layer_view(0);
    a.block_table = TensorView(table.data(), DType::kI32, {2, 4});
    a.seq_lens = TensorView(lens.data(), DType::kI32, {2});
    a.sm_scale = 0.0625f;
    a.out = TensorView(out.data(), DType::kBF16, {2, q_len, H, 512});
    a.lse = TensorView(lse.data(), DType::kF32, {2, q_len, H});
    ASSERT_TRUE(attn::cpu_verify(a).ok());
  };
  std::vector<uint16_t> out_tile, out_plain;
  std::vector<float> lse_tile, lse_plain;
  run(tile, out_tile, lse_tile);
  run(plain, out_plain, lse_plain);
  for (size_t k = 0; k < out_tile.size(); ++k) {
    ASSERT_FALSE(std::isnan(bf16_bits_to_float(out_tile[k]))) << "out[" << k << "] unwritten";
    ASSERT_EQ(out_tile[k], out_plain[k]) << "out[" << k << "]";
  }
  ASSERT_EQ(0, std::memcmp(lse_tile.data(), lse_plain.data(), lse_tile.size() * sizeof(float)));
}

}  // namespace
}  // namespace mlaspec::kv
