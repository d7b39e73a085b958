// quantize_rows_fp8_128 (fp8_gemm.h): bf16 activations to e4m3 codes with one f32 scale per
// (row, 128 columns), in the layout cuBLASLt's VEC128_32F scale mode reads.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "fp8_gemm.h"
#include "kernels.h"
#include "mlaspec/core/dtype.h"

namespace mlaspec::model::gpu {
namespace {

constexpr int kWarpsPerBlock = 8;
constexpr int kPerLane = kFp8Block / 32;

// One warp per (row t, K-block kb): lane i owns columns kb·128 + i + 32·j (coalesced), the amax
// is a warp max. The scale and the codes use the same f32 arithmetic and the same e4m3 rounding
// code (core/dtype.h) as the host quantizer, so the two agree bitwise.
__global__ void quantize_rows_fp8_128_kernel(const uint16_t* x, int64_t T, int64_t K,
                                             uint8_t* codes, float* scales) {
  const int lane = threadIdx.x % 32;
  const int64_t kb_count = fp8_blocks(K);
  const int64_t job = int64_t{blockIdx.x} * kWarpsPerBlock + threadIdx.x / 32;
  if (job >= T * kb_count) return;
  const int64_t t = job / kb_count, kb = job % kb_count;
  const uint16_t* row = x + t * K;
  float v[kPerLane];
  float amax = 0.0f;
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t k = kb * kFp8Block + lane + 32 * j;
    v[j] = k < K ? bf16_bits_to_float(row[k]) : 0.0f;
    amax = fmaxf(amax, fabsf(v[j]));
  }
  for (int off = 16; off > 0; off /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, off));
  const float scale = amax > 0.0f ? amax / kFp8E4M3Max : 1.0f;
  for (int j = 0; j < kPerLane; ++j) {
    const int64_t k = kb * kFp8Block + lane + 32 * j;
    if (k < K) codes[t * K + k] = float_to_fp8e4m3_bits(v[j] / scale);
  }
  if (lane == 0) scales[fp8_act_scale_index(t, kb, T)] = scale;
}

}  // namespace

Status quantize_rows_fp8_128(const uint16_t* x_bf16, int64_t T, int64_t K, uint8_t* codes,
                             float* scales, cudaStream_t stream) {
  if (T <= 0 || K <= 0 || x_bf16 == nullptr || codes == nullptr || scales == nullptr) {
    return invalid_argument("quantize_rows_fp8_128: T " + std::to_string(T) + ", K " +
                            std::to_string(K) + " need T, K >= 1 and non-null buffers");
  }
  const int64_t jobs = T * fp8_blocks(K);
  const int64_t blocks = (jobs + kWarpsPerBlock - 1) / kWarpsPerBlock;
  if (blocks > INT32_MAX) {
    return invalid_argument("quantize_rows_fp8_128: T " + std::to_string(T) + " x K " +
                            std::to_string(K) + " exceeds the grid");
  }
  quantize_rows_fp8_128_kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream>>>(
      x_bf16, T, K, codes, scales);
  return launched("quantize_rows_fp8_128");
}

}  // namespace mlaspec::model::gpu
