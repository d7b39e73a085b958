// The online softmax of both verify kernels (the same max, scale and ex2 per row, so that a row's
// bits do not depend on the kernel), the rescale of the output accumulators, and P packed into
// the MMAs' operand type and stored as a swizzled shared-memory operand.
#pragma once

#include <cstdint>

#include "../ptx.cuh"
#include "utils.cuh"

namespace mlaspec::attn::cuda {

namespace sm90 {

// softmax_tile64's first step: S (this thread's 2 rows x 16 keys) to the log2 domain in place,
// keys past a row's last visible key at -inf where kMasked, and the rows' maxima into mx.
// Unmasked, the product is __fmul_rn: without the mask's select a plain product would be
// contracted with softmax's later `- m_use` into one FMA, whose rounding the narrow kernel does not
// have (and the two kernels must give a row the same bits).
template <bool kMasked>
__device__ __forceinline__ void scale_scores64(float (&sf)[32], int key0, int t,
                                               const int (&vis)[2], const float (&ssl)[2],
                                               float (&mx)[2]) {
#pragma unroll
  for (int j = 0; j < 8; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      float x;
      if constexpr (kMasked) {
        const int key = key0 + j * 8 + 2 * t + (e & 1);
        x = key <= vis[e >> 1] ? sf[4 * j + e] * ssl[e >> 1] : -INFINITY;
      } else {
        x = __fmul_rn(sf[4 * j + e], ssl[e >> 1]);
      }
      sf[4 * j + e] = x;
      mx[e >> 1] = fmaxf(mx[e >> 1], x);
    }
  }
}

// A row's running max after a tile whose max is tile_max: it moves only when the tile's max exceeds
// it by more than SLACK (log2 units), so after a split's first tiles most tiles leave the max,
// and with it the accumulators, as they are (scale exactly 1: rescale_acc skips). Both kernels
// update every row's max with this, tile by tile in the same order: the same max, the same bits.
// SLACK 0 is the exact running max (fmaxf).
template <int SLACK>
__device__ __forceinline__ float next_max(float m_old, float tile_max) {
  const float m_new = fmaxf(m_old, tile_max);
  if constexpr (SLACK == 0) {
    return m_new;
  } else {
    // m_old = -inf (no key seen yet) moves to any finite or infinite max; NaN never moves it.
    return m_new > m_old + static_cast<float>(SLACK) ? m_new : m_old;
  }
}

// Online softmax over one 64-key tile held by one warpgroup. This thread holds rows r_loc[0..1]
// and keys key0 + 8j + 2t + {0,1}, j < 8 (sf[4j + e]: row e >> 1, key + (e & 1)). Masks keys past
// each row's last visible key, scales to the log2 domain (ssl: each row's factor, the call's
// score_scale_log2 times 1 / its Q scale) and turns S into P = 2^(s - m_new) in
// place. m: the running max before the tile on entry, after it on return; scale: 2^(m_old -
// m_new), exactly 1 when the max did not move (masked tiles are exact no-ops; next_max<SLACK>
// decides when it moves, so P may reach 2^SLACK); sum: the rows'
// sums of P over the tile, reduced over the row's 4 threads in a fixed order.
template <int SLACK>
__device__ __forceinline__ void softmax_tile64(float (&sf)[32], int key0, int t,
                                               const int (&vis)[2], const float (&ssl)[2],
                                               float (&m)[2], float (&scale)[2], float (&sum)[2]) {
  float mx[2] = {-INFINITY, -INFINITY};
  // The mask keeps every score of a tile whose last key both rows see (all tiles but a row
  // tile's last one or two): skip its compares there (the same values).
  if (key0 + 63 <= min(vis[0], vis[1])) {
    scale_scores64<false>(sf, key0, t, vis, ssl, mx);
  } else {
    scale_scores64<true>(sf, key0, t, vis, ssl, mx);
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 1));
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 2));
    const float m_new = next_max<SLACK>(m[k], mx[k]);
    // A row that has seen no key yet keeps m = -inf: subtract 0 so p = ex2(-inf) = 0, not NaN.
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    scale[k] = m[k] == m_new ? 1.f : ptx::ex2(m[k] - m_use);
    m[k] = m_new;
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      sf[4 * j + 2 * k] = ptx::ex2(sf[4 * j + 2 * k] - m_use);
      sf[4 * j + 2 * k + 1] = ptx::ex2(sf[4 * j + 2 * k + 1] - m_use);
      s += sf[4 * j + 2 * k];
      s += sf[4 * j + 2 * k + 1];
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    sum[k] = s;
  }
}

// acc *= scale per row; skipped when no row of the warp changed its max (x * 1 == x exactly).
__device__ __forceinline__ void rescale_acc(float (&acc)[128], const float (&scale)[2]) {
  if (!__any_sync(0xffffffffu, scale[0] != 1.f || scale[1] != 1.f)) return;
#pragma unroll
  for (int n = 0; n < 32; ++n) {
    acc[4 * n + 0] *= scale[0];
    acc[4 * n + 1] *= scale[0];
    acc[4 * n + 2] *= scale[1];
    acc[4 * n + 3] *= scale[1];
  }
}

// Two f32 -> the MMA operand type T (bf16 or f16), packed, low half first.
template <ptx::MmaType T>
__device__ __forceinline__ uint32_t pack_mma(float lo, float hi) {
  if constexpr (T == ptx::MmaType::kF16) {
    return ptx::pack_f16x2(lo, hi);
  } else {
    return ptx::pack_bf16x2(lo, hi);
  }
}

// P (f32, S's accumulator layout) times `scale` per row -> pairs of type T: pb[i] holds keys
// 8(i >> 1) + 2t, +1 of row g + 8(i & 1). scale 1 leaves P as is (x * 1 == x).
template <ptx::MmaType T>
__device__ __forceinline__ void pack_p(uint32_t (&pb)[16], const float (&sf)[32],
                                       const float (&scale)[2]) {
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    const float s = scale[i & 1];  // sf[2i], sf[2i + 1]: keys 8(i >> 1) + 2t.., row g + 8(i & 1)
    pb[i] = pack_mma<T>(sf[2 * i] * s, sf[2 * i + 1] * s);
  }
}

// Packed P -> a swizzled [64 x 128 B] block, then the fence that lets wgmma read it.
__device__ __forceinline__ void store_p(uint8_t* sP, const uint32_t (&pb)[16],
                                        const int (&r_loc)[2], int t) {
#pragma unroll
  for (int j = 0; j < 8; ++j) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      // pb[2j + k]: row r_loc[k], keys 8j + 2t, 8j + 2t + 1 = 16-byte chunk j, bytes 4t..4t+3.
      *reinterpret_cast<uint32_t*>(sP + sw128(r_loc[k], j) + t * 4) = pb[2 * j + k];
    }
  }
  ptx::fence_proxy_async_smem();
}

// Softmax of one tile, the 64-row kernel's softmax_tile64 per row: scores -> log2 domain (ssl:
// each row slot's factor) with the mask, the tile max over the 64 keys (warp shuffles, then the 4
// warps through sMax), the new running max, scale = 2^(m_old - m_new) (exactly 1 when the max did
// not move), and P = 2^(x - m_new) in place; P (f32) is also written to sPf [row][key] for the row
// sums.
template <int SLACK>
__device__ __forceinline__ void narrow_softmax(float (&sf)[8], int key0, int w, int g, int t,
                                               const int (&vis)[4], const float (&ssl)[4],
                                               float (&m)[4], float (&scale)[4], float* sMax,
                                               float* sPf, int pf_stride) {
  float mx[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int k = narrow_slot(i);
    const int key = key0 + narrow_key(w, g, i);
    const float x = key <= vis[k] ? sf[i] * ssl[k] : -INFINITY;
    sf[i] = x;
    mx[k] = fmaxf(mx[k], x);
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 4));
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 8));
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 16));
    if (g == 0) sMax[w * 16 + narrow_row(t, k)] = mx[k];
  }
  ptx::named_bar_sync(1, 128);
  float m_use[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int r = narrow_row(t, k);
    mx[k] = fmaxf(fmaxf(sMax[r], sMax[16 + r]), fmaxf(sMax[32 + r], sMax[48 + r]));
    const float m_new = next_max<SLACK>(m[k], mx[k]);
    // A row that has seen no key yet keeps m = -inf: subtract 0 so p = ex2(-inf) = 0, not NaN.
    m_use[k] = m_new == -INFINITY ? 0.f : m_new;
    scale[k] = m[k] == m_new ? 1.f : ptx::ex2(m[k] - m_use[k]);
    m[k] = m_new;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int k = narrow_slot(i);
    sf[i] = ptx::ex2(sf[i] - m_use[k]);
    sPf[narrow_row(t, k) * pf_stride + narrow_key(w, g, i)] = sf[i];
  }
}

// Row r's sum of P over the tile (the f32 copy sPf) in the 64-row kernel's order: per thread tw
// keys 8j + 2tw, +1 for j = 0..7, then the xor-1 / xor-2 butterfly over the row's quad. Run by
// the 64 threads (r, tw) = (tid / 4, tid % 4) of warps 0 and 1.
__device__ __forceinline__ float narrow_row_sum(const float* sPf, int pf_stride, int r, int tw) {
  const float* row = sPf + r * pf_stride;
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    s += row[8 * j + 2 * tw];
    s += row[8 * j + 2 * tw + 1];
  }
  s += __shfl_xor_sync(0xffffffffu, s, 1);
  s += __shfl_xor_sync(0xffffffffu, s, 2);
  return s;
}
// P of MMA type T (times the row slot's scale: 1 for plain bf16 P) from this thread's fragment
// into the swizzled [16 rows x 64 keys] block sP (key k of row r: chunk k / 8 of the row, bytes
// 2(k % 8)).
template <ptx::MmaType T>
__device__ __forceinline__ void narrow_store_p(uint8_t* sP, const float (&pf)[8], int w, int g,
                                               int t, const float (&scale)[4]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int k = narrow_slot(i), key = narrow_key(w, g, i);
    *reinterpret_cast<uint16_t*>(sP + sw128(narrow_row(t, k), key >> 3) + (key & 7) * 2) =
        static_cast<uint16_t>(pack_mma<T>(pf[i] * scale[k], 0.f) & 0xffffu);
  }
}

// acc *= scale per row slot (x * 1 == x: skipping a row that did not move changes nothing).
template <int NB>
__device__ __forceinline__ void narrow_rescale(float (&acc)[NB][8], const float (&scale)[4]) {
  if (scale[0] == 1.f && scale[1] == 1.f && scale[2] == 1.f && scale[3] == 1.f) return;
#pragma unroll
  for (int mb = 0; mb < NB; ++mb) {
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[mb][i] *= scale[narrow_slot(i)];
  }
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
