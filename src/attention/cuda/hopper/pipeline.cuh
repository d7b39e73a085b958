// The 64-row kernel's stage protocol between the consumers and the producers: which stage holds a
// tile's V-right half, and how a consumer warp releases a stage (or half) it is done with.
#pragma once

#include <cstdint>

#include "../ptx.cuh"

namespace mlaspec::attn::cuda {

// Named barrier of the kernel's start (bf16): the consumers arrive once Q is in shared memory,
// the producer warpgroup waits there before its first copy into stage 1.
constexpr uint32_t kQStoredBar = 9;

namespace sm90 {

// bf16: the stage whose V-right + rope half holds tile t0 + which (which = 0, 1)
// of a pair with parity `ph`. A pair's t0 takes the half freed mid-pair, t1 the one freed last,
// so the two alternate. The map is its own inverse: the producer warp of stage s's V-right half
// copies tile t0 + right_half_stage(ph, s).
__device__ __forceinline__ uint32_t right_half_stage(uint32_t ph, uint32_t which) {
  return ph ^ which;
}

// Releases a stage to the producers of every CTA in the cluster: one arrival per consumer warp,
// after the warp's wgmma reads of it completed (wgmma_wait). bf16: the warp's own reads are all
// there is to order, so a relaxed arrival suffices. fp8: the dequantising threads' reads of the
// raw codes must be ordered before the next copy overwrites them too; they happen-before this
// warp's acquire of the full barriers, and a release arrival carries them on (cumulativity).
template <bool kRelease>
__device__ __forceinline__ void release_stage(uint64_t* empty_bar, uint32_t n_cta, int lane) {
  __syncwarp();
  if (lane == 0) {
    for (uint32_t r = 0; r < n_cta; ++r) ptx::mbar_arrive_cluster<kRelease>(empty_bar, r);
  }
}

// fp8: releases a stage's V-right + rope half to this CTA's expansion alone (no copy lands there;
// Sm90Traits::EMPTY_BARS), one arrival per consumer warp after its wgmma reads of it completed.
__device__ __forceinline__ void release_local(uint64_t* empty_bar, int lane) {
  __syncwarp();
  if (lane == 0) ptx::mbar_arrive(empty_bar);
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
