// The MLA verify-attention kernel for Hopper (sm_90a): TMA + mbarrier pipeline, warp-specialised
// producer, wgmma for Q K^T and P V. Shared by cuda_fold and cuda_rowwise.
//
// One CTA = one split (a KV range of one request) x one tile of up to 64 query rows.
//   fold:    the request's rows r = i*H + h tiled by 64; the row tiles of one split form a thread-
//            block cluster and every KV tile is fetched from HBM once: each CTA issues the TMA
//            boxes of its share and multicasts them to the whole cluster.
//   rowwise: each query token's H rows tiled by 64, one CTA per tile, no cluster.
// Warpgroup 2 is the producer (copy warps issue the TMA copies into a 2-stage ring guarded by
// full/empty mbarriers; for fp8 the whole warpgroup also dequantises; setmaxnreg hands its
// registers to the consumers). Warpgroups 0 and 1 consume, WG k owning O[:, 256k..256k+255] (wgmma
// m64n256k16 for P V, V MN-major), as a ping-pong over tile pairs: KV tiles go in pairs (t0, t1)
// = stages (0, 1). WG0 computes S = Q K^T for all 64 keys of t0 (wgmma m64n64k16), its softmax
// and P, while WG1 does the same for t1; the running max passes WG0 -> WG1 -> WG0 through shared
// memory (mbarrier handoffs), and each WG accumulates P0 V0 and P1 V1 into its column half. Stages
// have one full barrier per column block: Q K^T starts on the first block while the rest of the
// tile is still landing. bf16 frees each stage in two halves (V-left, V-right + rope), each as soon
// as its last reader is done, in FlashMLA's "seesaw" order: WG1 does its own P1 V1R first and WG0
// hands it P0 rescaled to WG1's max, so stage 1's V-right half is free mid-pair and the next t1's
// Q K^T starts there. bf16's halves are slots of their own: t0 always lands its V-left in stage 0
// and t1 in stage 1, but the V-right + rope halves alternate by pair, t0 taking the one freed
// mid-pair (by WG1's P1 V1R) and t1 the one freed last (by WG1's P0 V0R), so WG0's S0, which every
// pair waits on, finds both halves landed. fp8 keeps the plain pair order (no seesaw: its
// expansion writes the V-right half only once WG1 is done with it, so an early release buys
// nothing) and frees the V-left half (WG0) to the next tile's raw codes, the V-right + rope half
// (WG1) to its expansion. P0 goes over t0's rope block (columns 512..575: read by Q K^T only, dead
// once S is computed); bf16's P1 has its own block (fp8's goes over t1's rope block).
//
// Shared-memory tiles use the 128B-swizzle layout wgmma and TMA agree on: a [64 rows x 576] bf16
// tile is 9 column blocks of [64 rows x 128 B], 16-byte chunk c of row r stored at chunk c ^ (r%8).
// bf16 KV lands that way straight from TMA. fp8 KV lands as raw codes (TMA, [64 keys x 64 B] per
// column block) in the V-left half of the stage (rope: in the P1 block), and the producer
// warpgroup expands them (exactly) into the swizzled f16 tile in place, so the consumers are the
// same for both dtypes but for the MMAs' operand type (fp8: f16, with Q scaled per row and P by
// 2^7; Sm90Traits::MMA) and fp8 moves half the bytes with the same shared memory.
//
// fp8 math (Fp8MathKv, VerifyOptions::fp8_math; fp8_math.cuh): the same pipeline, pair order and
// handoffs with e4m3 MMAs. The raw codes land 64B-swizzled and are Q K^T's B operand as they are;
// the producer warpgroup transposes each tile's V into its own K-major buffer (V^T) instead of
// expanding; Q is rounded to e4m3 per row, P to e4m3(P * 448) against the exact running max, and
// P V is summed per tile in 32-column chunks added to O in f32 (the tensor cores' e4m3
// accumulation keeps ~13 bits).
//
// Bitwise contract: a row's arithmetic depends only on key positions (which warpgroup computes
// a tile depends on its position in the split, never on the batch), masked tiles are exact
// no-ops, so fold == rowwise and verify row i == the decode call.
//
// Barrier scopes: waits acquire at CTA scope (consumers read only shared memory, which the copies'
// complete_tx makes visible); bf16 slots are released with relaxed arrivals (their reads were
// wgmma operand reads that wgmma.wait_group already completed), fp8 slots with release arrivals
// (release_stage). Every shared-memory pointer derives from smem_raw by an offset, so the compiler
// keeps 32-bit shared addresses.
//
// Roles (hopper/): kernel_traits.cuh (Sm90Traits: tiles, stages, smem layout), tile_scheduler.cuh
// (the CTA's work item), producer.cuh (wide_producer: TMA copies, fp8 expansion), pipeline.cuh
// (the stage protocol), mainloop_mma.cuh (Q K^T, P V), softmax.cuh, fp8_expand.cuh. The consumer
// warpgroups' path (Q load, the ping-pong, the epilogue) stays written out in the kernel: as
// functions of their own, even inlined, the optimizer simplifies them before it sees the kernel
// around them and the SASS changes (cuobjdump), so moving them needs a GPU run to land.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../det_fold.cuh"
#include "../ptx.cuh"
#include "../verify_params.h"
#include "fp8_expand.cuh"
#include "fp8_math.cuh"
#include "kernel_traits.cuh"
#include "mainloop_mma.cuh"
#include "pipeline.cuh"
#include "producer.cuh"
#include "softmax.cuh"
#include "tile_scheduler.cuh"
#include "utils.cuh"

namespace mlaspec::attn::cuda {

template <typename KT>
__global__ void __launch_bounds__(KT::NUM_THREADS, 1)
    verify_kernel_sm90(const __grid_constant__ VerifyParams p) {
  extern __shared__ uint8_t smem_raw[];
  // Aligned by an offset from smem_raw (not by casting through an integer), so the compiler
  // still knows every derived pointer is shared memory: 32-bit addresses and LDS/STS instead of
  // 64-bit generic pointers, which cost registers in the consumer loop. Written out here and in
  // the narrow kernel: the same line behind a helper taking smem_raw changes the SASS of every
  // instantiation (cuobjdump), so it would need a GPU run to land.
  uint8_t* smem = smem_raw + ((1024u - (ptx::smem_addr(smem_raw) & 1023u)) & 1023u);
  uint8_t* sQ = smem + KT::OFF_Q;
  uint8_t* sStage = smem + KT::OFF_STAGE;
  float* sRed = reinterpret_cast<float*>(smem + KT::OFF_RED);
  uint64_t* full_bar = reinterpret_cast<uint64_t*>(smem + KT::OFF_BAR);  // [STAGES][FULL_BARS]
  // [STAGES][EMPTY_BARS]: V-left half, V-right + rope half (Sm90Traits::V_HALF).
  uint64_t* empty_bar = full_bar + KT::STAGES * KT::FULL_BARS;
  // Ping-pong handoffs, per pair: [0] WG0 -> WG1 (t0's max), [1] WG1 -> WG0 (t1's max, P1
  // stored), [2] WG0 -> WG1 (P0 stored); [3] WG0 -> WG1 once, the final denominator (its own
  // barrier: after a last pair without t1, WG0 has nothing to wait for, so a second arrive on [0]
  // could complete a phase WG1 has not waited for yet).
  uint64_t* hand_bar = empty_bar + KT::STAGES * KT::EMPTY_BARS;
  // fp8: [STAGES][2], raw blocks landed (Sm90Traits::RAW_BARS); fp8 math: [STAGES], V^T written.
  uint64_t* raw_bar = hand_bar + 4;
  uint64_t* q_bar = raw_bar + KT::RAW_BARS;  // bf16 with p.q_tma: Q's boxes landed
  const bool q_by_tma = !KT::kFp8 && !KT::kFp8Math && p.q_tma != 0;

  const int warp = sm90::uniform_warp_index();
  const int lane = threadIdx.x % 32;
  const uint32_t cta_rank = ptx::cluster_ctarank();
  const uint32_t n_cta = ptx::cluster_nctarank();

  // ---- work item ----
  const sm90::WorkItem w = sm90::work_item<KT::BLOCK_N>(p, cta_rank, n_cta);
  const int tiles_per_split = w.tiles_per_split;
  const int b = w.b, n_splits = w.n_splits, seq_len = w.seq_len;
  const int first_visible = w.first_visible, row_begin = w.row_begin, row_end = w.row_end;
  // The split being computed (the group's splits in turn) and its keys. The host groups splits
  // only when a whole chunk is an even number of tile pairs (deterministic chunks: 16 or 32
  // tiles), so after a whole split every barrier has completed an even number of phases and the
  // next split starts on the phases a fresh CTA would; only hand[3] (once per split) alternates.
  // A split cut short (the request's keys, or its rows' visible keys, end inside
  // it) is followed in its group only by splits without tiles, which touch no stage barrier.
  int split = 0, kv_begin = 0, n_tiles = 0;
  auto begin_split = [&](int ci) {
    split = w.split_first + ci;
    sm90::split_keys<KT::BLOCK_N>(p, w, split, &kv_begin, &n_tiles);
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < KT::STAGES; ++s) {
      for (int blk = 0; blk < KT::COL_BLOCKS; ++blk) {
        // bf16: the copies' complete_tx; fp8: every dequantising thread, after its share
        // (fp8_tile's rope block: its TMA's complete_tx).
        const bool copied = !KT::kFp8 || (KT::kTile && blk == KT::COL_BLOCKS - 1);
        ptx::mbar_init(&full_bar[s * KT::FULL_BARS + blk], copied ? 1 : KT::NUM_DEQUANT_THREADS);
      }
      if constexpr (KT::kFp8) {
        for (int g = 0; g < KT::RAW_BARS / KT::STAGES; ++g) ptx::mbar_init(&raw_bar[s * 2 + g], 1);
      }
      if constexpr (KT::kFp8Math) {
        // V^T written: every transposing thread. Raw tile free: the S warpgroup's 4 warps and the
        // 128 transposing threads; V^T free: the 8 consumer warps (this CTA only: no clusters).
        ptx::mbar_init(&raw_bar[s], KT::NUM_DEQUANT_THREADS);
        ptx::mbar_init(&empty_bar[s * KT::EMPTY_BARS],
                       KT::NUM_CONSUMER_WARPS / 2 + KT::NUM_DEQUANT_THREADS);
        ptx::mbar_init(&empty_bar[s * KT::EMPTY_BARS + 1], KT::NUM_CONSUMER_WARPS);
      } else {
        // One arrival per releasing warp (release_stage): each half is released by one
        // warpgroup, in every CTA of the cluster where copies land in it (bf16's halves, fp8's
        // V-left), in this CTA only where they do not (fp8's V-right + rope: only this CTA's
        // expansion writes it).
        for (int h = 0; h < KT::EMPTY_BARS; ++h)
          ptx::mbar_init(&empty_bar[s * KT::EMPTY_BARS + h],
                         (KT::kFp8 && h == 1 ? 1 : n_cta) * KT::NUM_CONSUMER_WARPS / 2);
      }
    }
    // Every thread of the handing-over warpgroup arrives (each releases its own writes).
    for (int h = 0; h < 4; ++h) ptx::mbar_init(&hand_bar[h], 128);
    ptx::mbar_init(q_bar, 1);
    ptx::fence_mbar_init();
  }
  // Peers multicast into this CTA's stages and arrive on its barriers: they must see the inits.
  ptx::cluster_sync();

  if (warp >= KT::PRODUCER_WARP) {
    sm90::wide_producer<KT>(p, w, smem, sQ, sStage, full_bar, empty_bar, raw_bar, q_bar, q_by_tma,
                            warp, lane, cta_rank, n_cta, b, seq_len, row_begin, kv_begin, n_tiles,
                            begin_split);
  } else {
    // ---------------------------------------------------------------- consumer warpgroups
    ptx::setmaxnreg_inc<KT::CONSUMER_REGS>();
    const int tid = threadIdx.x;
    const int rg = warp & 3;   // rows 16*rg.. of the wgmma M=64 (warp rank in its warpgroup)
    const int kh = warp >> 2;  // warpgroup: key half of S, column half of O
    const int g = lane >> 2, t = lane & 3;
    const int r_loc[2] = {rg * 16 + g, rg * 16 + g + 8};

    // Q rows -> sQ (swizzled); rows past the tile are never written back (zero when loaded here,
    // other rows' Q or zero when copied by the producer's boxes).
    // fp8_e4m3: 1 / the Q scale of each row (sm90::q_row_scale). fp8_tile loads Q as bf16 does.
    // fp8 math: each row's Q scale s_q (sm90::load_q_row_e4m3).
    float* sQinv = sRed + KT::RED_QINV;
    {
      const auto* q = static_cast<const uint16_t*>(p.q);
      constexpr int CHUNKS_PER_ROW = KT::D_QK / 8;
      constexpr int PER_THREAD = KT::BLOCK_M * CHUNKS_PER_ROW / KT::NUM_CONSUMER_THREADS;  // 18
      if constexpr (KT::kScaledQ || KT::kFp8Math) {
        // Four adjacent lanes per row, scaled into f16 (fp8 math: rounded to e4m3 as the
        // reference rounds it).
        static_assert(KT::NUM_CONSUMER_THREADS == 4 * KT::BLOCK_M);
        const int row = tid >> 2, part = tid & 3, r = row_begin + row;
        const uint16_t* src = nullptr;
        if (r < row_end) {
          const int i = r / p.num_heads, h = r % p.num_heads;
          src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
        }
        float inv;
        if constexpr (KT::kFp8Math) {
          inv = sm90::load_q_row_e4m3<KT::BLOCK_BYTES>(src, sQ, row, part);
        } else {
          inv = sm90::load_q_row_f16<4, KT::BLOCK_BYTES>(src, sQ, row, part);
        }
        if (part == 0) sQinv[row] = inv;
      } else if (q_by_tma) {
        ptx::mbar_wait(q_bar, 0);  // the producer's boxes (async proxy: wgmma reads them as is)
      } else {
        // All of this thread's loads in flight before their stores: one round trip, not 18.
        uint4 v[PER_THREAD];
#pragma unroll
        for (int k = 0; k < PER_THREAD; ++k) {
          const int c = tid + k * KT::NUM_CONSUMER_THREADS;
          const int r = row_begin + c / CHUNKS_PER_ROW;
          v[k] = make_uint4(0, 0, 0, 0);
          if (r < row_end) {
            const int i = r / p.num_heads, h = r % p.num_heads;
            const uint16_t* src = q + b * p.q_stride[0] + i * p.q_stride[1] + h * p.q_stride[2];
            v[k] = __ldg(reinterpret_cast<const uint4*>(src) + c % CHUNKS_PER_ROW);
          }
        }
#pragma unroll
        for (int k = 0; k < PER_THREAD; ++k) {
          const int c = tid + k * KT::NUM_CONSUMER_THREADS;
          const int row = c / CHUNKS_PER_ROW, col = c % CHUNKS_PER_ROW;
          *reinterpret_cast<uint4*>(sQ + (col >> 3) * KT::BLOCK_BYTES + sm90::sw128(row, col & 7)) =
              v[k];
        }
      }
      // Generic-proxy writes that wgmma (async proxy) reads next.
      ptx::fence_proxy_async_smem();
    }
    // bf16: the producer may now copy into stage 1 (kQStoredBar).
    if constexpr (!KT::kFp8 && !KT::kFp8Math) ptx::named_bar_arrive(kQStoredBar, KT::NUM_THREADS);

    int vis[2];
    for (int k = 0; k < 2; ++k) {
      const int r = row_begin + r_loc[k];
      vis[k] = r < row_end ? first_visible + r / p.num_heads : seq_len - 1;
    }

    ptx::named_bar_sync(1, KT::NUM_CONSUMER_THREADS);  // sQ complete

    const uint32_t sQ_addr = ptx::smem_addr(sQ);
    // This thread's rows' factors from scores to the log2 domain (fp8: times 1 / the row's Q
    // scale, exact; fp8 math: times s_q), read where a softmax needs them: two more live
    // registers through the pair loop spill.
    auto row_ssl = [&](float(&ssl)[2]) {
      for (int k = 0; k < 2; ++k) {
        ssl[k] = KT::kScaledQ || KT::kFp8Math ? p.score_scale_log2 * sQinv[r_loc[k]]
                                              : p.score_scale_log2;
      }
    };

    // The lse of this thread's rows' block states (folded merge tree), across the group's splits.
    float fold_lse[2] = {-INFINITY, -INFINITY};
    // The group's splits in turn, each from a fresh accumulator (Q stays).
    for (int ci = 0; ci < w.split_count; ++ci) {
      begin_split(ci);
      float acc[128];       // O[rows, 256*kh + 8n + 2t + (e&1)], row g + 8*(e>>1): acc[4n + e]
      float pv_tmp[2][16];  // fp8 math: two 32-column chunks of a tile's P V (sm90::pv_e4m3)
#pragma unroll
      for (int n = 0; n < 128; ++n) acc[n] = 0.f;
      float m_run[2] = {-INFINITY, -INFINITY};  // running max of scores, log2 domain
      float l_run[2] = {0.f, 0.f};  // denominator (WG0's running total; WG1 gets it at the end)
      // fp8 math: the sum of the rounded P (the output's denominator; l_run, of the unrounded P,
      // gives the lse), kept as l_run is.
      float l8_run[2] = {0.f, 0.f};
      // Both WGs hold the same m_run after every tile (handed over).

      {
        // ------------------------------------------------ ping-pong over tile pairs
        // Per pair (t0 in stage 0, t1 in stage 1), after FlashMLA's "seesaw" order:
        //   WG0: S0 = Q K0^T (blocks 0..8), softmax -> m0, scale0; hand[0]; O_L = O_L * scale0 +
        //        P0 V0L (P0 from registers); free stage 0's V-left; wait hand[1] (m1, scale1, sum1,
        //        P1 stored); P0 * scale1 -> stage 0's rope block; hand[2]; O_L = O_L * scale1 +
        //        P1 V1L (P1 from its own block, OFF_P1), left in flight: the next pair frees stage
        //        1's V-left once it has retired, between the halves of its S0.
        //   WG1: S1 = Q K1^T (blocks 4..8, 0..3: the V-right + rope half is freed first); wait
        //        hand[0]; softmax from m0 -> m1, scale1; P1 -> OFF_P1; hand[1]; O_R = O_R *
        //        scale0 * scale1 + P1 V1R (P1 from registers); wait hand[2]; O_R += (P0 scale1)
        //        V0R; free stage 1's then stage 0's V-right + rope half.
        // Handoff slots in sRed: {m0, scale0} and {m1, scale1, sum1} per row; each
        // WG reads the other's slot before its own next arrive, so one slot per tile suffices. WG0
        // keeps the denominator (l = (l * scale0 + sum0) * scale1 + sum1) and hands the total to
        // WG1 after the last pair (hand[3]). Without t1, scale1 = 1 and P0 is stored as is.
        // [5][64]: m0, scale0 (WG0 -> WG1); m1, scale1, sum1 (WG1 -> WG0).
        const float one[2] = {1.f, 1.f};
        // P's factor into the MMAs (KT::P_SCALE; 1 for bf16).
        const float p_in[2] = {KT::P_SCALE, KT::P_SCALE};
        float* sM0 = sRed;
        float* sSc0 = sRed + 64;
        float* sM1 = sRed + 128;
        float* sSc1 = sRed + 192;
        float* sSum1 = sRed + 256;
        // One thread per row (t == 0) writes a slot; every thread reads its rows'.
        auto give_t0 = [&](const float(&sc)[2]) {
          if (t == 0) {
            for (int k = 0; k < 2; ++k) {
              sM0[r_loc[k]] = m_run[k];
              sSc0[r_loc[k]] = sc[k];
            }
          }
          ptx::mbar_arrive(&hand_bar[0]);
        };
        auto take_t0 = [&](float(&sc0)[2]) {
          for (int k = 0; k < 2; ++k) {
            m_run[k] = sM0[r_loc[k]];
            sc0[k] = sSc0[r_loc[k]];
          }
        };
        auto take_t1 = [&](float(&sc1)[2], float(&sum1)[2]) {
          for (int k = 0; k < 2; ++k) {
            m_run[k] = sM1[r_loc[k]];
            sc1[k] = sSc1[r_loc[k]];
            sum1[k] = sSum1[r_loc[k]];
          }
        };
        // WG1's tile t1 (S complete): softmax from t0's max, P1 -> sP1, slot 1, hand[1].
        auto softmax_t1_hand_over = [&](float(&sf)[32], uint32_t(&pb)[16], int key1, uint8_t* sP1,
                                        float(&sc)[2], float(&sum)[2]) {
          float ssl[2];
          row_ssl(ssl);
          sm90::softmax_tile64<KT::RESCALE_SLACK>(sf, key1, t, vis, ssl, m_run, sc, sum);
          sm90::pack_p<KT::MMA>(pb, sf, p_in);
          sm90::store_p(sP1, pb, r_loc, t);
          if (t == 0) {
            for (int k = 0; k < 2; ++k) {
              sM1[r_loc[k]] = m_run[k];
              sSc1[r_loc[k]] = sc[k];
              sSum1[r_loc[k]] = sum[k];
            }
          }
          ptx::mbar_arrive(&hand_bar[1]);
        };
        uint8_t* stage0 = sStage;
        uint8_t* stage1 = sStage + KT::STAGE_BYTES;
        const uint32_t st0 = ptx::smem_addr(stage0), st1 = ptx::smem_addr(stage1);
        uint64_t* full0 = &full_bar[0];
        uint64_t* full1 = &full_bar[KT::FULL_BARS];
        // empty_bar [stage][EMPTY_BARS]: the halves V-left, V-right + rope.
        uint64_t* empty0_l = &empty_bar[0];
        uint64_t* empty1_l = &empty_bar[KT::EMPTY_BARS];
        constexpr int VH = KT::V_HALF;
        const int wg_tid = tid & 127;
        for (int t0 = 0; t0 < n_tiles; t0 += 2) {
          const bool has1 = t0 + 1 < n_tiles;
          const uint32_t ph = (t0 >> 1) & 1;  // stage phase = handoff phase = pair parity
          const int key0 = kv_begin + t0 * KT::BLOCK_N;
          float sf[32], sc[2], sum[2];
          uint32_t pb[16];
          // bf16: the stages holding t0's and t1's V-right + rope halves (sm90::right_half_stage),
          // as offsets from stage 0 (st0 + r0_off, st0 + r1_off), and their full barriers.
          const uint32_t rs0 = sm90::right_half_stage(ph, 0), rs1 = sm90::right_half_stage(ph, 1);
          const uint32_t r0_off = rs0 * KT::STAGE_BYTES, r1_off = rs1 * KT::STAGE_BYTES;
          uint64_t* full0_r = &full_bar[rs0 * KT::FULL_BARS];
          uint64_t* full1_r = &full_bar[rs1 * KT::FULL_BARS];
          if constexpr (KT::kFp8Math) {
            // fp8 math, the plain pair order with P V promoted (sm90::pv_e4m3):
            // WG0: S0 = Q8 K0^T from stage 0's raw tile, free it; softmax (exact running max),
            // P0 rounded to e4m3 in registers (its A fragments) and stored for WG1; hand[0];
            // O_L = O_L * scale0 + P0 V0L once V^T 0 is written, free it; wait hand[1]; load P1;
            // O_L = O_L * scale1 + P1 V1L, free V^T 1.
            // WG1: S1 from stage 1's raw tile; wait hand[0]; free the raw tile; softmax from m0,
            // P1 stored, hand[1]; load P0: O_R = O_R * scale0 + P0 V0R, O_R = O_R * scale1 + P1
            // V1R, freeing each V^T.
            // P buffers alternate by pair parity: WG1 loads P0 after its hand[1], so WG0's next
            // P0 store (before the next pair's hand[1] wait) must not land on it; WG0 has loaded
            // P1 before it hands over the next pair's t0.
            uint64_t* vt_full = raw_bar;
            const uint32_t vt_addr = ptx::smem_addr(smem + KT::OFF_VT);
            const uint32_t p8 = ptx::smem_addr(smem + KT::OFF_P8) + ph * 2 * KT::P8_BYTES;
            float* sSum81 = sRed + KT::RED_SUM8;
            float sum8[2];
            uint32_t pa[8];
            if (kh == 0) {
              sm90::issue_qk_e4m3<KT>(sf, sQ_addr, st0, full0, ph);
              ptx::wgmma_wait<0>();
              sm90::release_local(empty0_l, lane);
              float ssl[2];
              row_ssl(ssl);
              sm90::softmax_tile64<KT::RESCALE_SLACK>(sf, key0, t, vis, ssl, m_run, sc, sum);
              sm90::quantize_p(sf, pa, sum8);
              sm90::store_p8(p8, pa, wg_tid);
              give_t0(sc);
              for (int k = 0; k < 2; ++k) {
                l_run[k] = l_run[k] * sc[k] + sum[k];
                l8_run[k] = l8_run[k] * sc[k] + sum8[k];
              }
              ptx::mbar_wait(&vt_full[0], ph);
              sm90::pv_e4m3(acc, pv_tmp, pa, vt_addr, sc);
              sm90::release_local(&empty_bar[1], lane);
              if (has1) {
                ptx::mbar_wait(&hand_bar[1], ph);
                take_t1(sc, sum);
                for (int k = 0; k < 2; ++k) {
                  l_run[k] = l_run[k] * sc[k] + sum[k];
                  l8_run[k] = l8_run[k] * sc[k] + sSum81[r_loc[k]];
                }
                sm90::load_p8(pa, p8 + KT::P8_BYTES, wg_tid);
                ptx::mbar_wait(&vt_full[1], ph);
                sm90::pv_e4m3(acc, pv_tmp, pa, vt_addr + KT::VT_BYTES, sc);
                sm90::release_local(&empty_bar[KT::EMPTY_BARS + 1], lane);
              }
            } else {
              if (has1) sm90::issue_qk_e4m3<KT>(sf, sQ_addr, st1, full1, ph);
              ptx::mbar_wait(&hand_bar[0], ph);
              float sc0[2];
              take_t0(sc0);
              ptx::wgmma_wait<0>();  // S of t1
              if (has1) {
                sm90::release_local(empty1_l, lane);
                float ssl[2];
                row_ssl(ssl);
                sm90::softmax_tile64<KT::RESCALE_SLACK>(sf, key0 + KT::BLOCK_N, t, vis, ssl, m_run,
                                                        sc, sum);
                sm90::quantize_p(sf, pa, sum8);
                sm90::store_p8(p8 + KT::P8_BYTES, pa, wg_tid);
                if (t == 0) {
                  for (int k = 0; k < 2; ++k) {
                    sM1[r_loc[k]] = m_run[k];
                    sSc1[r_loc[k]] = sc[k];
                    sSum1[r_loc[k]] = sum[k];
                    sSum81[r_loc[k]] = sum8[k];
                  }
                }
                ptx::mbar_arrive(&hand_bar[1]);
              }
              sm90::load_p8(pa, p8, wg_tid);  // WG0 stored P0 before hand[0]
              ptx::mbar_wait(&vt_full[0], ph);
              sm90::pv_e4m3(acc, pv_tmp, pa, vt_addr + 256 * 64, sc0);
              sm90::release_local(&empty_bar[1], lane);
              if (has1) {
                // P1 back from its buffer (held through P0 V0R, its 8 registers spill).
                sm90::load_p8(pa, p8 + KT::P8_BYTES, wg_tid);
                ptx::mbar_wait(&vt_full[1], ph);
                sm90::pv_e4m3(acc, pv_tmp, pa, vt_addr + KT::VT_BYTES + 256 * 64, sc);
                sm90::release_local(&empty_bar[KT::EMPTY_BARS + 1], lane);
              }
            }
          } else if constexpr (KT::kFp8) {
            // fp8 keeps the plain pair order (its expansion writes the V-right + rope half only
            // once WG1's P V is done with it, so the seesaw's early V-right release buys nothing).
            // WG0: S0, softmax, P0 over t0's rope block, hand[0], P0 V0L, free stage 0's V-left
            // (the next t0's raw codes land there); wait hand[1]; P1 V1L (stage 1's V-left is
            // freed at the next pair's start).
            // WG1: S1; wait hand[0]; softmax, P1 over t1's rope block, hand[1]; P0 V0R, free
            // stage 0's V-right + rope; P1 V1R, free stage 1's (this CTA's expansion only).
            if (kh == 0) {
              if (t0 > 0) {
                ptx::wgmma_wait<0>();  // this WG's P1 V1L of the previous pair
                sm90::release_stage<true>(empty1_l, n_cta, lane);
              }
              sm90::issue_qk64<KT, 0, 0, KT::COL_BLOCKS>(sf, sQ_addr, st0, full0, ph);
              ptx::wgmma_wait<0>();
              float ssl[2];
              row_ssl(ssl);
              sm90::softmax_tile64<KT::RESCALE_SLACK>(sf, key0, t, vis, ssl, m_run, sc, sum);
              sm90::pack_p<KT::MMA>(pb, sf, p_in);
              sm90::store_p(stage0 + KT::ROPE_OFF, pb, r_loc, t);
              give_t0(sc);
              sm90::rescale_acc(acc, sc);
              for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * sc[k] + sum[k];
              sm90::issue_pv<KT>(acc, st0 + KT::ROPE_OFF, st0);
              ptx::wgmma_wait<0>();
              sm90::release_stage<true>(empty0_l, n_cta, lane);
              if (has1) {
                ptx::mbar_wait(&hand_bar[1], ph);
                take_t1(sc, sum);
                sm90::rescale_acc(acc, sc);
                for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * sc[k] + sum[k];
                for (int blk = 0; blk < VH; ++blk) ptx::mbar_wait(&full1[blk], ph);
                sm90::issue_pv<KT>(acc, st1 + KT::ROPE_OFF, st1);
              }
            } else {
              if (has1) sm90::issue_qk64<KT, 0, 0, KT::COL_BLOCKS>(sf, sQ_addr, st1, full1, ph);
              ptx::mbar_wait(&hand_bar[0], ph);
              float sc0[2];
              take_t0(sc0);
              ptx::wgmma_wait<0>();  // S of t1
              if (has1)
                softmax_t1_hand_over(sf, pb, key0 + KT::BLOCK_N, stage1 + KT::ROPE_OFF, sc, sum);
              sm90::rescale_acc(acc, sc0);
              for (int blk = VH; blk < 2 * VH; ++blk) ptx::mbar_wait(&full0[blk], ph);
              sm90::issue_pv<KT>(acc, st0 + KT::ROPE_OFF, st0 + VH * KT::BLOCK_BYTES);
              ptx::wgmma_wait<0>();
              sm90::release_local(empty0_l + 1, lane);
              if (has1) {
                sm90::rescale_acc(acc, sc);
                sm90::issue_pv<KT>(acc, st1 + KT::ROPE_OFF, st1 + VH * KT::BLOCK_BYTES);
                ptx::wgmma_wait<0>();  // stage 1's V-right + rope is expanded into next
                sm90::release_local(empty1_l + 1, lane);
              }
            }
          } else if (kh == 0) {
            const int valid = min(KT::BLOCK_N, seq_len - key0);
            if (!KT::kFp8 && valid < KT::BLOCK_N)
              sm90::zero_tail_rows<KT>(stage0, sStage + r0_off, full0, full0_r, ph, valid, wg_tid,
                                       4);
            // This WG's P1 V1L of the previous pair frees stage 1's V-left half. With S0's first
            // blocks queued behind it the tensor cores stay busy (compute-bound), but if they have
            // not landed the release waits for them: when this CTA alone reads its split's KV
            // (memory-bound), free the half first so the next copy is not held up behind S0.
            if (tiles_per_split == 1) {
              if (t0 > 0) {
                ptx::wgmma_wait<0>();
                sm90::release_stage<KT::kFp8>(empty1_l, n_cta, lane);
              }
              sm90::issue_qk64<KT, 0, 0, VH>(sf, sQ_addr, st0, full0, ph);
              sm90::issue_qk64<KT, 0, VH, KT::COL_BLOCKS>(sf, sQ_addr, st0 + r0_off, full0_r, ph);
            } else {
              sm90::issue_qk64<KT, 0, 0, VH>(sf, sQ_addr, st0, full0, ph);
              if (t0 > 0) {
                ptx::wgmma_wait<1>();
                sm90::release_stage<KT::kFp8>(empty1_l, n_cta, lane);
              }
              sm90::issue_qk64<KT, 0, VH, KT::COL_BLOCKS>(sf, sQ_addr, st0 + r0_off, full0_r, ph);
            }
            ptx::wgmma_wait<0>();
            float ssl[2];
            row_ssl(ssl);
            sm90::softmax_tile64<KT::RESCALE_SLACK>(sf, key0, t, vis, ssl, m_run, sc, sum);
            give_t0(sc);
            sm90::rescale_acc(acc, sc);
            for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * sc[k] + sum[k];
            sm90::pack_p<KT::MMA>(pb, sf, one);
            // Over t0's rope block (S0 read it).
            sm90::store_p(sStage + r0_off + KT::ROPE_OFF, pb, r_loc, t);
            sm90::issue_pv<KT>(acc, st0 + r0_off + KT::ROPE_OFF, st0);
            ptx::wgmma_wait<0>();
            sm90::release_stage<KT::kFp8>(empty0_l, n_cta, lane);  // read by S0 and P0 V0L only
            float sc1[2] = {1.f, 1.f};
            if (has1) {
              ptx::mbar_wait(&hand_bar[1], ph);
              take_t1(sc1, sum);
              // P0 on WG1's max for its V-right half, in place (P0 V0L has retired). Where neither
              // of this thread's rows moved its max at t1 (scale exactly 1: most tiles, as the max
              // moves only by more than RESCALE_SLACK), the block already holds those bits: no
              // stores and no fence before hand[2].
              if (sc1[0] != 1.f || sc1[1] != 1.f) {
                sm90::pack_p<KT::MMA>(pb, sf, sc1);
                sm90::store_p(sStage + r0_off + KT::ROPE_OFF, pb, r_loc, t);
              }
            }
            ptx::mbar_arrive(&hand_bar[2]);
            if (has1) {
              sm90::rescale_acc(acc, sc1);
              for (int k = 0; k < 2; ++k) l_run[k] = l_run[k] * sc1[k] + sum[k];
              // V columns 0..255 of t1 (WG1 saw them land; this thread's own wait orders its
              // reads).
              for (int blk = 0; blk < VH; ++blk) ptx::mbar_wait(&full1[blk], ph);
              sm90::issue_pv<KT>(acc, ptx::smem_addr(smem + KT::OFF_P1), st1);
            }
          } else {
            if (has1) {
              const int valid = min(KT::BLOCK_N, seq_len - key0 - KT::BLOCK_N);
              if (!KT::kFp8 && valid < KT::BLOCK_N)
                sm90::zero_tail_rows<KT>(stage1, sStage + r1_off, full1, full1_r, ph, valid, wg_tid,
                                         5);
              // Blocks 4..8 (the V-right + rope half), then 0..3: one order, two halves.
              sm90::issue_qk64<KT, VH, 0, KT::COL_BLOCKS - VH>(sf, sQ_addr, st0 + r1_off, full1_r,
                                                               ph);
              sm90::issue_qk64<KT, VH, KT::COL_BLOCKS - VH, KT::COL_BLOCKS>(sf, sQ_addr, st1, full1,
                                                                            ph);
            }
            ptx::mbar_wait(&hand_bar[0], ph);
            float sc0[2];
            take_t0(sc0);
            if (has1) {
              ptx::wgmma_wait<0>();  // S of t1
              // Softmax of t1 runs while WG0's P0 V0L occupies the tensor cores. (It must not run
              // under this WG's own P V: ptxas serialises every wgmma when registers that a wgmma
              // accumulated into are rewritten while another wgmma is in flight, C7515.)
              softmax_t1_hand_over(sf, pb, key0 + KT::BLOCK_N, smem + KT::OFF_P1, sc, sum);
              const float sc01[2] = {sc0[0] * sc[0], sc0[1] * sc[1]};
              sm90::rescale_acc(acc, sc01);
              sm90::issue_pv<KT>(acc, ptx::smem_addr(smem + KT::OFF_P1),
                                 st0 + r1_off + VH * KT::BLOCK_BYTES);
            } else {
              // Nothing is in flight here; without the wait ptxas assumes WG0's P1 V1L may be (it
              // does not know kh is fixed per thread) and injects one (C7517).
              ptx::wgmma_wait<0>();
              sm90::rescale_acc(acc, sc0);
            }
            ptx::mbar_wait(&hand_bar[2], ph);  // P0 (times scale1) in t0's rope block
            for (int blk = VH; blk < 2 * VH; ++blk) ptx::mbar_wait(&full0_r[blk], ph);
            sm90::issue_pv<KT>(acc, st0 + r0_off + KT::ROPE_OFF,
                               st0 + r0_off + VH * KT::BLOCK_BYTES);
            if (has1) {
              ptx::wgmma_wait<1>();  // P1 V1R
              sm90::release_stage<KT::kFp8>(&empty_bar[rs1 * KT::EMPTY_BARS + 1], n_cta, lane);
            }
            ptx::wgmma_wait<0>();
            sm90::release_stage<KT::kFp8>(&empty_bar[rs0 * KT::EMPTY_BARS + 1], n_cta, lane);
          }
        }
        // WG0's P1 V1L of the last pair (unconditional: ptxas does not know kh is fixed per thread
        // and would otherwise insert its own wait in a divergent path, serialising every wgmma).
        ptx::wgmma_wait<0>();
        if constexpr (!KT::kFp8Math) {
          if (kh == 0 && n_tiles > 0 && n_tiles % 2 == 0)
            sm90::release_stage<KT::kFp8>(empty1_l, n_cta, lane);
        }
        float* sLf = sRed + KT::RED_LF;
        float* sLf8 = sRed + KT::RED_LF8;
        if (kh == 0) {
          if (t == 0) {
            for (int k = 0; k < 2; ++k) {
              sLf[r_loc[k]] = l_run[k];
              if constexpr (KT::kFp8Math) sLf8[r_loc[k]] = l8_run[k];
            }
          }
          ptx::mbar_arrive(&hand_bar[3]);
        } else {
          ptx::mbar_wait(&hand_bar[3], ci & 1);
          for (int k = 0; k < 2; ++k) {
            l_run[k] = sLf[r_loc[k]];
            if constexpr (KT::kFp8Math) l8_run[k] = sLf8[r_loc[k]];
          }
        }
      }

      // ---- epilogue ----
      // Where the split's result goes: out/lse when the request has one split; else its partial
      // slot, or, when this kernel folds the merge tree's blocks (SplitPlan::blocks_folded), into
      // its block's running (o, lse) in the block's slot (det_fold.cuh: each thread reads back
      // the values it wrote for the block's previous split, which L2 still holds), which after
      // the last split of a one-block request is the request's output.
      const bool single = n_splits == 1 && !p.plan.partials_only;
      const bool folded = p.plan.blocks_folded != 0;
      const int bsplits = p.plan.block_splits;
      const bool block_first = split % bsplits == 0;
      const bool block_last = split % bsplits == bsplits - 1 || split == n_splits - 1;
      const bool direct_fold = folded && block_last && merge_items(p.plan, n_splits) == 1;
      const int slot = folded ? split / bsplits : split;
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const int r = row_begin + r_loc[k];
        if (r >= row_end) continue;
        const float l = l_run[k];
        // A row with no visible key in this split is the merge's neutral element: o = 0, lse =
        // -inf.
        // fp8: P entered the MMAs times P_SCALE (a power of two: the product is exact). fp8 math:
        // O holds the sum of the rounded P times V, normalised by the rounded P's sum.
        const float l_out = KT::kFp8Math ? l8_run[k] : l;
        const float inv = l > 0.f ? p.out_scale / l_out * (1.f / KT::P_SCALE) : 0.f;
        const float lse = l > 0.f ? (m_run[k] + log2f(l)) * 0.69314718055994530942f : -INFINITY;
        const int i = r / p.num_heads, h = r % p.num_heads;
        // The row's output (this thread's columns) and lse, and its partial slot.
        auto out_row = [&] {
          return static_cast<uint16_t*>(p.out) + b * p.out_stride[0] + i * p.out_stride[1] +
                 h * p.out_stride[2] + kh * 256 + 2 * t;
        };
        auto out_lse = [&] {
          return p.lse + b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2];
        };
        const int64_t prow = static_cast<int64_t>(p.plan.part_begin[b] + slot) * p.rows + r;
        float* o = p.o_part + prow * KT::D_V + kh * 256 + 2 * t;
        if (single) {
          uint16_t* out = out_row();
#pragma unroll
          for (int n = 0; n < 32; ++n) {
            *reinterpret_cast<uint32_t*>(out + n * 8) =
                ptx::pack_bf16x2(acc[4 * n + 2 * k] * inv, acc[4 * n + 2 * k + 1] * inv);
          }
          if (kh == 0 && t == 0) *out_lse() = lse;
        } else if (!folded) {
#pragma unroll
          for (int n = 0; n < 32; ++n) {
            *reinterpret_cast<float2*>(o + n * 8) =
                make_float2(acc[4 * n + 2 * k] * inv, acc[4 * n + 2 * k + 1] * inv);
          }
          if (kh == 0 && t == 0) p.lse_part[prow] = lse;
        } else {
          // An empty split leaves the block's state as it is (the combine's fold skips it).
          const bool empty = !(l > 0.f);
          const float lse_acc = block_first ? -INFINITY : fold_lse[k];
          const FoldWeights fw =
              empty ? FoldWeights{lse_acc, 1.f, 0.f} : fold_weights(lse_acc, lse);
          fold_lse[k] = fw.lse;
          uint16_t* out = direct_fold ? out_row() : nullptr;
          // The row's block state (this thread's own stores of the previous split), read with
          // plain loads in batches, each batch's loads issued before the previous batch is folded
          // and stored. One at a time behind each column's store (a volatile __ldcg, or a store
          // the compiler cannot tell from the loads) each load costs a whole L2 round trip, ~25
          // µs per split on an H200. Batches of 8 (fp8: 4, fp8_tile: 2; ptxas spills otherwise).
          const float2* state = reinterpret_cast<const float2*>(o);
          constexpr int kBatch = KT::kTile ? 2 : KT::kFp8 || KT::kFp8Math ? 4 : 8;
          auto load_batch = [&](int n0, float2(&v)[kBatch]) {
#pragma unroll
            for (int j = 0; j < kBatch; ++j) {
              v[j] = block_first ? make_float2(0.f, 0.f) : state[(n0 + j) * 4];
            }
          };
          float2 cur[kBatch], next[kBatch];
          load_batch(0, cur);
#pragma unroll
          for (int n0 = 0; n0 < 32; n0 += kBatch) {
            if (n0 + kBatch < 32) load_batch(n0 + kBatch, next);
#pragma unroll
            for (int j = 0; j < kBatch; ++j) {
              const int n = n0 + j;
              float2 v = cur[j];
              if (!empty) {
                v.x = fold_value(fw, v.x, __fmul_rn(acc[4 * n + 2 * k], inv));
                v.y = fold_value(fw, v.y, __fmul_rn(acc[4 * n + 2 * k + 1], inv));
              }
              if (direct_fold) {
                *reinterpret_cast<uint32_t*>(out + n * 8) = ptx::pack_bf16x2(v.x, v.y);
              } else {
                *reinterpret_cast<float2*>(o + n * 8) = v;
              }
            }
            if (n0 + kBatch < 32) {
#pragma unroll
              for (int j = 0; j < kBatch; ++j) cur[j] = next[j];
            }
          }
          if (kh == 0 && t == 0) {
            if (direct_fold) {
              *out_lse() = fw.lse;
            } else if (block_last) {
              p.lse_part[prow] = fw.lse;
            }
          }
        }
      }
    }  // splits of the group
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
  cfg.gridDim = dim3(static_cast<unsigned>(cluster), 1, 1);
  cfg.blockDim = dim3(KT::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = KT::SMEM_BYTES;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaOccupancyMaxActiveClusters(count, verify_kernel_sm90<KT>, &cfg);
}

template <typename KT>
cudaError_t run_verify_kernel_sm90(const VerifyParams& p, int cluster, int grid_y,
                                   cudaStream_t stream) {
  cudaLaunchConfig_t cfg = {};
  // Split-major 1-D grid (the kernel's work-item mapping); the caller checked it fits in x.
  cfg.gridDim =
      dim3(static_cast<unsigned>(p.plan.total_groups) * static_cast<unsigned>(grid_y), 1, 1);
  cfg.blockDim = dim3(KT::NUM_THREADS, 1, 1);
  cfg.dynamicSmemBytes = KT::SMEM_BYTES;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, verify_kernel_sm90<KT>, p);
}

}  // namespace mlaspec::attn::cuda
