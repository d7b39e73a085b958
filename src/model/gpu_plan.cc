#include "gpu_plan.h"

#include <algorithm>
#include <numeric>

namespace mlaspec::model {

AttentionBlockPlan plan_attention_blocks(int64_t T, int64_t first, std::span<const int32_t> table,
                                         int64_t page_size, int64_t block) {
  AttentionBlockPlan p;
  const int64_t full = T / block, rem = T % block;
  const int64_t blocks = full + (rem > 0 ? 1 : 0);
  p.pages = (first + T + page_size - 1) / page_size;
  p.block_table.resize(static_cast<size_t>(blocks * p.pages));
  p.seq_lens.resize(static_cast<size_t>(blocks));
  for (int64_t b = 0; b < blocks; ++b) {
    std::copy(table.begin(), table.begin() + p.pages, p.block_table.begin() + b * p.pages);
    p.seq_lens[static_cast<size_t>(b)] = static_cast<int32_t>(first + std::min(T, (b + 1) * block));
  }
  if (full > 0) p.calls.push_back({0, full, block});
  if (rem > 0) p.calls.push_back({full, 1, rem});
  return p;
}

MoeGroupPlan plan_moe_groups(std::span<const int> chosen, std::span<const float> weights, int64_t T,
                             int k, int E) {
  MoeGroupPlan p;
  p.expert_begin.assign(static_cast<size_t>(E) + 1, 0);
  std::vector<int32_t> row_of(static_cast<size_t>(T * k), -1);
  for (int e = 0; e < E; ++e) {
    p.expert_begin[static_cast<size_t>(e)] = static_cast<int64_t>(p.rows.size());
    for (int64_t t = 0; t < T; ++t) {
      for (int i = 0; i < k; ++i) {
        if (chosen[static_cast<size_t>(t * k + i)] == e) {
          row_of[static_cast<size_t>(t * k + i)] = static_cast<int32_t>(p.rows.size());
          p.rows.push_back(static_cast<int32_t>(t));
        }
      }
    }
  }
  p.expert_begin[static_cast<size_t>(E)] = static_cast<int64_t>(p.rows.size());
  p.combine_row.resize(static_cast<size_t>(T * k));
  p.combine_weight.resize(static_cast<size_t>(T * k));
  std::vector<int> order(static_cast<size_t>(k));
  for (int64_t t = 0; t < T; ++t) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return chosen[static_cast<size_t>(t * k + a)] < chosen[static_cast<size_t>(t * k + b)];
    });
    for (int r = 0; r < k; ++r) {
      const size_t src = static_cast<size_t>(t * k + order[static_cast<size_t>(r)]);
      p.combine_row[static_cast<size_t>(t * k + r)] = row_of[src];
      p.combine_weight[static_cast<size_t>(t * k + r)] = weights[src];
    }
  }
  return p;
}

}  // namespace mlaspec::model
