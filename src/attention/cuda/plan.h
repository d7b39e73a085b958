// Split-KV planning on the host, shared by cuda_fold and cuda_rowwise (one plan, one combine: the
// precondition for fold == rowwise bitwise).
//
// A plan is one chunk size per call; request b's splits are [s * chunk, (s + 1) * chunk) clipped
// to its seq_len. Policies:
//   deterministic  chunk = deterministic_chunk_tokens(H) (verify.h: 1024 per 64 heads), fixed
//                  for a model: boundaries sit at fixed absolute KV positions whatever the batch,
//                  q_len or seq_len; merged in blocks of kDeterministicBlockChunks (SplitPlan).
//   forced         options.num_splits = n: chunk = the longest request's tiles / n, rounded up.
//   adaptive       chunk chosen by adaptive_chunk_tiles for `concurrent_splits` slots: the number
//                  of fold split work items (each a cluster of row-tile CTAs) the GPU runs at once,
//                  which the backend derives from cudaOccupancyMaxActiveClusters (clusters pack
//                  into GPCs, not into 132 free SMs). Never below kMinAdaptiveChunk (partials
//                  cost 2 KB per row per split).
#pragma once

#include <cstdint>
#include <span>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/status.h"
#include "verify_params.h"

namespace mlaspec::attn::cuda {

inline constexpr int kKvTile = 64;             // Sm90Traits::BLOCK_N
inline constexpr int kMinAdaptiveChunk = 256;  // tokens; multiple of kKvTile
static_assert(deterministic_chunk_tokens(1) % kKvTile == 0 && kMinAdaptiveChunk % kKvTile == 0);

// num_heads: the model's H (deterministic mode's chunk depends on it, and on nothing else).
Status make_split_plan(std::span<const int32_t> seq_lens, int num_heads,
                       const VerifyOptions& options, int concurrent_splits, SplitPlan* plan);

// Adaptive chunk (in 64-token tiles) for requests of `tiles` KV tiles each on `slots` concurrent
// split slots: the old rule (about `slots` splits over the batch) and chunks that give each
// request one or two waves' worth of splits are simulated with split_makespan_tiles, and the
// shortest makespan wins (ties: the longer chunk). Example (PERF.md row 4): B = 8 requests of
// 1024 tiles on 66 slots: the old rule's 125-tile chunk makes 72 items, six more than the slots
// (makespan 153 tiles); 128 makes 64, one wave (130).
int64_t adaptive_chunk_tiles(std::span<const int64_t> tiles, int slots);

// Deterministic mode: how many consecutive splits one CTA group computes (SplitPlan::group_size),
// 1..max_group, for `concurrent_groups` groups the GPU runs at once: the fewest waves times the
// longest group; ties go to a size that folds whole merge blocks in the kernel (a multiple of
// plan.block_splits), then to the longer group (fewer prologues). Any group size gives bitwise the
// same result; this only decides the time.
int deterministic_group_size(const SplitPlan& plan, int batch, int concurrent_groups,
                             int max_group);

// Fold geometry: the row tiles of one split (ceil(rows / 64)) share each KV tile through a cluster
// of `cluster` CTAs; `groups` clusters cover them (groups * cluster >= tiles: a CTA past the last
// tile has no rows), and `concurrent` splits run at once (active_clusters[cluster] / groups).
struct FoldGeometry {
  int tiles = 0, groups = 0, cluster = 0, concurrent = 0;
};
// Balances the tiles over as few clusters of at most `preferred` CTAs as possible, or of at most
// another cap (up to `max_cluster`, or 1: no cluster) where that runs strictly more splits at once;
// ties keep the preferred cap, then the larger. active_clusters[c] (c = 1..max_cluster): how many
// clusters of c CTAs the device runs at once (cudaOccupancyMaxActiveClusters: GPC packing decides,
// not the SM count). An odd tile count in clusters of 2 leaves a CTA without rows: on the H200
// (132 single CTAs, 66 pairs) 5 tiles run 22 splits at once in clusters of 2 and 26 one CTA per
// tile, measured 12.7% faster.
FoldGeometry fold_geometry(int rows, int max_cluster, int preferred,
                           std::span<const int> active_clusters);

// Makespan, in tiles, of the split items of `chunk_tiles`-tile chunks when `slots` run at once and
// a freed slot takes the next item in launch order (request by request, split by split); each
// item costs its tiles plus a fixed overhead of 2 tiles.
int64_t split_makespan_tiles(std::span<const int64_t> tiles, int64_t chunk_tiles, int slots);

// Bytes of partial workspace a plan needs: o (f32, 512 per row) and lse (f32) per slot row.
inline int64_t partial_bytes(const SplitPlan& plan, int rows) {
  return static_cast<int64_t>(plan.total_part_slots) * rows * (512 + 1) * 4;
}

// Upper bound of partial_bytes over every call no larger than `max_shape` (for prepare()).
int64_t partial_bytes_bound(const VerifyShape& max_shape, int num_sms);

}  // namespace mlaspec::attn::cuda
