// The kernels' fp8 -> bf16 dequantisations against the core conversion: the exact cvt chain for
// every pair of codes, and the 16-code path (bit manipulation, the cvt chain for chunks holding a
// NaN code) for every code in every byte position, next to every other code: bitwise equal (NaN
// codes: any NaN). Dequantisation must be exact for fold == rowwise and for the
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

// Thread i = (a, b) = (i & 255, i >> 8) converts the chunk {a b b a | b a a b | 0x3c.. | 01 02 03
// 04}.
__global__ void dequant_chunks(uint32_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;  // 0..65535
  const uint32_t a = i & 255, b = i >> 8;
  const uint4 chunk = make_uint4(a | b << 8 | b << 16 | a << 24, b | a << 8 | a << 16 | b << 24,
                                 0x3c3c3c3cu, 0x04030201u);
  uint32_t o[8];
  ptx::fp8x16_to_bf16x16(chunk, o);
  for (int j = 0; j < 8; ++j) out[i * 8 + j] = o[j];
}

bool same_value(uint8_t code, uint16_t got) {
  const float want = fp8e4m3_bits_to_float(code);
  return std::isnan(want) ? std::isnan(bf16_bits_to_float(got)) : got == float_to_bf16_bits(want);
}

TEST(Fp8Dequant, ChunkPathMatchesTheCoreConversionForEveryCodeAndPosition) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
  uint32_t* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 65536 * 32), cudaSuccess);
  dequant_chunks<<<256, 256>>>(d);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> h(65536 * 8);
  ASSERT_EQ(cudaMemcpy(h.data(), d, 65536 * 32, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  int bad = 0;
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint8_t a = i & 255, b = i >> 8;
    const uint8_t codes[16] = {a, b, b, a, b, a, a, b, 0x3c, 0x3c, 0x3c, 0x3c, 1, 2, 3, 4};
    for (int k = 0; k < 16; ++k) {
      const uint16_t got = static_cast<uint16_t>(h[i * 8 + k / 2] >> (16 * (k & 1)));
      if (!same_value(codes[k], got) && bad++ < 5) {
        ADD_FAILURE() << "chunk (a=0x" << std::hex << int(a) << ", b=0x" << int(b) << ") code "
                      << std::dec << k << " = 0x" << std::hex << int(codes[k]) << " -> bf16 0x"
                      << got;
      }
    }
  }
  EXPECT_EQ(bad, 0);
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
      if (!same_value(code, got) && bad++ < 5) {
        ADD_FAILURE() << "code 0x" << std::hex << int(code) << " -> bf16 0x" << got << ", want 0x"
                      << float_to_bf16_bits(fp8e4m3_bits_to_float(code));
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace mlaspec::attn::cuda
