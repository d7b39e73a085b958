#include <cuda_runtime.h>

#include <string>

#include "mlaspec/bench/random_fill.h"

namespace mlaspec::bench {

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

Status fill_random_device(void* dst, DType dtype, int64_t n, uint64_t seed, float stddev,
                          float fp8_scale) {
  if (n == 0) return Status::Ok();
  fill_random_kernel<<<1024, 256>>>(dst, dtype == DType::kFP8E4M3, n, seed, stddev,
                                    1.0f / fp8_scale);
  const cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess)
    return internal_error(std::string("fill_random kernel: ") + cudaGetErrorString(err));
  return Status::Ok();
}

}  // namespace mlaspec::bench
