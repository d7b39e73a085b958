// The fp8-math pieces of the 64-row kernel (VerifyOptions::fp8_math on fp8_e4m3 KV; the
// Fp8MathKv instantiation): Q rounded to e4m3 per row as the reference rounds it, each tile's V
// transposed into a K-major buffer (8-bit wgmma reads B only K-major), P rounded to e4m3 as the A
// fragments of P V, and the two products: S = Q8 K^T from the raw tile as it landed, and
// O = O * scale + P8 V^T summed from zero per 64-column chunk and added in f32.
//
// Key order inside a tile: S's accumulator gives thread t of a quad keys 8j + 2t + {0, 1}
// (j < 8), while an e4m3 A fragment holds k positions 4t..4t+3 (+16). P V may sum the keys in any
// order as long as P and V^T agree, so position 16m + q of the tile (m < 4, q < 16) holds key
// 16m + fp8_math_key(q): then a thread's P fragment is its own softmax values, packed with no
// shuffle, and each row of V^T is the same permutation of the raw rows.
#pragma once

#include <cstdint>

#include "../ptx.cuh"
#include "fp8_expand.cuh"

namespace mlaspec::attn::cuda {

namespace sm90 {

// Byte offset of 16-byte chunk `chunk` (0..3) of row `row` in a 64B-swizzled block of 64-byte
// rows (the layout TMA's SWIZZLE_64B writes and gmma_desc_sw64 reads).
__device__ __forceinline__ uint32_t sw64(int row, int chunk) {
  return row * 64 + ((chunk ^ ((row >> 1) & 3)) << 4);
}

// The key at position q (0..15) of a 16-key group: position 4t + 2jb + e holds key 8jb + 2t + e.
__device__ __forceinline__ int fp8_math_key(int q) {
  return 8 * ((q >> 1) & 1) + 2 * (q >> 2) + (q & 1);
}

// One Q row (bf16 at `src`, or zeros where src is null: a row past the tile) into the
// 64B-swizzled e4m3 operand sQ (column blocks of 64 values, BLOCK_BYTES apart), by the 4 adjacent
// lanes of one warp (`part`), lane `part` taking the 16-value chunks part, part + 4, ...: the
// reference's fp8_math_q exactly (s_q = amax / 448, 1 for a zero row; q8 = e4m3(q / s_q), IEEE
// division, round to nearest even, saturating at 448), so that the row's Q rounding error is the
// one fp8_math_row_bound counts. Returns s_q (every lane of the row).
template <int BLOCK_BYTES>
__device__ __forceinline__ float load_q_row_e4m3(const uint16_t* src, uint8_t* sQ, int row,
                                                 int part) {
  constexpr int kChunks = CommonTraits::kHeadDimQK / 16 / 4;  // 9 chunks of 16 values per lane
  static_assert(kChunks * 16 * 4 == CommonTraits::kHeadDimQK);
  uint4 v[2 * kChunks];
#pragma unroll
  for (int k = 0; k < 2 * kChunks; ++k) {
    const int c = 2 * (part + 4 * (k >> 1)) + (k & 1);  // 8-value chunk of the row
    v[k] = src != nullptr ? __ldg(reinterpret_cast<const uint4*>(src) + c) : make_uint4(0, 0, 0, 0);
  }
  float amax = 0.f;
#pragma unroll
  for (int k = 0; k < 2 * kChunks; ++k) amax = fmaxf(amax, bf16x8_amax(v[k]));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
  amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
  const float s = amax > 0.f ? __fdiv_rn(amax, 448.f) : 1.f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    uint32_t o[4];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t w[4] = {v[2 * k + h].x, v[2 * k + h].y, v[2 * k + h].z, v[2 * k + h].w};
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const uint32_t lo = ptx::pack_e4m3x2(__fdiv_rn(__uint_as_float(w[2 * j] << 16), s),
                                             __fdiv_rn(__uint_as_float(w[2 * j] & 0xffff0000u), s));
        const uint32_t hi =
            ptx::pack_e4m3x2(__fdiv_rn(__uint_as_float(w[2 * j + 1] << 16), s),
                             __fdiv_rn(__uint_as_float(w[2 * j + 1] & 0xffff0000u), s));
        o[2 * h + j] = lo | (hi << 16);
      }
    }
    const int c16 = part + 4 * k;
    *reinterpret_cast<uint4*>(sQ + (c16 >> 2) * BLOCK_BYTES + sw64(row, c16 & 3)) =
        make_uint4(o[0], o[1], o[2], o[3]);
  }
  return s;
}

// The producer warpgroup's share of a landed raw tile (64 keys x 576 codes in 9 64B-swizzled
// column blocks at `raw`): V (columns 0..511) transposed into the stage's V^T buffer `vt` (512 rows
// of 64 positions, 64B-swizzled: the K-major B operand of P V), keys valid..63 as zeros (past
// seq_len in the last page, or never copied: 0 x NaN would be NaN in P V). Thread dtid (0..127)
// writes 16 positions (chunk m of every V^T row) of 16 V columns (dg), read as 16 keys x 8 bytes
// twice and turned by 4x4 byte transposes (__byte_perm). Lanes vary their order (which of a key
// pair, which 8 columns first, which column of a pair) so that every 8-byte load of a half-warp and
// every 16-byte store of a quarter-warp hits distinct banks; the permutation selectors undo it.
// Waits for its column block's copy (full[blk], phase) and, before its first store, for both
// consumer warpgroups to be done with the buffer's previous tile (vt_empty, phase ^ 1).
template <typename KT, bool kMasked>
__device__ __forceinline__ void transpose_v_tile(uint32_t raw, uint32_t vt, int valid, int dtid,
                                                 uint64_t* full, uint64_t* vt_empty,
                                                 uint32_t phase) {
  const int lane = dtid & 31;
  const int m = lane & 3;
  const int dg = (dtid >> 5) * 8 + (lane >> 2);
  const int v = lane & 1, hx = (lane >> 1) & 1, f = (lane >> 2) & 1;
  // Stage 1 interleaves two keys' bytes (v: the pair's keys were loaded swapped), stage 2 two
  // pairs' halves into one column's 4 positions (f: slot k holds column k ^ f).
  const uint32_t s1a = v ? 0x1504u : 0x5140u, s1b = v ? 0x3726u : 0x7362u;
  const uint32_t s2a = f ? 0x7632u : 0x5410u, s2b = f ? 0x5410u : 0x7632u;
  // Key (16 m + fp8_math_key(i)) ^ v sits at row offset 64 fp8_math_key(i) +- 64 v from the
  // group's first row, in 16-byte chunk (dg & 3) ^ ((fp8_math_key(i) >> 1) & 3) (v flips bit 0
  // only): two bases and four chunk offsets, the rest immediates.
  const uint32_t src = raw + (dg >> 2) * KT::BLOCK_BYTES + 16 * m * 64;
  const uint32_t src_even = src + 64 * v, src_odd = src - 64 * v;
  uint32_t chunk[4], mchunk[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    chunk[c] = ((dg & 3) ^ c) << 4;
    mchunk[c] = (m ^ c) << 4;
  }
  const uint32_t dst = vt + 16 * dg * 64;
  const uint32_t dst_even = dst + 64 * f, dst_odd = dst - 64 * f;
  ptx::mbar_wait(&full[dg >> 2], phase);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int hh = h ^ hx;  // columns 16 dg + 8 hh ..
    uint2 in[16];           // in[i]: position i ^ v, 8 codes
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const int k = fp8_math_key(i);
      const int key = (16 * m + k) ^ v;
      const uint32_t addr = ((k & 1) ? src_odd : src_even) + chunk[(k >> 1) & 3] + 8 * hh + 64 * k;
      in[i] = !kMasked || key < valid ? ptx::ld_shared_v2(addr) : make_uint2(0, 0);
    }
    if (h == 0) ptx::mbar_wait(vt_empty, phase ^ 1);
#pragma unroll
    for (int d4 = 0; d4 < 2; ++d4) {
      uint32_t o[4][4];  // [positions 4 p4..][slot]
#pragma unroll
      for (int p4 = 0; p4 < 4; ++p4) {
        uint32_t a[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) a[k] = d4 == 0 ? in[4 * p4 + k].x : in[4 * p4 + k].y;
        const uint32_t t0 = __byte_perm(a[0], a[1], s1a), t1 = __byte_perm(a[0], a[1], s1b);
        const uint32_t t2 = __byte_perm(a[2], a[3], s1a), t3 = __byte_perm(a[2], a[3], s1b);
        o[p4][0] = __byte_perm(t0, t2, s2a);
        o[p4][1] = __byte_perm(t0, t2, s2b);
        o[p4][2] = __byte_perm(t1, t3, s2a);
        o[p4][3] = __byte_perm(t1, t3, s2b);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        // Column 16 dg + 8 hh + 4 d4 + (k ^ f): row offset 64 (4 d4 + k) +- 64 f, chunk
        // m ^ (2 d4 + (k >> 1)).
        const uint32_t addr = ((k & 1) ? dst_odd : dst_even) + 512 * hh + 64 * (4 * d4 + k) +
                              mchunk[2 * d4 + (k >> 1)];
        ptx::st_shared_v4(addr, o[0][k], o[1][k], o[2][k], o[3][k]);
      }
    }
  }
}

// P (f32 in S's accumulator layout, p <= 1) -> e4m3(p * 448) as the A fragments of P V's two
// k32 steps (pa[4 ks + i], ptx::wgmma_m64n64k32_e4m3_rs), in the tile's position order, and the
// rows' sums of the rounded values (the output's denominator, as the reference normalises by the
// sum of its rounded weights), each over the row's quad in softmax_tile64's order.
__device__ __forceinline__ void quantize_p(const float (&sf)[32], uint32_t (&pa)[8],
                                           float (&sum8)[2]) {
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      // Row g + 8 (i & 1), 16-key group g16: keys 16 g16 + 2t + e (j = 2 g16), then + 8.
      const int r = i & 1, g16 = 2 * ks + (i >> 1);
      const float* p0 = sf + 8 * g16 + 2 * r;
      const float* p1 = p0 + 4;
      const uint32_t lo = ptx::pack_e4m3x2(p0[0] * 448.f, p0[1] * 448.f);
      const uint32_t hi = ptx::pack_e4m3x2(p1[0] * 448.f, p1[1] * 448.f);
      pa[4 * ks + i] = lo | (hi << 16);
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      // Keys 8j + 2t, +1 of row r: group j >> 1, the word's low (j even) or high half.
      const int g16 = j >> 1;
      const uint32_t word = pa[4 * (g16 >> 1) + 2 * (g16 & 1) + r];
      float lo, hi;
      ptx::unpack_f16x2(ptx::e4m3x2_to_f16x2(static_cast<uint16_t>(word >> (16 * (j & 1)))), lo,
                        hi);
      s += lo;
      s += hi;
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    sum8[r] = s;
  }
}

// A warpgroup's P fragments to / from a P8_BYTES buffer at `buf` (thread wg_tid: 16 bytes per k32
// step, so every access of a warp covers 512 contiguous bytes). The two consumer warpgroups' thread
// wg_tid hold the same rows, so the other one loads exactly the fragments it needs.
__device__ __forceinline__ void store_p8(uint32_t buf, const uint32_t (&pa)[8], int wg_tid) {
  ptx::st_shared_v4(buf + wg_tid * 16, pa[0], pa[1], pa[2], pa[3]);
  ptx::st_shared_v4(buf + 2048 + wg_tid * 16, pa[4], pa[5], pa[6], pa[7]);
}
__device__ __forceinline__ void load_p8(uint32_t (&pa)[8], uint32_t buf, int wg_tid) {
  const uint4 a = ptx::ld_shared_v4(buf + wg_tid * 16);
  const uint4 b = ptx::ld_shared_v4(buf + 2048 + wg_tid * 16);
  pa[0] = a.x, pa[1] = a.y, pa[2] = a.z, pa[3] = a.w;
  pa[4] = b.x, pa[5] = b.y, pa[6] = b.z, pa[7] = b.w;
}

// S[64 rows x 64 keys] = Q8 K^T over the 9 column blocks of a raw tile (both 64B-swizzled, K-major,
// SBO 8 rows x 64 B), each block's two k32 steps issued as soon as its copy has landed (full[blk],
// phase), committed as one group. Blocks in order 0..8 for every tile (one instruction sequence
// per row, whichever warpgroup computes it). The tensor cores sum the 18 steps in their own
// accumulator (about 13 fraction bits, kept across the steps): fp8_math_row_bound's
// Fp8MathSums::kHopperTensorCores counts it.
template <typename KT>
__device__ __forceinline__ void issue_qk_e4m3(float (&sf)[32], uint32_t sQ_addr, uint32_t sK_addr,
                                              uint64_t* full, uint32_t phase) {
  const uint64_t desc_q = ptx::gmma_desc_sw64(sQ_addr, 8 * 64);
  const uint64_t desc_k = ptx::gmma_desc_sw64(sK_addr, 8 * 64);
#pragma unroll
  for (int blk = 0; blk < KT::COL_BLOCKS; ++blk) {
    ptx::mbar_wait(&full[blk], phase);
    ptx::wgmma_fence();  // after the wait loop (control flow): C7519 otherwise
#pragma unroll
    for (int kk = 0; kk < 2; ++kk) {
      const uint64_t off = static_cast<uint64_t>((blk * KT::BLOCK_BYTES + kk * 32) >> 4);
      ptx::wgmma_m64n64k32_e4m3_ss(sf, desc_q + off, desc_k + off, (blk | kk) != 0 ? 1 : 0);
    }
  }
  ptx::wgmma_commit();
}

// O[:, this warpgroup's 256 columns] = O * scale + P8 V over one tile (pa: P's fragments; vt: the
// V^T row of the warpgroup's first column). Hopper's e4m3 MMAs keep only about 13 fraction bits of
// their running sum, truncated: accumulated over a whole split, O would lose ~2^-13 of itself per
// k32 step (DeepSeek-V3 measured ~2% at K = 4096). So each 32-column chunk is summed from zero over
// the tile's 64 keys (two steps) in tmp[c & 1] and added to O in f32, the online softmax's rescale
// fused in (fma(O, scale, chunk): exactly O + chunk where the row's max did not move); the next
// chunk's MMAs run while one is added.
__device__ __forceinline__ void pv_e4m3(float (&acc)[128], float (&tmp)[2][16],
                                        const uint32_t (&pa)[8], uint32_t vt,
                                        const float (&scale)[2]) {
  constexpr int kChunks = 8;  // of 32 columns
  const uint32_t a0[4] = {pa[0], pa[1], pa[2], pa[3]};
  const uint32_t a1[4] = {pa[4], pa[5], pa[6], pa[7]};
  auto issue = [&](int c, float(&d)[16]) {
    const uint64_t desc = ptx::gmma_desc_sw64(vt + c * 32 * 64, 8 * 64);
    ptx::wgmma_fence();
    ptx::wgmma_m64n32k32_e4m3_rs(d, a0, desc, 0);
    ptx::wgmma_m64n32k32_e4m3_rs(d, a1, desc + (32 >> 4), 1);
    ptx::wgmma_commit();
  };
  issue(0, tmp[0]);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    if (c + 1 < kChunks) {
      issue(c + 1, tmp[(c + 1) & 1]);
      ptx::wgmma_wait<1>();
    } else {
      ptx::wgmma_wait<0>();
    }
#pragma unroll
    for (int n = 0; n < 16; ++n) {
      acc[16 * c + n] = __fmaf_rn(acc[16 * c + n], scale[(n >> 1) & 1], tmp[c & 1][n]);
    }
  }
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
