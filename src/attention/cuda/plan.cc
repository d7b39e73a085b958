#include "plan.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <vector>

namespace mlaspec::attn::cuda {

namespace {
int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// Fixed cost of one split work item (prologue, pipeline fill, partial write and its share of the
// combine), in KV tiles of the main loop. Only breaks near-ties between packings.
constexpr int64_t kSplitOverheadTiles = 2;

}  // namespace

int64_t split_makespan_tiles(std::span<const int64_t> tiles, int64_t chunk_tiles, int slots) {
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> free_at;
  for (int i = 0; i < std::max(slots, 1); ++i) free_at.push(0);
  int64_t end = 0;
  for (int64_t t : tiles) {
    const int64_t n = std::max<int64_t>(1, ceil_div(t, chunk_tiles));
    for (int64_t s = 0; s < n; ++s) {
      const int64_t len =
          std::max<int64_t>(0, std::min(chunk_tiles, t - s * chunk_tiles)) + kSplitOverheadTiles;
      const int64_t start = free_at.top();
      free_at.pop();
      free_at.push(start + len);
      end = std::max(end, start + len);
    }
  }
  return end;
}

int64_t adaptive_chunk_tiles(std::span<const int64_t> tiles, int concurrent_splits) {
  const int64_t slots = std::max(concurrent_splits, 1);
  const int64_t batch = static_cast<int64_t>(tiles.size());
  int64_t total = 0, longest = 0;
  for (int64_t t : tiles) {
    total += t;
    longest = std::max(longest, t);
  }
  constexpr int64_t kMinTiles = kMinAdaptiveChunk / kKvTile;
  // The old rule: about `slots` splits over the whole batch.
  const int64_t base = std::max(kMinTiles, ceil_div(total, slots));
  if (batch >= 2 * slots || longest <= kMinTiles) return std::max<int64_t>(base, 1);
  // Candidates: m splits of the longest request for m around one or two waves of slots per
  // request, and the old rule. Kept: at most 2 * slots + batch split items (the workspace bound of
  // partial_bytes_bound). Chosen: the shortest simulated makespan; ties go to the longer chunk
  // (fewer partials).
  std::vector<int64_t> cands = {base};
  for (int64_t waves = 1; waves <= 2; ++waves) {
    const int64_t per_req = waves * slots / batch;
    for (int64_t m : {per_req, per_req + 1}) {
      if (m >= 1) cands.push_back(std::max(kMinTiles, ceil_div(longest, m)));
    }
  }
  int64_t best = base, best_time = -1;
  for (int64_t c : cands) {
    int64_t items = 0;
    for (int64_t t : tiles) items += std::max<int64_t>(1, ceil_div(t, c));
    if (items > 2 * slots + batch) continue;
    const int64_t time = split_makespan_tiles(tiles, c, static_cast<int>(slots));
    if (best_time < 0 || time < best_time || (time == best_time && c > best)) {
      best = c;
      best_time = time;
    }
  }
  return best;
}

Status make_split_plan(std::span<const int32_t> seq_lens, int num_heads,
                       const VerifyOptions& options, int concurrent_splits, SplitPlan* plan) {
  const int batch = static_cast<int>(seq_lens.size());
  if (batch < 1 || batch > CommonTraits::kMaxBatch) {
    return invalid_argument("split plan: batch " + std::to_string(batch) + " outside 1.." +
                            std::to_string(CommonTraits::kMaxBatch));
  }
  if (options.num_splits < 0) {
    return invalid_argument("num_splits " + std::to_string(options.num_splits) +
                            " is negative (0 lets the backend choose)");
  }
  if (options.deterministic && options.num_splits > 0) {
    return invalid_argument("num_splits " + std::to_string(options.num_splits) +
                            " conflicts with deterministic mode, whose splits sit at fixed KV "
                            "positions (use num_splits = 0)");
  }
  int64_t max_tiles = 0;
  for (int32_t s : seq_lens) max_tiles = std::max<int64_t>(max_tiles, ceil_div(s, kKvTile));
  int64_t chunk_tiles;
  if (options.deterministic) {
    chunk_tiles = deterministic_chunk_tokens(num_heads) / kKvTile;
  } else if (options.num_splits > 0) {
    chunk_tiles = ceil_div(max_tiles, options.num_splits);
  } else {
    std::vector<int64_t> tiles(static_cast<size_t>(batch));
    for (int b = 0; b < batch; ++b) tiles[b] = ceil_div(seq_lens[b], kKvTile);
    chunk_tiles = adaptive_chunk_tiles(tiles, concurrent_splits);
  }
  chunk_tiles = std::max<int64_t>(chunk_tiles, 1);
  const int64_t chunk = std::min<int64_t>(chunk_tiles * kKvTile, int64_t{1} << 30);
  plan->chunk = static_cast<int32_t>(chunk);
  int64_t splits = 0, max_splits = 0;
  for (int b = 0; b < batch; ++b) {
    const int64_t n = std::max<int64_t>(1, ceil_div(seq_lens[b], chunk));
    plan->split_begin[b] = static_cast<int32_t>(splits);
    splits += n;
    max_splits = std::max(max_splits, n);
  }
  // Partial slots never outnumber splits, so this bounds them too.
  if (splits >= (int64_t{1} << 31) - 1) {
    return unsupported("split plan: " + std::to_string(splits) + " splits exceed the grid limit");
  }
  plan->split_begin[batch] = static_cast<int32_t>(splits);
  plan->total_splits = static_cast<int32_t>(splits);
  plan->max_splits = static_cast<int32_t>(max_splits);
  plan->block_splits = options.deterministic ? kDeterministicBlockChunks : 1;
  set_split_groups(plan, batch, 1);  // also lays out the partial slots
  return Status::Ok();
}

int deterministic_group_size(const SplitPlan& plan, int batch, int concurrent_groups,
                             int max_group) {
  const int64_t slots = std::max(concurrent_groups, 1);
  int best = 1;
  int64_t best_time = -1;
  // Groups of whole blocks fold them in the kernel (set_split_groups): one partial per block
  // instead of per split, written and read back by the combine.
  auto folds = [&](int g) { return plan.block_splits > 1 && g % plan.block_splits == 0; };
  for (int g = 1; g <= std::max(max_group, 1); ++g) {
    int64_t groups = 0;
    int longest = 0;
    for (int b = 0; b < batch; ++b) {
      const int n = plan.split_begin[b + 1] - plan.split_begin[b];
      groups += (n + g - 1) / g;
      longest = std::max(longest, std::min(n, g));
    }
    // Waves of groups, each as long as its longest group (8 units per split) plus one unit for
    // the group's prologue: what grouping saves is prologues, so longer groups win ties, except
    // that a group size that folds blocks beats an equally fast one that does not.
    const int64_t time = ceil_div(groups, slots) * (static_cast<int64_t>(longest) * 8 + 1);
    if (best_time < 0 || time < best_time || (time == best_time && (folds(g) || !folds(best)))) {
      best = g;
      best_time = time;
    }
  }
  return best;
}

FoldGeometry fold_geometry(int rows, int max_cluster, int preferred,
                           std::span<const int> active_clusters) {
  const int tiles = std::max(1, (rows + 63) / 64);
  const int top = std::min(max_cluster, static_cast<int>(active_clusters.size()) - 1);
  auto with_cap = [&](int cap) {
    FoldGeometry g;
    g.tiles = tiles;
    g.groups = (tiles + cap - 1) / cap;
    g.cluster = (tiles + g.groups - 1) / g.groups;
    g.concurrent = std::max(1, active_clusters[g.cluster] / g.groups);
    return g;
  };
  const int first = std::max(1, std::min(top, preferred));
  FoldGeometry g = with_cap(first);
  for (int c = top; c >= 1; --c) {
    if (c == first) continue;
    const FoldGeometry other = with_cap(c);
    if (other.concurrent > g.concurrent) g = other;
  }
  return g;
}

int64_t partial_bytes_bound(const VerifyShape& s, int num_sms) {
  const int64_t rows = static_cast<int64_t>(s.q_len) * s.num_heads;
  const int64_t total_kv =
      s.total_kv > 0 ? s.total_kv : static_cast<int64_t>(s.batch) * s.max_seq_len;
  const int64_t total_tiles = ceil_div(total_kv, kKvTile) + s.batch;
  const int64_t fold_row_tiles = ceil_div(rows, 64);
  // Adaptive (adaptive_chunk_tiles): at most 2 * concurrent + batch split items, concurrent at
  // most num_sms / row tiles (+1 for rounding), and never more than the minimum chunk allows.
  int64_t slots = std::min(ceil_div(total_tiles, kMinAdaptiveChunk / kKvTile) + s.batch,
                           2 * (ceil_div(std::max(num_sms, 1), fold_row_tiles) + 1) + s.batch);
  if (s.deterministic) {
    // The smallest deterministic chunk (H <= 64): a bound for every call no larger than `s`,
    // whatever its H (q_len * H / chunk is largest at H = 64).
    slots = std::max(slots, ceil_div(total_kv, deterministic_chunk_tokens(1)) + s.batch);
  }
  return slots * rows * (512 + 1) * 4;
}

}  // namespace mlaspec::attn::cuda
