// Compile-time shape of the verify kernel: tiles, pipeline depth, warp roles and the shared-memory
// layout. One instantiation per (KV dtype, page size); fold and rowwise run the same instantiation
// (only the row -> tile mapping differs at run time), which is what makes them bitwise equal.
#pragma once

#include <cstdint>

#include "traits.h"

namespace mlaspec::attn::cuda {

template <typename KvT, int PAGE_SIZE_>
struct KernelTraits {
  using Kv = KvT;  // uint16_t: bf16 bits; uint8_t: fp8 e4m3 codes
  static constexpr bool kFp8 = sizeof(KvT) == 1;
  static constexpr int PAGE_SIZE = PAGE_SIZE_;
  static constexpr int D_QK = CommonTraits::kHeadDimQK;
  static constexpr int D_V = CommonTraits::kHeadDimV;
  static constexpr int BLOCK_M = 64;  // query rows per CTA
  static constexpr int BLOCK_N = 64;  // KV tokens per pipeline stage
  static constexpr int STAGES = 2;
  static constexpr int NUM_CONSUMER_WARPS = 8;  // 4 row groups of 16 x 2 halves (keys for S, dims for O)
  static constexpr int NUM_CONSUMER_THREADS = NUM_CONSUMER_WARPS * 32;
  static constexpr int PRODUCER_WARP = NUM_CONSUMER_WARPS;
  // The producer is a whole warpgroup (one warp issues copies, three idle) because registers are
  // allocated and re-balanced per warpgroup: setmaxnreg moves the producer's share to the
  // consumers, whose 128 fp32 output accumulators per thread need ~200 registers.
  static constexpr int NUM_THREADS = NUM_CONSUMER_THREADS + 128;
  static constexpr int PRODUCER_REGS = 40;
  static constexpr int CONSUMER_REGS = 232;
  static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * NUM_CONSUMER_THREADS <= 65536);
  static constexpr int MAX_CLUSTER = 8;  // portable cluster size limit

  // sQ: 64 rows x 1152 B, 16-byte chunks XOR-swizzled by (row & 7) so ldmatrix is conflict-free.
  static constexpr int Q_ROW_BYTES = D_QK * 2;
  // bf16 KV rows land by bulk copy, which cannot swizzle; a 16-byte pad per row moves consecutive
  // rows 4 banks apart instead (1152 B is a multiple of 128 B: unpadded rows would all collide).
  static constexpr int KV_ROW_BYTES = D_QK * 2 + 16;
  // Raw stage rows: fp8 rows stay unpadded (read once, linearly, by the dequant pass), so 8-row
  // segments of a page arrive in one copy.
  static constexpr int RAW_ROW_BYTES = kFp8 ? D_QK : KV_ROW_BYTES;
  static constexpr int GLOBAL_ROW_BYTES = D_QK * static_cast<int>(sizeof(KvT));
  static constexpr int SEG_ROWS = kFp8 ? 8 : 1;  // rows per bulk copy
  static constexpr int NUM_SEGS = BLOCK_N / SEG_ROWS;

  static constexpr int Q_BYTES = BLOCK_M * Q_ROW_BYTES;
  static constexpr int STAGE_BYTES = BLOCK_N * RAW_ROW_BYTES;
  static constexpr int KVBF_BYTES = kFp8 ? BLOCK_N * KV_ROW_BYTES : 0;  // dequantised tile
  static constexpr int P_BYTES = BLOCK_M * BLOCK_N * 2;                  // bf16, swizzled
  static constexpr int RED_BYTES = 2 * BLOCK_M * 4;                      // row-max exchange

  static constexpr int OFF_Q = 0;
  static constexpr int OFF_STAGE = OFF_Q + Q_BYTES;
  static constexpr int OFF_KVBF = OFF_STAGE + STAGES * STAGE_BYTES;
  static constexpr int OFF_P = OFF_KVBF + KVBF_BYTES;
  static constexpr int OFF_RED = OFF_P + P_BYTES;
  static constexpr int OFF_BAR = OFF_RED + RED_BYTES;
  static constexpr int SMEM_BYTES = OFF_BAR + 2 * STAGES * 8;

  static_assert(SMEM_BYTES <= 227 * 1024, "verify kernel exceeds Hopper's 227 KB per block");
  static_assert(OFF_STAGE % 128 == 0 && STAGE_BYTES % 16 == 0 && OFF_KVBF % 16 == 0);
  static_assert(OFF_BAR % 8 == 0);
  static_assert(PAGE_SIZE > 0 && (PAGE_SIZE & (PAGE_SIZE - 1)) == 0 &&
                    ((CommonTraits::kPageSizeMask >> __builtin_ctz(PAGE_SIZE)) & 1) == 1,
                "page size not in CommonTraits::kPageSizeMask");
  static_assert(BLOCK_N % PAGE_SIZE == 0 && PAGE_SIZE % SEG_ROWS == 0,
                "a KV tile must cover whole pages and a copy segment must not cross a page");
  static_assert(D_QK % 16 == 0, "S = Q K^T steps over the 576 dims in k16 MMA steps");
  static_assert(D_V == 2 * 256, "each consumer warp half owns 256 output columns");
  static_assert(CommonTraits::kMaxHeads <= 128 && CommonTraits::kMinHeads >= 1);
  static_assert(CommonTraits::kMaxSeqLen <= (int64_t{1} << 30), "key positions are int32");
  // Row tiles of a request (fold) must fit the cluster grid: grid.y <= 65535.
  static_assert(CommonTraits::kMaxQLen * CommonTraits::kMaxHeads / BLOCK_M <= 65535);
};

}  // namespace mlaspec::attn::cuda
