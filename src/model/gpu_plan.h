// Host-side planning for the CUDA runtime (src/model/cuda/runtime.cc), plain C++ so the CPU tests
// check it (tests/model/gpu_plan_test.cc) in every build.
//
// Attention blocks: the CUDA verify backends serve q_len <= 32 (attention/cuda/traits.h), so a
// chunk of T new tokens at positions first .. first + T - 1 is cut into blocks of `block` queries:
// ⌊T / block⌋ full blocks that share the request's page table, block b with seq_len
// first + block * (b + 1), and a remainder block with seq_len first + T. Bottom-right causal
// masking (query i of a block sees key positions [0, seq_len - q_len + i]) then shows each query
// exactly the keys it sees in one call of T. A fused batch (several requests' new tokens laid out
// one request after the other) is planned the same way per request; consecutive blocks of equal
// q_len, whose query rows are contiguous, share one attention call (a decode batch is one call of
// B blocks of 1, a verify batch one call of B blocks of q_len).
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
  int64_t first_block = 0;  // row of block_table / seq_lens
  int64_t batch = 0;        // blocks in the call
  int64_t q_len = 0;        // queries per block
  int64_t first_token = 0;  // the call's first query row among the batch's new tokens
};

struct AttentionBlockPlan {
  std::vector<AttentionBlockCall> calls;
  int64_t pages = 0;                 // columns of block_table
  std::vector<int32_t> block_table;  // [blocks, pages]: each block's request's table, padded
                                     // with that table's first page
  std::vector<int32_t> seq_lens;     // [blocks]
};

// `table` holds at least ceil((first + T) / page_size) pages. T >= 1, block >= 1.
AttentionBlockPlan plan_attention_blocks(int64_t T, int64_t first, std::span<const int32_t> table,
                                         int64_t page_size, int64_t block);

// One request's part of a fused batch: T new tokens at positions first .. first + T - 1.
struct AttentionPiece {
  int64_t T = 0, first = 0;
  std::span<const int32_t> table;  // at least ceil((first + T) / page_size) pages
};
// The pieces' tokens lie one after the other in piece order. pages = the most any piece needs, or
// with `pow2_pages` that rounded up to a power of two: the table's width, which an attention
// launch holds, then changes only when the longest context doubles (CUDA graphs replay it).
AttentionBlockPlan plan_attention_batch(std::span<const AttentionPiece> pieces, int64_t page_size,
                                        int64_t block, bool pow2_pages = false);

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
