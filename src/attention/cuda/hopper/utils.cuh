// Small index helpers both Hopper verify kernels use: the 128B swizzle of shared-memory tiles, a
// warp-uniform warp index, and the narrow kernel's wgmma m64n16 fragment layout.
#pragma once

#include <cstdint>

namespace mlaspec::attn::cuda {

namespace sm90 {

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` inside a 128B-swizzled block.
__device__ __forceinline__ uint32_t sw128(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

// The warp index, broadcast from lane 0 so the compiler knows it is warp-uniform: wgmma issued
// under a branch on it would otherwise be serialised (ptxas C7518/C7520).
__device__ __forceinline__ int uniform_warp_index() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 32), 0);
}

// The narrow kernel's S^T / P fragment (wgmma m64n16 accumulator) in warp w, lane 4g + t:
// element i is key narrow_key(w, g, i) of the tile and row slot narrow_slot(i), i.e. tile row
// narrow_row(t, narrow_slot(i)). The O^T fragment of each 64-column block is laid out the same,
// with V columns in place of keys.
__device__ __forceinline__ int narrow_key(int w, int g, int i) {
  return 16 * w + g + 8 * ((i >> 1) & 1);
}
// Row slot k (0..3) of element i, and the tile row of slot k.
__device__ __forceinline__ int narrow_slot(int i) {
  return (i & 1) + 2 * (i >> 2);
}
__device__ __forceinline__ int narrow_row(int t, int k) {
  return 2 * t + (k & 1) + 8 * (k >> 1);
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
