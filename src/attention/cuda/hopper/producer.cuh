// The producer roles of the Hopper verify kernels: TMA copies of Q and of the KV pages into the
// shared-memory ring, guarded by the full/empty barriers of pipeline.cuh, for fp8 the
// expansion of the raw codes into f16 tiles (fp8_expand.cuh), and for fp8 math the transposition
// of each tile's V (fp8_math.cuh).
#pragma once

#include <cstdint>

#include "../ptx.cuh"
#include "../verify_params.h"
#include "fp8_expand.cuh"
#include "fp8_math.cuh"
#include "pipeline.cuh"
#include "tile_scheduler.cuh"

namespace mlaspec::attn::cuda {
namespace sm90 {

// The 64-row kernel's producer warpgroup (warps PRODUCER_WARP..): Q's TMA boxes where the host
// asked for them, then the KV copies of the CTA's splits into the two-stage ring (bf16: one
// copying warp per half-slot), and for fp8 the expansion of the raw codes into the f16 tiles.
// Shared memory as the kernel carved it (Sm90Traits' offsets from the aligned base `smem`);
// kv_begin / n_tiles: the split's keys, which begin_split(ci) sets for the group's split ci.
template <typename KT, typename BeginSplit>
__device__ __forceinline__ void wide_producer(
    const VerifyParams& p, const WorkItem& w, uint8_t* const& smem, uint8_t* const& sQ,
    uint8_t* const& sStage, uint64_t* const& full_bar, uint64_t* const& empty_bar,
    uint64_t* const& raw_bar, uint64_t* const& q_bar, const bool& q_by_tma, const int& warp,
    const int& lane, const uint32_t& cta_rank, const uint32_t& n_cta, const int& b,
    const int& seq_len, const int& row_begin, const int& kv_begin, const int& n_tiles,
    BeginSplit&& begin_split) {
  ptx::setmaxnreg_dec<KT::PRODUCER_REGS>();
  // Copies (lanes of the first producer warp): one TMA box = 64 columns x one page, into the
  // stage's column block (bf16: swizzled, straight into the tile; fp8: raw codes, V in the
  // V-left half at sm90::raw_v_off, rope in the P1 block). Whole pages only (a page past seq_len
  // may not exist); rows of the last page past seq_len arrive too and are zeroed before use.
  const int32_t* bt = p.block_table + static_cast<int64_t>(b) * p.bt_stride;
  const uint16_t mcast_mask = static_cast<uint16_t>((1u << n_cta) - 1u);
  const uint64_t kv_policy = ptx::l2_policy_evict_first();
  static_assert((KT::BLOCK_N / KT::PAGE_SIZE) * KT::COL_BLOCKS <= 64,
                "two copies per producer lane");
  // Copies of tile it's column blocks [blk0, blk1) once `empty` (phase) says every releasing
  // warp of every CTA in the cluster is done with them.
  auto issue_copies = [&](int it, int s, int blk0, int blk1, const int32_t(&page_of)[2],
                          uint64_t* empty, uint32_t phase) {
    const int key0 = kv_begin + it * KT::BLOCK_N;
    const int valid = min(KT::BLOCK_N, seq_len - key0);
    const int pages = (valid + KT::PAGE_SIZE - 1) / KT::PAGE_SIZE;
    uint8_t* stage = sStage + s * KT::STAGE_BYTES;
    const uint32_t block_bytes = pages * KT::PAGE_SIZE * KT::BOX_ROW_BYTES;
    ptx::mbar_wait(empty, phase ^ 1);
    // Every CTA of the cluster receives every box of the block (multicast).
    if constexpr (KT::kTile) {
      // As fp8's, but block 8 is the scales' box: 16 B per key.
      if (lane < 2) {
        const uint32_t scale_bytes = pages * KT::PAGE_SIZE * KT::SCALE_BOX_ROW_BYTES;
        ptx::mbar_arrive_expect_tx(&raw_bar[s * 2 + lane],
                                   lane == 0 ? 6 * block_bytes + scale_bytes : 2 * block_bytes);
      }
    } else if constexpr (KT::kFp8) {
      // raw_bar[s][0]: raw blocks 0, 1, 4..8 (7 blocks, lane 0); [s][1]: raw blocks 2, 3 (lane
      // 1).
      if (lane < 2)
        ptx::mbar_arrive_expect_tx(&raw_bar[s * 2 + lane], (7 - 5 * lane) * block_bytes);
    } else {
      if (lane >= blk0 && lane < blk1)
        ptx::mbar_arrive_expect_tx(&full_bar[s * KT::FULL_BARS + lane], block_bytes);
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int q = lane + 32 * k;
      const int j = q / KT::COL_BLOCKS, blk = q % KT::COL_BLOCKS;
      if (q >= pages * KT::COL_BLOCKS || blk < blk0 || blk >= blk1 ||
          static_cast<uint32_t>(q) % n_cta != cta_rank)
        continue;
      uint8_t* dst = stage + blk * KT::COPY_BLOCK_BYTES;
      uint64_t* bar = &full_bar[s * KT::FULL_BARS + blk];
      const void* tmap = p.kv_tmap;
      if constexpr (KT::kTile) {
        // Column 512 of an fp8_tile row: its scales (the rope comes in sm90::expand_tile).
        const bool scales = blk == 2 * KT::V_HALF;
        dst = scales ? smem + KT::OFF_P1 + s * KT::SCALE_STAGE_BYTES +
                           j * KT::PAGE_SIZE * KT::SCALE_BOX_ROW_BYTES
                     : stage + sm90::raw_v_off<KT>(blk) + j * KT::PAGE_SIZE * KT::BOX_ROW_BYTES;
        bar = &raw_bar[s * 2 + (blk == 2 || blk == 3 ? 1 : 0)];
        if (scales) tmap = p.kv_scale_tmap;
      } else if constexpr (KT::kFp8) {
        dst = blk < 2 * KT::V_HALF ? stage + sm90::raw_v_off<KT>(blk)
                                   : smem + KT::OFF_P1 + s * KT::COPY_BLOCK_BYTES;
        bar = &raw_bar[s * 2 + (blk == 2 || blk == 3 ? 1 : 0)];
      }
      if constexpr (!KT::kTile) dst += j * KT::PAGE_SIZE * KT::BOX_ROW_BYTES;
      const int row = page_of[k] * KT::PAGE_SIZE;
      if (n_cta == 1) {
        ptx::tma_load_2d(dst, tmap, blk * 64, row, bar, kv_policy);
      } else {
        ptx::tma_load_2d_multicast(dst, tmap, blk * 64, row, bar, mcast_mask, kv_policy);
      }
    }
  };
  // This lane's page ids for tile it (copy q = lane + 32k is page q / 9 of the tile), read
  // before the slot waits so the block-table load is off the copy's critical path.
  auto load_pages = [&](int it, int32_t(&page_of)[2]) {
    const int key0 = kv_begin + it * KT::BLOCK_N;
    const int pages = (min(KT::BLOCK_N, seq_len - key0) + KT::PAGE_SIZE - 1) / KT::PAGE_SIZE;
    for (int k = 0; k < 2; ++k) {
      const int q = lane + 32 * k;
      page_of[k] =
          q < pages * KT::COL_BLOCKS ? __ldg(&bt[key0 / KT::PAGE_SIZE + q / KT::COL_BLOCKS]) : 0;
    }
  };
  // All of tile it at once (fp8: when the V-left half is free).
  auto issue_tile = [&](int it) {
    const int s = it % KT::STAGES;
    int32_t page_of[2];
    load_pages(it, page_of);
    issue_copies(it, s, 0, KT::COL_BLOCKS, page_of, &empty_bar[s * KT::EMPTY_BARS],
                 (it / KT::STAGES) & 1);
  };
  // Q's 9 boxes (64 rows x 64 columns each, the row tile's rows; rows past the request's last
  // are zero-filled, rows past the tile's are other rows' Q, computed and never written), ahead
  // of every KV copy of this CTA.
  if (q_by_tma && warp == KT::PRODUCER_WARP && lane == 0) {
    ptx::mbar_arrive_expect_tx(q_bar, KT::COL_BLOCKS * KT::BLOCK_BYTES);
    const int row0 = b * p.rows + row_begin;
    for (int blk = 0; blk < KT::COL_BLOCKS; ++blk) {
      ptx::tma_load_2d(sQ + blk * KT::BLOCK_BYTES, p.q_tmap, blk * 64, row0, q_bar,
                       ptx::l2_policy_evict_last());
    }
  }
  // The group's splits in turn: the next split's copies go out as soon as this one's last
  // tiles free their slots, while the consumers are still writing this one's partial.
  for (int ci = 0; ci < w.split_count; ++ci) {
    begin_split(ci);
    if constexpr (KT::kFp8Math) {
      // fp8 math: the copying warp lands each tile's raw codes (64B-swizzled: the S operand as
      // they are) in its stage as soon as the stage's last tile is free (its S done and its V
      // transposed), and the whole warpgroup transposes each landed tile's V into the stage's V^T
      // buffer (sm90::transpose_v_tile). A raw stage is refilled right after this warpgroup's own
      // reads of it, so tile it + 2's copies go out while the consumers still run tile it's P V.
      const bool copier = warp == KT::PRODUCER_WARP;
      if (copier) {
        for (int it = 0; it < min(n_tiles, KT::STAGES); ++it) issue_tile(it);
      }
      const int dtid = threadIdx.x - KT::PRODUCER_WARP * 32;
      const uint32_t st_addr = ptx::smem_addr(sStage);
      const uint32_t vt_addr = ptx::smem_addr(smem + KT::OFF_VT);
      for (int it = 0; it < n_tiles; ++it) {
        const int s = it % KT::STAGES;
        const uint32_t phase = (it / KT::STAGES) & 1;
        const int valid = min(KT::BLOCK_N, seq_len - kv_begin - it * KT::BLOCK_N);
        const uint32_t raw = st_addr + s * KT::STAGE_BYTES, vt = vt_addr + s * KT::VT_BYTES;
        uint64_t* full = &full_bar[s * KT::FULL_BARS];
        uint64_t* empty = &empty_bar[s * KT::EMPTY_BARS];
        if (valid >= KT::BLOCK_N) {
          sm90::transpose_v_tile<KT, false>(raw, vt, valid, dtid, full, empty + 1, phase);
        } else {
          sm90::transpose_v_tile<KT, true>(raw, vt, valid, dtid, full, empty + 1, phase);
        }
        // The V^T stores are for wgmma (async proxy), and the raw tile's next copy (async proxy)
        // goes over what this thread's loads read: the fence orders both before the arrivals.
        ptx::fence_proxy_async_smem();
        ptx::mbar_arrive(empty);
        ptx::mbar_arrive(&raw_bar[s]);
        if (copier && it + KT::STAGES < n_tiles) issue_tile(it + KT::STAGES);
      }
    } else if constexpr (!KT::kFp8) {
      // One copying warp per half-slot (warp 8 + slot: stage slot & 1, half slot >> 1: V-left =
      // blocks 0..3, V-right + rope = blocks 4..8), each copying its half of the tiles it holds
      // as soon as the slot is free. A pair's t0 always lands its V-left in stage 0 and t1 in
      // stage 1, but the V-right halves alternate by pair (the consumers use the same rule): t0
      // takes the slot freed mid-pair (WG1's P1 V1R of the pair before), so that both of WG0's
      // halves are free about half a pair before its S0 needs them; t1 takes the one freed last.
      // At the kernel's start only tile 0's copies go out before Q is in shared memory (S of
      // tile 0 needs both). Q (72 KB, from the L2) comes by the boxes above or, where its rows
      // are not evenly spaced, by the consumers' plain loads, which queue behind every copy in
      // flight: with both stages' copies (9-19 MB over the GPU) in front, Q took ~6-8 µs on an
      // H200. Holding stage 1 back is faster with the boxes too (measured on an H200).
      const int slot = warp - KT::PRODUCER_WARP;
      const int s = slot & 1, h = slot >> 1;
      bool q_stored = ci > 0;  // waited for (once per CTA, by every producer thread)
      for (int k = 0; 2 * k < n_tiles; ++k) {
        const int it = 2 * k + (h == 0 ? s : static_cast<int>(sm90::right_half_stage(k & 1, s)));
        if (!q_stored && it >= 1) {
          ptx::named_bar_sync_unaligned(kQStoredBar, KT::NUM_THREADS);
          q_stored = true;
        }
        if (it >= n_tiles) continue;
        int32_t page_of[2];
        load_pages(it, page_of);
        issue_copies(it, s, h == 0 ? 0 : KT::V_HALF, h == 0 ? KT::V_HALF : KT::COL_BLOCKS, page_of,
                     &empty_bar[s * KT::EMPTY_BARS + h], k & 1);
      }
      // Warps wait here or in the loop above, by their slot and the split's length: two
      // instructions for one barrier generation, hence the unaligned form.
      if (!q_stored) ptx::named_bar_sync_unaligned(kQStoredBar, KT::NUM_THREADS);
    } else {
      // fp8: the whole warpgroup expands the tiles in turn (sm90::expand_tile),
      // and the copying warp issues tile it's copies before its share of it. Both slots are
      // free at the start; after that, tile it's V-left slot is freed by WG0 once it is done
      // with tile it - 2, which needs nothing of tile it - 1, so the wait cannot deadlock, and
      // it comes about when tile it - 1 has been expanded.
      const bool copier = warp == KT::PRODUCER_WARP;
      if (copier) {
        for (int it = 0; it < min(n_tiles, KT::STAGES); ++it) issue_tile(it);
      }
      const int dtid = threadIdx.x - KT::PRODUCER_WARP * 32;
      const uint32_t st_addr = ptx::smem_addr(sStage);
      const uint32_t aux_addr = ptx::smem_addr(smem + KT::OFF_P1);
      for (int it = 0; it < n_tiles; ++it) {
        const int s = it % KT::STAGES;
        const uint32_t phase = (it / KT::STAGES) & 1;
        if (copier && it >= KT::STAGES) issue_tile(it);
        const int valid = min(KT::BLOCK_N, seq_len - kv_begin - it * KT::BLOCK_N);
        const uint32_t stage = st_addr + s * KT::STAGE_BYTES;
        // fp8: the stage's raw rope codes; fp8_tile: its scales.
        const uint32_t aux =
            aux_addr + s * (KT::kTile ? KT::SCALE_STAGE_BYTES : KT::COPY_BLOCK_BYTES);
        uint64_t* full = &full_bar[s * KT::FULL_BARS];
        uint64_t* empty = &empty_bar[s * KT::EMPTY_BARS];
        // fp8_tile: the tile's rope, one 128B-swizzled box per page (lane j of the copying warp:
        // page j) straight into the stage's rope block, completing its full barrier (count 1).
        // Whole pages, as the codes; this CTA's own copy (the block is freed locally).
        int32_t rope_page = 0;
        const int pages = (valid + KT::PAGE_SIZE - 1) / KT::PAGE_SIZE;
        if constexpr (KT::kTile) {
          if (copier && lane < pages) {
            rope_page = __ldg(&bt[(kv_begin + it * KT::BLOCK_N) / KT::PAGE_SIZE + lane]);
          }
        }
        auto issue_rope = [&] {
          if (!copier) return;
          if (lane == 0) {
            ptx::mbar_arrive_expect_tx(&full[KT::COL_BLOCKS - 1],
                                       pages * KT::PAGE_SIZE * KT::ROPE_BOX_ROW_BYTES);
          }
          __syncwarp();
          if (lane < pages) {
            ptx::tma_load_2d(sStage + s * KT::STAGE_BYTES + KT::ROPE_OFF +
                                 lane * KT::PAGE_SIZE * KT::ROPE_BOX_ROW_BYTES,
                             p.kv_rope_tmap, kFp8TileRopeOffset, rope_page * KT::PAGE_SIZE,
                             &full[KT::COL_BLOCKS - 1], kv_policy);
          }
        };
        if (valid >= KT::BLOCK_N) {
          sm90::expand_tile<KT, false>(stage, aux, valid, dtid, full, &raw_bar[s * 2], empty,
                                       empty + 1, phase, 6, issue_rope);
        } else {
          sm90::expand_tile<KT, true>(stage, aux, valid, dtid, full, &raw_bar[s * 2], empty,
                                      empty + 1, phase, 6, issue_rope);
        }
      }
    }
  }  // splits of the group
}

}  // namespace sm90
}  // namespace mlaspec::attn::cuda
