// Host-side planning for the CUDA runtime (src/model/cuda/runtime.cc), plain C++ so the CPU tests
// check it (tests/model/gpu_plan_test.cc) in every build.
//
// Attention blocks: the CUDA verify backends serve q_len <= 32 (attention/cuda/traits.h), so a
// chunk of T new tokens at positions first .. first + T - 1 is cut into blocks of `block` queries.
// The full blocks go to one call as a batch of ⌊T / block⌋ "requests" that share the request's
// page table, block b with seq_len first + block * (b + 1); the remainder is one more call with
// seq_len first + T. Bottom-right causal masking (query i of a call sees key positions
// [0, seq_len - q_len + i]) then shows each query exactly the keys it sees in one call of T.
//
// MoE groups: the rows of each routed expert (experts ascending, tokens in order within one), and
// for each token its k rows in ascending expert order with their weights, so the combine sums a
// token's experts in the CPU runtime's order (moe.cc).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace mlaspec::model {

struct AttentionBlockCall {
  int64_t first_block = 0;  // row of block_table / seq_lens, and first query token / block
  int64_t batch = 0;
  int64_t q_len = 0;
};

struct AttentionBlockPlan {
  std::vector<AttentionBlockCall> calls;  // 1 or 2
  int64_t pages = 0;                      // columns of block_table
  std::vector<int32_t> block_table;       // [blocks, pages]: the request's table, repeated
  std::vector<int32_t> seq_lens;          // [blocks]
};

// `table` holds at least ceil((first + T) / page_size) pages. T >= 1, block >= 1.
AttentionBlockPlan plan_attention_blocks(int64_t T, int64_t first, std::span<const int32_t> table,
                                         int64_t page_size, int64_t block);

struct MoeGroupPlan {
  std::vector<int32_t> rows;          // [T * k] token of each expert row, grouped by expert
  std::vector<int64_t> expert_begin;  // [E + 1] expert e owns rows [begin[e], begin[e + 1])
  std::vector<int32_t> combine_row;   // [T * k] token t's rows, experts ascending
  std::vector<float> combine_weight;  // [T * k] their routing weights
};

// chosen / weights: [T, k] expert ids in [0, E) (distinct per token) and weights.
MoeGroupPlan plan_moe_groups(std::span<const int> chosen, std::span<const float> weights, int64_t T,
                             int k, int E);

}  // namespace mlaspec::model
