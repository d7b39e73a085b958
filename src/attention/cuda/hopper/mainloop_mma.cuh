// The 64-row kernel's tensor-core work on a stage: Q K^T (issue_qk64) and P V (issue_pv) as
// wgmma groups, and the zeroing of a last tile's rows past seq_len before they are read.
#pragma once

#include <cstdint>

#include "../ptx.cuh"

namespace mlaspec::attn::cuda {

namespace sm90 {

// S[64 rows x 64 keys] = Q K^T over the 9 column blocks of a bf16 stage in the order FIRST, FIRST
// + 1, ... (mod 9): steps I0..I1-1 of that order here, each block's wgmmas issued as soon as its
// copy has landed (full[blk], phase), committed as one group (S is complete after the step-8
// group). A warpgroup walks its tile in the order the stage's halves were freed.
template <typename KT, int FIRST, int I0, int I1>
__device__ __forceinline__ void issue_qk64(float (&sf)[32], uint32_t sQ_addr, uint32_t sK_addr,
                                           uint64_t* full, uint32_t phase) {
  const uint64_t desc_q = ptx::gmma_desc_sw128(sQ_addr, 16, 1024);
  const uint64_t desc_k = ptx::gmma_desc_sw128(sK_addr, 16, 1024);
#pragma unroll
  for (int i = I0; i < I1; ++i) {
    const int blk = (FIRST + i) % KT::COL_BLOCKS;
    ptx::mbar_wait(&full[blk], phase);
    // After the wait loop (control flow) the accumulators must be fenced again; ptxas would
    // otherwise insert the same fence itself (C7519).
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      // 32-byte step inside the 128-byte swizzled row (descriptor units of 16 B).
      const uint64_t off = static_cast<uint64_t>((blk * KT::BLOCK_BYTES + kk * 32) >> 4);
      ptx::wgmma_m64n64k16_ss<KT::MMA>(sf, desc_q + off, desc_k + off, (i | kk) != 0 ? 1 : 0);
    }
  }
  ptx::wgmma_commit();
}

// O[:, this WG's 256 columns] += P V for one 64-key tile: P a swizzled [64 x 64] bf16 block, V the
// tile's 4 column blocks starting at sV_addr (LBO = block stride, SBO = 8 keys).
template <typename KT>
__device__ __forceinline__ void issue_pv(float (&acc)[128], uint32_t sP_addr, uint32_t sV_addr) {
  const uint64_t desc_p = ptx::gmma_desc_sw128(sP_addr, 16, 1024);
  const uint64_t desc_v = ptx::gmma_desc_sw128(sV_addr, KT::BLOCK_BYTES, 1024);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < KT::BLOCK_N / 16; ++kk) {
    ptx::wgmma_m64n256k16_ss_tb<KT::MMA>(acc, desc_p + ((kk * 32) >> 4),
                                         desc_v + ((kk * 16 * 128) >> 4), 1);
  }
  ptx::wgmma_commit();
}

// The last tile of a split may end inside a page: rows valid..63 hold whatever the page held (or
// nothing) and must be zero before P V reads them (0 * NaN is NaN). Run by the warpgroup that
// owns the tile (128 threads, named barrier `bar`) before its Q K^T; the other warpgroup reads the
// tile only after the P handoff that follows.
template <typename KT>
__device__ __forceinline__ void zero_tail_rows(uint8_t* stage_l, uint8_t* stage_r, uint64_t* full_l,
                                               uint64_t* full_r, uint32_t phase, int valid,
                                               int wg_tid, uint32_t bar) {
  for (int blk = 0; blk < KT::COL_BLOCKS; ++blk)
    ptx::mbar_wait(blk < KT::V_HALF ? &full_l[blk] : &full_r[blk], phase);
  constexpr int CHUNKS = KT::COL_BLOCKS * 8;
  for (int c = wg_tid; c < (KT::BLOCK_N - valid) * CHUNKS; c += 128) {
    const int row = valid + c / CHUNKS, col = c % CHUNKS;
    uint8_t* stage = (col >> 3) < KT::V_HALF ? stage_l : stage_r;
    *reinterpret_cast<uint4*>(stage + (col >> 3) * KT::BLOCK_BYTES + row * 128 + (col & 7) * 16) =
        make_uint4(0, 0, 0, 0);
  }
  ptx::fence_proxy_async_smem();
  ptx::named_bar_sync(bar, 128);
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
