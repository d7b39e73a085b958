// Weight footprint and memory budget from a ModelConfig (include/mlaspec/model/footprint.h).
#include "mlaspec/model/footprint.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mlaspec::model {
namespace {

int64_t mlp_params(int64_t hidden, int64_t inter) {
  return 3 * hidden * inter;
}

std::string gib(int64_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

int64_t WeightFootprint::total_params() const {
  return dense_params + expert_params * routed_experts * moe_layers + embed_params;
}

double WeightFootprint::step_params(double experts_per_layer) const {
  return static_cast<double>(dense_params) +
         static_cast<double>(expert_params * moe_layers) * experts_per_layer;
}

WeightFootprint weight_footprint(const ModelConfig& c) {
  WeightFootprint f;
  const int64_t hidden = c.hidden_size, H = c.num_attention_heads;
  const int64_t latent = c.kv_lora_rank, rope = c.qk_rope_head_dim;
  int64_t attn = 0;
  if (c.has_q_lora()) {
    attn += int64_t{c.q_lora_rank} * hidden + c.q_lora_rank + H * c.qk_head_dim() * c.q_lora_rank;
  } else {
    attn += H * c.qk_head_dim() * hidden;
  }
  attn += (latent + rope) * hidden + latent;                 // kv_a_proj_with_mqa, its norm
  attn += H * (c.qk_nope_head_dim + c.v_head_dim) * latent;  // kv_b_proj (W_UK, W_UV)
  attn += hidden * H * c.v_head_dim + 2 * hidden;            // o_proj, the two layer norms
  const int64_t vocab = c.vocab_size;
  // lm_head (the embedding table itself when tied) is read whole by every step that wants logits;
  // an untied embedding table is a separate tensor of which a step reads a few rows.
  f.dense_params = attn * c.num_hidden_layers + hidden + vocab * hidden;
  f.embed_params = c.tie_word_embeddings ? 0 : vocab * hidden;
  for (int l = 0; l < c.num_hidden_layers; ++l) {
    if (!c.is_moe_layer(l)) {
      f.dense_params += mlp_params(hidden, c.intermediate_size);
      continue;
    }
    ++f.moe_layers;
    f.dense_params += int64_t{c.n_routed_experts} * hidden + c.n_routed_experts;  // router, bias
    f.dense_params += mlp_params(hidden, int64_t{c.moe_intermediate_size} * c.n_shared_experts);
  }
  f.expert_params = mlp_params(hidden, c.moe_intermediate_size);
  f.routed_experts = c.n_routed_experts;
  return f;
}

double expected_distinct_experts(const ModelConfig& c, int64_t tokens) {
  const double E = c.n_routed_experts, k = c.num_experts_per_tok;
  if (E <= 0 || k <= 0) return 0.0;
  return E * (1.0 - std::pow(1.0 - k / E, static_cast<double>(tokens)));
}

int64_t ScratchBytes::total() const {
  return tokens + slots + x + hf + hb + delta + shared + qa + qab + q + ckv + kvr + qn + qatt + o +
         lse + heads + gu + act + sgu + sact + xs + ys + router_logits + chosen + rweights +
         row_of + begin + gidx + cpos + cw + touched + table + seq_lens + logits;
}

ScratchBytes scratch_bytes(const ModelConfig& c, int64_t T, int64_t pages,
                           int64_t attention_block) {
  const int64_t hidden = c.hidden_size, H = c.num_attention_heads;
  const int64_t row = c.kv_lora_rank + c.qk_rope_head_dim;
  const int64_t k = std::max(1, c.num_experts_per_tok);
  const int64_t E = std::max(1, c.n_routed_experts);
  int64_t inter = c.intermediate_size;
  if (c.n_routed_experts > 0) {
    inter = std::max(inter, int64_t{c.moe_intermediate_size} * std::max(1, c.n_shared_experts));
  }
  const int64_t gu_rows = c.n_routed_experts > 0 ? T * k : T;
  const int64_t nb = (T + attention_block - 1) / attention_block;
  const int64_t q_lora = std::max(1, c.q_lora_rank);
  const int64_t f = 4, b = 2, i = 4;  // f32, bf16, int32
  ScratchBytes s;
  s.tokens = T * i;
  s.slots = T * i;
  s.x = s.hf = s.delta = s.shared = T * hidden * f;
  s.hb = T * hidden * b;
  s.qa = T * q_lora * f;
  s.qab = T * q_lora * b;
  s.q = T * H * c.qk_head_dim() * f;
  s.ckv = T * row * f;
  s.kvr = T * row * b;
  s.qn = T * H * c.qk_nope_head_dim * b;
  s.qatt = T * H * row * b;
  s.o = T * H * c.kv_lora_rank * b;
  s.lse = T * H * f;
  s.heads = T * H * c.v_head_dim * b;
  s.gu = gu_rows * 2 * inter * f;
  s.act = gu_rows * inter * b;
  // The shared experts' own gate_up / SwiGLU scratch: they run beside the routed experts, which
  // use gu / act at the same time (moe.cc).
  if (c.n_routed_experts > 0 && c.n_shared_experts > 0) {
    const int64_t shared_inter = int64_t{c.moe_intermediate_size} * c.n_shared_experts;
    s.sgu = T * 2 * shared_inter * f;
    s.sact = T * shared_inter * b;
  }
  s.xs = T * k * hidden * b;
  s.ys = T * k * hidden * f;
  s.router_logits = T * E * f;
  s.chosen = s.row_of = s.gidx = s.cpos = s.touched = T * k * i;
  s.rweights = s.cw = T * k * f;
  s.begin = (E + 1) * i;
  // A fused pass has at most one attention block per token (gpu_plan.h), at least nb.
  s.table = std::max(nb, T) * pages * i;
  s.seq_lens = std::max(nb, T) * i;
  s.logits = T * int64_t{c.vocab_size} * f;
  return s;
}

std::string MemoryBudget::describe() const {
  return "weights " + gib(weights) + " + target KV " + gib(target_kv) + " + draft KV " +
         gib(draft_kv) + " + workspace " + gib(workspace) + " = " + gib(total()) + " (" +
         std::to_string(total()) + " bytes)";
}

MemoryBudget size_memory(const ModelConfig& c, int weight_bytes_per_param, int64_t target_kv_bytes,
                         int64_t draft_kv_bytes, int64_t max_chunk_tokens) {
  MemoryBudget b;
  const WeightFootprint f = weight_footprint(c);
  // Routers stay f32 on the device (4 bytes); everything else weight_bytes_per_param.
  const int64_t routers = f.moe_layers * c.n_routed_experts * (int64_t{c.hidden_size} + 1);
  b.weights = (f.total_params() - routers) * weight_bytes_per_param + routers * 4;
  b.target_kv = target_kv_bytes;
  b.draft_kv = draft_kv_bytes;
  // The CUDA runtime's scratch for a chunk of max_chunk_tokens tokens of a request as long as the
  // model's context (in pages of 16 tokens), plus 64 MiB for cuBLAS's
  // workspace and the allocator's rounding.
  const int64_t T = std::max<int64_t>(1, max_chunk_tokens);
  const int64_t pages = (c.max_position_embeddings + 15) / 16;
  const int64_t w = scratch_bytes(c, T, pages, 32).total();
  b.workspace = w + (int64_t{64} << 20);
  return b;
}

Status check_memory(const MemoryBudget& budget, int64_t available_bytes, double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    return invalid_argument("mem_fraction " + std::to_string(fraction) + " is outside (0, 1]");
  }
  const int64_t allowed = static_cast<int64_t>(fraction * static_cast<double>(available_bytes));
  if (budget.total() <= allowed) return Status::Ok();
  return resource_exhausted("the model needs " + std::to_string(budget.total()) + " bytes (" +
                            gib(budget.total()) + ") but mem_fraction " + std::to_string(fraction) +
                            " of the " + std::to_string(available_bytes) +
                            " bytes available allows " + std::to_string(allowed) + " (" +
                            gib(allowed) + "): " + budget.describe());
}

}  // namespace mlaspec::model
