// The kernels' fp8 -> bf16 dequantisations against the core conversion, bitwise (NaN codes: any
// NaN): the exact cvt chain for every pair of codes; the two 16-code paths for every code in
// every byte position, next to every other code (the bit-manipulation path except on NaN codes,
// the cvt path on all); and the NaN detector that routes a chunk to the cvt path, which must
// flag exactly the chunks holding a NaN code.
// Dequantisation must be exact for fold == rowwise and for the fp8 results to mean what the
// reference means.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <vector>

#include "attention/cuda/ptx.cuh"
#include "gpu/gpu_test_util.h"
#include "mlaspec/core/dtype.h"

namespace mlaspec::attn::cuda {
namespace {

constexpr int kThreads = 65536;  // one per pair of codes (a, b) = (i & 255, i >> 8)

__global__ void dequant_all_pairs(uint32_t* out) {
  const uint32_t codes = blockIdx.x * blockDim.x + threadIdx.x;
  out[codes] = ptx::fp8x2_to_bf16x2(static_cast<uint16_t>(codes));
}

// The chunk of thread (a, b): {a b b a | b a a b | 0x3c x 4 | 01 02 03 04}.
__host__ __device__ void chunk_codes(uint32_t i, uint8_t (&codes)[16]) {
  const uint8_t a = i & 255, b = i >> 8;
  const uint8_t c[16] = {a, b, b, a, b, a, a, b, 0x3c, 0x3c, 0x3c, 0x3c, 1, 2, 3, 4};
  for (int k = 0; k < 16; ++k) codes[k] = c[k];
}

// Per thread i, kWords words: the bit path's 8 bf16 pairs for its chunk, the cvt path's 8, then
// the NaN detector.
constexpr int kWords = 17;
__global__ void dequant_chunks(uint32_t* out) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  uint8_t c[16];
  chunk_codes(i, c);
  uint32_t w[4];
  for (int j = 0; j < 4; ++j)
    w[j] = c[4 * j] | c[4 * j + 1] << 8 | c[4 * j + 2] << 16 | c[4 * j + 3] << 24;
  const uint4 chunk = make_uint4(w[0], w[1], w[2], w[3]);
  uint32_t o[8];
  ptx::fp8x16_to_bf16x16_bits(chunk, o);
  for (int j = 0; j < 8; ++j) out[i * kWords + j] = o[j];
  ptx::fp8x16_to_bf16x16_cvt(chunk, o);
  for (int j = 0; j < 8; ++j) out[i * kWords + 8 + j] = o[j];
  out[i * kWords + 16] = ptx::fp8x16_nan(chunk);
}

// Runs `kernel` with one thread per pair of codes and returns its `words_per_thread` outputs each.
std::vector<uint32_t> run(void (*kernel)(uint32_t*), int words_per_thread) {
  const size_t bytes = static_cast<size_t>(kThreads) * words_per_thread * 4;
  uint32_t* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, bytes), cudaSuccess);
  EXPECT_EQ(cudaMemset(d, 0xff, bytes), cudaSuccess);  // poisoned: every word must be written
  kernel<<<kThreads / 256, 256>>>(d);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> h(bytes / 4);
  EXPECT_EQ(cudaMemcpy(h.data(), d, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  return h;
}

bool is_nan_code(uint8_t code) {
  return (code & 0x7f) == 0x7f;
}

bool same_value(uint8_t code, uint16_t got) {
  const float want = fp8e4m3_bits_to_float(code);
  return std::isnan(want) ? std::isnan(bf16_bits_to_float(got)) : got == float_to_bf16_bits(want);
}

TEST(Fp8Dequant, ChunkPathsAndNanDetectorForEveryCodeInEveryPosition) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const std::vector<uint32_t> h = run(dequant_chunks, kWords);
  int bad = 0, nan_chunks = 0;
  for (uint32_t i = 0; i < kThreads; ++i) {
    uint8_t codes[16];
    chunk_codes(i, codes);
    bool has_nan = false;
    for (uint8_t c : codes) has_nan |= is_nan_code(c);
    nan_chunks += has_nan;
    const uint32_t* w = &h[static_cast<size_t>(i) * kWords];
    if ((w[16] != 0) != has_nan && bad++ < 5) {
      ADD_FAILURE() << "chunk " << i << ": NaN detector says " << w[16] << ", chunk "
                    << (has_nan ? "has" : "has no") << " NaN code";
    }
    for (int path = 0; path < 2; ++path) {  // 0: bits, 1: cvt
      for (int k = 0; k < 16; ++k) {
        // NaN codes: the bit path's documented exception (+-480); the cvt path must give NaN.
        if (path == 0 && is_nan_code(codes[k])) continue;
        const uint16_t got = static_cast<uint16_t>(w[8 * path + k / 2] >> (16 * (k & 1)));
        if (!same_value(codes[k], got) && bad++ < 5) {
          ADD_FAILURE() << (path == 0 ? "bit" : "cvt") << " path, chunk " << i << " code " << k
                        << " = 0x" << std::hex << int(codes[k]) << " -> bf16 0x" << got;
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(nan_chunks, 2 * 2 * 256 - 4);  // a or b in {0x7f, 0xff}
}

TEST(Fp8Dequant, EveryCodePairMatchesTheCoreConversion) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const std::vector<uint32_t> h = run(dequant_all_pairs, 1);
  int bad = 0;
  for (uint32_t c = 0; c < kThreads; ++c) {
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
