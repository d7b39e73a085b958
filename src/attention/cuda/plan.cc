#include "plan.h"

#include <algorithm>
#include <string>

namespace mlaspec::attn::cuda {

namespace {
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

Status make_split_plan(std::span<const int32_t> seq_lens, const VerifyOptions& options,
                       int concurrent_splits, SplitPlan* plan) {
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
  int64_t total_tiles = 0, max_tiles = 0;
  for (int32_t s : seq_lens) {
    total_tiles += ceil_div(s, kKvTile);
    max_tiles = std::max<int64_t>(max_tiles, ceil_div(s, kKvTile));
  }
  int64_t chunk_tiles;
  if (options.deterministic) {
    chunk_tiles = kDeterministicChunk / kKvTile;
  } else if (options.num_splits > 0) {
    chunk_tiles = ceil_div(max_tiles, options.num_splits);
  } else {
    chunk_tiles = std::max<int64_t>(kMinAdaptiveChunk / kKvTile,
                                    ceil_div(total_tiles, std::max(concurrent_splits, 1)));
  }
  chunk_tiles = std::max<int64_t>(chunk_tiles, 1);
  const int64_t chunk = std::min<int64_t>(chunk_tiles * kKvTile, int64_t{1} << 30);
  plan->chunk = static_cast<int32_t>(chunk);
  int64_t splits = 0, slots = 0, max_splits = 0;
  for (int b = 0; b < batch; ++b) {
    const int64_t n = std::max<int64_t>(1, ceil_div(seq_lens[b], chunk));
    plan->split_begin[b] = static_cast<int32_t>(splits);
    plan->part_begin[b] = static_cast<int32_t>(slots);
    splits += n;
    if (n > 1) slots += n;
    max_splits = std::max(max_splits, n);
  }
  if (splits >= (int64_t{1} << 31) - 1 || slots >= (int64_t{1} << 31) - 1) {
    return unsupported("split plan: " + std::to_string(splits) + " splits exceed the grid limit");
  }
  plan->split_begin[batch] = static_cast<int32_t>(splits);
  plan->part_begin[batch] = static_cast<int32_t>(slots);
  plan->total_splits = static_cast<int32_t>(splits);
  plan->total_part_slots = static_cast<int32_t>(slots);
  plan->max_splits = static_cast<int32_t>(max_splits);
  return Status::Ok();
}

int64_t partial_bytes_bound(const VerifyShape& s, int num_sms) {
  const int64_t rows = static_cast<int64_t>(s.q_len) * s.num_heads;
  const int64_t total_kv =
      s.total_kv > 0 ? s.total_kv : static_cast<int64_t>(s.batch) * s.max_seq_len;
  const int64_t total_tiles = ceil_div(total_kv, kKvTile) + s.batch;
  const int64_t fold_row_tiles = ceil_div(rows, 64);
  // Adaptive: chunk_tiles >= max(min, total_tiles * row_tiles / sms), and each request adds at
  // most one partly filled split.
  int64_t slots = std::min(ceil_div(total_tiles, kMinAdaptiveChunk / kKvTile),
                           ceil_div(std::max(num_sms, 1), fold_row_tiles) + 1) +
                  s.batch;
  if (s.deterministic) {
    slots = std::max(slots, ceil_div(total_kv, kDeterministicChunk) + s.batch);
  }
  return slots * rows * (512 + 1) * 4;
}

}  // namespace mlaspec::attn::cuda
