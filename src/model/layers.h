// The CPU runtime's layers (f32 math, GEMMs through CBLAS). One function per layer kind, each
// over the T new tokens of one request: a request's rows never share a GEMM, a reduction or an
// expert group with another request's, so its results do not depend on its batchmates (the CPU
// runtime's batch invariance holds by construction).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mlaspec/attention/registry.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/config.h"
#include "mlaspec/model/model.h"
#include "mlaspec/model/weights.h"

namespace mlaspec::model {

// The rows of a chunk (tokens begin .. begin + T - 1 of a request's n) that get logits: `rows`
// rows from chunk row `row0`, written at logit row `dst` (both runtimes).
struct LogitRows {
  int64_t row0 = 0, rows = 0, dst = 0;
};
inline LogitRows logit_rows(LogitsMode mode, int64_t begin, int64_t T, int64_t n) {
  if (mode == LogitsMode::kAll) return {0, T, begin};
  if (mode == LogitsMode::kLast && begin + T == n) return {T - 1, 1, 0};
  return {};
}

// Sizes a request's output for n new tokens: `captures` hidden states [n, hidden] and the logit
// rows its mode asks for, [rows, vocab] (both runtimes).
inline void size_output(LogitsMode mode, int64_t n, size_t captures, int64_t hidden, int64_t vocab,
                        RequestOutput* out) {
  out->hidden.assign(captures, std::vector<float>(static_cast<size_t>(n * hidden)));
  out->logit_rows = mode == LogitsMode::kAll    ? static_cast<int>(n)
                    : mode == LogitsMode::kLast ? 1
                                                : 0;
  out->logits.assign(static_cast<size_t>(out->logit_rows * vocab), 0.0f);
}

}  // namespace mlaspec::model

namespace mlaspec::model::cpu {

// y[T, W.rows] = x[T, W.cols] @ W^T, row strides ldx / ldy (0: packed).
void linear(const float* x, int64_t T, const Matrix& W, float* y, int64_t ldx = 0, int64_t ldy = 0);

// norm.cc: y = w * x / sqrt(mean(x^2) + eps) per row of `dim` values (y may alias x).
void rms_norm(const float* x, int64_t T, int64_t dim, const std::vector<float>& w, double eps,
              float* y, int64_t ldx = 0, int64_t ldy = 0);

// rope.cc: RoPE / YaRN over the 64 rope values of one q head or k_pe.
class Rope {
 public:
  explicit Rope(const RopeConfig& config, int dim);
  // Rotates x[0..dim) in place for `position`. The output is in rotate_half order (the two
  // rotated halves) for both pair layouts: interleaved input pairs (x0, x1), (x2, x3), ... land at
  // (i, i + dim/2), as transformers' DeepseekV3 interleave path writes them. Dot products between
  // rotated q and k are the same in either order.
  void apply(float* x, int64_t position) const;
  const std::vector<float>& inv_freq() const { return inv_freq_; }

 private:
  RopeConfig config_;
  int dim_;
  std::vector<float> inv_freq_;
};

// One request's tokens in a chunk, and where their KV goes.
struct ChunkPiece {
  int64_t request = 0;         // its index in the forward's batch (for error messages)
  int64_t row0 = 0;            // its first row among the chunk's rows
  int64_t T = 0;               // its rows
  int64_t first_position = 0;  // its tokens sit at first_position .. first_position + T - 1
  TensorView block_table;      // int32 [1, pages] (the request's page table)
  TensorView seq_lens;         // int32 [1] = first_position + T
};

// The rows of one pass through the layers: one or more requests' pieces, stacked in piece order.
// Everything but attention runs over all rows at once; attention runs per piece.
struct Chunk {
  int64_t T = 0;                       // rows in all
  std::span<const int32_t> positions;  // [T] each row's position
  std::span<const int32_t> slots;      // [T] pool slots of the new tokens
  std::span<const ChunkPiece> pieces;
  bool f32_attention = false;  // ForwardOptions::f32_attention (one piece, first_position 0)
  bool fp8_math = false;       // ForwardOptions::fp8_math_attention
};

// mla.cc: self-attention of one layer in the absorbed form. Writes the T KV rows
// [kv_a_layernorm(c) | rope(k_pe)] (bf16, the pool converts) and runs the attention op through
// `dispatcher`. x: normed hidden [T, hidden]; out: [T, hidden].
Status mla_forward(const ModelConfig& config, const AttentionWeights& w, const Rope& rope,
                   int layer, const float* x, const Chunk& chunk, kv::KvPool& pool,
                   attn::Dispatcher& dispatcher, float* out);

// mlp.cc: SwiGLU, out[T, hidden] = down(silu(gate(x)) * up(x)).
void mlp_forward(const MlpWeights& w, const float* x, int64_t T, float* out);

// mlp.cc: the SwiGLU activation, out[i] = silu(gate[i]) * up[i] for i < n (out may alias gate).
void silu_mul(const float* gate, const float* up, int64_t n, float* out);

// moe.cc: the combine, out[t, :] = sum_{i < k} w[t * k + i] * ys[rows[t * k + i], :] in i order,
// then + shared[t, :] when shared is not null (rows / w: plan_moe_groups' combine_row / _weight).
void moe_combine(const float* ys, const int32_t* rows, const float* w, int k, const float* shared,
                 int64_t T, int64_t hidden, float* out);

// moe.cc: routed experts (grouped per expert, one GEMM each) + shared experts.
void moe_forward(const ModelConfig& config, const MoeWeights& w, const float* x, int64_t T,
                 float* out);

// The routing of one token: top-k expert ids and their weights (routed_scaling_factor applied).
void route_token(const ModelConfig& config, const MoeWeights& w, const float* router_logits,
                 int* experts, float* weights);

}  // namespace mlaspec::model::cpu
