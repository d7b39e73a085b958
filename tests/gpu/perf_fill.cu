// Device-side random fill for the verify perf mode: multi-GB KV pools are filled on the GPU in
// milliseconds instead of seconds of host RNG. Values ~ U(-1.7, 1.7) (unit variance), never zero
// patterns, stored as bf16 or as fp8 codes of value / scale.
#include <cuda_runtime.h>

#include <cstdint>

#include "perf_fill.h"

namespace mlaspec::attn::perf {
namespace {

__device__ __forceinline__ float hash_uniform(uint64_t seed, uint64_t k) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + k;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return (static_cast<float>(x >> 40) * (1.0f / 16777216.0f) - 0.5f) * 3.4641016f;
}

__global__ void fill_bf16(uint16_t* dst, int64_t n, uint64_t seed) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < n;
       k += int64_t{gridDim.x} * blockDim.x) {
    const float v = hash_uniform(seed, k);
    dst[k] = static_cast<uint16_t>(__float_as_uint(v) >> 16);
  }
}

__global__ void fill_fp8(uint8_t* dst, int64_t n, uint64_t seed, float inv_scale) {
  for (int64_t k = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; k < n;
       k += int64_t{gridDim.x} * blockDim.x) {
    const float v = hash_uniform(seed, k) * inv_scale;
    uint16_t code;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(code) : "f"(0.f), "f"(v));
    dst[k] = static_cast<uint8_t>(code & 0xff);
  }
}

}  // namespace

cudaError_t fill_random_bf16(void* dst, int64_t n, uint64_t seed) {
  fill_bf16<<<1024, 256>>>(static_cast<uint16_t*>(dst), n, seed);
  return cudaGetLastError();
}

cudaError_t fill_random_fp8(void* dst, int64_t n, uint64_t seed, float scale) {
  fill_fp8<<<1024, 256>>>(static_cast<uint8_t*>(dst), n, seed, 1.0f / scale);
  return cudaGetLastError();
}

}  // namespace mlaspec::attn::perf
