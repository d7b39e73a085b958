// Which work a CTA of either verify kernel does: its request, split group and row tile from the
// 1-D grid and the host's SplitPlan, and each split's key range in tiles.
#pragma once

#include <cstdint>

#include "../verify_params.h"

namespace mlaspec::attn::cuda {

namespace sm90 {

// The request whose groups (SplitPlan::group_begin, a prefix sum) hold global group g.
__device__ __forceinline__ int find_request(const SplitPlan& plan, int batch, int group_global) {
  int lo = 0, hi = batch - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (plan.group_begin[mid] <= group_global) {
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

// What one CTA computes: request b, splits split_first .. split_first + split_count - 1 of its
// n_splits (a group, SplitPlan::group_size; one split unless deterministic), rows [row_begin,
// row_end) of the request's q_len * H. Each split's keys and tiles: split_keys.
struct WorkItem {
  int b, split_first, split_count, n_splits, seq_len, first_visible, row_begin, row_end;
  int cluster_row_end;  // the cluster's last row + 1: it sees the most keys
  int tiles_per_split;
};

template <int BLOCK_N>
__device__ __forceinline__ WorkItem work_item(const VerifyParams& p, uint32_t cta_rank,
                                              uint32_t n_cta) {
  WorkItem w;
  // The grid is 1-D, group-major: the row tiles of one split group are consecutive CTAs (a
  // cluster is consecutive CTAs), so they run at the same time and read its KV while it is in L2,
  // instead of in separate waves that each fetch it from HBM.
  w.tiles_per_split = static_cast<int>(gridDim.x) / p.plan.total_groups;
  const int group_global = static_cast<int>(blockIdx.x) / w.tiles_per_split;
  const int tile = static_cast<int>(blockIdx.x) % w.tiles_per_split;
  w.b = find_request(p.plan, p.batch, group_global);
  w.n_splits = p.plan.split_begin[w.b + 1] - p.plan.split_begin[w.b];
  w.split_first = (group_global - p.plan.group_begin[w.b]) * p.plan.group_size;
  w.split_count = min(p.plan.group_size, w.n_splits - w.split_first);
  w.seq_len = p.seq_lens[w.b];
  w.first_visible = w.seq_len - p.q_len;  // token i sees keys [0, first_visible + i]

  tile_rows(p, tile, &w.row_begin, &w.row_end);
  // All CTAs of a cluster walk the same tiles (they share each multicast tile): the loop bound
  // comes from the cluster's last row, the one that sees the most keys.
  {
    const int last_tile =
        min(tile - static_cast<int>(cta_rank) + static_cast<int>(n_cta), p.row_tiles) - 1;
    int b0, e0;
    tile_rows(p, last_tile, &b0, &e0);
    w.cluster_row_end = max(e0, w.row_end);
  }
  return w;
}

// Split `split` of the work item's request: its first key and its tiles of BLOCK_N keys.
template <int BLOCK_N>
__device__ __forceinline__ void split_keys(const VerifyParams& p, const WorkItem& w, int split,
                                           int* kv_begin, int* n_tiles) {
  // A DCP rank computes every split_step-th global split (verify_params.h).
  const int split_step = p.plan.split_step > 1 ? p.plan.split_step : 1;
  *kv_begin = (split * split_step + p.plan.split_first) * p.plan.chunk;
  // The last split of a request runs to seq_len, whatever the plan: the plan is made on the host
  // from the seq_lens of the call, and a CUDA graph replays it with the seq_lens then in device
  // memory. A request that has grown since capture is then still computed whole (its last split
  // does more work) instead of silently losing its newest keys. In an eager call the plan covers
  // seq_len exactly and this is the same bound.
  // (Not for DCP ranks: their last local split is not the request's last.)
  const bool open_ended = split == w.n_splits - 1 && split_step == 1 && !p.plan.partials_only;
  const int kv_end_split = open_ended ? w.seq_len : min(*kv_begin + p.plan.chunk, w.seq_len);
  const int kv_end_visible =
      min(kv_end_split, w.first_visible + (w.cluster_row_end - 1) / p.num_heads + 1);
  *n_tiles = kv_end_visible > *kv_begin ? (kv_end_visible - *kv_begin + BLOCK_N - 1) / BLOCK_N : 0;
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
