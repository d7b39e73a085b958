// The mma.sync reference variant of the verify kernel (build with -DMLASPEC_VERIFY_MMA_SYNC=1).
// The default is verify_kernel_sm90.cuh (TMA + wgmma); this one stays as a measured baseline for
// the tuning work (docs/perf/NOTES.md): bulk copies of padded rows + ldmatrix + mma.sync read
// ~10x the tile's bytes from shared memory per KV tile, which is what limits it.
//
// One CTA = one split (a KV range of one request) x one tile of up to 64 query rows.
//   fold:    the request's rows r = i*H + h tiled by 64; the row tiles of one split form a thread-
//            block cluster and every KV tile is fetched from HBM once, by bulk copies that each CTA
//            issues for its share of the rows and multicasts to the whole cluster.
//   rowwise: each query token's H rows tiled by 64, one CTA per tile, no cluster: the KV is read
//            once per query token.
// Warp roles: warp 8 (of warpgroup 2) is the producer (bulk copies into a 2-stage ring on full/empty mbarriers);
// warps 0..7 consume: warp w owns rows 16*(w%4).. of the tile, the keys 32*(w/4).. of S = Q K^T
// and the output columns 256*(w/4).. of O = P V, all with mma.sync m16n8k16 bf16 (fp32 accumulate).
//
// Bitwise contract: a row's arithmetic (MMA k-order, softmax update order, which lanes hold which
// keys) depends only on the key positions, never on the other rows of the tile or on which CTA
// the row lands in; tiles fully masked for a row are exact no-ops for it (rescale exactly 1, p
// exactly 0). Hence fold == rowwise bitwise, and with fixed absolute split chunks a verify row
// equals the decode call that ends at the same position.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernel_traits.cuh"
#include "ptx.cuh"
#include "verify_params.h"

namespace mlaspec::attn::cuda {

namespace detail {

__device__ __forceinline__ int find_request(const SplitPlan& plan, int batch, int split_global) {
  // Largest b with split_begin[b] <= split_global (split_begin is non-decreasing, strictly so
  // since every request has >= 1 split).
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

// Request-local row range [begin, end) of row tile `tile`; empty for cluster padding tiles.
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

}  // namespace detail

template <typename KT>
__global__ void __launch_bounds__(KT::NUM_THREADS, 1)
    verify_kernel(const __grid_constant__ VerifyParams p) {
  extern __shared__ __align__(128) uint8_t smem[];
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
  const int b = detail::find_request(p.plan, p.batch, split_global);
  const int split = split_global - p.plan.split_begin[b];
  const int n_splits = p.plan.split_begin[b + 1] - p.plan.split_begin[b];
  const int seq_len = p.seq_lens[b];
  const int first_visible = seq_len - p.q_len;  // token i sees keys [0, first_visible + i]

  int row_begin, row_end;
  detail::tile_rows(p, blockIdx.y, &row_begin, &row_end);
  // Every CTA of a cluster must walk the same tiles (they share each multicast tile), so the loop
  // bound comes from the cluster's last row: the one that sees the most keys.
  int cluster_row_end;
  {
    const int last_tile = min(static_cast<int>(blockIdx.y - cta_rank + n_cta), p.row_tiles) - 1;
    int b0, e0;
    detail::tile_rows(p, last_tile, &b0, &e0);
    cluster_row_end = max(e0, row_end);
  }
  const int kv_begin = split * p.plan.chunk;
  // Last split open-ended: see verify_kernel_sm90.cuh (graph replays with grown seq_lens).
  const int kv_end_split = split == n_splits - 1 ? seq_len : min(kv_begin + p.plan.chunk, seq_len);
  const int kv_end_visible =
      min(kv_end_split, first_visible + (cluster_row_end - 1) / p.num_heads + 1);
  const int n_tiles = kv_end_visible > kv_begin ? (kv_end_visible - kv_begin + KT::BLOCK_N - 1) / KT::BLOCK_N : 0;

  if (threadIdx.x == 0) {
    for (int s = 0; s < KT::STAGES; ++s) {
      ptx::mbar_init(&full_bar[s], 1);
      ptx::mbar_init(&empty_bar[s], n_cta * KT::NUM_CONSUMER_WARPS);
    }
    ptx::fence_mbar_init();
  }
  // Peers multicast into this CTA's stages and arrive on its barriers: they must see the inits.
  ptx::cluster_sync();

  if (warp >= KT::PRODUCER_WARP) {
    // ---------------------------------------------------------------- producer
    ptx::setmaxnreg_dec<KT::PRODUCER_REGS>();
    const auto* kv = static_cast<const typename KT::Kv*>(p.kv);
    const int32_t* bt = p.block_table + static_cast<int64_t>(b) * p.bt_stride;
    const uint16_t mcast_mask = static_cast<uint16_t>((1u << n_cta) - 1u);
    for (int it = 0; it < (warp == KT::PRODUCER_WARP ? n_tiles : 0); ++it) {
      const int s = it % KT::STAGES;
      const uint32_t phase = (it / KT::STAGES) & 1;
      // Wait until every consumer warp of every CTA in the cluster released this slot.
      ptx::mbar_wait(&empty_bar[s], phase ^ 1);
      const int key0 = kv_begin + it * KT::BLOCK_N;
      const int valid = min(KT::BLOCK_N, seq_len - key0);
      if (lane == 0) {
        // This CTA's barrier counts the whole tile, whichever CTA of the cluster copies a row.
        ptx::mbar_arrive_expect_tx(&full_bar[s], valid * KT::GLOBAL_ROW_BYTES);
      }
      __syncwarp();
      uint8_t* stage = sStage + s * KT::STAGE_BYTES;
      for (int seg = lane; seg < KT::NUM_SEGS; seg += 32) {
        const int r0 = seg * KT::SEG_ROWS;
        if (static_cast<uint32_t>(seg) % n_cta != cta_rank || r0 >= valid) continue;
        const int nr = min(KT::SEG_ROWS, valid - r0);
        const int key = key0 + r0;
        const int64_t page = bt[key / KT::PAGE_SIZE];
        const auto* src = kv + (page * KT::PAGE_SIZE + key % KT::PAGE_SIZE) * KT::D_QK;
        const uint32_t bytes = nr * KT::GLOBAL_ROW_BYTES;
        if (n_cta == 1) {
          ptx::bulk_copy_g2s(stage + r0 * KT::RAW_ROW_BYTES, src, bytes, &full_bar[s]);
        } else {
          ptx::bulk_copy_g2s_multicast(stage + r0 * KT::RAW_ROW_BYTES, src, bytes, &full_bar[s],
                                       mcast_mask);
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers
    ptx::setmaxnreg_inc<KT::CONSUMER_REGS>();
    const int tid = threadIdx.x;
    const int rg = warp & 3;   // row group: rows 16*rg .. 16*rg+15
    const int kh = warp >> 2;  // key half of S, column half of O
    const int g = lane >> 2, t = lane & 3;
    const int r_loc[2] = {rg * 16 + g, rg * 16 + g + 8};

    // Q rows -> sQ (swizzled); rows past the tile are zero and never written back.
    {
      const auto* q = static_cast<const uint16_t*>(p.q);
      constexpr int CHUNKS_PER_ROW = KT::Q_ROW_BYTES / 16;
      for (int c = tid; c < KT::BLOCK_M * CHUNKS_PER_ROW; c += KT::NUM_CONSUMER_THREADS) {
        const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
        const int r = row_begin + row;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < row_end) {
          const int i = r / p.num_heads, h = r % p.num_heads;
          const uint16_t* src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
          v = __ldg(reinterpret_cast<const uint4*>(src) + col);
        }
        *reinterpret_cast<uint4*>(sQ + row * KT::Q_ROW_BYTES + ((col ^ (row & 7)) * 16)) = v;
      }
    }

    // Last visible key of this thread's two rows (padding rows clamp to the request's end).
    int vis[2];
    for (int k = 0; k < 2; ++k) {
      const int r = row_begin + r_loc[k];
      vis[k] = r < row_end ? first_visible + r / p.num_heads : seq_len - 1;
    }

    float acc[32][4];
#pragma unroll
    for (int n = 0; n < 32; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
    float m_run[2] = {-INFINITY, -INFINITY};  // running max of scores, log2 domain
    float l_run[2] = {0.f, 0.f};              // this warp's share of the softmax denominator

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
        // Dequantise codes -> bf16 (exact; kv_scale is folded into the score and output scales).
        uint8_t* sKV = smem + KT::OFF_KVBF;
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);  // previous tile's P V reads of sKV done
        constexpr int CHUNKS_PER_ROW = KT::D_QK / 16;
        for (int c = tid; c < KT::BLOCK_N * CHUNKS_PER_ROW; c += KT::NUM_CONSUMER_THREADS) {
          const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
          uint4 lo = make_uint4(0, 0, 0, 0), hi = make_uint4(0, 0, 0, 0);
          // Rows past seq_len were never copied: zero them so stale bytes cannot become NaN in P V.
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
          uint4* dst = reinterpret_cast<uint4*>(sKV + row * KT::KV_ROW_BYTES + col * 32);
          dst[0] = lo;
          dst[1] = hi;
        }
        // The raw slot is free as soon as it is converted: release it early so the producer's next
        // copy overlaps this tile's MMAs.
        __syncwarp();
        if (lane == 0) {
          for (uint32_t r = 0; r < n_cta; ++r) ptx::mbar_arrive_cluster(&empty_bar[s], r);
        }
        ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);
        sK = sKV;
      } else {
        if (valid < KT::BLOCK_N) {
          // The last tile of the request: rows past seq_len were not copied and may hold
          // uninitialised bytes. Zero them (P is 0 there, but 0 * NaN is NaN).
          constexpr int CHUNKS_PER_ROW = KT::KV_ROW_BYTES / 16;
          for (int c = tid; c < (KT::BLOCK_N - valid) * CHUNKS_PER_ROW; c += KT::NUM_CONSUMER_THREADS) {
            const int row = valid + c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
            *reinterpret_cast<uint4*>(stage + row * KT::RAW_ROW_BYTES + col * 16) = make_uint4(0, 0, 0, 0);
          }
          // Generic writes to a slot the copy engine owns next time round.
          ptx::fence_proxy_async_smem();
          ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);
        }
        sK = stage;
      }
      const uint32_t sK_addr = ptx::smem_addr(sK);

      // ---- S = Q K^T for rows 16*rg.., keys 32*kh.. ----
      float sc[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j) sc[j][0] = sc[j][1] = sc[j][2] = sc[j][3] = 0.f;
      {
        const int a_row = rg * 16 + (lane & 15);
        const uint32_t a_base = sQ_addr + a_row * KT::Q_ROW_BYTES;
        const int a_sw = a_row & 7;
        const int b_key = kh * 32 + ((lane >> 4) << 3) + (lane & 7);
        const uint32_t b_base = sK_addr + b_key * KT::KV_ROW_BYTES + (((lane >> 3) & 1) << 4);
#pragma unroll 4
        for (int ks = 0; ks < KT::D_QK / 16; ++ks) {
          uint32_t a[4];
          ptx::ldmatrix_x4(a, a_base + (((2 * ks + (lane >> 4)) ^ a_sw) << 4));
#pragma unroll
          for (int jj = 0; jj < 2; ++jj) {
            uint32_t bk[4];
            ptx::ldmatrix_x4(bk, b_base + jj * 16 * KT::KV_ROW_BYTES + ks * 32);
            ptx::mma_bf16_16816(sc[2 * jj], a, bk[0], bk[1]);
            ptx::mma_bf16_16816(sc[2 * jj + 1], a, bk[2], bk[3]);
          }
        }
      }

      // ---- mask, scale to log2 domain, row max over this warp's 32 keys ----
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + kh * 32 + j * 8 + 2 * t + (e & 1);
          const float x = key <= vis[e >> 1] ? sc[j][e] * p.score_scale_log2 : -INFINITY;
          sc[j][e] = x;
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
        // A row that has seen no key yet keeps m = -inf; subtract 0 instead so p = ex2(-inf) = 0
        // rather than NaN. An unchanged max rescales by exactly 1 (masked tiles are no-ops).
        const float m_use = m_new == -INFINITY ? 0.f : m_new;
        scale[k] = m_run[k] == m_new ? 1.f : ptx::ex2(m_run[k] - m_use);
        m_run[k] = m_new;
        float sum = 0.f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          sc[j][2 * k] = ptx::ex2(sc[j][2 * k] - m_use);
          sc[j][2 * k + 1] = ptx::ex2(sc[j][2 * k + 1] - m_use);
          sum += sc[j][2 * k];
          sum += sc[j][2 * k + 1];
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        l_run[k] = l_run[k] * scale[k] + sum;
      }
#pragma unroll
      for (int n = 0; n < 32; ++n) {
        acc[n][0] *= scale[0];
        acc[n][1] *= scale[0];
        acc[n][2] *= scale[1];
        acc[n][3] *= scale[1];
      }

      // ---- P (bf16) -> sP, swizzled like sQ ----
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int chunk = kh * 4 + j;
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const int r = r_loc[k];
          *reinterpret_cast<uint32_t*>(sP + r * 128 + ((chunk ^ (r & 7)) << 4) + t * 4) =
              ptx::pack_bf16x2(sc[j][2 * k], sc[j][2 * k + 1]);
        }
      }
      ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);

      // ---- O += P V for rows 16*rg.., columns 256*kh.. ----
      {
        const int a_row = rg * 16 + (lane & 15);
        const uint32_t a_base = sP_addr + a_row * 128;
        const int a_sw = a_row & 7;
        const uint32_t v_base = sK_addr + ((((lane >> 3) & 1) << 3) + (lane & 7)) * KT::KV_ROW_BYTES +
                                (kh * 256 + ((lane >> 4) << 3)) * 2;
#pragma unroll
        for (int kk = 0; kk < KT::BLOCK_N / 16; ++kk) {
          uint32_t a[4];
          ptx::ldmatrix_x4(a, a_base + (((2 * kk + (lane >> 4)) ^ a_sw) << 4));
#pragma unroll
          for (int n2 = 0; n2 < 16; ++n2) {
            uint32_t v[4];
            ptx::ldmatrix_x4_trans(v, v_base + kk * 16 * KT::KV_ROW_BYTES + n2 * 32);
            ptx::mma_bf16_16816(acc[2 * n2], a, v[0], v[1]);
            ptx::mma_bf16_16816(acc[2 * n2 + 1], a, v[2], v[3]);
          }
        }
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

    const bool direct = n_splits == 1;
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      const int r = row_begin + r_loc[k];
      if (r >= row_end) continue;
      const float l = sL[r_loc[k]] + sL[64 + r_loc[k]];
      // An empty row (no visible key in this split) is the merge's neutral element: o = 0,
      // lse = -inf.
      const float inv = l > 0.f ? p.out_scale / l : 0.f;
      const float lse = l > 0.f ? (m_run[k] + log2f(l)) * 0.69314718055994530942f : -INFINITY;
      const int i = r / p.num_heads, h = r % p.num_heads;
      if (direct) {
        auto* out = static_cast<uint16_t*>(p.out) + b * p.out_stride[0] + i * p.out_stride[1] +
                    h * p.out_stride[2] + kh * 256 + 2 * t;
#pragma unroll
        for (int n = 0; n < 32; ++n) {
          *reinterpret_cast<uint32_t*>(out + n * 8) =
              ptx::pack_bf16x2(acc[n][2 * k] * inv, acc[n][2 * k + 1] * inv);
        }
        if (kh == 0 && t == 0) {
          p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = lse;
        }
      } else {
        const int64_t prow = static_cast<int64_t>(p.plan.part_begin[b] + split) * p.rows + r;
        float* o = p.o_part + prow * KT::D_V + kh * 256 + 2 * t;
#pragma unroll
        for (int n = 0; n < 32; ++n) {
          *reinterpret_cast<float2*>(o + n * 8) = make_float2(acc[n][2 * k] * inv, acc[n][2 * k + 1] * inv);
        }
        if (kh == 0 && t == 0) p.lse_part[prow] = lse;
      }
    }
  }

  // No CTA may exit while a peer can still arrive on its barriers or copy into its stages.
  if (n_cta > 1) ptx::cluster_sync();
}

// Host-side launch of one instantiation; see launch.h.
template <typename KT>
cudaError_t init_verify_kernel_impl() {
  return cudaFuncSetAttribute(verify_kernel<KT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              KT::SMEM_BYTES);
}

template <typename KT>
cudaError_t max_active_clusters_impl(int cluster, int* count) {
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
  return cudaOccupancyMaxActiveClusters(count, verify_kernel<KT>, &cfg);
}

template <typename KT>
cudaError_t run_verify_kernel_impl(const VerifyParams& p, int cluster, int grid_y,
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
  return cudaLaunchKernelEx(&cfg, verify_kernel<KT>, p);
}

}  // namespace mlaspec::attn::cuda
