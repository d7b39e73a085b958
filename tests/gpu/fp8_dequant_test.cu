// The fp8 kernels' expansion of e4m3 codes to f16 (their MMA type) against the core conversion,
// bitwise (NaN codes: any NaN), for every code in every byte position of a 16-code chunk, next to
// every other code, in both of its forms (high codes through the cvt's .H1 operand, or shifted).
// Expansion must be exact for fold == rowwise and for the fp8 results to mean what the reference
// means.
#include <gtest/gtest.h>

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "attention/cuda/ptx.cuh"
#include "gpu/gpu_test_util.h"
#include "mlaspec/core/dtype.h"

namespace mlaspec::attn::cuda {
namespace {

constexpr int kThreads = 65536;  // one per pair of codes (a, b) = (i & 255, i >> 8)
constexpr int kWords = 16;       // per thread: the chunk's 8 f16 pairs in each of the two forms

// The chunk of thread (a, b): {a b b a | b a a b | 0x3c x 4 | 01 02 03 04}.
__host__ __device__ void chunk_codes(uint32_t i, uint8_t (&codes)[16]) {
  const uint8_t a = i & 255, b = i >> 8;
  const uint8_t c[16] = {a, b, b, a, b, a, a, b, 0x3c, 0x3c, 0x3c, 0x3c, 1, 2, 3, 4};
  for (int k = 0; k < 16; ++k) codes[k] = c[k];
}

__global__ void expand_chunks(uint32_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  uint8_t c[16];
  chunk_codes(i, c);
  uint32_t w[4];
  for (int j = 0; j < 4; ++j)
    w[j] = c[4 * j] | c[4 * j + 1] << 8 | c[4 * j + 2] << 16 | c[4 * j + 3] << 24;
  uint32_t o[8];
  const uint4 chunk = make_uint4(w[0], w[1], w[2], w[3]);
  ptx::fp8x16_to_f16x16<true>(chunk, o);
  for (int j = 0; j < 8; ++j) out[i * kWords + j] = o[j];
  ptx::fp8x16_to_f16x16<false>(chunk, o);
  for (int j = 0; j < 8; ++j) out[i * kWords + 8 + j] = o[j];
}

// Runs the expansion kernel over an output buffer filled with `poison` bytes; returns the buffer.
std::vector<uint32_t> run_expansion(int poison) {
  const size_t bytes = static_cast<size_t>(kThreads) * kWords * 4;
  std::vector<uint32_t> h(bytes / 4);
  uint32_t* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, bytes), cudaSuccess);
  EXPECT_EQ(cudaMemset(d, poison, bytes), cudaSuccess);
  expand_chunks<<<kThreads / 256, 256>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  return h;
}

TEST(Fp8Dequant, F16ExpansionOfEveryCodeInEveryPosition) {
  MLASPEC_SKIP_WITHOUT_GPU();
  // Every word must be written: under two different poisons the outputs must agree bit for bit
  // (one poison alone could pass for a word whose two codes are NaN, any NaN being accepted).
  const std::vector<uint32_t> h = run_expansion(0xff);
  ASSERT_EQ(h, run_expansion(0x00)) << "an output word was left unwritten";
  int bad = 0;
  for (uint32_t i = 0; i < kThreads; ++i) {
    uint8_t codes[16];
    chunk_codes(i, codes);
    for (int k = 0; k < 32; ++k) {
      const int form = k / 16, c = k % 16;  // form 0: the .H1 operand, 1: shifted down
      const uint16_t got = static_cast<uint16_t>(
          h[static_cast<size_t>(i) * kWords + 8 * form + c / 2] >> (16 * (c & 1)));
      const float want = fp8e4m3_bits_to_float(codes[c]);
      const float val = __half2float(__ushort_as_half(got));
      const bool ok = std::isnan(want) ? std::isnan(val)
                                       : val == want && std::signbit(val) == std::signbit(want);
      if (!ok && bad++ < 5) {
        ADD_FAILURE() << "form " << form << ", chunk " << i << " code " << c << " = 0x" << std::hex
                      << int(codes[c]) << " -> f16 0x" << got << " (" << val << "), want " << want;
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace mlaspec::attn::cuda
