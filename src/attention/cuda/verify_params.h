// Plain parameter structs of the verify kernels: pointers, sizes and strides in elements, and the
// split plan. No CUDA types, so the host planner fills them in ordinary C++.
#pragma once

#include <cstdint>

#include "traits.h"

namespace mlaspec::attn::cuda {

// The split plan shared by both backends and the combine: request b's splits are the KV ranges
// [s * chunk, min((s + 1) * chunk, seq_len)), s < split_begin[b + 1] - split_begin[b]. Split work
// items are numbered globally (split_begin is the prefix sum). Requests with more than one split
// write partials to slot part_begin[b] + s (times the request's rows); single-split requests write
// out/lse directly.
//
// The merge is a two-level tree (deterministic mode; block_splits 1 makes it one level): request
// b's splits form blocks of block_splits consecutive splits, block j = splits [j * block_splits,
// +block_splits) clipped; a block's partials are folded in split order (det_fold.cuh), and the
// combine merges the blocks' results as it would splits. Either the combine folds each block from
// its splits' partials (blocks_folded 0), or the 64-row kernel, whose groups then hold whole
// blocks, folds them as it computes and writes one partial per block, at slot part_begin[b] + j
// (blocks_folded 1; a request of one block then writes out/lse directly). Both give the same bits.
struct SplitPlan {
  int32_t chunk = 0;         // KV tokens per split, a multiple of the KV tile (64)
  int32_t total_splits = 0;  // split_begin[batch]
  int32_t total_part_slots = 0;
  // Largest split count of one request; every plan builder sets it, and the combine picks its
  // kernel by it (one that loads 8 splits per request at once must not see more).
  int32_t max_splits = 0;
  // Decode context parallelism (attention/dcp.h): a rank computes the global splits
  // split_first, split_first + split_step, ... of each request: local split k covers
  // [(k * split_step + split_first) * chunk, +chunk). 1 / 0 for a one-GPU call.
  int32_t split_step = 1;
  int32_t split_first = 0;
  // Write partials for every split (no direct output, no open-ended last split): DCP ranks.
  int32_t partials_only = 0;
  int32_t split_begin[CommonTraits::kMaxBatch + 1];
  int32_t part_begin[CommonTraits::kMaxBatch + 1];
  // Split groups: the 64-row kernel's CTA (cluster) computes up to group_size consecutive splits
  // of one request in turn, each exactly as a CTA of its own would (same arithmetic, same partial
  // slot), keeping Q and the KV pipeline between them. Request b's groups are group_begin[b] ..
  // group_begin[b + 1] - 1; group g of it covers splits [g * group_size, +group_size) clipped to
  // its splits. group_size 1 (every plan builder sets it, set_split_groups(plan, batch, 1)) makes
  // a group a split. Deterministic mode only: its fixed chunks are short, and in default mode a
  // loop of splits per CTA measured slower (the compiler rebuilt the wgmma descriptors per split).
  int32_t group_size = 1;
  int32_t total_groups = 0;  // group_begin[batch]
  int32_t group_begin[CommonTraits::kMaxBatch + 1];
  // The merge tree (above): splits per block (kDeterministicBlockChunks in deterministic mode, else
  // 1), and whether the main kernel folded the blocks (set_split_groups decides).
  int32_t block_splits = 1;
  int32_t blocks_folded = 0;
};

// Merge items of a request of n splits: its blocks (n itself when block_splits is 1). constexpr:
// device code calls it too (--expt-relaxed-constexpr).
constexpr int merge_items(const SplitPlan& plan, int n) {
  return (n + plan.block_splits - 1) / plan.block_splits;
}

// Whether request b's result is left to the combine: the main kernel writes it itself when the
// request has one split, or one block that the kernel folded.
constexpr bool combine_needed(const SplitPlan& plan, int b) {
  const int n = plan.split_begin[b + 1] - plan.split_begin[b];
  return plan.blocks_folded ? merge_items(plan, n) > 1 : n > 1;
}

// Groups of `group_size` consecutive splits per request (the last group of a request may be
// shorter; group_size 1: one split per group), for a plan whose split_begin[0..batch],
// block_splits and partials_only are filled in. It also decides who folds the merge tree's blocks
// (the kernel when every group holds whole blocks: group_size a multiple of block_splits > 1;
// else the combine) and lays out the partial slots for that: part_begin and total_part_slots. A
// request of one split writes out/lse directly and gets no slot; otherwise one slot per block
// (folded) or per split. DCP ranks (partials_only) write every split as a partial: one slot each.
inline void set_split_groups(SplitPlan* plan, int batch, int group_size) {
  plan->group_size = group_size;
  plan->blocks_folded = plan->block_splits > 1 && group_size % plan->block_splits == 0 ? 1 : 0;
  plan->group_begin[0] = 0;
  int32_t slots = 0;
  for (int b = 0; b < batch; ++b) {
    const int n = plan->split_begin[b + 1] - plan->split_begin[b];
    plan->group_begin[b + 1] = plan->group_begin[b] + (n + group_size - 1) / group_size;
    plan->part_begin[b] = slots;
    if (plan->partials_only) {
      slots += n;
    } else if (n > 1) {
      slots += plan->blocks_folded ? merge_items(*plan, n) : n;
    }
  }
  plan->total_groups = plan->group_begin[batch];
  plan->part_begin[batch] = slots;
  plan->total_part_slots = slots;
}

struct VerifyParams {
  // CUtensorMap (opaque here) of the KV pool (bf16 or fp8 codes) viewed as [num_pages *
  // page_size, 576] (fp8_tile: bytes [num_pages * page_size, 656]), boxes of 64 columns x
  // page_size rows (bf16 128B-swizzled, fp8 plain): the 64-row kernel's view of the KV (fp8_tile:
  // of its codes; kv_scale_tmap and kv_rope_tmap below are its other two).
  alignas(64) unsigned char kv_tmap[128];
  // CUtensorMap of Q (bf16) as [B * q_len * H rows, 576] when its rows are uniformly spaced
  // (q_tma = 1; the host checks the strides), boxes of 64 columns x 64 rows, 128B-swizzled like
  // the KV's: the 64-row bf16 kernel's producer copies a row tile's Q with 9 boxes. q_tma = 0:
  // the consumers load Q themselves.
  alignas(64) unsigned char q_tmap[128];
  int32_t q_tma;
  // The same pool as plain memory (a page is page_size * 576 contiguous elements): the narrow
  // kernel copies whole fp8 pages with 1-D bulk copies.
  const void* kv_pages;
  const void* q;  // bf16 [B, q_len, H, 576]
  const int32_t* block_table;
  const int32_t* seq_lens;
  void* out;            // bf16 [B, q_len, H, 512]
  float* lse;           // [B, q_len, H]
  float* o_part;        // [slots * rows, 512] f32 partial outputs (normalised)
  float* lse_part;      // [slots * rows] f32
  int64_t q_stride[3];  // elements, for b, i, h
  int64_t out_stride[3];
  int64_t lse_stride[3];
  int64_t bt_stride;  // block_table row stride
  int32_t batch, q_len, num_heads;
  int32_t rows;  // q_len * num_heads
  // Row tiles of one split work item: fold tiles the request's rows by 64; rowwise tiles each
  // query token's H rows by 64 (tiles_per_token of them per token).
  int32_t rowwise;    // 0: fold, 1: rowwise
  int32_t row_tiles;  // real row tiles per split (grid.y may be padded up to a cluster multiple)
  int32_t tiles_per_token;  // rowwise only: ceil(H / 64)
  float score_scale_log2;   // sm_scale * kv_scale * log2(e)
  float out_scale;          // kv_scale (fp8 codes are unscaled in the MMAs)
  SplitPlan plan;
  // fp8_tile only (the 64-row kernel), over the same [rows, 656] bytes as kv_tmap: boxes of 16
  // columns (the four f32 scales, column 512, plain) and of 128 columns (the 64 bf16 rope values,
  // column 528, 128B-swizzled as bf16's rope block) x page_size rows. Last, so that the other
  // kernels' parameter offsets do not move.
  alignas(64) unsigned char kv_scale_tmap[128];
  alignas(64) unsigned char kv_rope_tmap[128];
};

struct CombineParams {
  // Partials gathered from `world` DCP ranks: global split s of request b lives in rank
  // (s % world)'s block, `rank_slots` slots apart, at local slot part_begin[b] + s / world.
  // world = 1: the one-GPU layout. write_all: combine single-split requests too (their partial
  // is not written directly when it comes from a DCP rank).
  int32_t world = 1;
  int32_t write_all = 0;
  int64_t rank_slots = 0;
  const float* o_part;
  const float* lse_part;
  void* out;
  float* lse;
  // Set: write the merged result as an f32 partial (normalised o [B * rows, 512], lse [B * rows])
  // here instead of out/lse (a DCP rank's pre-merge).
  float* o_f32 = nullptr;
  float* lse_f32 = nullptr;
  int64_t out_stride[3];
  int64_t lse_stride[3];
  int32_t batch, q_len, num_heads, rows;
  // Warps that merge one (row, 128-column slice): 0 lets run_combine pick; 1, 2, 4 or 8 forces
  // it (tests check that the choice changes no bit of the result).
  int32_t warps_per_task = 0;
  SplitPlan plan;
};

}  // namespace mlaspec::attn::cuda
