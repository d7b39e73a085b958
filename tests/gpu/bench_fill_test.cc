// The benchmarks' device fill (bench/random_fill.h) against the host fill: identical bytes for the
// same seed, for every KV dtype, so a GPU bench's inputs are the ones its CPU check regenerates and
// an fp8_tile pool holds the encoding of the bf16 pool of its seed.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gpu/gpu_test_util.h"
#include "mlaspec/attention/verify.h"
#include "mlaspec/bench/random_fill.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::bench {
namespace {

// `rows` KV rows of `kv` filled on the device at byte offset `offset` of a buffer, downloaded,
// against the host fill of the same rows.
void expect_device_equals_host(DType kv, int64_t rows, uint64_t seed, float stddev, float fp8_scale,
                               int64_t offset) {
  const int64_t bytes = rows * attn::kv_row_bytes(kv);
  constexpr int64_t kTail = 64;  // bytes after the destination, which must stay untouched
  Buffer dev(static_cast<size_t>(offset + bytes + kTail), Device::kCUDA);
  ASSERT_TRUE(dev.fill_bytes(0xa5).ok());
  ASSERT_TRUE(fill_random_kv(static_cast<uint8_t*>(dev.data()) + offset, true, kv, bytes, seed,
                             stddev, fp8_scale)
                  .ok());
  const std::vector<uint8_t> got = testing::download<uint8_t>(dev);
  std::vector<uint8_t> want(static_cast<size_t>(bytes));
  ASSERT_TRUE(fill_random_kv(want.data(), false, kv, bytes, seed, stddev, fp8_scale).ok());
  for (int64_t b = 0; b < offset; ++b) ASSERT_EQ(got[b], 0xa5) << "byte " << b << " before dst";
  for (int64_t b = 0; b < kTail; ++b) {
    ASSERT_EQ(got[offset + bytes + b], 0xa5) << "byte " << b << " after dst";
  }
  for (int64_t b = 0; b < bytes; ++b) {
    ASSERT_EQ(got[offset + b], want[b])
        << dtype_name(kv) << " row " << b / attn::kv_row_bytes(kv) << " byte "
        << b % attn::kv_row_bytes(kv) << " (seed " << seed << ", stddev " << stddev << ")";
  }
}

TEST(GpuBenchFill, DeviceBytesEqualHostBytes) {
  MLASPEC_SKIP_WITHOUT_GPU();
  // 20001 rows: more than the fp8_tile kernel's 2048 x 8 warps, so its grid-stride loop runs.
  // A fresh seed each run (printed; MLASPEC_TEST_SEED replays it).
  const uint64_t seed = testing::fresh_seed("GpuBenchFill.DeviceBytesEqualHostBytes");
  for (float stddev : {1.0f, 3e-3f, 1e4f}) {
    expect_device_equals_host(DType::kBF16, 20001, seed, stddev, 1.0f, 0);
    expect_device_equals_host(DType::kFP8E4M3, 20001, seed, stddev, 0.05f, 0);
    expect_device_equals_host(DType::kFP8Tile, 20001, seed, stddev, 1.0f, 0);
  }
  // Any seed; an fp8_tile destination need not be aligned (byte stores).
  expect_device_equals_host(DType::kFP8Tile, 3, 0xfeedfacecafebeefull, 1.0f, 1.0f, 1);
  expect_device_equals_host(DType::kFP8Tile, 1, 2001, 1.0f, 1.0f, 0);
}

TEST(GpuBenchFill, DeviceFillRefusesPartialRows) {
  MLASPEC_SKIP_WITHOUT_GPU();
  Buffer dev(656 * 2, Device::kCUDA);
  EXPECT_EQ(fill_random_kv(dev.data(), true, DType::kFP8Tile, 656 + 100, 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(fill_random(dev.data(), true, DType::kFP8Tile, 656, 1).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mlaspec::bench
