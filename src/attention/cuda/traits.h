// Compile-time traits of the CUDA verify-attention kernels: the single source of truth for what
// cuda_fold and cuda_rowwise can serve. Plain C++ (no CUDA headers) so the registry, `mlaspec
// inspect` and the CPU tests read the same constants the kernels are instantiated from, also in
// builds without CUDA. Kernels static_assert against these; the host dispatch maps runtime values
// onto exactly these sets.
#pragma once

#include <cstdint>

#include "mlaspec/attention/backend.h"

namespace mlaspec::attn::cuda {

struct CommonTraits {
  static constexpr int kHeadDimQK = 576;
  static constexpr int kHeadDimV = 512;
  static constexpr int kMinHeads = 8;
  static constexpr int kMaxHeads = 128;
  static constexpr int kMinQLen = 1;
  static constexpr int kMaxQLen = 32;
  static constexpr int kMaxBatch = 512;
  static constexpr int64_t kMaxSeqLen = int64_t{1} << 24;  // 16,777,216 tokens
  // Page sizes the kernels are instantiated for.
  static constexpr uint64_t kPageSizeMask = (1u << 4) | (1u << 5) | (1u << 6);  // 16, 32, 64
  // fp8_tile (656-byte rows, one f32 scale per 128 latent values) is served by its own
  // instantiations of both kernels (bf16 math over codes expanded with their block scales).
  static constexpr uint32_t kKvDtypes =
      dtype_bit(DType::kBF16) | dtype_bit(DType::kFP8E4M3) | dtype_bit(DType::kFP8Tile);
};

struct FoldTraits : CommonTraits {
  static constexpr const char* kName = "cuda_fold";
};

struct RowwiseTraits : CommonTraits {
  static constexpr const char* kName = "cuda_rowwise";
};

// Which kernel cuda_fold and cuda_rowwise launch for a call (docs/perf/cuda-kernels.md): the
// narrow one when every row tile holds at most kNarrowRows query rows (fold tiles the request's
// q_len * H rows, rowwise each token's H rows), the 64-row one otherwise. A row's arithmetic is
// the same in both, so the choice never changes a result. fp8 math (VerifyOptions::fp8_math) has
// the 64-row kernel only, which serves its narrow row tiles too (rows past the tile are masked):
// the same e4m3 arithmetic for every shape, never the exact kernels in its place.
inline constexpr int kNarrowRows = 16;
constexpr bool uses_narrow_kernel(bool rowwise, int q_len, int heads, bool fp8_math = false) {
  return !fp8_math && (rowwise ? heads : q_len * heads) <= kNarrowRows;
}
constexpr const char* kernel_name(bool rowwise, int q_len, int heads, bool fp8_math = false) {
  return uses_narrow_kernel(rowwise, q_len, heads, fp8_math)
             ? "narrow kernel"
             : (fp8_math ? "64-row kernel, e4m3 MMAs" : "64-row kernel");
}

template <typename Traits>
constexpr BackendCaps caps_from_traits() {
  BackendCaps c;
  c.name = Traits::kName;
  c.device = Device::kCUDA;
  c.min_q_len = Traits::kMinQLen;
  c.max_q_len = Traits::kMaxQLen;
  c.min_heads = Traits::kMinHeads;
  c.max_heads = Traits::kMaxHeads;
  c.max_batch = Traits::kMaxBatch;
  c.max_seq_len = Traits::kMaxSeqLen;
  c.kv_dtypes = Traits::kKvDtypes;
  c.page_size_mask = Traits::kPageSizeMask;
  c.deterministic = true;
  // fp8 math on fp8_e4m3 KV (the guard refuses it for the other dtypes): every shape of these caps
  // through the 64-row kernel's Fp8MathKv instantiation (hopper/fp8_math.cuh), with the error
  // bound fp8_math_row_bound(..., Fp8MathSums::kHopperTensorCores).
  c.fp8_math = true;
  c.split_kv = true;
  // Ragged calls run as one uniform launch per run of equal q_len (for_each_uniform_run).
  c.ragged = true;
  return c;
}

inline constexpr BackendCaps kFoldCaps = caps_from_traits<FoldTraits>();
inline constexpr BackendCaps kRowwiseCaps = caps_from_traits<RowwiseTraits>();

}  // namespace mlaspec::attn::cuda
