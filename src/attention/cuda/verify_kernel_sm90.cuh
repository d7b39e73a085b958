// The MLA verify-attention kernel for Hopper (sm_90a): TMA + mbarrier pipeline, warp-specialised
// producer, wgmma for Q K^T and P V. Shared by cuda_fold and cuda_rowwise.
//
// One CTA = one split (a KV range of one request) x one tile of up to 64 query rows.
//   fold:    the request's rows r = i*H + h tiled by 64; the row tiles of one split form a thread-
//            block cluster and every KV tile is fetched from HBM once: each CTA issues the TMA
//            boxes of its share and multicasts them to the whole cluster.
//   rowwise: each query token's H rows tiled by 64, one CTA per tile, no cluster.
// Warpgroup 2 is the producer (one warp issues copies into a 2-stage ring guarded by full/empty
// mbarriers; setmaxnreg hands its registers to the consumers). Warpgroups 0 and 1 consume, WG k
// owning O[:, 256k..256k+255] (wgmma m64n256k16 for P V, V MN-major):
//   bf16 (ping-pong): KV tiles go in pairs (t0, t1) = stages (0, 1). WG0 computes S = Q K^T for
//     all 64 keys of t0 (wgmma m64n64k16), its softmax and P, while WG1 does the same for t1; the
//     running max passes WG0 -> WG1 -> WG0 through shared memory (mbarrier handoffs), and each
//     WG accumulates P0 V0 and P1 V1 into its column half. P of a tile is written over the tile's
//     rope block (columns 512..575: read by Q K^T only, dead once S is computed), so the pair
//     needs no extra shared memory. bf16 stages have one full barrier per column block: Q K^T
//     starts on the first block while the rest of the tile is still landing.
//   fp8 (serial): both WGs compute S for their 32 keys of the tile (wgmma m64n32k16), exchange row
//     maxima, write their half of P to a P tile, then both run P V. (The dequantised bf16 tile
//     leaves no room for a second tile in flight.)
//
// Shared-memory tiles use the 128B-swizzle layout wgmma and TMA agree on: a [64 rows x 576] bf16
// tile is 9 column blocks of [64 rows x 128 B], 16-byte chunk c of row r stored at chunk c ^ (r%8).
// bf16 KV lands that way straight from TMA; fp8 KV arrives as raw rows (bulk copies) and the
// consumers dequantise it (exactly) into the swizzled bf16 tile.
//
// Bitwise contract: a row's arithmetic depends only on key positions (which warpgroup computes
// a tile depends on its position in the split, never on the batch), masked tiles are exact
// no-ops, so fold == rowwise and verify row i == the decode call.
//
// Barrier scopes: waits acquire at CTA scope (consumers read only shared memory, which the copies'
// complete_tx makes visible); bf16 slots are released with relaxed arrivals (their reads were
// wgmma operand reads that wgmma.wait_group already completed). docs/perf/NOTES.md v5-v9.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ptx.cuh"
#include "traits.h"
#include "verify_params.h"

namespace mlaspec::attn::cuda {

template <typename KvT, int PAGE_SIZE_>
struct Sm90Traits {
  using Kv = KvT;  // uint16_t: bf16 bits; uint8_t: fp8 e4m3 codes
  static constexpr bool kFp8 = sizeof(KvT) == 1;
  static constexpr int PAGE_SIZE = PAGE_SIZE_;
  static constexpr int D_QK = CommonTraits::kHeadDimQK;
  static constexpr int D_V = CommonTraits::kHeadDimV;
  static constexpr int BLOCK_M = 64;  // query rows per CTA = wgmma M
  static constexpr int BLOCK_N = 64;  // KV tokens per stage
  static constexpr int STAGES = 2;
  static constexpr int NUM_CONSUMER_WARPS = 8;
  static constexpr int NUM_CONSUMER_THREADS = NUM_CONSUMER_WARPS * 32;
  static constexpr int PRODUCER_WARP = NUM_CONSUMER_WARPS;
  static constexpr int NUM_THREADS = NUM_CONSUMER_THREADS + 128;
  static constexpr int PRODUCER_REGS = 40;
  static constexpr int CONSUMER_REGS = 232;

  static constexpr int COL_BLOCKS = D_QK / 64;       // 9 blocks of 64 bf16 = 128 B
  static constexpr int BLOCK_BYTES = BLOCK_M * 128;  // one [64 x 128 B] swizzled block
  static constexpr int TILE_BYTES = COL_BLOCKS * BLOCK_BYTES;
  static constexpr int RAW_ROW_BYTES = D_QK;  // fp8 raw rows, unpadded
  static constexpr int SEG_ROWS = 8;          // fp8 rows per bulk copy
  static constexpr int GLOBAL_ROW_BYTES = D_QK * static_cast<int>(sizeof(KvT));

  static constexpr int Q_BYTES = TILE_BYTES;
  static constexpr int STAGE_BYTES = kFp8 ? BLOCK_N * RAW_ROW_BYTES : TILE_BYTES;
  static constexpr int KVBF_BYTES = kFp8 ? TILE_BYTES : 0;
  // fp8: 64 rows x 64 keys bf16, swizzled. bf16 keeps P in the stage's rope block (ROPE_OFF).
  static constexpr int P_BYTES = kFp8 ? BLOCK_BYTES : 0;
  static constexpr int ROPE_OFF = (COL_BLOCKS - 1) * BLOCK_BYTES;
  // fp8: per-row floats [2][64] each, max exchange (RED_MAX) and denominator shares (RED_L).
  // bf16: the ping-pong handoff slots, float4 {running max, rescale factor, row sum of P, -}
  // [2][64] from the start of the area, then the final denominator [64] (RED_LF floats in).
  static constexpr int RED_MAX = 0, RED_L = 2 * BLOCK_M, RED_LF = 2 * BLOCK_M * 4;
  static constexpr int RED_BYTES = kFp8 ? 4 * BLOCK_M * 4 : 2 * BLOCK_M * 16 + BLOCK_M * 4;
  // Full barriers per stage: bf16 one per column block (TMA boxes land block by block), fp8 one.
  static constexpr int FULL_BARS = kFp8 ? 1 : COL_BLOCKS;

  static constexpr int OFF_Q = 0;
  static constexpr int OFF_STAGE = OFF_Q + Q_BYTES;
  static constexpr int OFF_KVBF = OFF_STAGE + STAGES * STAGE_BYTES;
  static constexpr int OFF_P = OFF_KVBF + KVBF_BYTES;
  static constexpr int OFF_RED = OFF_P + P_BYTES;
  static constexpr int OFF_BAR = OFF_RED + RED_BYTES;
  // +1024: the dynamic shared-memory base is aligned up to 1024 B at run time (swizzle atoms).
  // Barriers: full [STAGES][FULL_BARS], empty [STAGES], bf16 handoffs [3].
  static constexpr int NUM_BARS = STAGES * FULL_BARS + STAGES + 3;
  static constexpr int SMEM_BYTES = OFF_BAR + NUM_BARS * 8 + 1024;

  static_assert(SMEM_BYTES <= 227 * 1024, "verify kernel exceeds Hopper's 227 KB per block");
  static_assert(OFF_STAGE % 1024 == 0 && STAGE_BYTES % 1024 == 0 && OFF_KVBF % 1024 == 0 &&
                    OFF_P % 1024 == 0,
                "128B-swizzled tiles must start on 1024-byte boundaries");
  static_assert(PAGE_SIZE > 0 && (PAGE_SIZE & (PAGE_SIZE - 1)) == 0 &&
                    ((CommonTraits::kPageSizeMask >> __builtin_ctz(PAGE_SIZE)) & 1) == 1,
                "page size not in CommonTraits::kPageSizeMask");
  static_assert(BLOCK_N % PAGE_SIZE == 0 && PAGE_SIZE % SEG_ROWS == 0 && PAGE_SIZE <= 256,
                "a KV tile covers whole pages; a TMA box is one page (<= 256 rows)");
  static_assert(D_QK % 64 == 0 && D_V == 512, "9 column blocks for Q K^T; 2 x 256 columns for P V");
  static_assert(D_QK - D_V == 64 && BLOCK_N * 2 == 128,
                "P (64 rows x 64 keys bf16) must fit the rope block it overwrites");
  static_assert(STAGES == 2, "the bf16 ping-pong maps a tile pair onto stages 0 and 1");
  static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * NUM_CONSUMER_THREADS <= 65536);
  static_assert(CommonTraits::kMaxSeqLen <= (int64_t{1} << 30), "key positions are int32");
};

namespace sm90 {

// Byte offset of 16-byte chunk `chunk` (0..7) of row `row` inside a 128B-swizzled block.
__device__ __forceinline__ uint32_t sw128(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

__device__ __forceinline__ int find_request(const SplitPlan& plan, int batch, int split_global) {
  int lo = 0, hi = batch - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (plan.split_begin[mid] <= split_global) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

__device__ __forceinline__ void tile_rows(const VerifyParams& p, int tile, int* begin, int* end) {
  if (tile >= p.row_tiles) {
    *begin = *end = 0;
  } else if (!p.rowwise) {
    *begin = tile * 64;
    *end = min(p.rows, *begin + 64);
  } else {
    const int token = tile / p.tiles_per_token;
    const int head0 = (tile % p.tiles_per_token) * 64;
    *begin = token * p.num_heads + head0;
    *end = token * p.num_heads + min(p.num_heads, head0 + 64);
  }
}

// Releases a bf16 stage to the producers of every CTA in the cluster: one arrival per consumer
// warp, after the warp's wgmma reads of it completed (wgmma_wait), so a relaxed arrival suffices.
__device__ __forceinline__ void release_stage(uint64_t* empty_bar, uint32_t n_cta, int lane) {
  __syncwarp();
  if (lane == 0) {
    for (uint32_t r = 0; r < n_cta; ++r) ptx::mbar_arrive_cluster</*kRelease=*/false>(empty_bar, r);
  }
}

// S[64 rows x 64 keys] = Q K^T over the 9 column blocks of a bf16 stage, each block's wgmmas
// issued as soon as its TMA boxes have landed (full[blk], phase). Committed as one group.
template <typename KT>
__device__ __forceinline__ void issue_qk64(float (&sf)[32], uint32_t sQ_addr, uint32_t sK_addr,
                                           uint64_t* full, uint32_t phase) {
  const uint64_t desc_q = ptx::gmma_desc_sw128(sQ_addr, 16, 1024);
  const uint64_t desc_k = ptx::gmma_desc_sw128(sK_addr, 16, 1024);
#pragma unroll
  for (int blk = 0; blk < KT::COL_BLOCKS; ++blk) {
    ptx::mbar_wait(&full[blk], phase);
    // After the wait loop (control flow) the accumulators must be fenced again; ptxas would
    // otherwise insert the same fence itself (C7519).
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      // 32-byte step inside the 128-byte swizzled row (descriptor units of 16 B).
      const uint64_t off = static_cast<uint64_t>((blk * KT::BLOCK_BYTES + kk * 32) >> 4);
      ptx::wgmma_m64n64k16_ss(sf, desc_q + off, desc_k + off, (blk | kk) != 0 ? 1 : 0);
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
    ptx::wgmma_m64n256k16_ss_tb(acc, desc_p + ((kk * 32) >> 4), desc_v + ((kk * 16 * 128) >> 4), 1);
  }
  ptx::wgmma_commit();
}

// Online softmax over one tile, in two steps so that the fp8 path can exchange row maxima between
// its warpgroups in between. This thread holds rows r_loc[0..1] and keys key0 + 8j + 2t + {0,1},
// j < NJ (sf[4j + e]: row e >> 1, key + (e & 1)).
// Step 1: masks keys past each row's last visible key, scales to the log2 domain in place, and
// returns the rows' maxima over these keys (reduced over the row's 4 threads).
template <int NJ>
__device__ __forceinline__ void mask_rowmax(float (&sf)[4 * NJ], int key0, int t,
                                            const int (&vis)[2], float score_scale_log2,
                                            float (&mx)[2]) {
  mx[0] = mx[1] = -INFINITY;
#pragma unroll
  for (int j = 0; j < NJ; ++j) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = key0 + j * 8 + 2 * t + (e & 1);
      const float x = key <= vis[e >> 1] ? sf[4 * j + e] * score_scale_log2 : -INFINITY;
      sf[4 * j + e] = x;
      mx[e >> 1] = fmaxf(mx[e >> 1], x);
    }
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 1));
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 2));
  }
}

// Step 2: with the tile's row maxima m_tile, turns S into P = 2^(s - m_new) in place. m: the
// running max before the tile on entry, after it on return; scale: 2^(m_old - m_new), exactly 1
// when the max did not move (masked tiles are exact no-ops); sum: the rows' sums of P over these
// keys, reduced over the row's 4 threads in a fixed order.
template <int NJ>
__device__ __forceinline__ void exp_rows(float (&sf)[4 * NJ], const float (&m_tile)[2],
                                         float (&m)[2], float (&scale)[2], float (&sum)[2]) {
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const float m_new = fmaxf(m[k], m_tile[k]);
    // A row that has seen no key yet keeps m = -inf: subtract 0 so p = ex2(-inf) = 0, not NaN.
    const float m_use = m_new == -INFINITY ? 0.f : m_new;
    scale[k] = m[k] == m_new ? 1.f : ptx::ex2(m[k] - m_use);
    m[k] = m_new;
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < NJ; ++j) {
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

// Both steps for a 64-key tile held by one warpgroup (bf16 ping-pong).
__device__ __forceinline__ void softmax_tile64(float (&sf)[32], int key0, int t,
                                               const int (&vis)[2], float score_scale_log2,
                                               float (&m)[2], float (&scale)[2], float (&sum)[2]) {
  float mx[2];
  mask_rowmax<8>(sf, key0, t, vis, score_scale_log2, mx);
  exp_rows<8>(sf, mx, m, scale, sum);
}

// P (bf16) of NJ x 8 keys -> 16-byte chunks chunk0.. of the rows of a swizzled [64 x 128 B]
// block (bf16: the whole block; fp8: each warpgroup's half), then the fence that lets wgmma
// read it.
template <int NJ>
__device__ __forceinline__ void store_p(uint8_t* sP, const float (&sf)[4 * NJ], const int (&r_loc)[2],
                                        int t, int chunk0) {
#pragma unroll
  for (int j = 0; j < NJ; ++j) {
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      *reinterpret_cast<uint32_t*>(sP + sw128(r_loc[k], chunk0 + j) + t * 4) =
          ptx::pack_bf16x2(sf[4 * j + 2 * k], sf[4 * j + 2 * k + 1]);
    }
  }
  ptx::fence_proxy_async_smem();
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

// The last tile of a split may end inside a page: rows valid..63 hold whatever the page held (or
// nothing) and must be zero before P V reads them (0 * NaN is NaN). Run by the warpgroup that
// owns the tile (128 threads, named barrier `bar`) before its Q K^T; the other warpgroup reads the
// tile only after the P handoff that follows.
template <typename KT>
__device__ __forceinline__ void zero_tail_rows(uint8_t* stage, uint64_t* full, uint32_t phase,
                                               int valid, int wg_tid, uint32_t bar) {
  for (int blk = 0; blk < KT::COL_BLOCKS; ++blk) ptx::mbar_wait(&full[blk], phase);
  constexpr int CHUNKS = KT::COL_BLOCKS * 8;
  for (int c = wg_tid; c < (KT::BLOCK_N - valid) * CHUNKS; c += 128) {
    const int row = valid + c / CHUNKS, col = c % CHUNKS;
    *reinterpret_cast<uint4*>(stage + (col >> 3) * KT::BLOCK_BYTES + row * 128 + (col & 7) * 16) =
        make_uint4(0, 0, 0, 0);
  }
  ptx::fence_proxy_async_smem();
  ptx::named_bar_sync(bar, 128);
}

}  // namespace sm90

template <typename KT>
__global__ void __launch_bounds__(KT::NUM_THREADS, 1)
    verify_kernel_sm90(const __grid_constant__ VerifyParams p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) &
                                             ~static_cast<uintptr_t>(1023));
  uint8_t* sQ = smem + KT::OFF_Q;
  uint8_t* sStage = smem + KT::OFF_STAGE;
  uint8_t* sP = smem + KT::OFF_P;
  float* sRed = reinterpret_cast<float*>(smem + KT::OFF_RED);
  uint64_t* full_bar = reinterpret_cast<uint64_t*>(smem + KT::OFF_BAR);  // [STAGES][FULL_BARS]
  uint64_t* empty_bar = full_bar + KT::STAGES * KT::FULL_BARS;
  // bf16 ping-pong handoffs: [0] WG0 -> WG1 per pair, [1] WG1 -> WG0 per pair, [2] WG0 -> WG1
  // once, the final denominator (its own barrier: after a last pair without t1, WG0 has nothing
  // to wait for, so a second arrive on [0] could complete a phase WG1 has not waited for yet).
  uint64_t* hand_bar = empty_bar + KT::STAGES;

  // Broadcast from lane 0 so the compiler knows it is warp-uniform: wgmma issued under a branch
  // on it would otherwise be serialised (ptxas C7518/C7520).
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 32), 0);
  const int lane = threadIdx.x % 32;
  const uint32_t cta_rank = ptx::cluster_ctarank();
  const uint32_t n_cta = ptx::cluster_nctarank();

  // ---- work item ----
  const int split_global = blockIdx.x;
  const int b = sm90::find_request(p.plan, p.batch, split_global);
  const int split = split_global - p.plan.split_begin[b];
  const int n_splits = p.plan.split_begin[b + 1] - p.plan.split_begin[b];
  const int seq_len = p.seq_lens[b];
  const int first_visible = seq_len - p.q_len;  // token i sees keys [0, first_visible + i]

  int row_begin, row_end;
  sm90::tile_rows(p, blockIdx.y, &row_begin, &row_end);
  // All CTAs of a cluster walk the same tiles (they share each multicast tile): the loop bound
  // comes from the cluster's last row, the one that sees the most keys.
  int cluster_row_end;
  {
    const int last_tile = min(static_cast<int>(blockIdx.y - cta_rank + n_cta), p.row_tiles) - 1;
    int b0, e0;
    sm90::tile_rows(p, last_tile, &b0, &e0);
    cluster_row_end = max(e0, row_end);
  }
  // A DCP rank computes every split_step-th global split (verify_params.h).
  const int split_step = p.plan.split_step > 1 ? p.plan.split_step : 1;
  const int kv_begin = (split * split_step + p.plan.split_first) * p.plan.chunk;
  // The last split of a request runs to seq_len, whatever the plan: the plan is made on the host
  // from the seq_lens of the call, and a CUDA graph replays it with the seq_lens then in device
  // memory. A request that has grown since capture is then still computed whole (its last split
  // does more work) instead of silently losing its newest keys. In an eager call the plan covers
  // seq_len exactly and this is the same bound.
  // (Not for DCP ranks: their last local split is not the request's last.)
  const bool open_ended = split == n_splits - 1 && split_step == 1 && !p.plan.partials_only;
  const int kv_end_split = open_ended ? seq_len : min(kv_begin + p.plan.chunk, seq_len);
  const int kv_end_visible =
      min(kv_end_split, first_visible + (cluster_row_end - 1) / p.num_heads + 1);
  const int n_tiles =
      kv_end_visible > kv_begin ? (kv_end_visible - kv_begin + KT::BLOCK_N - 1) / KT::BLOCK_N : 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < KT::STAGES; ++s) {
      for (int blk = 0; blk < KT::FULL_BARS; ++blk)
        ptx::mbar_init(&full_bar[s * KT::FULL_BARS + blk], 1);
      // bf16: one arrival per consumer warp (its reads are wgmma's, complete at wait_group);
      // fp8: one per consumer thread, since each thread's own generic reads of the raw stage are
      // what the release must order.
      ptx::mbar_init(&empty_bar[s],
                     n_cta * (KT::kFp8 ? KT::NUM_CONSUMER_THREADS : KT::NUM_CONSUMER_WARPS));
    }
    // Every thread of the handing-over warpgroup arrives (each releases its own writes).
    for (int h = 0; h < 3; ++h) ptx::mbar_init(&hand_bar[h], 128);
    ptx::fence_mbar_init();
  }
  // Peers multicast into this CTA's stages and arrive on its barriers: they must see the inits.
  ptx::cluster_sync();

  if (warp >= KT::PRODUCER_WARP) {
    // ---------------------------------------------------------------- producer warpgroup
    ptx::setmaxnreg_dec<KT::PRODUCER_REGS>();
    const int32_t* bt = p.block_table + static_cast<int64_t>(b) * p.bt_stride;
    const uint16_t mcast_mask = static_cast<uint16_t>((1u << n_cta) - 1u);
    for (int it = 0; it < (warp == KT::PRODUCER_WARP ? n_tiles : 0); ++it) {
      const int s = it % KT::STAGES;
      const uint32_t phase = (it / KT::STAGES) & 1;
      const int key0 = kv_begin + it * KT::BLOCK_N;
      const int valid = min(KT::BLOCK_N, seq_len - key0);
      uint8_t* stage = sStage + s * KT::STAGE_BYTES;
      // This lane's page ids for the tile, read before the slot wait so the block-table load is
      // off the copy's critical path. bf16: copy q = lane + 32k is page (q / 9) of the tile; fp8:
      // segment lane (8 rows) lies in one page.
      int32_t page_of[2] = {0, 0};
      if constexpr (!KT::kFp8) {
        const int pages = (valid + KT::PAGE_SIZE - 1) / KT::PAGE_SIZE;
        for (int k = 0; k < 2; ++k) {
          const int q = lane + 32 * k;
          if (q < pages * KT::COL_BLOCKS)
            page_of[k] = __ldg(&bt[key0 / KT::PAGE_SIZE + q / KT::COL_BLOCKS]);
        }
      } else {
        if (lane * KT::SEG_ROWS < valid)
          page_of[0] = __ldg(&bt[(key0 + lane * KT::SEG_ROWS) / KT::PAGE_SIZE]);
      }
      // Every consumer warp of every CTA in the cluster must have released this slot.
      ptx::mbar_wait(&empty_bar[s], phase ^ 1);
      if constexpr (!KT::kFp8) {
        // Whole pages only (a page past seq_len may not exist); rows of the last page past
        // seq_len arrive too and are zeroed by the consumers.
        const int pages = (valid + KT::PAGE_SIZE - 1) / KT::PAGE_SIZE;
        static_assert(KT::kFp8 || (KT::BLOCK_N / KT::PAGE_SIZE) * KT::COL_BLOCKS <= 64,
                      "two copies per producer lane");
        if (lane < KT::COL_BLOCKS) {
          // Every CTA of the cluster receives every box of the block (multicast).
          ptx::mbar_arrive_expect_tx(&full_bar[s * KT::FULL_BARS + lane],
                                     pages * KT::PAGE_SIZE * 128);
        }
        __syncwarp();
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const int q = lane + 32 * k;
          if (q >= pages * KT::COL_BLOCKS || static_cast<uint32_t>(q) % n_cta != cta_rank) continue;
          const int j = q / KT::COL_BLOCKS, blk = q % KT::COL_BLOCKS;
          const int page = page_of[k];
          uint8_t* dst = stage + blk * KT::BLOCK_BYTES + j * KT::PAGE_SIZE * 128;
          uint64_t* bar = &full_bar[s * KT::FULL_BARS + blk];
          if (n_cta == 1) {
            ptx::tma_load_2d(dst, p.kv_tmap, blk * 64, page * KT::PAGE_SIZE, bar);
          } else {
            ptx::tma_load_2d_multicast(dst, p.kv_tmap, blk * 64, page * KT::PAGE_SIZE, bar,
                                       mcast_mask);
          }
        }
      } else {
        const auto* kv = static_cast<const uint8_t*>(p.kv);
        if (lane == 0) ptx::mbar_arrive_expect_tx(&full_bar[s], valid * KT::GLOBAL_ROW_BYTES);
        __syncwarp();
        static_assert(KT::BLOCK_N / KT::SEG_ROWS <= 32, "one segment per producer lane");
        const int seg = lane, r0 = seg * KT::SEG_ROWS;
        if (r0 < valid && static_cast<uint32_t>(seg) % n_cta == cta_rank) {
          const int nr = min(KT::SEG_ROWS, valid - r0);
          const int key = key0 + r0;
          const int64_t page = page_of[0];
          const uint8_t* src = kv + (page * KT::PAGE_SIZE + key % KT::PAGE_SIZE) * KT::D_QK;
          const uint32_t bytes = nr * KT::GLOBAL_ROW_BYTES;
          if (n_cta == 1) {
            ptx::bulk_copy_g2s(stage + r0 * KT::RAW_ROW_BYTES, src, bytes, &full_bar[s]);
          } else {
            ptx::bulk_copy_g2s_multicast(stage + r0 * KT::RAW_ROW_BYTES, src, bytes, &full_bar[s],
                                         mcast_mask);
          }
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumer warpgroups
    ptx::setmaxnreg_inc<KT::CONSUMER_REGS>();
    const int tid = threadIdx.x;
    const int rg = warp & 3;   // rows 16*rg.. of the wgmma M=64 (warp rank in its warpgroup)
    const int kh = warp >> 2;  // warpgroup: key half of S, column half of O
    const int g = lane >> 2, t = lane & 3;
    const int r_loc[2] = {rg * 16 + g, rg * 16 + g + 8};

    // Q rows -> sQ (swizzled); rows past the tile are zero and never written back.
    {
      const auto* q = static_cast<const uint16_t*>(p.q);
      constexpr int CHUNKS_PER_ROW = KT::D_QK / 8;
      constexpr int PER_THREAD = KT::BLOCK_M * CHUNKS_PER_ROW / KT::NUM_CONSUMER_THREADS;  // 18
      constexpr int BATCH = 9;  // loads in flight per thread before their stores
      static_assert(PER_THREAD % BATCH == 0);
#pragma unroll
      for (int b0 = 0; b0 < PER_THREAD; b0 += BATCH) {
        uint4 v[BATCH];
#pragma unroll
        for (int k = 0; k < BATCH; ++k) {
          const int c = tid + (b0 + k) * KT::NUM_CONSUMER_THREADS;
          const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
          const int r = row_begin + row;
          v[k] = make_uint4(0, 0, 0, 0);
          if (r < row_end) {
            const int i = r / p.num_heads, h = r % p.num_heads;
            const uint16_t* src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
            v[k] = __ldg(reinterpret_cast<const uint4*>(src) + col);
          }
        }
#pragma unroll
        for (int k = 0; k < BATCH; ++k) {
          const int c = tid + (b0 + k) * KT::NUM_CONSUMER_THREADS;
          const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
          *reinterpret_cast<uint4*>(sQ + (col >> 3) * KT::BLOCK_BYTES + sm90::sw128(row, col & 7)) =
              v[k];
        }
      }
      // Generic-proxy writes that wgmma (async proxy) reads next.
      ptx::fence_proxy_async_smem();
    }

    int vis[2];
    for (int k = 0; k < 2; ++k) {
      const int r = row_begin + r_loc[k];
      vis[k] = r < row_end ? first_visible + r / p.num_heads : seq_len - 1;
    }

    float acc[128];  // O[rows, 256*kh + 8n + 2t + (e&1)], row g + 8*(e>>1): acc[4n + e]
#pragma unroll
    for (int n = 0; n < 128; ++n) acc[n] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};  // running max of scores, log2 domain
    float l_run[2] = {0.f, 0.f};  // denominator (fp8: this warpgroup's share; bf16: WG0's total)
    // Both WGs hold the same m_run after every tile (fp8: exchanged maxima; bf16: handed over).

    ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);  // sQ complete

    const uint32_t sQ_addr = ptx::smem_addr(sQ);

    if constexpr (KT::kFp8) {
      // ------------------------------------------------ fp8: serial, keys split between the WGs
      const uint32_t sP_addr = ptx::smem_addr(sP);
      uint8_t* sKV = smem + KT::OFF_KVBF;
      const uint32_t sK_addr = ptx::smem_addr(sKV);
      for (int it = 0; it < n_tiles; ++it) {
        const int s = it % KT::STAGES;
        const uint32_t phase = (it / KT::STAGES) & 1;
        const int key0 = kv_begin + it * KT::BLOCK_N;
        const int valid = min(KT::BLOCK_N, seq_len - key0);
        ptx::mbar_wait(&full_bar[s], phase);
        const uint8_t* stage = sStage + s * KT::STAGE_BYTES;

        // Dequantise codes -> swizzled bf16 (exact; kv_scale is folded into the score and output
        // scales). Rows past seq_len were never copied: zero them (0 * NaN would be NaN in P V).
        ptx::named_bar_sync(1,
                            KT::NUM_CONSUMER_THREADS);  // previous tile's wgmma reads of sKV done
        constexpr int CHUNKS_PER_ROW = KT::D_QK / 16;   // 16 codes -> two 16-byte bf16 chunks
        for (int c = tid; c < KT::BLOCK_N * CHUNKS_PER_ROW; c += KT::NUM_CONSUMER_THREADS) {
          const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
          uint4 lo = make_uint4(0, 0, 0, 0), hi = make_uint4(0, 0, 0, 0);
          if (row < valid) {
            const uint4 raw =
                *reinterpret_cast<const uint4*>(stage + row * KT::RAW_ROW_BYTES + col * 16);
            const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
            uint32_t o[8];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              o[2 * k] = ptx::fp8x2_to_bf16x2(static_cast<uint16_t>(w[k] & 0xffffu));
              o[2 * k + 1] = ptx::fp8x2_to_bf16x2(static_cast<uint16_t>(w[k] >> 16));
            }
            lo = make_uint4(o[0], o[1], o[2], o[3]);
            hi = make_uint4(o[4], o[5], o[6], o[7]);
          }
          // 16 codes = bf16 chunks 2*col, 2*col+1 of the row = chunks (2col)%8, +1 of block col/4.
          uint8_t* blk = sKV + (col >> 2) * KT::BLOCK_BYTES;
          *reinterpret_cast<uint4*>(blk + sm90::sw128(row, (2 * col) & 7)) = lo;
          *reinterpret_cast<uint4*>(blk + sm90::sw128(row, (2 * col + 1) & 7)) = hi;
        }
        ptx::fence_proxy_async_smem();
        // The raw slot is free once converted: release it early so the next copy overlaps.
        for (uint32_t r = 0; r < n_cta; ++r)
          ptx::mbar_arrive_cluster</*kRelease=*/true>(&empty_bar[s], r);
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

        // ---- S = Q K^T: all 64 rows, keys 32*kh.. (wgmma m64n32k16 x 36) ----
        float sf[16];
        {
          const uint64_t desc_q = ptx::gmma_desc_sw128(sQ_addr, 16, 1024);
          const uint64_t desc_k = ptx::gmma_desc_sw128(sK_addr + kh * 32 * 128, 16, 1024);
          ptx::wgmma_fence();
#pragma unroll
          for (int ks = 0; ks < KT::D_QK / 16; ++ks) {
            const uint64_t off =
                static_cast<uint64_t>(((ks >> 2) * KT::BLOCK_BYTES + (ks & 3) * 32) >> 4);
            ptx::wgmma_m64n32k16_ss(sf, desc_q + off, desc_k + off, ks > 0 ? 1 : 0);
          }
          ptx::wgmma_commit();
          ptx::wgmma_wait<0>();
        }

        // ---- mask, scale to log2 domain, row max over this warpgroup's 32 keys ----
        float mx[2];
        sm90::mask_rowmax<4>(sf, key0 + kh * 32, t, vis, p.score_scale_log2, mx);
        if (t == 0) {
          sRed[KT::RED_MAX + kh * 64 + r_loc[0]] = mx[0];
          sRed[KT::RED_MAX + kh * 64 + r_loc[1]] = mx[1];
        }
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

        // ---- online softmax update with the tile's max over both halves ----
        float scale[2], sum[2];
        for (int k = 0; k < 2; ++k) {
          mx[k] = fmaxf(sRed[KT::RED_MAX + r_loc[k]], sRed[KT::RED_MAX + 64 + r_loc[k]]);
        }
        sm90::exp_rows<4>(sf, mx, m_run, scale, sum);
        for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * scale[k] + sum[k];

          // ---- P (bf16) -> this warpgroup's 32 keys of sP (one swizzled [64 x 128 B] block) ----
        sm90::store_p<4>(sP, sf, r_loc, t, kh * 4);
        sm90::rescale_acc(acc, scale);
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

        // ---- O[:, 256*kh..] += P V (wgmma m64n256k16 x 4, V MN-major) ----
        sm90::issue_pv<KT>(acc, sP_addr, sK_addr + kh * 4 * KT::BLOCK_BYTES);
        ptx::wgmma_wait<0>();
      }
    } else {
      // ------------------------------------------------ bf16: ping-pong over tile pairs
      // Handoffs (mbarriers, all 128 threads of the handing WG arrive; phase j for pair j):
      // hand[0] = WG0's tile t0 done (P0 in stage 0's rope block; the running max, rescale
      // factor and row sums of P in sRed slot 0), hand[1] = WG1's tile t1 done (slot 1). Each WG
      // reads the other's slot before its own next arrive, so one slot per tile of the pair
      // suffices. WG0 keeps the denominator (l = l * scale + sum, tile after tile, with WG1's
      // sums handed over) and hands the total to WG1 after the last pair (hand[2]).
      float4* sHand = reinterpret_cast<float4*>(sRed);  // [2][64] {m, scale, sum, unused}
      uint8_t* stage0 = sStage;
      uint8_t* stage1 = sStage + KT::STAGE_BYTES;
      const uint32_t st0 = ptx::smem_addr(stage0), st1 = ptx::smem_addr(stage1);
      uint64_t* full0 = &full_bar[0];
      uint64_t* full1 = &full_bar[KT::FULL_BARS];
      const int wg_tid = tid & 127;
      for (int t0 = 0; t0 < n_tiles; t0 += 2) {
        const bool has1 = t0 + 1 < n_tiles;
        const uint32_t ph = (t0 >> 1) & 1;  // stage phase = handoff phase = pair parity
        const int key0 = kv_begin + t0 * KT::BLOCK_N;
        float sf[32], sc[2], sum[2];
        if (kh == 0) {
          if (t0 > 0) {
            ptx::wgmma_wait<0>();  // this WG's P1 V1 of the previous pair
            sm90::release_stage(&empty_bar[1], n_cta, lane);
          }
          const int valid = min(KT::BLOCK_N, seq_len - key0);
          if (valid < KT::BLOCK_N) sm90::zero_tail_rows<KT>(stage0, full0, ph, valid, wg_tid, 4);
          sm90::issue_qk64<KT>(sf, sQ_addr, st0, full0, ph);
          ptx::wgmma_wait<0>();
          sm90::softmax_tile64(sf, key0, t, vis, p.score_scale_log2, m_run, sc, sum);
          sm90::store_p<8>(stage0 + KT::ROPE_OFF, sf, r_loc, t, 0);
          if (t == 0) {
            for (int k = 0; k < 2; ++k) sHand[r_loc[k]] = make_float4(m_run[k], sc[k], sum[k], 0.f);
          }
          ptx::mbar_arrive(&hand_bar[0]);
          sm90::rescale_acc(acc, sc);
          for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * sc[k] + sum[k];
          sm90::issue_pv<KT>(acc, st0 + KT::ROPE_OFF, st0);
          if (has1) {
            ptx::mbar_wait(&hand_bar[1], ph);
            for (int k = 0; k < 2; ++k) {
              const float4 h = sHand[64 + r_loc[k]];
              m_run[k] = h.x;
              sc[k] = h.y;
              sum[k] = h.z;
            }
            ptx::wgmma_wait<0>();
            sm90::release_stage(&empty_bar[0], n_cta, lane);
            sm90::rescale_acc(acc, sc);
            for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * sc[k] + sum[k];
            // V columns 0..255 of t1 (WG1 saw them land; this thread's own wait orders its reads).
            for (int blk = 0; blk < 4; ++blk) ptx::mbar_wait(&full1[blk], ph);
            sm90::issue_pv<KT>(acc, st1 + KT::ROPE_OFF, st1);
          } else {
            ptx::wgmma_wait<0>();
            sm90::release_stage(&empty_bar[0], n_cta, lane);
          }
        } else {
          if (has1) {
            const int valid = min(KT::BLOCK_N, seq_len - key0 - KT::BLOCK_N);
            if (valid < KT::BLOCK_N) sm90::zero_tail_rows<KT>(stage1, full1, ph, valid, wg_tid, 5);
            sm90::issue_qk64<KT>(sf, sQ_addr, st1, full1, ph);
          }
          ptx::mbar_wait(&hand_bar[0], ph);
          for (int k = 0; k < 2; ++k) m_run[k] = sHand[r_loc[k]].x;
          ptx::wgmma_wait<0>();  // S of t1
          if (has1) {
            // Softmax of t1 runs while WG0's P0 V0 occupies the tensor cores. (It must not run
            // under this WG's own P V: ptxas serialises every wgmma when registers that a wgmma
            // accumulated into are rewritten while another wgmma is in flight, C7515.)
            sm90::softmax_tile64(sf, key0 + KT::BLOCK_N, t, vis, p.score_scale_log2, m_run, sc,
                                 sum);
            sm90::store_p<8>(stage1 + KT::ROPE_OFF, sf, r_loc, t, 0);
            if (t == 0) {
              for (int k = 0; k < 2; ++k)
                sHand[64 + r_loc[k]] = make_float4(m_run[k], sc[k], sum[k], 0.f);
            }
          }
          // The rest of slot 0, read before this WG's arrive below (WG0 rewrites it after that).
          float sc0[2];
          for (int k = 0; k < 2; ++k) sc0[k] = sHand[r_loc[k]].y;
          if (has1) ptx::mbar_arrive(&hand_bar[1]);
          sm90::rescale_acc(acc, sc0);
          for (int blk = 4; blk < 8; ++blk) ptx::mbar_wait(&full0[blk], ph);
          sm90::issue_pv<KT>(acc, st0 + KT::ROPE_OFF, st0 + 4 * KT::BLOCK_BYTES);
          ptx::wgmma_wait<0>();
          sm90::release_stage(&empty_bar[0], n_cta, lane);
          if (has1) {
            sm90::rescale_acc(acc, sc);
            sm90::issue_pv<KT>(acc, st1 + KT::ROPE_OFF, st1 + 4 * KT::BLOCK_BYTES);
            // Stage 1 must be free before the next pair's t1 can land in it.
            ptx::wgmma_wait<0>();
            sm90::release_stage(&empty_bar[1], n_cta, lane);
          }
        }
      }
      ptx::wgmma_wait<0>();  // WG0's P1 V1 of the last pair
      if (kh == 0 && n_tiles > 0 && n_tiles % 2 == 0)
        sm90::release_stage(&empty_bar[1], n_cta, lane);
      float* sLf = sRed + KT::RED_LF;
      if (kh == 0) {
        if (t == 0) {
          for (int k = 0; k < 2; ++k) sLf[r_loc[k]] = l_run[k];
        }
        ptx::mbar_arrive(&hand_bar[2]);
      } else {
        ptx::mbar_wait(&hand_bar[2], 0);
        for (int k = 0; k < 2; ++k) l_run[k] = sLf[r_loc[k]];
      }
    }

    // ---- epilogue: the total denominator (fp8: both warpgroups' shares, in a fixed order) ----
    float l_tot[2] = {l_run[0], l_run[1]};
    if constexpr (KT::kFp8) {
      float* sL = sRed + KT::RED_L;
      if (t == 0) {
        sL[kh * 64 + r_loc[0]] = l_run[0];
        sL[kh * 64 + r_loc[1]] = l_run[1];
      }
      ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);
      for (int k = 0; k < 2; ++k) l_tot[k] = sL[r_loc[k]] + sL[64 + r_loc[k]];
    }

    const bool direct = n_splits == 1 && !p.plan.partials_only;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int r = row_begin + r_loc[k];
      if (r >= row_end) continue;
      const float l = l_tot[k];
      // A row with no visible key in this split is the merge's neutral element: o = 0, lse = -inf.
      const float inv = l > 0.f ? p.out_scale / l : 0.f;
      const float lse = l > 0.f ? (m_run[k] + log2f(l)) * 0.69314718055994530942f : -INFINITY;
      const int i = r / p.num_heads, h = r % p.num_heads;
      if (direct) {
        auto* out = static_cast<uint16_t*>(p.out) + b * p.out_stride[0] + i * p.out_stride[1] +
                    h * p.out_stride[2] + kh * 256 + 2 * t;
#pragma unroll
        for (int n = 0; n < 32; ++n) {
          *reinterpret_cast<uint32_t*>(out + n * 8) =
              ptx::pack_bf16x2(acc[4 * n + 2 * k] * inv, acc[4 * n + 2 * k + 1] * inv);
        }
        if (kh == 0 && t == 0) {
          p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = lse;
        }
      } else {
        const int64_t prow = static_cast<int64_t>(p.plan.part_begin[b] + split) * p.rows + r;
        float* o = p.o_part + prow * KT::D_V + kh * 256 + 2 * t;
#pragma unroll
        for (int n = 0; n < 32; ++n) {
          *reinterpret_cast<float2*>(o + n * 8) =
              make_float2(acc[4 * n + 2 * k] * inv, acc[4 * n + 2 * k + 1] * inv);
        }
        if (kh == 0 && t == 0) p.lse_part[prow] = lse;
      }
    }
  }

  // No CTA may exit while a peer can still arrive on its barriers or copy into its stages.
  if (n_cta > 1) ptx::cluster_sync();
}

template <typename KT>
cudaError_t init_verify_kernel_sm90() {
  return cudaFuncSetAttribute(verify_kernel_sm90<KT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              KT::SMEM_BYTES);
}

template <typename KT>
cudaError_t max_active_clusters_sm90(int cluster, int* count) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1, static_cast<unsigned>(cluster), 1);
  cfg.blockDim = dim3(KT::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = KT::SMEM_BYTES;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaOccupancyMaxActiveClusters(count, verify_kernel_sm90<KT>, &cfg);
}

template <typename KT>
cudaError_t run_verify_kernel_sm90(const VerifyParams& p, int cluster, int grid_y,
                                   cudaStream_t stream) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(static_cast<unsigned>(p.plan.total_splits), static_cast<unsigned>(grid_y), 1);
  cfg.blockDim = dim3(KT::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = KT::SMEM_BYTES;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = 1;
  attr[0].val.clusterDim.y = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, verify_kernel_sm90<KT>, p);
}

}  // namespace mlaspec::attn::cuda
