#include "mlaspec/bench/random_fill.h"

#include <algorithm>
#include <string>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/fp8_tile.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::bench {

#if defined(MLASPEC_WITH_CUDA)
Status fill_random_device(void* dst, DType dtype, int64_t n, uint64_t seed, float stddev,
                          float fp8_scale);
Status fill_random_fp8_tile_rows_device(void* dst, int64_t rows, uint64_t seed, float stddev);
#endif

static_assert(attn::kv_row_bytes(DType::kFP8Tile) == kFp8TileRowBytes);

namespace {

#if !defined(MLASPEC_WITH_CUDA)
Status no_cuda() {
  return unsupported("device fill requested but mlaspec was built without CUDA");
}
#endif

// Row r of an fp8_tile pool: the encoding of the bf16 row the bf16 fill draws at values
// 576 r .. 576 r + 575.
void fill_fp8_tile_rows_host(uint8_t* dst, int64_t rows, uint64_t seed, float stddev) {
  constexpr int64_t kChunk = 256;  // rows per task
  parallel_for(0, (rows + kChunk - 1) / kChunk, [&](int64_t c) {
    uint16_t row[kFp8TileRowValues];
    const int64_t end = std::min(rows, (c + 1) * kChunk);
    for (int64_t r = c * kChunk; r < end; ++r) {
      const uint64_t first = static_cast<uint64_t>(r) * kFp8TileRowValues;
      for (int d = 0; d < kFp8TileRowValues; ++d)
        row[d] = random_bf16_bits(seed, first + d, stddev);
      encode_fp8_tile_row(row, dst + r * kFp8TileRowBytes);
    }
  });
}

}  // namespace

Status fill_random(void* dst, bool on_device, DType dtype, int64_t n, uint64_t seed, float stddev,
                   float fp8_scale) {
  if (dtype == DType::kFP8Tile) {
    return invalid_argument(
        "fill_random fills elements; fp8_tile is a row format (656-byte rows of codes, scales "
        "and rope): use fill_random_kv with the pool's byte count");
  }
  if (dtype != DType::kBF16 && dtype != DType::kFP8E4M3) {
    return invalid_argument("fill_random supports bf16 and fp8_e4m3, got " +
                            std::string(dtype_name(dtype)));
  }
  if (n < 0) return invalid_argument("fill_random: negative element count " + std::to_string(n));
  if (on_device) {
#if defined(MLASPEC_WITH_CUDA)
    return fill_random_device(dst, dtype, n, seed, stddev, fp8_scale);
#else
    return no_cuda();
#endif
  }
  const float inv_scale = 1.0f / fp8_scale;
  constexpr int64_t kChunk = 1 << 16;
  parallel_for(0, (n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t k = c * kChunk; k < end; ++k) {
      const float v = random_normalish(seed, static_cast<uint64_t>(k)) * stddev;
      if (dtype == DType::kFP8E4M3) {
        static_cast<uint8_t*>(dst)[k] = float_to_fp8e4m3_bits(v * inv_scale);
      } else {
        static_cast<uint16_t*>(dst)[k] = float_to_bf16_bits(v);
      }
    }
  });
  return Status::Ok();
}

Status fill_random_kv(void* dst, bool on_device, DType kv_dtype, int64_t bytes, uint64_t seed,
                      float stddev, float fp8_scale) {
  if (kv_dtype != DType::kBF16 && kv_dtype != DType::kFP8E4M3 && kv_dtype != DType::kFP8Tile) {
    return invalid_argument("fill_random_kv: " + std::string(dtype_name(kv_dtype)) +
                            " is not a KV dtype (bf16, fp8_e4m3 or fp8_tile)");
  }
  const int64_t row_bytes = attn::kv_row_bytes(kv_dtype);
  if (bytes < 0 || bytes % row_bytes != 0) {
    return invalid_argument("fill_random_kv: " + std::to_string(bytes) +
                            " bytes is not a whole number of " + std::string(dtype_name(kv_dtype)) +
                            " KV rows (" + std::to_string(row_bytes) + " bytes each)");
  }
  if (kv_dtype != DType::kFP8Tile) {
    return fill_random(dst, on_device, kv_dtype, bytes / dtype_size(kv_dtype), seed, stddev,
                       fp8_scale);
  }
  if (fp8_scale != 1.0f) {
    return invalid_argument("fill_random_kv: fp8_scale " + std::to_string(fp8_scale) +
                            " given for fp8_tile rows, which carry their own scales (must be 1)");
  }
  const int64_t rows = bytes / row_bytes;
  if (on_device) {
#if defined(MLASPEC_WITH_CUDA)
    return fill_random_fp8_tile_rows_device(dst, rows, seed, stddev);
#else
    return no_cuda();
#endif
  }
  fill_fp8_tile_rows_host(static_cast<uint8_t*>(dst), rows, seed, stddev);
  return Status::Ok();
}

}  // namespace mlaspec::bench
