// fp8 GEMMs with DeepSeek's block scales through cuBLASLt (a probe, not yet used by the runtime):
// y[T, N] (bf16) = x[T, K] · w[N, K]ᵀ where w is e4m3 codes with one f32 scale per 128×128 block
// (the checkpoint's `weight_scale_inv`) and x is e4m3 codes with one f32 scale per (row, 128
// columns), made from bf16 activations by quantize_rows_fp8_128. cuBLASLt runs this on sm_90
// only (cuBLAS >= 12.9: CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F for w, VEC128_32F for x).
//
// The GEMM is cuBLASLt's "TN" form, column-major: A = w viewed as K×N (lda K, op T), B = x viewed
// as K×T (ldb K, op N), D = y viewed as N×T (ldd N), so m = N, n = T, k = K.
//
// Scale layouts: cuBLAS documents them ("Scaling factors layouts", docs.nvidia.com/cuda/cublas/
// #scaling-factors-layouts); that page was not reachable here, so these come from those who feed
// cuBLASLt and cite it: PyTorch's _scaled_mm checks (pytorch PR 166752, "Fix DeepSeek scaling
// tensor handling") and Transformer Engine's GEMM_READY block-scale shapes (quantizer.cpp).
// - x, VEC128 on B (K×T): scale of row t, K-block kb at [kb · T + t]: the rows contiguous
//   (outer-dimension major). PyTorch's stride is T; Transformer Engine pads T to a multiple of 4.
//   They differ only for T % 4 != 0, which the GPU test's T = 1 and 3 decide.
// - w, BLK128x128 on A (K×N): scale of N-block nb, K-block kb at [nb · ld + kb] with
//   ld = round_up(ceil(K / 128), 4): the checkpoint's row-major [ceil(N/128), ceil(K/128)] with
//   each row padded to a multiple of 4 (identical when ceil(K/128) % 4 == 0; PyTorch's fix was
//   this padding, whose absence gave silently wrong results).
// The GPU test (tests/gpu/fp8_gemm_test.cc) checks both against a host reference and, on a
// mismatch, names the alternative layout the output matches.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::model::gpu {

inline constexpr int64_t kFp8Block = 128;

inline constexpr int64_t fp8_blocks(int64_t n) {
  return (n + kFp8Block - 1) / kFp8Block;
}

// Activation scales: ceil(K/128) · T floats; row t, K-block kb at [kb · T + t].
inline constexpr int64_t fp8_act_scale_count(int64_t T, int64_t K) {
  return fp8_blocks(K) * T;
}
inline constexpr int64_t fp8_act_scale_index(int64_t t, int64_t kb, int64_t T) {
  return kb * T + t;
}

// Weight scales in cuBLASLt's layout: ceil(N/128) rows of fp8_weight_scale_ld(K) floats.
inline constexpr int64_t fp8_weight_scale_ld(int64_t K) {
  return (fp8_blocks(K) + 3) / 4 * 4;
}
inline constexpr int64_t fp8_weight_scale_count(int64_t N, int64_t K) {
  return fp8_blocks(N) * fp8_weight_scale_ld(K);
}

// The checkpoint's scales (row-major [ceil(N/128), ceil(K/128)]) in cuBLASLt's layout, the
// padding scales 0.
std::vector<float> fp8_weight_scales_for_cublaslt(const float* checkpoint, int64_t N, int64_t K);

// Per (row, 128-column block) e4m3 quantization of x [T, K] bf16 (row-major, K any positive
// value, the last block ragged): scale = amax / 448 in f32 (1 for an all-zero block), codes =
// float_to_fp8e4m3_bits(x / scale) (round to nearest even, saturating), codes [T, K] row-major,
// scales at fp8_act_scale_index. Finite inputs only. Asynchronous on `stream`.
Status quantize_rows_fp8_128(const uint16_t* x_bf16, int64_t T, int64_t K, uint8_t* codes,
                             float* scales, cudaStream_t stream);

// An fp8 weight ready for Fp8BlockGemm: the codes [N, K] row-major in the caller's device memory
// and its scales, converted to cuBLASLt's layout once and owned here.
struct Fp8Weight {
  const uint8_t* codes = nullptr;
  Buffer scales;  // f32, fp8_weight_scale_count(N, K)
  int64_t N = 0, K = 0;
};

// `checkpoint_scales` on the host, row-major [ceil(N/128), ceil(K/128)].
Result<Fp8Weight> make_fp8_weight(const uint8_t* codes, const float* checkpoint_scales, int64_t N,
                                  int64_t K);

// The block-scaled fp8 GEMM through cuBLASLt, with its handle, workspace and one plan
// (descriptors and the heuristic's algorithm) per (T, N, K), made on first use.
class Fp8BlockGemm {
 public:
  static Result<std::unique_ptr<Fp8BlockGemm>> create(size_t workspace_bytes = size_t{32} << 20);
  ~Fp8BlockGemm();
  Fp8BlockGemm(const Fp8BlockGemm&) = delete;
  Fp8BlockGemm& operator=(const Fp8BlockGemm&) = delete;

  // y [T, N] bf16 row-major = dequant(x) · dequant(w)ᵀ. x_codes [T, K] row-major, x_scales as
  // quantize_rows_fp8_128 writes them; device pointers 16-byte aligned. kUnsupported, naming the
  // shape and the cuBLAS status, where cuBLASLt has no algorithm for it.
  Status run(const uint8_t* x_codes, const float* x_scales, int64_t T, const Fp8Weight& w,
             uint16_t* y, cudaStream_t stream);

  // "cuBLASLt 130100 on sm_90 (NVIDIA H100 80GB HBM3)", for messages and timing tables.
  std::string describe() const;

 private:
  struct Plan;
  Fp8BlockGemm() = default;
  Result<Plan*> plan(int64_t T, int64_t N, int64_t K);

  void* handle_ = nullptr;  // cublasLtHandle_t
  Buffer workspace_;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::unique_ptr<Plan>> plans_;
};

}  // namespace mlaspec::model::gpu
