// Compile-time configuration of the two Hopper verify kernels: the arithmetic of a KV dtype
// (KvMath, shared so that a row's bits do not depend on the kernel), and each kernel's tile sizes,
// thread roles, register split and shared-memory layout (Sm90Traits: the 64-row kernel;
// NarrowTraits: the narrow kernel).
#pragma once

#include <cstdint>
#include <type_traits>

#include "../launch.h"
#include "../ptx.cuh"
#include "../traits.h"
#include "mlaspec/core/fp8_tile.h"

namespace mlaspec::attn::cuda {

// The arithmetic of a KV dtype, one definition for both kernels (a row's bits must not depend on
// which of them serves it). KvT: uint16_t (bf16 rows), uint8_t (fp8 e4m3 codes, one scale per
// layer) or Fp8TileKv (fp8_tile rows: e4m3 codes with one f32 scale per 128, bf16 rope).
// fp8_e4m3's MMAs take f16 operands: its codes expand exactly to f16 with one cvt per two codes, Q
// is scaled per row by a power of two into f16's range (sm90::q_row_scale), and P enters the MMAs
// times P_SCALE, undone in the epilogue (both exact, so the bits of a row depend only on its own
// inputs). fp8_tile's are bf16's (Q and P unscaled): its codes expand to bf16(code * block scale),
// exact for the pool writer's power-of-two scales from 2^-124 up (sm90::fp8x16_to_bf16x16_scaled).
// Fp8MathKv (fp8_e4m3 codes in fp8 math, the 64-row kernel only): e4m3 MMAs on the raw codes, Q
// and P rounded to e4m3 (hopper/fp8_math.cuh); nothing is expanded.
template <typename KvT>
struct KvMath {
  static constexpr bool kTile = std::is_same_v<KvT, Fp8TileKv>;
  static constexpr bool kF16 = std::is_same_v<KvT, uint8_t>;  // fp8_e4m3
  static constexpr bool kMath8 = std::is_same_v<KvT, Fp8MathKv>;
  static_assert(kTile || kF16 || kMath8 || std::is_same_v<KvT, uint16_t>,
                "KV: bf16, fp8_e4m3, fp8_tile or fp8_e4m3 in fp8 math");
  // Codes in the pool, expanded into the MMA operands in shared memory by producer warps.
  static constexpr bool kCodes = kTile || kF16;
  static constexpr ptx::MmaType MMA = kF16 ? ptx::MmaType::kF16 : ptx::MmaType::kBf16;
  // fp8_e4m3: P <= 2^RESCALE_SLACK = 2^8 enters the MMAs as f16(P * 2^7) <= 2^15, below f16's
  // max; f16 normals hold P down to 2^-21, subnormals to 2^-31.
  static constexpr float P_SCALE = kF16 ? 128.f : 1.f;
  // How far (log2 units) a tile's max may exceed a row's running max before the running max
  // moves (sm90::next_max): P = 2^(s - m) then stays at or below 2^RESCALE_SLACK (8 for the exact
  // dtypes). fp8 math keeps the exact running max (0): P <= 1 enters e4m3 as P * 448 without
  // overflow and with the reference's resolution (an e4m3 scale for P <= 2^8 would make P's
  // subnormal step 256 times coarser).
  static constexpr int RESCALE_SLACK = kMath8 ? 0 : 8;
  // Bytes of one token's row in the pool.
  static constexpr int ROW_BYTES =
      kTile ? kFp8TileRowBytes : CommonTraits::kHeadDimQK * (kF16 || kMath8 ? 1 : 2);
};

template <typename KvT, int PAGE_SIZE_>
struct Sm90Traits {
  using Kv = KvT;  // uint16_t: bf16 bits; uint8_t: fp8 e4m3 codes; Fp8TileKv: fp8_tile rows
  // fp8 supply (fp8_e4m3 or fp8_tile): raw codes land by TMA and the producer warpgroup expands
  // them; kTile: fp8_tile (bf16 math, per-block scales, the rope copied as bf16); kScaledQ:
  // fp8_e4m3 (f16 math, Q scaled per row).
  static constexpr bool kFp8 = KvMath<KvT>::kCodes;
  static constexpr bool kTile = KvMath<KvT>::kTile;
  static constexpr bool kScaledQ = KvMath<KvT>::kF16;
  // fp8 math (Fp8MathKv): the raw codes land by TMA 64B-swizzled, the K-major operand of e4m3
  // wgmma as they are; the producer warpgroup transposes each tile's V into its own K-major
  // buffer (V^T, sm90::transpose_v_tile) instead of expanding. kFp8 is false for it (no
  // expansion).
  static constexpr bool kFp8Math = KvMath<KvT>::kMath8;
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
  static constexpr ptx::MmaType MMA = KvMath<KvT>::MMA;
  static constexpr float P_SCALE = KvMath<KvT>::P_SCALE;
  static constexpr int RESCALE_SLACK = KvMath<KvT>::RESCALE_SLACK;
  // fp8's producer warpgroup also dequantises, holding half a tile's raw codes in registers
  // (sm90::expand_tile; the consumers fit in 216). fp8_tile the same (ptxas 13: its producer
  // spills 4 bytes at 72; 64 / 224 and 80 / 208 spill more).
  // fp8 math: the transposing producer holds 16 keys x 8 codes (32 registers) at a time; its
  // consumers hold O (128), one promoted P V chunk (32) and P's fragments (2 x 8).
  static constexpr int PRODUCER_REGS = kFp8Math ? 72 : kFp8 ? 72 : 40;
  static constexpr int CONSUMER_REGS = kFp8Math ? 216 : kFp8 ? 216 : 232;

  static constexpr int COL_BLOCKS = D_QK / 64;  // 9 blocks of 64 values: 128 B (64 B fp8 math)
  // One [64 x 128 B] 128B-swizzled block; fp8 math: one [64 x 64 B] 64B-swizzled block of codes.
  static constexpr int BLOCK_BYTES = BLOCK_M * (kFp8Math ? 64 : 128);
  static constexpr int TILE_BYTES = COL_BLOCKS * BLOCK_BYTES;
  // One TMA box = 64 columns x one page: 128 B (bf16, swizzled) or 64 B (fp8 codes) per row.
  static constexpr int BOX_ROW_BYTES = kFp8 || kFp8Math ? 64 : 128;
  static constexpr int COPY_BLOCK_BYTES = BLOCK_N * BOX_ROW_BYTES;  // one column block of a tile
  // fp8: the raw codes of a tile land as dense [64 keys x 64 B] blocks, those of V (blocks 0..7)
  // in the stage's V-left half (sm90::raw_v_off), the rope block's in the stage's slot of the P1
  // block, and the producer warpgroup expands them in place into the swizzled f16 tile
  // (sm90::expand_tile).
  static constexpr int NUM_DEQUANT_THREADS = 128;  // the producer warpgroup (fp8)

  static constexpr int Q_BYTES = TILE_BYTES;
  static constexpr int STAGE_BYTES = TILE_BYTES;
  // P0 (and fp8's P1) goes over its stage's rope block (columns 512..575, dead once S is
  // computed).
  static constexpr int ROPE_OFF = (COL_BLOCKS - 1) * BLOCK_BYTES;
  // The ping-pong handoff slots, float [5][64]: t0's running max and rescale factor, t1's running
  // max, rescale factor and row sum of P; then the final denominator [64] (RED_LF floats in);
  // fp8: then 1 / Q's scale per row [64] (RED_QINV floats in).
  static constexpr int RED_LF = 5 * BLOCK_M;
  static constexpr int RED_QINV = 6 * BLOCK_M;
  // fp8 math: RED_QINV holds each row's Q scale s_q instead, then t1's row sum of the rounded P
  // (WG1 -> WG0) and the final such denominator (WG0 -> WG1), the output's.
  static constexpr int RED_SUM8 = 7 * BLOCK_M;
  static constexpr int RED_LF8 = 8 * BLOCK_M;
  static constexpr int RED_BYTES = (kFp8Math ? 9 : kScaledQ ? 7 : 6) * BLOCK_M * 4;
  // P of the pair's second tile (WG1's, read by WG0's P V): its own [64 x 128 B] block, so that
  // stage 1's V-right + rope half is free as soon as WG1's P V of it is done. fp8 puts P1 over
  // t1's rope block and lands each stage's raw rope codes here instead ([STAGES][64 keys x 64 B]).
  // fp8_tile lands no raw rope (its rope comes by TMA straight into the stage's rope block once
  // the V-right + rope half is free, sm90::expand_tile) and each stage's scales here instead
  // ([STAGES][64 keys x 16 B], the row's bytes 512..527: one box of SCALE_BOX_ROW_BYTES per page).
  // fp8 math: this region holds the stages' V^T buffers instead ([STAGES][512 dims x 64 B],
  // 64B-swizzled, K-major: one row of 64 keys per V column, OFF_VT) and P as e4m3 A fragments
  // ([2 pair parities][STAGES][4 KB], OFF_P8: each WG's P of a pair for the other WG, two pairs
  // deep so that one is never overwritten before the other WG has loaded it).
  static constexpr int VT_BYTES = D_V * 64;
  static constexpr int P8_BYTES = BLOCK_M * BLOCK_N;
  static constexpr int P1_BYTES =
      kFp8Math ? STAGES * VT_BYTES + 2 * STAGES * P8_BYTES : BLOCK_BYTES;
  static constexpr int SCALE_BOX_ROW_BYTES = 4 * kFp8TileBlocks;
  static constexpr int SCALE_STAGE_BYTES = BLOCK_N * SCALE_BOX_ROW_BYTES;
  static constexpr int ROPE_BOX_ROW_BYTES = 2 * kFp8TileRope;  // 128: one swizzled row
  // Full barriers: one per column block and stage (Q K^T starts on the first block while the
  // rest of the tile is still landing). fp8 adds two copy barriers per stage: raw blocks 0, 1,
  // 4..8 landed; raw blocks 2, 3 landed (the two steps of sm90::expand_tile).
  static constexpr int FULL_BARS = COL_BLOCKS;
  // fp8 math: one per stage, the V^T buffer written (vt_full, by every transposing thread).
  static constexpr int RAW_BARS = kFp8 ? STAGES * 2 : kFp8Math ? STAGES : 0;
  // Empty barriers, two per stage: the halves the consumers free at different times, V-left
  // (blocks 0..V_HALF-1, read by Q K^T and WG0's P V) and V-right + rope (blocks V_HALF..8, read
  // by Q K^T and WG1's P V). bf16 copies each half as soon as it is free. fp8 lands a tile's raw
  // codes in the V-left half (and the P1 block) as soon as WG0 has freed it, in every CTA of the
  // cluster, and its expansion writes the V-right half once this CTA's WG1 has freed it.
  // fp8 math: [0] the raw tile (its S warpgroup's 4 warps after S, the 128 transposing threads
  // after their reads), [1] the V^T buffer (both consumer warpgroups' 8 warps after their P V).
  static constexpr int V_HALF = 4;
  static constexpr int EMPTY_BARS = 2;

  static constexpr int OFF_Q = 0;
  static constexpr int OFF_STAGE = OFF_Q + Q_BYTES;
  static constexpr int OFF_P1 = OFF_STAGE + STAGES * STAGE_BYTES;
  static constexpr int OFF_VT = OFF_P1;  // fp8 math
  static constexpr int OFF_P8 = OFF_VT + STAGES * VT_BYTES;
  static constexpr int OFF_RED = OFF_P1 + P1_BYTES;
  static constexpr int OFF_BAR = OFF_RED + RED_BYTES;
  // +1024: the dynamic shared-memory base is aligned up to 1024 B at run time (swizzle atoms).
  // Barriers: full [STAGES][FULL_BARS], empty [STAGES][EMPTY_BARS], handoffs [4], fp8 raw
  // [STAGES][9].
  static constexpr int NUM_BARS = STAGES * FULL_BARS + STAGES * EMPTY_BARS + 4 + RAW_BARS + 1;
  static constexpr int SMEM_BYTES = OFF_BAR + NUM_BARS * 8 + 1024;

  static_assert(SMEM_BYTES <= 227 * 1024, "verify kernel exceeds Hopper's 227 KB per block");
  static_assert(OFF_STAGE % 1024 == 0 && STAGE_BYTES % 1024 == 0 && OFF_P1 % 1024 == 0 &&
                    COPY_BLOCK_BYTES % 128 == 0,
                "128B-swizzled tiles must start on 1024-byte boundaries, TMA boxes on 128");
  static_assert(PAGE_SIZE > 0 && (PAGE_SIZE & (PAGE_SIZE - 1)) == 0 &&
                    ((CommonTraits::kPageSizeMask >> __builtin_ctz(PAGE_SIZE)) & 1) == 1,
                "page size not in CommonTraits::kPageSizeMask");
  static_assert(BLOCK_N % PAGE_SIZE == 0 && PAGE_SIZE <= 256,
                "a KV tile covers whole pages; a TMA box is one page (<= 256 rows)");
  static_assert(D_QK % 64 == 0 && D_V == 512, "9 column blocks for Q K^T; 2 x 256 columns for P V");
  static_assert(D_QK - D_V == 64 && BLOCK_N * 2 == 128,
                "P (64 rows x 64 keys bf16) must fit the rope block it overwrites");
  static_assert(STAGES == 2, "the ping-pong maps a tile pair onto stages 0 and 1");
  static_assert(!kFp8 || (COPY_BLOCK_BYTES * 2 == BLOCK_BYTES && V_HALF * 2 == COL_BLOCKS - 1 &&
                          STAGES * COPY_BLOCK_BYTES <= P1_BYTES),
                "fp8: raw V blocks 0..7 fill the V-left half, both raw rope blocks the P1 block");
  static_assert(!kTile || (STAGES * SCALE_STAGE_BYTES <= P1_BYTES && ROPE_BOX_ROW_BYTES == 128 &&
                           kFp8TileRopeOffset % 16 == 0 && kFp8TileScaleOffset == 8 * 64),
                "fp8_tile: the scales fit the P1 block; the rope lands as bf16's rope block");
  // setmaxnreg moves registers between warpgroups inside the CTA's launch allocation (65536 /
  // NUM_THREADS per thread, in steps of 8): a consumer increase larger than what the producer
  // gives back would wait forever.
  static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * NUM_CONSUMER_THREADS <=
                (65536 / NUM_THREADS) / 8 * 8 * NUM_THREADS);
  static_assert(CommonTraits::kMaxSeqLen <= (int64_t{1} << 30), "key positions are int32");
  static_assert(!kFp8Math || (BLOCK_BYTES == COPY_BLOCK_BYTES && OFF_VT % 1024 == 0 &&
                              VT_BYTES % 1024 == 0 && P8_BYTES == 128 * 32 && RESCALE_SLACK == 0),
                "fp8 math: raw blocks are the S operand as landed; 64B-swizzle atoms aligned; a "
                "P fragment buffer is 32 bytes per consumer thread; P <= 1");
};

template <typename KvT, int PAGE_SIZE_>
struct NarrowTraits {
  using Kv = KvT;
  static constexpr bool kFp8 = KvMath<KvT>::kCodes;  // as Sm90Traits
  static constexpr bool kTile = KvMath<KvT>::kTile;
  static constexpr bool kScaledQ = KvMath<KvT>::kF16;
  static constexpr ptx::MmaType MMA = KvMath<KvT>::MMA;  // the 64-row kernel's arithmetic
  static constexpr float P_SCALE = KvMath<KvT>::P_SCALE;
  static constexpr int RESCALE_SLACK = KvMath<KvT>::RESCALE_SLACK;
  static constexpr int PAGE_SIZE = PAGE_SIZE_;
  static constexpr int D_QK = CommonTraits::kHeadDimQK;
  static constexpr int D_V = CommonTraits::kHeadDimV;
  static constexpr int ROWS = 16;                    // query rows per CTA = wgmma N
  static constexpr int BLOCK_N = 64;                 // keys per tile = wgmma M of S^T
  static constexpr int COL_BLOCKS = D_QK / 64;       // 9 column blocks of 64 (the last is rope)
  static constexpr int V_BLOCKS = D_V / 64;          // 8
  static constexpr int V_HALF = 4;                   // O_L = V blocks 0..3, O_R = 4..7
  static constexpr int BLOCK_BYTES = BLOCK_N * 128;  // one swizzled [64 keys x 128 B] slot
  static constexpr int Q_BLOCK_BYTES = ROWS * 128;   // Q: 9 swizzled [16 rows x 128 B] blocks
  static constexpr int P_BYTES = ROWS * 128;         // bf16 P: swizzled [16 rows x 64 keys]
  static constexpr int PF_STRIDE = 68;  // floats per row of the f32 P copy (68: no bank conflict)
  static constexpr int PF_BYTES = ROWS * PF_STRIDE * 4;
  static constexpr int OUT_STRIDE = D_V + 4;  // floats per row of the epilogue's staging
  static constexpr int CONSUMER_THREADS = 128;
  static constexpr int PRODUCER_WARP = 4;
  // bf16: warp 4 copies. fp8: warpgroups 1 and 2 expand (alternate steps), warp 12 copies the raw
  // codes, warps 13..15 only give their registers away (setmaxnreg works per warpgroup).
  static constexpr int NUM_DEQUANT_THREADS = 128;  // per expanding warpgroup
  static constexpr int DEQUANT_GROUPS = 2;
  static constexpr int COPY_WARP = kFp8 ? 4 + 4 * DEQUANT_GROUPS : PRODUCER_WARP;
  static constexpr int NUM_THREADS = kFp8 ? 512 : CONSUMER_THREADS + 32;
  // fp8_tile's expansion holds scales and the rope's chunks too: 112 (ptxas 13 spills at 104).
  static constexpr int CONSUMER_REGS = 232, DEQUANT_REGS = kTile ? 112 : 104, COPY_REGS = 40;
  // setmaxnreg moves registers between warpgroups inside the CTA's launch allocation
  // (65536 / NUM_THREADS per thread, in steps of 8): a consumer increase larger than what the
  // others give back would wait forever.
  static_assert(!kFp8 ||
                CONSUMER_REGS * 128 + DEQUANT_REGS * 128 * DEQUANT_GROUPS + COPY_REGS * 128 <=
                    (65536 / NUM_THREADS) / 8 * 8 * NUM_THREADS);
  static constexpr int BOX_ROW_BYTES = kFp8 ? 64 : 128;
  // fp8: a tile's raw rows as the pool holds them, token-major [64 keys x ROW_BYTES] (576 B, or
  // fp8_tile's 656 B with scales and bf16 rope; whole pages, one 1-D bulk copy each).
  static constexpr int ROW_BYTES = KvMath<KvT>::ROW_BYTES;
  static constexpr int RAW_TILE_BYTES = BLOCK_N * ROW_BYTES;
  // Ring depths: bf16 fills RING_BYTES with slots; fp8 splits it between expanded slots (the
  // consumers hold up to 9, the two expanding warpgroups fill 6 more; fp8_tile's larger raw
  // tiles leave 4 more) and two raw tiles, which the copy warp fills ahead of the expansion.
  static constexpr int RING_BYTES = 192 * 1024;
  static constexpr int SLOTS = kFp8 ? (kTile ? 13 : 15) : RING_BYTES / BLOCK_BYTES;
  static constexpr int RAW_TILES = kFp8 ? (RING_BYTES - SLOTS * BLOCK_BYTES) / RAW_TILE_BYTES : 0;
  static constexpr int DEQUANT_BLOCKS = 3;  // fp8 blocks expanded per step (a tile is 3 steps)
  // P buffers: P0, P1 and bf16's P0 * scale1 (the 64-row kernel's WG1 input for V0R).
  static constexpr int NUM_P = kFp8 ? 2 : 3;

  static constexpr int OFF_SLOT = 0;
  static constexpr int OFF_RAW = OFF_SLOT + SLOTS * BLOCK_BYTES;
  static constexpr int OFF_Q = OFF_RAW + RAW_TILES * RAW_TILE_BYTES;
  static constexpr int OFF_P = OFF_Q + COL_BLOCKS * Q_BLOCK_BYTES;
  static constexpr int OFF_PF = OFF_P + NUM_P * P_BYTES;  // f32 P of t0, t1
  // float: max [2][4 warps][16], scale [2][16], denominator [16], fp8's 1 / Q scale [16].
  static constexpr int OFF_RED = OFF_PF + 2 * PF_BYTES;
  static constexpr int RED_QINV = 2 * 4 * ROWS + 2 * ROWS + ROWS;  // floats in
  static constexpr int RED_BYTES = (RED_QINV + (kScaledQ ? ROWS : 0)) * 4;
  static constexpr int OFF_BAR = OFF_RED + RED_BYTES;
  // full [SLOTS], empty [SLOTS], raw full [RAW_TILES], raw empty [RAW_TILES]
  static constexpr int NUM_BARS = 2 * SLOTS + 2 * RAW_TILES;
  static constexpr int SMEM_BYTES = OFF_BAR + NUM_BARS * 8 + 1024;  // + run-time 1024 alignment

  static_assert(SMEM_BYTES <= 227 * 1024, "narrow kernel exceeds Hopper's 227 KB per block");
  static_assert(OFF_RAW % 1024 == 0 && OFF_Q % 1024 == 0 && OFF_P % 1024 == 0 &&
                    P_BYTES % 1024 == 0 && Q_BLOCK_BYTES % 1024 == 0,
                "128B-swizzled operands start on 1024-byte boundaries");
  static_assert(ROWS * OUT_STRIDE * 4 <= SLOTS * BLOCK_BYTES, "epilogue staging reuses the ring");
  static_assert(OUT_STRIDE % 4 == 0 && D_V % 128 == 0, "the epilogue's stores read float4 rows");
  static_assert(BLOCK_N % PAGE_SIZE == 0 && BLOCK_N / PAGE_SIZE <= 32, "one copy lane per page");
  static_assert(COL_BLOCKS % DEQUANT_BLOCKS == 0 && (!kFp8 || RAW_TILES >= 2));
  static_assert((PAGE_SIZE * ROW_BYTES) % 16 == 0 && RAW_TILE_BYTES % 16 == 0 &&
                    ROW_BYTES % 16 == 0,
                "bulk copies move multiples of 16 bytes to 16-byte aligned rows");
  static_assert(SLOTS >= COL_BLOCKS, "the consumers hold a whole tile's blocks");
  static_assert(D_QK == 576 && D_V == 512 && COL_BLOCKS == 9);
};

}  // namespace mlaspec::attn::cuda
