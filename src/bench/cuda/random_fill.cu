// The device side of bench/random_fill.h: the same MLASPEC_HD draws and encoders as the host
// fill, so both give identical bytes for a seed.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "mlaspec/bench/random_fill.h"
#include "mlaspec/core/fp8_tile.h"

namespace mlaspec::bench {
namespace {

__global__ void fill_random_kernel(void* dst, bool fp8, int64_t n, uint64_t seed, float stddev,
                                   float inv_scale) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < n;
       k += int64_t{gridDim.x} * blockDim.x) {
    const float v = random_normalish(seed, static_cast<uint64_t>(k)) * stddev;
    if (fp8) {
      static_cast<uint8_t*>(dst)[k] = float_to_fp8e4m3_bits(v * inv_scale);
    } else {
      static_cast<uint16_t*>(dst)[k] = float_to_bf16_bits(v);
    }
  }
}

constexpr int kWarpsPerBlock = 8;
// A lane takes 4 consecutive latent values of each 128-value block, and 2 rope values.
static_assert(kFp8TileBlock == 32 * 4 && kFp8TileRope == 32 * 2);

// One warp per fp8_tile row (grid-stride over rows). Per latent block the warp draws the bf16
// values the bf16 fill draws there, takes their amax by a max-reduction (exact: any order gives
// the host's value), and stores the scale and codes through the functions
// encode_fp8_tile_row calls. Byte stores: `dst` need not be aligned.
__global__ void fill_fp8_tile_rows_kernel(uint8_t* dst, int64_t rows, uint64_t seed, float stddev) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = int64_t{gridDim.x} * kWarpsPerBlock;
  for (int64_t r = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32; r < rows; r += warps) {
    uint8_t* gRow = dst + r * kFp8TileRowBytes;
    const uint64_t first = static_cast<uint64_t>(r) * kFp8TileRowValues;
    for (int blk = 0; blk < kFp8TileBlocks; ++blk) {
      const int base = blk * kFp8TileBlock + 4 * lane;
      uint16_t x[4];
      float amax = 0.0f;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        x[i] = random_bf16_bits(seed, first + base + i, stddev);
        const uint16_t a = x[i] & 0x7fffu;
        if (a < 0x7f80u) amax = fmaxf(amax, bf16_bits_to_float(a));  // finite values only
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
      const float scale = fp8_tile_scale(amax);
#pragma unroll
      for (int i = 0; i < 4; ++i) gRow[base + i] = encode_fp8_tile_value(x[i], scale);
      if (lane == 0) memcpy(gRow + kFp8TileScaleOffset + 4 * blk, &scale, sizeof scale);
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int d = 2 * lane + i;
      const uint16_t b = random_bf16_bits(seed, first + kFp8TileLatent + d, stddev);
      memcpy(gRow + kFp8TileRopeOffset + 2 * d, &b, sizeof b);
    }
  }
}

Status sync_after(const char* kernel) {
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    return internal_error(std::string(kernel) + ": " + cudaGetErrorString(err));
  return Status::Ok();
}

}  // namespace

Status fill_random_device(void* dst, DType dtype, int64_t n, uint64_t seed, float stddev,
                          float fp8_scale) {
  if (n == 0) return Status::Ok();
  fill_random_kernel<<<1024, 256>>>(dst, dtype == DType::kFP8E4M3, n, seed, stddev,
                                    1.0f / fp8_scale);
  return sync_after("fill_random kernel");
}

Status fill_random_fp8_tile_rows_device(void* dst, int64_t rows, uint64_t seed, float stddev) {
  if (rows == 0) return Status::Ok();
  const int64_t blocks = std::min<int64_t>(2048, (rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  fill_fp8_tile_rows_kernel<<<static_cast<unsigned>(blocks), 32 * kWarpsPerBlock>>>(
      static_cast<uint8_t*>(dst), rows, seed, stddev);
  return sync_after("fill_random_kv fp8_tile kernel");
}

}  // namespace mlaspec::bench
