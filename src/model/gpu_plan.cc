#include "gpu_plan.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace mlaspec::model {

AttentionBlockPlan plan_attention_blocks(int64_t T, int64_t first, std::span<const int32_t> table,
                                         int64_t page_size, int64_t block) {
  const AttentionPiece piece{T, first, table};
  return plan_attention_batch({&piece, 1}, page_size, block);
}

AttentionBlockPlan plan_attention_batch(std::span<const AttentionPiece> pieces, int64_t page_size,
                                        int64_t block, bool pow2_pages) {
  AttentionBlockPlan p;
  for (const AttentionPiece& r : pieces) {
    p.pages = std::max(p.pages, (r.first + r.T + page_size - 1) / page_size);
  }
  if (pow2_pages) p.pages = static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(p.pages)));
  int64_t token = 0;
  for (const AttentionPiece& r : pieces) {
    const int64_t used = (r.first + r.T + page_size - 1) / page_size;
    for (int64_t q0 = 0; q0 < r.T; q0 += block) {
      const int64_t q_len = std::min(block, r.T - q0);
      const int64_t row = static_cast<int64_t>(p.seq_lens.size());
      p.seq_lens.push_back(static_cast<int32_t>(r.first + q0 + q_len));
      p.block_table.insert(p.block_table.end(), r.table.begin(), r.table.begin() + used);
      p.block_table.insert(p.block_table.end(), static_cast<size_t>(p.pages - used), r.table[0]);
      AttentionBlockCall* last = p.calls.empty() ? nullptr : &p.calls.back();
      if (last != nullptr && last->q_len == q_len) {
        ++last->batch;
      } else {
        p.calls.push_back({row, 1, q_len, token});
      }
      token += q_len;
    }
  }
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
