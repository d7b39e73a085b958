// The narrow MLA verify kernel for Hopper (sm_90a): row tiles of at most 16 query rows (decode
// at H <= 16, rowwise at H <= 16, any tile of q_len * H <= 16 rows). cuda_fold and cuda_rowwise
// launch it instead of verify_kernel_sm90 for those tiles.
//
// Why: the 64-row kernel's wgmma has M = 64 query rows, so a 16-row tile does 4x the tensor work
// it needs, and its fp8 path expands the raw codes with one warp per scheduler. Here the products
// are swapped: S^T = K Q^T (M = 64 keys, N = 16 rows) and O^T = V^T P^T (M = 64 V columns, N = 16
// rows), a quarter of the tensor work; the KV streams through a ring of [64 keys x 64 columns]
// blocks (one 8 KB slot per column block), each freed as soon as its last reader is done; and
// fp8's raw pages land whole (one bulk copy per page) in raw tiles of their own, expanded (to
// f16, the fp8 MMAs' type, as in the 64-row kernel) by two warpgroups taking alternate steps.
// Measured on an H200: fp8 decode 25-28% faster than the 64-row kernel, bf16 within 1%.
//
// Bitwise contract: a row's arithmetic is the 64-row kernel's, step for step, so fold == rowwise
// and verify row i == the decode call whichever kernel serves each call:
//  - S and P V accumulate the same products in the same k order (block order 0..8 for a pair's
//    first tile t0; 4..8, 0..3 for bf16's t1, as the 64-row kernel's WG1 walks it);
//  - softmax per tile: the same max, scale and ex2; the row sum of P adds each row's 64 values in
//    the 64-row kernel's thread order (per thread j-major over keys 8j + 2t + {0,1}, then the
//    xor-1 / xor-2 butterfly), read back from an f32 staging copy of P;
//  - the rescale order of O: bf16 pairs (t0, t1) as the 64-row kernel's seesaw (O_L = (O_L sc0
//    + P0 V0L) sc1 + P1 V1L; O_R = O_R (sc0 sc1) + P1 V1R + bf16(P0 sc1) V0R); fp8 tile by tile
//    (O = O sc + P V), its plain pair order;
//  - the epilogue: the same inv = out_scale / l, lse and bf16 rounding.
// The GPU tests check it: at H <= 16 with q_len > 1, fold runs the 64-row kernel and rowwise
// this one, and they must agree bitwise.
//
// Threads: warpgroup 0 consumes (4 warps: keys 16w.. of each tile in S^T, V columns 16w.. of
// each 64-column block in O^T). bf16: warp 4 copies. fp8: warpgroups 1 and 2 expand, warp 12
// copies the raw codes.
//
// Roles: the pieces shared with the 64-row kernel live in hopper/ (kernel_traits.cuh,
// tile_scheduler.cuh, softmax.cuh, fp8_expand.cuh, utils.cuh). The producer and consumer paths
// stay written out in the kernel: moved into functions of their own, even inlined, the fp8
// instantiations' SASS changes (the optimizer orders their values differently and ptxas assigns
// other registers), so moving them needs a GPU run to land.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../ptx.cuh"
#include "../verify_params.h"
#include "fp8_expand.cuh"
#include "kernel_traits.cuh"
#include "softmax.cuh"
#include "tile_scheduler.cuh"
#include "utils.cuh"

namespace mlaspec::attn::cuda {

template <typename NT>
__global__ void __launch_bounds__(NT::NUM_THREADS, 1)
    verify_narrow_kernel_sm90(const __grid_constant__ VerifyParams p) {
  extern __shared__ uint8_t smem_raw[];
  // Aligned by an offset from smem_raw: pointers keep the shared address space (32-bit). Why it
  // is written out rather than shared with the 64-row kernel: see verify_kernel_sm90.
  uint8_t* smem = smem_raw + ((1024u - (ptx::smem_addr(smem_raw) & 1023u)) & 1023u);
  const uint32_t s_slot = ptx::smem_addr(smem + NT::OFF_SLOT);
  const uint32_t s_raw = ptx::smem_addr(smem + NT::OFF_RAW);
  uint8_t* sQ = smem + NT::OFF_Q;
  float* sRed = reinterpret_cast<float*>(smem + NT::OFF_RED);
  uint64_t* full_bar = reinterpret_cast<uint64_t*>(smem + NT::OFF_BAR);
  uint64_t* empty_bar = full_bar + NT::SLOTS;
  uint64_t* raw_full = empty_bar + NT::SLOTS;  // fp8: [RAW_TILES]
  uint64_t* raw_empty = raw_full + NT::RAW_TILES;

  const int warp = sm90::uniform_warp_index();
  const int lane = threadIdx.x % 32;

  const sm90::WorkItem wi = sm90::work_item<NT::BLOCK_N>(p, 0, 1);
  // One split per CTA: the host never groups splits for this kernel (SplitPlan::group_size 1).
  const int b = wi.b, seq_len = wi.seq_len, split = wi.split_first;
  int kv_begin, n_tiles;
  sm90::split_keys<NT::BLOCK_N>(p, wi, split, &kv_begin, &n_tiles);
  // Block (tile it, column block blk) is ring entry L = 9 it + blk: slot L % SLOTS, its
  // (L / SLOTS)-th use.
  auto slot_of = [](int L) { return L % NT::SLOTS; };
  auto use_parity = [](int L) { return static_cast<uint32_t>((L / NT::SLOTS) & 1); };

  if (threadIdx.x == 0) {
    for (int s = 0; s < NT::SLOTS; ++s) {
      // bf16: the copy's expect_tx arrival; fp8: every expanding thread.
      ptx::mbar_init(&full_bar[s], NT::kFp8 ? NT::NUM_DEQUANT_THREADS : 1);
      ptx::mbar_init(&empty_bar[s], 4);  // one arrival per consumer warp
    }
    for (int s = 0; s < NT::RAW_TILES; ++s) {
      ptx::mbar_init(&raw_full[s], 1);
      // Every expanding thread of each of the tile's steps, once it holds its codes.
      ptx::mbar_init(&raw_empty[s],
                     NT::NUM_DEQUANT_THREADS * (NT::COL_BLOCKS / NT::DEQUANT_BLOCKS));
    }
    ptx::fence_mbar_init();
  }
  __syncthreads();

  if (warp >= NT::PRODUCER_WARP) {
    // ---------------------------------------------------------------- producer
    const int32_t* bt = p.block_table + static_cast<int64_t>(b) * p.bt_stride;
    const uint64_t kv_policy = ptx::l2_policy_evict_first();
    // Lane j's page id of tile `it` (page j of the tile), read one tile ahead so the block-table
    // load is never between a freed slot and its copy.
    auto load_page = [&](int it) {
      const int key0 = kv_begin + it * NT::BLOCK_N;
      const int pages = (min(NT::BLOCK_N, seq_len - key0) + NT::PAGE_SIZE - 1) / NT::PAGE_SIZE;
      return it < n_tiles && lane < pages ? __ldg(&bt[key0 / NT::PAGE_SIZE + lane]) : 0;
    };
    int page_tile = 0, page_cur = load_page(0), page_next = load_page(1);
    // Tiles are copied in order (never back): page ids advance one tile at a time.
    auto advance_pages = [&](int it) {
      if (it != page_tile) {
        page_cur = page_next;
        page_next = load_page(it + 1);
        page_tile = it;
      }
    };
    const int total = n_tiles * NT::COL_BLOCKS;
    if constexpr (!NT::kFp8) {
      // Column block blk of tile it into its slot, lane j copying page j of the tile: whole pages
      // only; rows of the last page past seq_len are zeroed by the consumers before P V.
      for (int L = 0; L < total; ++L) {
        const int s = slot_of(L);
        ptx::mbar_wait(&empty_bar[s], use_parity(L) ^ 1);
        const int it = L / NT::COL_BLOCKS, blk = L % NT::COL_BLOCKS;
        advance_pages(it);
        const int key0 = kv_begin + it * NT::BLOCK_N;
        const int pages = (min(NT::BLOCK_N, seq_len - key0) + NT::PAGE_SIZE - 1) / NT::PAGE_SIZE;
        if (lane == 0) {
          ptx::mbar_arrive_expect_tx(&full_bar[s], pages * NT::PAGE_SIZE * NT::BOX_ROW_BYTES);
        }
        __syncwarp();
        if (lane < pages) {
          ptx::tma_load_2d(
              smem + NT::OFF_SLOT + s * NT::BLOCK_BYTES + lane * NT::PAGE_SIZE * NT::BOX_ROW_BYTES,
              p.kv_tmap, blk * 64, page_cur * NT::PAGE_SIZE, &full_bar[s], kv_policy);
        }
      }
    } else {
      // Raw codes land a tile at a time in their own ring (RAW_TILES tiles), copied by the copy
      // warp as the expansion frees them; the expanding warpgroups take alternate steps of
      // DEQUANT_BLOCKS blocks each, into the f16 slots as the consumers free them.
      if (warp >= NT::COPY_WARP) {
        ptx::setmaxnreg_dec<NT::COPY_REGS>();
        if (warp != NT::COPY_WARP) return;
        // Whole pages, token-major: a page is page_size * 576 contiguous bytes of the pool, so
        // one bulk copy reads it in full lines (2-D boxes would read 64-byte pieces of each
        // token's row, nine column blocks apart in time).
        const auto* pool = static_cast<const uint8_t*>(p.kv_pages);
        constexpr int PAGE_BYTES = NT::PAGE_SIZE * NT::ROW_BYTES;
        for (int it = 0; it < n_tiles; ++it) {
          const int r = it % NT::RAW_TILES;
          const int key0 = kv_begin + it * NT::BLOCK_N;
          const int pages = (min(NT::BLOCK_N, seq_len - key0) + NT::PAGE_SIZE - 1) / NT::PAGE_SIZE;
          advance_pages(it);
          ptx::mbar_wait(&raw_empty[r], ((it / NT::RAW_TILES) & 1) ^ 1);
          if (lane == 0) ptx::mbar_arrive_expect_tx(&raw_full[r], pages * PAGE_BYTES);
          __syncwarp();
          if (lane < pages) {
            ptx::bulk_load(smem + NT::OFF_RAW + r * NT::RAW_TILE_BYTES + lane * PAGE_BYTES,
                           pool + static_cast<int64_t>(page_cur) * PAGE_BYTES, PAGE_BYTES,
                           &raw_full[r], kv_policy);
          }
        }
        return;
      }
      ptx::setmaxnreg_dec<NT::DEQUANT_REGS>();
      const int group = (warp - NT::PRODUCER_WARP) / 4;
      const int dtid = threadIdx.x - NT::PRODUCER_WARP * 32 - group * NT::NUM_DEQUANT_THREADS;
      constexpr int NB = NT::DEQUANT_BLOCKS;
      constexpr int PER_BLOCK = NT::BLOCK_N * 4 / NT::NUM_DEQUANT_THREADS;  // 16-code chunks
      // fp8_tile: one step's blocks from raw row bytes to bf16 slots: NCB code blocks (chunk m of
      // a block: key c / 4, codes 16 (c % 4).. for c = dtid + 128 m, times the key's scale for
      // the block), then, where NCB < NB, the rope block (chunk m: key c / 8, bf16 values
      // 8 (c % 8).., copied as they are). Keys valid..63 as zeros: codes and scale (the bytes
      // may be NaN).
      auto tile_step = [&](auto ncb_c, int L0, int valid, uint32_t raw) {
        constexpr int NCB = decltype(ncb_c)::value;
        constexpr int RC = NB > NCB ? 2 * PER_BLOCK : 0;  // rope chunks per thread (8 per key)
        const int blk0 = L0 % NT::COL_BLOCKS;
        uint4 v[NCB * PER_BLOCK];
        float sc[NCB * PER_BLOCK];
        uint4 rope[RC > 0 ? RC : 1];
#pragma unroll
        for (int k = 0; k < NCB * PER_BLOCK; ++k) {
          const int blk = blk0 + k / PER_BLOCK;
          const int c = dtid + (k % PER_BLOCK) * NT::NUM_DEQUANT_THREADS;
          const int key = c >> 2, q = c & 3;
          const uint32_t row = raw + key * NT::ROW_BYTES;
          const bool in = key < valid;
          v[k] = in ? ptx::ld_shared_v4(row + blk * 64 + q * 16) : make_uint4(0, 0, 0, 0);
          sc[k] = in ? ptx::ld_shared_f32(row + kFp8TileScaleOffset + (blk >> 1) * 4) : 0.f;
        }
#pragma unroll
        for (int m = 0; m < RC; ++m) {
          const int c = dtid + m * NT::NUM_DEQUANT_THREADS;
          const int key = c >> 3;
          rope[m] =
              key < valid
                  ? ptx::ld_shared_v4(raw + key * NT::ROW_BYTES + kFp8TileRopeOffset + (c & 7) * 16)
                  : make_uint4(0, 0, 0, 0);
        }
#pragma unroll
        for (int j = 0; j < NB; ++j) {
          const int L = L0 + j;
          ptx::mbar_wait(&empty_bar[slot_of(L)], use_parity(L) ^ 1);
        }
#pragma unroll
        for (int k = 0; k < NCB * PER_BLOCK; ++k) {
          const int c = dtid + (k % PER_BLOCK) * NT::NUM_DEQUANT_THREADS;
          const int key = c >> 2, q = c & 3;
          const uint32_t out = s_slot + slot_of(L0 + k / PER_BLOCK) * NT::BLOCK_BYTES;
          uint32_t o[8];
          sm90::fp8x16_to_bf16x16_scaled<false>(v[k], sc[k], o);
          ptx::st_shared_v4(out + sm90::sw128(key, 2 * q), o[0], o[1], o[2], o[3]);
          ptx::st_shared_v4(out + sm90::sw128(key, 2 * q + 1), o[4], o[5], o[6], o[7]);
        }
#pragma unroll
        for (int m = 0; m < RC; ++m) {
          const int c = dtid + m * NT::NUM_DEQUANT_THREADS;
          const uint32_t out = s_slot + slot_of(L0 + NCB) * NT::BLOCK_BYTES;
          ptx::st_shared_v4(out + sm90::sw128(c >> 3, c & 7), rope[m].x, rope[m].y, rope[m].z,
                            rope[m].w);
        }
      };
#pragma unroll 1
      for (int L0 = group * NB; L0 < total; L0 += NT::DEQUANT_GROUPS * NB) {
        const int valid =
            min(NT::BLOCK_N, seq_len - kv_begin - (L0 / NT::COL_BLOCKS) * NT::BLOCK_N);
        const int it = L0 / NT::COL_BLOCKS, r = it % NT::RAW_TILES;
        ptx::mbar_wait(&raw_full[r], (it / NT::RAW_TILES) & 1);
        const uint32_t raw = s_raw + r * NT::RAW_TILE_BYTES;
        if constexpr (NT::kTile) {
          // A tile's steps are blocks 0..2, 3..5, 6..8 (COL_BLOCKS % NB == 0): the last one ends
          // with the rope.
          if (L0 % NT::COL_BLOCKS == NT::COL_BLOCKS - NB) {
            tile_step(std::integral_constant<int, NB - 1>{}, L0, valid, raw);
          } else {
            tile_step(std::integral_constant<int, NB>{}, L0, valid, raw);
          }
        } else {
          uint4 v[NB * PER_BLOCK];
#pragma unroll
          for (int k = 0; k < NB * PER_BLOCK; ++k) {
            const int blk = (L0 + k / PER_BLOCK) % NT::COL_BLOCKS;
            const int c = dtid + (k % PER_BLOCK) * NT::NUM_DEQUANT_THREADS;
            const int key = c >> 2, q = c & 3;  // codes 64 blk + 16 q .. + 15 of the key's row
            v[k] = key < valid ? ptx::ld_shared_v4(raw + key * NT::ROW_BYTES + blk * 64 + q * 16)
                               : make_uint4(0, 0, 0, 0);
          }
#pragma unroll
          for (int j = 0; j < NB; ++j) {
            const int L = L0 + j;
            ptx::mbar_wait(&empty_bar[slot_of(L)], use_parity(L) ^ 1);
          }
          auto store = [&](int k, const uint32_t(&o)[8]) {
            // 16 codes = f16 chunks 2q, 2q + 1 of the key's 128-byte row in the block.
            const int L = L0 + k / PER_BLOCK;
            const int c = dtid + (k % PER_BLOCK) * NT::NUM_DEQUANT_THREADS;
            const int key = c >> 2, q = c & 3;
            const uint32_t out = s_slot + slot_of(L) * NT::BLOCK_BYTES;
            ptx::st_shared_v4(out + sm90::sw128(key, 2 * q), o[0], o[1], o[2], o[3]);
            ptx::st_shared_v4(out + sm90::sw128(key, 2 * q + 1), o[4], o[5], o[6], o[7]);
          };
          sm90::expand_chunks<false>(v, store);
        }
        // Generic-proxy writes that wgmma (async proxy) reads next; the same fence orders this
        // thread's reads of the raw tile before the bulk copy that refills it (async proxy too:
        // an arrival alone does not wait for the loads, and without the fence the refill raced
        // them: one call in 75 to 1,700 gave other bits). Once all steps of the tile are past it,
        // the tile can be refilled.
        ptx::fence_proxy_async_smem();
        ptx::mbar_arrive(&raw_empty[r]);
#pragma unroll
        for (int j = 0; j < NB; ++j) ptx::mbar_arrive(&full_bar[slot_of(L0 + j)]);
      }
    }
    return;
  }

  // ---------------------------------------------------------------- consumer warpgroup
  if constexpr (NT::kFp8) ptx::setmaxnreg_inc<NT::CONSUMER_REGS>();
  const int tid = threadIdx.x;
  const int w = warp, g = lane >> 2, t = lane & 3;
  const int row_begin = wi.row_begin, row_end = wi.row_end;
  const int nrows = row_end - row_begin;

  // Q rows -> sQ (9 swizzled [16 x 128 B] blocks); rows past the tile are zero, never written back.
  // fp8: scaled per row into f16 (sm90::q_row_scale), 1 / scale -> sQinv.
  float* sQinv = sRed + NT::RED_QINV;
  {
    const auto* q = static_cast<const uint16_t*>(p.q);
    constexpr int CHUNKS_PER_ROW = NT::D_QK / 8;                                  // 72
    constexpr int PER_THREAD = NT::ROWS * CHUNKS_PER_ROW / NT::CONSUMER_THREADS;  // 9
    if constexpr (NT::kScaledQ) {
      // Eight adjacent lanes per row, scaled into f16.
      static_assert(NT::CONSUMER_THREADS == 8 * NT::ROWS);
      const int row = tid >> 3, part = tid & 7;
      const uint16_t* src = nullptr;
      if (row < nrows) {
        const int r = row_begin + row;
        const int i = r / p.num_heads, h = r % p.num_heads;
        src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
      }
      const float inv = sm90::load_q_row_f16<8, NT::Q_BLOCK_BYTES>(src, sQ, row, part);
      if (part == 0) sQinv[row] = inv;
    } else {
      uint4 v[PER_THREAD];
#pragma unroll
      for (int k = 0; k < PER_THREAD; ++k) {
        const int c = tid + k * NT::CONSUMER_THREADS;
        const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
        v[k] = make_uint4(0, 0, 0, 0);
        if (row < nrows) {
          const int r = row_begin + row;
          const int i = r / p.num_heads, h = r % p.num_heads;
          const uint16_t* src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
          v[k] = __ldg(reinterpret_cast<const uint4*>(src) + col);
        }
      }
#pragma unroll
      for (int k = 0; k < PER_THREAD; ++k) {
        const int c = tid + k * NT::CONSUMER_THREADS;
        const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
        *reinterpret_cast<uint4*>(sQ + (col >> 3) * NT::Q_BLOCK_BYTES + sm90::sw128(row, col & 7)) =
            v[k];
      }
    }
    ptx::fence_proxy_async_smem();
  }

  int vis[4];  // last visible key per row slot
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int n = sm90::narrow_row(t, k);
    vis[k] = n < nrows ? wi.first_visible + (row_begin + n) / p.num_heads : seq_len - 1;
  }
  float acc[NT::V_BLOCKS][8];  // O^T: V column 64mb + narrow_key(w, g, i), row slot narrow_slot(i)
#pragma unroll
  for (int mb = 0; mb < NT::V_BLOCKS; ++mb) {
#pragma unroll
    for (int i = 0; i < 8; ++i) acc[mb][i] = 0.f;
  }
  float m_run[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
  float l_run[4] = {0.f, 0.f, 0.f, 0.f};

  ptx::named_bar_sync(1, NT::CONSUMER_THREADS);  // sQ complete

  // Each row slot's factor from scores to the log2 domain (fp8: times 1 / its Q scale, exact),
  // read where a softmax needs it.
  auto row_ssl = [&](float(&ssl)[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      ssl[k] =
          NT::kScaledQ ? p.score_scale_log2 * sQinv[sm90::narrow_row(t, k)] : p.score_scale_log2;
    }
  };
  const uint32_t sQ_addr = ptx::smem_addr(sQ);
  uint8_t* sP0 = smem + NT::OFF_P;
  uint8_t* sP1 = sP0 + NT::P_BYTES;
  uint8_t* sP0s = sP0 + 2 * NT::P_BYTES;  // bf16 only
  float* sPf0 = reinterpret_cast<float*>(smem + NT::OFF_PF);
  float* sPf1 = sPf0 + NT::ROWS * NT::PF_STRIDE;
  float* sMax0 = sRed;
  float* sMax1 = sRed + 64;
  const bool sum_thread = tid < 64;  // warps 0, 1: row tid / 4, quad lane tid % 4
  const int sr = tid >> 2, stw = tid & 3;
  // The denominator of row sr, kept by its 4 sum threads (the 64-row kernel's l, same order).
  float l_row = 0.f;

  // S^T of tile it over its 9 column blocks in the order FIRST, FIRST + 1, ... (mod 9).
  auto issue_s = [&](float(&sf)[8], int it, auto first_c) {
    constexpr int FIRST = decltype(first_c)::value;
#pragma unroll
    for (int i = 0; i < NT::COL_BLOCKS; ++i) {
      const int blk = (FIRST + i) % NT::COL_BLOCKS;
      const int L = it * NT::COL_BLOCKS + blk;
      ptx::mbar_wait(&full_bar[slot_of(L)], use_parity(L));
      ptx::wgmma_fence();
      const uint64_t desc_k = ptx::gmma_desc_sw128(s_slot + slot_of(L) * NT::BLOCK_BYTES, 16, 1024);
      const uint64_t desc_q = ptx::gmma_desc_sw128(sQ_addr + blk * NT::Q_BLOCK_BYTES, 16, 1024);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        ptx::wgmma_m64n16k16_ss<0, NT::MMA>(sf, desc_k + ((kk * 32) >> 4),
                                            desc_q + ((kk * 32) >> 4), (i | kk) != 0 ? 1 : 0);
      }
    }
    ptx::wgmma_commit();
  };
  // acc[mb] += V^T P^T for V blocks mb0..mb0+3 of tile it, P the bf16 block at sP.
  auto issue_pv = [&](int it, int mb0, const uint8_t* sP) {
    const uint64_t desc_p = ptx::gmma_desc_sw128(ptx::smem_addr(sP), 16, 1024);
    ptx::wgmma_fence();
#pragma unroll
    for (int m = 0; m < NT::V_HALF; ++m) {
      const int L = it * NT::COL_BLOCKS + mb0 + m;
      const uint64_t desc_v =
          ptx::gmma_desc_sw128(s_slot + slot_of(L) * NT::BLOCK_BYTES, NT::BLOCK_BYTES, 1024);
#pragma unroll
      for (int kk = 0; kk < NT::BLOCK_N / 16; ++kk) {
        ptx::wgmma_m64n16k16_ss<1, NT::MMA>(acc[mb0 + m], desc_v + ((kk * 16 * 128) >> 4),
                                            desc_p + ((kk * 32) >> 4), 1);
      }
    }
  };
  // One arrival per consumer warp once its wgmma reads of the blocks are complete. fp8: the
  // expansion writes the slot next (generic proxy), so the arrival releases.
  auto release = [&](int it, int blk0, int blk1) {
    __syncwarp();
    if (lane == 0) {
      for (int blk = blk0; blk < blk1; ++blk) {
        uint64_t* bar = &empty_bar[slot_of(it * NT::COL_BLOCKS + blk)];
        if constexpr (NT::kFp8) {
          ptx::mbar_arrive(bar);
        } else {
          ptx::mbar_arrive_cluster<false>(bar, 0);
        }
      }
    }
  };
  // bf16: the last tile of a split may end inside a page; its rows valid..63 must be zero before
  // P V reads them (0 * NaN is NaN). fp8's expansion writes them as zeros.
  auto zero_tail = [&](int it) {
    if constexpr (NT::kFp8) return;
    const int valid = min(NT::BLOCK_N, seq_len - kv_begin - it * NT::BLOCK_N);
    if (valid >= NT::BLOCK_N) return;
    for (int blk = 0; blk < NT::COL_BLOCKS; ++blk) {
      const int L = it * NT::COL_BLOCKS + blk;
      ptx::mbar_wait(&full_bar[slot_of(L)], use_parity(L));
    }
    constexpr int CHUNKS = NT::COL_BLOCKS * 8;
    for (int c = tid; c < (NT::BLOCK_N - valid) * CHUNKS; c += NT::CONSUMER_THREADS) {
      const int row = valid + c / CHUNKS, col = c % CHUNKS;
      const int L = it * NT::COL_BLOCKS + (col >> 3);
      *reinterpret_cast<uint4*>(smem + NT::OFF_SLOT + slot_of(L) * NT::BLOCK_BYTES + row * 128 +
                                (col & 7) * 16) = make_uint4(0, 0, 0, 0);
    }
    ptx::fence_proxy_async_smem();
    ptx::named_bar_sync(1, NT::CONSUMER_THREADS);
  };
  // P's factor into the MMAs (NT::P_SCALE; 1 for bf16).
  const float p_in[4] = {NT::P_SCALE, NT::P_SCALE, NT::P_SCALE, NT::P_SCALE};
  // Tile it: S^T (blocks from FIRST on), its rope block freed, softmax from the running max ->
  // scale sc, P in sf (f32) and sPf, bf16 P into sP, sc into sSc; ends at a barrier after which
  // sP, sPf and sSc are complete.
  auto tile_softmax = [&](float(&sf)[8], int it, auto first_c, float* sMax, float* sPf, float* sSc,
                          uint8_t* sP, float(&sc)[4]) {
    zero_tail(it);
    issue_s(sf, it, first_c);
    ptx::wgmma_wait<0>();
    release(it, NT::COL_BLOCKS - 1, NT::COL_BLOCKS);  // rope: read by S only
    float ssl[4];
    row_ssl(ssl);
    sm90::narrow_softmax<NT::RESCALE_SLACK>(sf, kv_begin + it * NT::BLOCK_N, w, g, t, vis, ssl,
                                            m_run, sc, sMax, sPf, NT::PF_STRIDE);
    sm90::narrow_store_p<NT::MMA>(sP, sf, w, g, t, p_in);
    if (w == 0 && g == 0) {
#pragma unroll
      for (int k = 0; k < 4; ++k) sSc[sm90::narrow_row(t, k)] = sc[k];
    }
  };
  // The sum threads' part once the tile's P V is issued: row sr's sum, l = l * sc + sum.
  auto tile_sum = [&](const float* sPf, const float* sSc) {
    if (sum_thread) {
      const float s = sm90::narrow_row_sum(sPf, NT::PF_STRIDE, sr, stw);
      l_row = l_row * sSc[sr] + s;
    }
  };
  float* sSc0 = sRed + 128;
  float* sSc1 = sRed + 144;
  float* sL = sRed + 160;

  for (int t0 = 0; t0 < n_tiles; t0 += 2) {
    const bool has1 = t0 + 1 < n_tiles;
    float sf0[8], sf1[8], sc0[4], sc1[4];
    if constexpr (NT::kFp8) {
      // fp8 (the 64-row kernel's plain pair order): O = O sc0 + P0 V0, then O = O sc1 + P1 V1.
      tile_softmax(sf0, t0, std::integral_constant<int, 0>{}, sMax0, sPf0, sSc0, sP0, sc0);
      ptx::fence_proxy_async_smem();
      ptx::named_bar_sync(1, NT::CONSUMER_THREADS);
      sm90::narrow_rescale(acc, sc0);
      issue_pv(t0, 0, sP0);
      issue_pv(t0, NT::V_HALF, sP0);
      ptx::wgmma_commit();
      tile_sum(sPf0, sSc0);
      ptx::wgmma_wait<0>();
      release(t0, 0, NT::V_BLOCKS);
      if (has1) {
        tile_softmax(sf1, t0 + 1, std::integral_constant<int, 0>{}, sMax1, sPf1, sSc1, sP1, sc1);
        ptx::fence_proxy_async_smem();
        ptx::named_bar_sync(1, NT::CONSUMER_THREADS);
        sm90::narrow_rescale(acc, sc1);
        issue_pv(t0 + 1, 0, sP1);
        issue_pv(t0 + 1, NT::V_HALF, sP1);
        ptx::wgmma_commit();
        tile_sum(sPf1, sSc1);
        ptx::wgmma_wait<0>();
        release(t0 + 1, 0, NT::V_BLOCKS);
      }
    } else {
      // bf16 (the 64-row kernel's seesaw order per pair):
      //   O_L = (O_L sc0 + P0 V0L) sc1 + P1 V1L;  O_R = O_R (sc0 sc1) + P1 V1R + bf16(P0 sc1) V0R.
      auto& acc_l = reinterpret_cast<float(&)[NT::V_HALF][8]>(acc[0]);
      auto& acc_r = reinterpret_cast<float(&)[NT::V_HALF][8]>(acc[NT::V_HALF]);
      tile_softmax(sf0, t0, std::integral_constant<int, 0>{}, sMax0, sPf0, sSc0, sP0, sc0);
      ptx::fence_proxy_async_smem();
      ptx::named_bar_sync(1, NT::CONSUMER_THREADS);
      sm90::narrow_rescale(acc_l, sc0);
      issue_pv(t0, 0, sP0);
      ptx::wgmma_commit();
      tile_sum(sPf0, sSc0);
      ptx::wgmma_wait<0>();
      release(t0, 0, NT::V_HALF);
      if (has1) {
        tile_softmax(sf1, t0 + 1, std::integral_constant<int, NT::V_HALF>{}, sMax1, sPf1, sSc1, sP1,
                     sc1);
        sm90::narrow_store_p<NT::MMA>(sP0s, sf0, w, g, t, sc1);  // P0 on t1's max, for V0R
        ptx::fence_proxy_async_smem();
        ptx::named_bar_sync(1, NT::CONSUMER_THREADS);
        float sc01[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) sc01[k] = sc0[k] * sc1[k];
        sm90::narrow_rescale(acc_l, sc1);
        sm90::narrow_rescale(acc_r, sc01);
        issue_pv(t0 + 1, 0, sP1);
        issue_pv(t0 + 1, NT::V_HALF, sP1);
        issue_pv(t0, NT::V_HALF, sP0s);
        ptx::wgmma_commit();
        tile_sum(sPf1, sSc1);
        ptx::wgmma_wait<0>();
        release(t0 + 1, 0, NT::V_BLOCKS);
        release(t0, NT::V_HALF, NT::V_BLOCKS);
      } else {
        sm90::narrow_rescale(acc_r, sc0);
        issue_pv(t0, NT::V_HALF, sP0);
        ptx::wgmma_commit();
        ptx::wgmma_wait<0>();
        release(t0, NT::V_HALF, NT::V_BLOCKS);
      }
    }
  }
  if (sum_thread && stw == 0) sL[sr] = l_row;
#pragma unroll
  for (int k = 0; k < 4; ++k) l_run[k] = 0.f;  // read from sL after the next barrier

  // ---- epilogue: O^T -> [16 rows x 512] f32 staging over the ring (every block was consumed),
  // then coalesced stores.
  ptx::named_bar_sync(1, NT::CONSUMER_THREADS);  // every warp's last wgmma reads are done, sL
#pragma unroll
  for (int k = 0; k < 4; ++k) l_run[k] = sL[sm90::narrow_row(t, k)];
  const bool direct = wi.n_splits == 1 && !p.plan.partials_only;
  float inv[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    // fp8: P entered the MMAs times P_SCALE (a power of two: the product is exact).
    inv[k] = l_run[k] > 0.f ? p.out_scale / l_run[k] * (1.f / NT::P_SCALE) : 0.f;
  }
  float* sOut = reinterpret_cast<float*>(smem + NT::OFF_SLOT);
#pragma unroll
  for (int mb = 0; mb < NT::V_BLOCKS; ++mb) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int k = sm90::narrow_slot(i);
      sOut[sm90::narrow_row(t, k) * NT::OUT_STRIDE + 64 * mb + sm90::narrow_key(w, g, i)] =
          acc[mb][i] * inv[k];
    }
  }
  // lse: lanes 0..3 of warp 0 hold all 16 rows (4 each).
  if (w == 0 && g == 0) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int n = sm90::narrow_row(t, k);
      if (n >= nrows) continue;
      const float l = l_run[k];
      // A row with no visible key in this split is the merge's neutral element: lse = -inf.
      const float lse = l > 0.f ? (m_run[k] + log2f(l)) * 0.69314718055994530942f : -INFINITY;
      const int r = row_begin + n;
      const int i = r / p.num_heads, h = r % p.num_heads;
      if (direct) {
        p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = lse;
      } else {
        p.lse_part[static_cast<int64_t>(p.plan.part_begin[b] + split) * p.rows + r] = lse;
      }
    }
  }
  ptx::named_bar_sync(1, NT::CONSUMER_THREADS);  // sOut complete
  // One row per warp at a time, 4 float4 per lane (columns 4 lane + 128 j), all four loaded before
  // the four stores, the row's (i, h) split once. (A loop of one float2 per thread and iteration,
  // 32 iterations each a shared-load round trip plus a division by the head count, took 2.2-2.6
  // µs per CTA on an H200.)
  constexpr int WARPS = NT::CONSUMER_THREADS / 32;
  constexpr int PER_LANE = NT::D_V / 128;  // float4 per lane and row
#pragma unroll
  for (int k = 0; k < NT::ROWS / WARPS; ++k) {
    const int n = w + WARPS * k;
    if (n >= nrows) break;
    float4 v[PER_LANE];
#pragma unroll
    for (int j = 0; j < PER_LANE; ++j) {
      v[j] = *reinterpret_cast<const float4*>(sOut + n * NT::OUT_STRIDE + 128 * j + 4 * lane);
    }
    const int r = row_begin + n;
    const int i = r / p.num_heads, h = r % p.num_heads;
    if (direct) {
      auto* out = static_cast<uint16_t*>(p.out) + b * p.out_stride[0] + i * p.out_stride[1] +
                  h * p.out_stride[2] + 4 * lane;
#pragma unroll
      for (int j = 0; j < PER_LANE; ++j) {
        *reinterpret_cast<uint2*>(out + 128 * j) =
            make_uint2(ptx::pack_bf16x2(v[j].x, v[j].y), ptx::pack_bf16x2(v[j].z, v[j].w));
      }
    } else {
      const int64_t prow = static_cast<int64_t>(p.plan.part_begin[b] + split) * p.rows + r;
      float* o = p.o_part + prow * NT::D_V + 4 * lane;
#pragma unroll
      for (int j = 0; j < PER_LANE; ++j) *reinterpret_cast<float4*>(o + 128 * j) = v[j];
    }
  }
}

template <typename NT>
cudaError_t init_verify_narrow_sm90() {
  return cudaFuncSetAttribute(verify_narrow_kernel_sm90<NT>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize, NT::SMEM_BYTES);
}

template <typename NT>
cudaError_t run_verify_narrow_sm90(const VerifyParams& p, int grid_y, cudaStream_t stream) {
  cudaLaunchConfig_t cfg = {};
  // Split-major 1-D grid, as the 64-row kernel's (sm90::work_item); no clusters.
  cfg.gridDim =
      dim3(static_cast<unsigned>(p.plan.total_groups) * static_cast<unsigned>(grid_y), 1, 1);
  cfg.blockDim = dim3(NT::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = NT::SMEM_BYTES;
  cfg.stream = stream;
  return cudaLaunchKernelEx(&cfg, verify_narrow_kernel_sm90<NT>, p);
}

}  // namespace mlaspec::attn::cuda
