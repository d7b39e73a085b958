// KvPool layout and views; write_rows conversion (fp8 saturation/NaN), validation, and that only
// the target slots change.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kvcache/mla_pool_spec.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv {
namespace {

uint16_t bf(float f) {
  return float_to_bf16_bits(f);
}

TEST(KvPool, LayoutAndViews) {
  KvPoolSpec s = mla_spec(DType::kFP8E4M3, 3, 5, 8);
  s.layer_scales = {0.5f, 1.0f, 2.0f};
  KvPool pool = KvPool::create(s).value();
  EXPECT_EQ(pool.row_elems(), 576);
  EXPECT_EQ(pool.bytes_per_token(), 3 * 576);
  EXPECT_EQ(pool.layer_bytes(), 5 * 8 * 576);
  EXPECT_GE(pool.bytes(), static_cast<size_t>(3 * 5 * 8 * 576));
  attn::KvCacheView v = pool.layer_view(2);
  EXPECT_EQ(v.kv_scale, 2.0f);
  EXPECT_EQ(v.pages.dtype(), DType::kFP8E4M3);
  EXPECT_EQ(v.pages.ndim(), 3);
  EXPECT_EQ(v.pages.size(0), 5);
  EXPECT_EQ(v.pages.size(1), 8);
  EXPECT_EQ(v.pages.size(2), 576);
  EXPECT_TRUE(v.pages.is_contiguous());
  EXPECT_EQ(static_cast<uint8_t*>(v.pages.data()) - static_cast<uint8_t*>(pool.data()),
            2 * pool.layer_bytes());
  // Zero filled.
  const auto* b = static_cast<const uint8_t*>(pool.data());
  for (int64_t i = 0; i < 3 * pool.layer_bytes(); ++i) ASSERT_EQ(b[i], 0);
  EXPECT_THROW((void)pool.layer_view(3), Error);
  EXPECT_THROW((void)pool.k_view(0), Error);
  EXPECT_EQ(kv_bytes_per_token(KvLayout::mla(), 61, DType::kFP8E4M3), 61 * 576);
  EXPECT_NE(pool.describe().find("fp8_e4m3"), std::string::npos);
}

TEST(KvPool, GqaKAndVViews) {
  KvPoolSpec s;
  s.name = "draft";
  s.layout = KvLayout::gqa(2, 8);
  s.num_layers = 2;
  s.num_pages = 3;
  s.page_size = 4;
  KvPool pool = KvPool::create(s).value();
  EXPECT_EQ(pool.row_elems(), 32);
  EXPECT_EQ(pool.bytes_per_token(), 2 * 32 * 2);
  // Write one row whose value is its element index, then read it through the views.
  std::vector<uint16_t> row(32);
  for (int e = 0; e < 32; ++e) row[e] = bf(static_cast<float>(e));
  int32_t slot = 2 * 4 + 3;  // page 2, offset 3
  ASSERT_TRUE(write_rows(pool, 1, TensorView(&slot, DType::kI32, {1}),
                         TensorView(row.data(), DType::kBF16, {1, 32}))
                  .ok());
  TensorView k = pool.k_view(1), v = pool.v_view(1);
  for (int h = 0; h < 2; ++h) {
    for (int d = 0; d < 8; ++d) {
      EXPECT_EQ(k.at<bf16>({2, 3, h, d}).to_float(), h * 8 + d);
      EXPECT_EQ(v.at<bf16>({2, 3, h, d}).to_float(), 16 + h * 8 + d);
    }
  }
  EXPECT_THROW((void)pool.layer_view(0), Error);
}

TEST(KvPool, SpecAndScaleErrors) {
  KvPoolSpec s = mla_spec(DType::kF32);
  Status st = KvPool::create(s).status();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("not a KV dtype"), std::string::npos) << st.message();
  s = mla_spec(DType::kBF16);
  s.layer_scales = {1.0f, 0.5f};
  st = KvPool::create(s).status();
  EXPECT_NE(st.message().find("must be 1 for a bf16 pool"), std::string::npos) << st.message();
  s = mla_spec(DType::kFP8E4M3);
  s.layer_scales = {1.0f};
  st = KvPool::create(s).status();
  EXPECT_NE(st.message().find("1 layer scales given for 2 layers"), std::string::npos)
      << st.message();
  s.layer_scales = {1.0f, std::numeric_limits<float>::infinity()};
  EXPECT_EQ(KvPool::create(s).status().code(), StatusCode::kInvalidArgument);
  s.layer_scales = {1.0f, 0.0f};
  EXPECT_EQ(KvPool::create(s).status().code(), StatusCode::kInvalidArgument);
  s = mla_spec(DType::kBF16);
  s.num_pages = 0;
  st = KvPool::create(s).status();
  EXPECT_NE(st.message().find("num_pages 0 is below the minimum 1"), std::string::npos);
  s = mla_spec(DType::kBF16);
  s.layout = KvLayout::gqa(0, 8);
  EXPECT_EQ(KvPool::create(s).status().code(), StatusCode::kInvalidArgument);

  KvPool pool = KvPool::create(mla_spec(DType::kFP8E4M3)).value();
  EXPECT_TRUE(pool.set_layer_scale(1, 0.25f).ok());
  EXPECT_EQ(pool.layer_view(1).kv_scale, 0.25f);
  EXPECT_EQ(pool.set_layer_scale(2, 1.0f).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(pool.set_layer_scale(0, -1.0f).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.set_layer_scale(0, std::nanf("")).code(), StatusCode::kInvalidArgument);
  KvPool bpool = KvPool::create(mla_spec(DType::kBF16)).value();
  EXPECT_EQ(bpool.set_layer_scale(0, 2.0f).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(bpool.set_layer_scale(0, 1.0f).ok());
}

// Hand-derived e4m3 codes for value / scale (see writer.h).
TEST(KvWriter, Fp8EncodeSaturationAndNaN) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float x;
    float scale;
    uint8_t code;
  };
  const Case cases[] = {
      {1.0f, 1.0f, 0x38},          {-1.0f, 1.0f, 0xb8},
      {0.5f, 1.0f, 0x30},          {1.0f, 2.0f, 0x30},
      {448.0f, 1.0f, 0x7e},        {450.0f, 1.0f, 0x7e},
      {1e30f, 1.0f, 0x7e},         {-1e30f, 1.0f, 0xfe},
      {inf, 1.0f, 0x7e},           {-inf, 1.0f, 0xfe},
      {inf, 0.01f, 0x7e},          {896.0f, 2.0f, 0x7e},
      {200.0f, 0.5f, 0x7c},  // 400 lies between 384 (m=4) and 416 (m=5): tie -> even 384
      {0.0f, 1.0f, 0x00},          {-0.0f, 1.0f, 0x80},
      {0.001953125f, 1.0f, 0x01},   // 2^-9
      {0.0009765625f, 1.0f, 0x00},  // 2^-10: half of the smallest subnormal, tie -> even 0
      {0.0029296875f, 1.0f, 0x02},  // 1.5 * 2^-9: tie -> even 2
      {1e-30f, 1.0f, 0x00},        {-1e-30f, 1.0f, 0x80},
      {17.0f, 1.0f, 0x58},        // 17 -> 16 (tie, even)
      {3.0f, 4.0f, 0x30 | 0x04},  // 0.75 = 1.5 * 2^-1: e=6, m=4
  };
  for (const Case& c : cases) {
    EXPECT_EQ(encode_fp8_kv_value(bf(c.x), c.scale), c.code)
        << c.x << " / " << c.scale << " -> 0x" << std::hex
        << int(encode_fp8_kv_value(bf(c.x), c.scale));
  }
  EXPECT_EQ(encode_fp8_kv_value(0x7fc0, 1.0f), 0x7f);  // +NaN
  EXPECT_EQ(encode_fp8_kv_value(0xffc0, 1.0f), 0xff);  // -NaN
  EXPECT_EQ(encode_fp8_kv_value(0x7f81, 0.5f), 0x7f);  // signalling NaN payload
  EXPECT_EQ(encode_fp8_kv_value(0xff81, 0.5f), 0xff);  // negative NaN keeps its sign
  EXPECT_EQ(encode_fp8_kv_value(0xffff, 3.0f), 0xff);
  EXPECT_TRUE(std::isnan(fp8e4m3_bits_to_float(0x7f)));
}

TEST(KvWriter, Fp8RoundTripIsWithinHalfAStep) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 50.0f);
  for (float scale : {0.05f, 0.5f, 1.0f, 3.0f}) {
    for (int i = 0; i < 2000; ++i) {
      const uint16_t x = bf(normal(rng));
      const float xf = bf16_bits_to_float(x);
      const float back = fp8e4m3_bits_to_float(encode_fp8_kv_value(x, scale)) * scale;
      if (std::fabs(xf / scale) >= 448.0f) {
        EXPECT_EQ(std::fabs(back), 448.0f * scale);
      } else {
        // 3 mantissa bits: relative error <= 2^-4, or absolute <= 2^-10 * scale (subnormals).
        EXPECT_LE(std::fabs(back - xf),
                  std::max(std::fabs(xf) * 0.0625f, 0.0009765625f * scale) * 1.0001f)
            << xf << " scale " << scale;
      }
    }
  }
}

// Writes random rows to random slots of a poisoned pool; checks the written slots hold the
// expected bytes and every other byte (all layers) is still poison.
void check_scatter(DType dtype, float scale) {
  SCOPED_TRACE(std::string(dtype_name(dtype)) + " scale " + std::to_string(scale));
  KvPoolSpec s = mla_spec(dtype, 3, 6, 4);
  s.zero_fill = false;
  KvPool pool = KvPool::create(s).value();
  if (dtype == DType::kFP8E4M3) {
    ASSERT_TRUE(pool.set_layer_scale(1, scale).ok());
  }
  ASSERT_TRUE(pool.buffer().fill_bytes(0xA5).ok());
  const int n = 7;
  std::vector<int32_t> slots = {3, 17, 0, -1, 23, 9, 10};  // -1: skipped
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 100.0f);
  // Row stride 600 (rows are a strided view of a larger buffer).
  const int64_t stride = 600;
  std::vector<uint16_t> rows(static_cast<size_t>(n) * stride, 0xdead);
  for (int i = 0; i < n; ++i) {
    for (int e = 0; e < 576; ++e) rows[static_cast<size_t>(i) * stride + e] = bf(normal(rng));
  }
  rows[0] = 0x7fc0;
  rows[1] = 0xff80;  // -inf
  rows[2] = bf(1e9f);
  rows[3] = 0x8000;
  rows[4] = 0xffc1;  // negative NaN with a payload
  TensorView rv(rows.data(), DType::kBF16, {n, 576}, {stride, 1});
  ASSERT_TRUE(write_rows(pool, 1, TensorView(slots.data(), DType::kI32, {n}), rv).ok());

  const int esz = dtype_size(dtype);
  const auto* base = static_cast<const uint8_t*>(pool.data());
  std::vector<int> written_by(static_cast<size_t>(pool.num_slots()), -1);
  for (int i = 0; i < n; ++i)
    if (slots[i] >= 0) written_by[static_cast<size_t>(slots[i])] = i;
  for (int l = 0; l < 3; ++l) {
    for (int64_t slot = 0; slot < pool.num_slots(); ++slot) {
      const uint8_t* row = base + l * pool.layer_bytes() + slot * 576 * esz;
      const int src = l == 1 ? written_by[static_cast<size_t>(slot)] : -1;
      for (int e = 0; e < 576; ++e) {
        if (src < 0) {
          for (int k = 0; k < esz; ++k)
            ASSERT_EQ(row[e * esz + k], 0xA5) << "layer " << l << " slot " << slot;
          continue;
        }
        const uint16_t x = rows[static_cast<size_t>(src) * stride + e];
        if (dtype == DType::kBF16) {
          uint16_t got;
          std::memcpy(&got, row + e * 2, 2);
          ASSERT_EQ(got, x) << "slot " << slot << " e " << e;
        } else {
          ASSERT_EQ(row[e], float_to_fp8e4m3_bits(bf16_bits_to_float(x) / scale))
              << "slot " << slot << " e " << e;
        }
      }
    }
  }
  if (dtype == DType::kFP8E4M3) {
    const uint8_t* r3 = base + pool.layer_bytes() + 3 * 576;
    EXPECT_EQ(r3[0], 0x7f);
    EXPECT_EQ(r3[1], 0xfe);
    EXPECT_EQ(r3[2], 0x7e);
    EXPECT_EQ(r3[3], 0x80);
    EXPECT_EQ(r3[4], 0xff);
  } else {
    uint16_t nan_bits;
    std::memcpy(&nan_bits, base + pool.layer_bytes() + 3 * 576 * 2, 2);
    EXPECT_EQ(nan_bits, 0x7fc0);
  }
}

TEST(KvWriter, ScatterTouchesOnlyTargetSlots) {
  check_scatter(DType::kBF16, 1.0f);
  check_scatter(DType::kFP8E4M3, 1.0f);
  check_scatter(DType::kFP8E4M3, 0.37f);
  check_scatter(DType::kFP8E4M3, 16.0f);
}

TEST(KvWriter, ValidationWritesNothing) {
  KvPool pool = KvPool::create(mla_spec(DType::kFP8E4M3)).value();
  std::vector<uint16_t> rows(2 * 576, bf(1.0f));
  std::vector<int32_t> slots = {0, 16};  // 16 = 4 pages * 4: one past the end
  Status st = write_rows(pool, 0, TensorView(slots.data(), DType::kI32, {2}),
                         TensorView(rows.data(), DType::kBF16, {2, 576}));
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("slot 16 (row 1) is outside the pool's 16 slots"), std::string::npos)
      << st.message();
  const auto* b = static_cast<const uint8_t*>(pool.data());
  for (int e = 0; e < 576; ++e) ASSERT_EQ(b[e], 0) << "slot 0 written despite the error";

  slots[1] = 1;
  st = write_rows(pool, 2, TensorView(slots.data(), DType::kI32, {2}),
                  TensorView(rows.data(), DType::kBF16, {2, 576}));
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange);
  EXPECT_NE(st.message().find("layer 2 is outside [0, 2)"), std::string::npos) << st.message();
  st = write_rows(pool, 0, TensorView(slots.data(), DType::kI32, {2}),
                  TensorView(rows.data(), DType::kBF16, {2, 512}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("rows"), std::string::npos) << st.message();
  st = write_rows(pool, 0, TensorView(slots.data(), DType::kI32, {2}),
                  TensorView(rows.data(), DType::kBF16, {1, 576}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = write_rows(pool, 0, TensorView(slots.data(), DType::kF32, {2}),
                  TensorView(rows.data(), DType::kBF16, {2, 576}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = write_rows(pool, 0, TensorView(slots.data(), DType::kI32, {2}),
                  TensorView(rows.data(), DType::kF32, {2, 288}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  st = write_rows(pool, 0, TensorView(slots.data(), DType::kI32, {2}, Device::kCUDA),
                  TensorView(rows.data(), DType::kBF16, {2, 576}));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  for (int64_t e = 0; e < 4 * pool.layer_bytes() / 2; ++e) ASSERT_EQ(b[e], 0);
  // Empty write is fine.
  EXPECT_TRUE(write_rows(pool, 0, TensorView(slots.data(), DType::kI32, {0}),
                         TensorView(rows.data(), DType::kBF16, {0, 576}))
                  .ok());
}

}  // namespace
}  // namespace mlaspec::kv
