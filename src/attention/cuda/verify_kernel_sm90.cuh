// The MLA verify-attention kernel for Hopper (sm_90a): TMA + mbarrier pipeline, warp-specialised
// producer, wgmma for Q K^T and P V. Shared by cuda_fold and cuda_rowwise.
//
// One CTA = one split (a KV range of one request) x one tile of up to 64 query rows.
//   fold:    the request's rows r = i*H + h tiled by 64; the row tiles of one split form a thread-
//            block cluster and every KV tile is fetched from HBM once: each CTA issues the TMA boxes
//            of its share and multicasts them to the whole cluster.
//   rowwise: each query token's H rows tiled by 64, one CTA per tile, no cluster.
// Warpgroup 2 is the producer (one warp issues copies into a 2-stage ring guarded by full/empty
// mbarriers; setmaxnreg hands its registers to the consumers). Warpgroups 0 and 1 consume: WG k
// computes S = Q K^T for all 64 rows and keys 32k..32k+31 (wgmma m64n32k16, A = Q and B = K from
// shared memory), the two halves exchange row maxima, each writes its half of P (bf16) to shared
// memory, and WG k computes O[:, 256k..256k+255] += P V (wgmma m64n256k16, V MN-major).
//
// Shared-memory tiles use the 128B-swizzle layout wgmma and TMA agree on: a [64 rows x 576] bf16
// tile is 9 column blocks of [64 rows x 128 B], 16-byte chunk c of row r stored at chunk c ^ (r%8).
// bf16 KV lands that way straight from TMA; fp8 KV arrives as raw rows (bulk copies) and the
// consumers dequantise it (exactly) into the swizzled bf16 tile.
//
// Bitwise contract: a row's arithmetic depends only on key positions,
// masked tiles are exact no-ops, so fold == rowwise and verify row i == the decode call.
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

  static constexpr int COL_BLOCKS = D_QK / 64;          // 9 blocks of 64 bf16 = 128 B
  static constexpr int BLOCK_BYTES = BLOCK_M * 128;     // one [64 x 128 B] swizzled block
  static constexpr int TILE_BYTES = COL_BLOCKS * BLOCK_BYTES;
  static constexpr int RAW_ROW_BYTES = D_QK;            // fp8 raw rows, unpadded
  static constexpr int SEG_ROWS = 8;                    // fp8 rows per bulk copy
  static constexpr int GLOBAL_ROW_BYTES = D_QK * static_cast<int>(sizeof(KvT));

  static constexpr int Q_BYTES = TILE_BYTES;
  static constexpr int STAGE_BYTES = kFp8 ? BLOCK_N * RAW_ROW_BYTES : TILE_BYTES;
  static constexpr int KVBF_BYTES = kFp8 ? TILE_BYTES : 0;
  static constexpr int P_BYTES = BLOCK_BYTES;  // 64 rows x 64 keys bf16, swizzled
  static constexpr int RED_BYTES = 2 * BLOCK_M * 4;

  static constexpr int OFF_Q = 0;
  static constexpr int OFF_STAGE = OFF_Q + Q_BYTES;
  static constexpr int OFF_KVBF = OFF_STAGE + STAGES * STAGE_BYTES;
  static constexpr int OFF_P = OFF_KVBF + KVBF_BYTES;
  static constexpr int OFF_RED = OFF_P + P_BYTES;
  static constexpr int OFF_BAR = OFF_RED + RED_BYTES;
  // +1024: the dynamic shared-memory base is aligned up to 1024 B at run time (swizzle atoms).
  static constexpr int SMEM_BYTES = OFF_BAR + 2 * STAGES * 8 + 1024;

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

}  // namespace sm90

template <typename KT>
__global__ void __launch_bounds__(KT::NUM_THREADS, 1)
    verify_kernel_sm90(const __grid_constant__ VerifyParams p) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~static_cast<uintptr_t>(1023));
  uint8_t* sQ = smem + KT::OFF_Q;
  uint8_t* sStage = smem + KT::OFF_STAGE;
  uint8_t* sP = smem + KT::OFF_P;
  float* sRed = reinterpret_cast<float*>(smem + KT::OFF_RED);
  uint64_t* full_bar = reinterpret_cast<uint64_t*>(smem + KT::OFF_BAR);
  uint64_t* empty_bar = full_bar + KT::STAGES;

  const int warp = threadIdx.x / 32;
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
      ptx::mbar_init(&full_bar[s], 1);
      // bf16: one arrival per consumer warp (its reads are wgmma's, complete at wait_group);
      // fp8: one per consumer thread, since each thread's own generic reads of the raw stage are
      // what the release must order.
      ptx::mbar_init(&empty_bar[s], n_cta * (KT::kFp8 ? KT::NUM_CONSUMER_THREADS : KT::NUM_CONSUMER_WARPS));
    }
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
      // Every consumer warp of every CTA in the cluster must have released this slot.
      ptx::mbar_wait(&empty_bar[s], phase ^ 1);
      const int key0 = kv_begin + it * KT::BLOCK_N;
      const int valid = min(KT::BLOCK_N, seq_len - key0);
      uint8_t* stage = sStage + s * KT::STAGE_BYTES;
      if constexpr (!KT::kFp8) {
        // Whole pages only (a page past seq_len may not exist); rows of the last page past
        // seq_len arrive too and are zeroed by the consumers.
        const int pages = (valid + KT::PAGE_SIZE - 1) / KT::PAGE_SIZE;
        if (lane == 0) {
          ptx::mbar_arrive_expect_tx(&full_bar[s], pages * KT::COL_BLOCKS * KT::PAGE_SIZE * 128);
        }
        __syncwarp();
        for (int q = lane; q < pages * KT::COL_BLOCKS; q += 32) {
          if (static_cast<uint32_t>(q) % n_cta != cta_rank) continue;
          const int j = q / KT::COL_BLOCKS, blk = q % KT::COL_BLOCKS;
          const int page = bt[key0 / KT::PAGE_SIZE + j];
          uint8_t* dst = stage + blk * KT::BLOCK_BYTES + j * KT::PAGE_SIZE * 128;
          if (n_cta == 1) {
            ptx::tma_load_2d(dst, p.kv_tmap, blk * 64, page * KT::PAGE_SIZE, &full_bar[s]);
          } else {
            ptx::tma_load_2d_multicast(dst, p.kv_tmap, blk * 64, page * KT::PAGE_SIZE,
                                       &full_bar[s], mcast_mask);
          }
        }
      } else {
        const auto* kv = static_cast<const uint8_t*>(p.kv);
        if (lane == 0) ptx::mbar_arrive_expect_tx(&full_bar[s], valid * KT::GLOBAL_ROW_BYTES);
        __syncwarp();
        for (int seg = lane; seg < KT::BLOCK_N / KT::SEG_ROWS; seg += 32) {
          const int r0 = seg * KT::SEG_ROWS;
          if (static_cast<uint32_t>(seg) % n_cta != cta_rank || r0 >= valid) continue;
          const int nr = min(KT::SEG_ROWS, valid - r0);
          const int key = key0 + r0;
          const int64_t page = bt[key / KT::PAGE_SIZE];
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
      for (int c = tid; c < KT::BLOCK_M * CHUNKS_PER_ROW; c += KT::NUM_CONSUMER_THREADS) {
        const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
        const int r = row_begin + row;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < row_end) {
          const int i = r / p.num_heads, h = r % p.num_heads;
          const uint16_t* src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
          v = __ldg(reinterpret_cast<const uint4*>(src) + col);
        }
        *reinterpret_cast<uint4*>(sQ + (col >> 3) * KT::BLOCK_BYTES + sm90::sw128(row, col & 7)) = v;
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
    float l_run[2] = {0.f, 0.f};              // this warpgroup's share of the denominator

    ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);  // sQ complete

    const uint32_t sQ_addr = ptx::smem_addr(sQ);
    const uint32_t sP_addr = ptx::smem_addr(sP);

    for (int it = 0; it < n_tiles; ++it) {
      const int s = it % KT::STAGES;
      const uint32_t phase = (it / KT::STAGES) & 1;
      const int key0 = kv_begin + it * KT::BLOCK_N;
      const int valid = min(KT::BLOCK_N, seq_len - key0);
      ptx::mbar_wait(&full_bar[s], phase);
      uint8_t* stage = sStage + s * KT::STAGE_BYTES;

      uint8_t* sK;
      if constexpr (KT::kFp8) {
        // Dequantise codes -> swizzled bf16 (exact; kv_scale is folded into the score and output
        // scales). Rows past seq_len were never copied: zero them (0 * NaN would be NaN in P V).
        uint8_t* sKV = smem + KT::OFF_KVBF;
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);  // previous tile's wgmma reads of sKV done
        constexpr int CHUNKS_PER_ROW = KT::D_QK / 16;  // 16 codes -> two 16-byte bf16 chunks
        for (int c = tid; c < KT::BLOCK_N * CHUNKS_PER_ROW; c += KT::NUM_CONSUMER_THREADS) {
          const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
          uint4 lo = make_uint4(0, 0, 0, 0), hi = make_uint4(0, 0, 0, 0);
          if (row < valid) {
            const uint4 raw = *reinterpret_cast<const uint4*>(stage + row * KT::RAW_ROW_BYTES + col * 16);
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
        for (uint32_t r = 0; r < n_cta; ++r) ptx::mbar_arrive_cluster(&empty_bar[s], r);
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);
        sK = sKV;
      } else {
        if (valid < KT::BLOCK_N) {
          // Last tile of the request: rows past seq_len hold whatever the page held (or nothing).
          constexpr int CHUNKS = KT::COL_BLOCKS * 8;
          for (int c = tid; c < (KT::BLOCK_N - valid) * CHUNKS; c += KT::NUM_CONSUMER_THREADS) {
            const int row = valid + c / CHUNKS, col = c % CHUNKS;
            *reinterpret_cast<uint4*>(stage + (col >> 3) * KT::BLOCK_BYTES + row * 128 + (col & 7) * 16) =
                make_uint4(0, 0, 0, 0);
          }
          ptx::fence_proxy_async_smem();
          ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);
        }
        sK = stage;
      }
      const uint32_t sK_addr = ptx::smem_addr(sK);

      // ---- S = Q K^T: all 64 rows, keys 32*kh.. (wgmma m64n32k16 x 36) ----
      float sf[16];
      {
        const uint64_t desc_q = ptx::gmma_desc_sw128(sQ_addr, 16, 1024);
        const uint64_t desc_k = ptx::gmma_desc_sw128(sK_addr + kh * 32 * 128, 16, 1024);
        ptx::wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < KT::D_QK / 16; ++ks) {
          // Column block ks/4, 32-byte step inside the 128-byte swizzled row (descriptor units of 16 B).
          const uint64_t off = static_cast<uint64_t>(((ks >> 2) * KT::BLOCK_BYTES + (ks & 3) * 32) >> 4);
          ptx::wgmma_m64n32k16_ss(sf, desc_q + off, desc_k + off, ks > 0 ? 1 : 0);
        }
        ptx::wgmma_commit();
        ptx::wgmma_wait<0>();
      }

      // ---- mask, scale to log2 domain, row max over this warpgroup's 32 keys ----
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + kh * 32 + j * 8 + 2 * t + (e & 1);
          const float x = key <= vis[e >> 1] ? sf[4 * j + e] * p.score_scale_log2 : -INFINITY;
          sf[4 * j + e] = x;
          mx[e >> 1] = fmaxf(mx[e >> 1], x);
        }
      }
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 1));
        mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 2));
      }
      if (t == 0) {
        sRed[kh * 64 + r_loc[0]] = mx[0];
        sRed[kh * 64 + r_loc[1]] = mx[1];
      }
      ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

      // ---- online softmax update ----
      float scale[2];
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const float m_tile = fmaxf(sRed[r_loc[k]], sRed[64 + r_loc[k]]);
        const float m_new = fmaxf(m_run[k], m_tile);
        // A row that has seen no key yet keeps m = -inf: subtract 0 so p = ex2(-inf) = 0, not NaN.
        // An unchanged max rescales by exactly 1: masked tiles are exact no-ops.
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        scale[k] = m_run[k] == m_new ? 1.f : ptx::ex2(m_run[k] - m_use);
        m_run[k] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          sf[4 * j + 2 * k] = ptx::ex2(sf[4 * j + 2 * k] - m_use);
          sf[4 * j + 2 * k + 1] = ptx::ex2(sf[4 * j + 2 * k + 1] - m_use);
          sum += sf[4 * j + 2 * k];
          sum += sf[4 * j + 2 * k + 1];
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        l_run[k] = l_run[k] * scale[k] + sum;
      }

      // ---- P (bf16) -> sP (one swizzled [64 x 128 B] block) ----
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const int r = r_loc[k];
          *reinterpret_cast<uint32_t*>(sP + sm90::sw128(r, kh * 4 + j) + t * 4) =
              ptx::pack_bf16x2(sf[4 * j + 2 * k], sf[4 * j + 2 * k + 1]);
        }
      }
      ptx::fence_proxy_async_smem();
#pragma unroll
      for (int n = 0; n < 32; ++n) {
        acc[4 * n + 0] *= scale[0];
        acc[4 * n + 1] *= scale[0];
        acc[4 * n + 2] *= scale[1];
        acc[4 * n + 3] *= scale[1];
      }
      ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

      // ---- O[:, 256*kh..] += P V (wgmma m64n256k16 x 4, V MN-major) ----
      {
        const uint64_t desc_p = ptx::gmma_desc_sw128(sP_addr, 16, 1024);
        // V = columns 256*kh.. of the tile: 4 column blocks (LBO = block stride) x 8-key groups
        // (SBO = 1024 B).
        const uint64_t desc_v =
            ptx::gmma_desc_sw128(sK_addr + kh * 4 * KT::BLOCK_BYTES, KT::BLOCK_BYTES, 1024);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KT::BLOCK_N / 16; ++kk) {
          ptx::wgmma_m64n256k16_ss_tb(acc, desc_p + ((kk * 32) >> 4), desc_v + ((kk * 16 * 128) >> 4), 1);
        }
        ptx::wgmma_commit();
        ptx::wgmma_wait<0>();
      }
      if constexpr (!KT::kFp8) {
        // Done reading this slot: release it to the producers of every CTA in the cluster.
        __syncwarp();
        if (lane == 0) {
          for (uint32_t r = 0; r < n_cta; ++r) ptx::mbar_arrive_cluster(&empty_bar[s], r);
        }
      }
    }

    // ---- epilogue: total denominator = both key halves, in a fixed order ----
    ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);  // sP no longer read
    float* sL = reinterpret_cast<float*>(sP);
    if (t == 0) {
      sL[kh * 64 + r_loc[0]] = l_run[0];
      sL[kh * 64 + r_loc[1]] = l_run[1];
    }
    ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

    const bool direct = n_splits == 1 && !p.plan.partials_only;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int r = row_begin + r_loc[k];
      if (r >= row_end) continue;
      const float l = sL[r_loc[k]] + sL[64 + r_loc[k]];
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
