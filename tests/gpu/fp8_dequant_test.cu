// The kernels' fp8 -> bf16 dequantisation against the core conversion, for every pair of codes:
// bitwise equal (NaN codes: any NaN). Dequantisation must be exact for fold == rowwise and for the
// fp8 results to mean what the reference means.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "attention/cuda/ptx.cuh"
#include "mlaspec/core/dtype.h"

namespace mlaspec::attn::cuda {
namespace {

__global__ void dequant_all_pairs(uint32_t* out) {
  const uint32_t codes = blockIdx.x * blockDim.x + threadIdx.x;  // 0..65535
  out[codes] = ptx::fp8x2_to_bf16x2(static_cast<uint16_t>(codes));
}

TEST(Fp8Dequant, EveryCodePairMatchesTheCoreConversion) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
  uint32_t* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 65536 * 4), cudaSuccess);
  dequant_all_pairs<<<256, 256>>>(d);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> h(65536);
  ASSERT_EQ(cudaMemcpy(h.data(), d, 65536 * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  int bad = 0;
  for (uint32_t c = 0; c < 65536; ++c) {
    for (int half = 0; half < 2; ++half) {
      const uint8_t code = static_cast<uint8_t>(c >> (8 * half));
      const uint16_t got = static_cast<uint16_t>(h[c] >> (16 * half));
      const float want = fp8e4m3_bits_to_float(code);
      const bool ok = std::isnan(want) ? std::isnan(bf16_bits_to_float(got))
                                       : got == float_to_bf16_bits(want);
      if (!ok && bad++ < 5) {
        ADD_FAILURE() << "code 0x" << std::hex << int(code) << " -> bf16 0x" << got << ", want 0x"
                      << float_to_bf16_bits(want);
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace mlaspec::attn::cuda
