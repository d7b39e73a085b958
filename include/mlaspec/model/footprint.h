// What a model's forward touches and what it needs in memory, from its config alone: the weight
// bytes a step reads (PERF.md's engine floor; `mlaspec bench-model`) and the up-front memory budget
// of a load (weights + both KV pools + the CUDA runtime's workspace, `LoadOptions::mem_fraction`).
#pragma once

#include <cstdint>
#include <string>

#include "mlaspec/core/status.h"
#include "mlaspec/model/config.h"

namespace mlaspec::model {

// Parameter counts by how a forward step reads them.
struct WeightFootprint {
  int64_t dense_params = 0;   // read by every step: attention, dense MLPs, shared experts,
                              // routers, norms, lm_head
  int64_t expert_params = 0;  // one routed expert of one layer (gate, up, down)
  int64_t moe_layers = 0;
  int64_t routed_experts = 0;  // per MoE layer
  int64_t embed_params = 0;    // an untied embedding table (a step reads only its tokens' rows);
                               // 0 when tied (lm_head, in dense_params, is the table)
  int64_t total_params() const;
  // Parameters a step reads when `experts_per_layer` distinct routed experts are touched in each
  // MoE layer (each read once, however many tokens it serves).
  double step_params(double experts_per_layer) const;
};
WeightFootprint weight_footprint(const ModelConfig& c);

// Distinct routed experts one MoE layer touches when `tokens` tokens each pick k of E uniformly at
// random: E (1 - (1 - k / E)^tokens). (Random-weight models route close to uniformly; trained ones
// less so, so it is an estimate, labelled as such where it is printed.)
double expected_distinct_experts(const ModelConfig& c, int64_t tokens);

// The CUDA runtime's scratch buffers for chunks of up to T tokens of a request with up to `pages`
// KV pages, in bytes: Runtime::reserve (src/model/cuda/weights.cc) allocates exactly these, and
// size_memory counts them.
struct ScratchBytes {
  int64_t tokens = 0, slots = 0, x = 0, hf = 0, hb = 0, delta = 0, shared = 0, qa = 0, qab = 0,
          q = 0, ckv = 0, kvr = 0, qn = 0, qatt = 0, o = 0, lse = 0, heads = 0, gu = 0, act = 0,
          sgu = 0, sact = 0, xs = 0, ys = 0, router_logits = 0, chosen = 0, rweights = 0,
          row_of = 0, begin = 0, gidx = 0, cpos = 0, cw = 0, touched = 0, table = 0, seq_lens = 0,
          logits = 0;
  int64_t total() const;
};
// `attention_block`: the CUDA attention's query block (the runtime cuts chunks into blocks of it).
ScratchBytes scratch_bytes(const ModelConfig& c, int64_t T, int64_t pages, int64_t attention_block);

// The up-front memory budget of a load on a device.
struct MemoryBudget {
  int64_t weights = 0;    // on the device, weight_bytes_per_param each (bf16: 2; the router f32)
  int64_t target_kv = 0;  // the target's KV pool
  int64_t draft_kv = 0;   // the drafter's KV pool (0 without one)
  int64_t workspace = 0;  // the CUDA runtime's scratch for chunks of max_chunk_tokens
  int64_t total() const { return weights + target_kv + draft_kv + workspace; }
  std::string describe() const;  // "weights X GiB + target KV ... = total"
};
MemoryBudget size_memory(const ModelConfig& c, int weight_bytes_per_param, int64_t target_kv_bytes,
                         int64_t draft_kv_bytes, int64_t max_chunk_tokens);

// Ok when budget.total() <= fraction * available; else resource_exhausted naming both in bytes
// and GiB, and the budget's parts. fraction in (0, 1].
Status check_memory(const MemoryBudget& budget, int64_t available_bytes, double fraction);

}  // namespace mlaspec::model
