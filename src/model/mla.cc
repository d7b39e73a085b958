// Multi-head latent attention in the absorbed form (ARCHITECTURE.md §3.1, §3.5).
//
//   q      = q_b_proj(q_a_layernorm(q_a_proj(x)))  or  q_proj(x)        [T, H, nope + 64]
//   ckv    = kv_a_proj_with_mqa(x)                                       [T, 512 + 64]
//   kv row = [kv_a_layernorm(ckv[:512]) | rope(ckv[512:])]              [T, 576] -> the pool
//   q row  = [q_nope @ W_UK[h] | rope(q_pe)] per head                    [T, H, 576]
//   o      = attention(q rows, the pool's rows)                         [T, H, 512]
//   out    = o_proj(concat_h(o[h] @ W_UV[h]^T))                          [T, hidden]
// which equals transformers' MHA form (k_nope = W_UK c, v = W_UV c per head) up to rounding: q
// rows, KV rows and o are bf16 at the attention op's boundary.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "layers.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/core/parallel.h"
#include "mlaspec/kvcache/writer.h"
#include "row_invariant_gemm.h"

namespace mlaspec::model::cpu {
namespace {

// transformers builds q_a_layernorm and kv_a_layernorm with the RMSNorm default eps, not
// config.rms_norm_eps.
constexpr double kLatentNormEps = 1e-6;

// Validation mode (ForwardOptions::f32_attention): causal attention of the chunk's T tokens over
// themselves in f32, from the unrounded q and KV rows. o is [T, H, latent].
void attention_f32(const float* q_row, const float* kv, int64_t T, int64_t H, int64_t row,
                   int64_t latent, float sm_scale, float* o) {
  parallel_for(0, T * H, T * T * H * (row + latent) / 2, [&](int64_t th) {
    const int64_t t = th / H;
    const float* q = q_row + th * row;
    std::vector<float> p(static_cast<size_t>(t + 1));
    float mx = -INFINITY;
    for (int64_t j = 0; j <= t; ++j) {
      float s = 0.0f;
      for (int64_t i = 0; i < row; ++i) s += q[i] * kv[j * row + i];
      p[static_cast<size_t>(j)] = s * sm_scale;
      mx = std::max(mx, p[static_cast<size_t>(j)]);
    }
    float sum = 0.0f;
    for (float& x : p) sum += (x = std::exp(x - mx));
    float* out = o + th * latent;
    std::fill(out, out + latent, 0.0f);
    for (int64_t j = 0; j <= t; ++j) {
      const float w = p[static_cast<size_t>(j)] / sum;
      for (int64_t i = 0; i < latent; ++i) out[i] += w * kv[j * row + i];
    }
  });
}

// The attention op through the dispatcher (the CPU reference here), one call per piece: its bf16 q
// rows against the pool's rows of its request for this layer; o comes back as bf16 and is widened
// to f32.
Status attention_op(const ModelConfig& c, int layer, std::vector<bf16>& q_bf16, const Chunk& chunk,
                    kv::KvPool& pool, attn::Dispatcher& dispatcher, std::vector<float>& o_f32) {
  const int64_t T = chunk.T, H = c.num_attention_heads;
  const int64_t latent = c.kv_lora_rank, row = latent + c.qk_rope_head_dim;
  // bf16 buffers are reused (thread_local, every element written before it is read): a fresh
  // std::vector<bf16> of n fills it one 2-byte element at a time (~4% of a verify step).
  thread_local std::vector<bf16> o_storage;
  std::vector<bf16>& o = o_storage;
  o.resize(o_f32.size());
  std::vector<float> lse(static_cast<size_t>(T * H));
  for (const ChunkPiece& piece : chunk.pieces) {
    const int64_t r0 = piece.row0;
    attn::VerifyArgs args;
    args.q = TensorView(q_bf16.data() + r0 * H * row, DType::kBF16, {1, piece.T, H, row});
    args.kv = pool.layer_view(layer);
    args.block_table = piece.block_table;
    args.seq_lens = piece.seq_lens;
    args.sm_scale = static_cast<float>(c.softmax_scale());
    args.out = TensorView(o.data() + r0 * H * latent, DType::kBF16, {1, piece.T, H, latent});
    args.lse = TensorView(lse.data() + r0 * H, DType::kF32, {1, piece.T, H});
    attn::VerifyOptions options;
    options.deterministic = true;
    options.fp8_math = chunk.fp8_math;
    Status st = dispatcher.run(args, options).with_context("layer " + std::to_string(layer));
    if (chunk.pieces.size() > 1) st = st.with_context("request " + std::to_string(piece.request));
    MLASPEC_RETURN_IF_ERROR(st);
  }
  for (size_t i = 0; i < o.size(); ++i) o_f32[i] = o[i].to_float();
  return Status::Ok();
}

}  // namespace

Status mla_forward(const ModelConfig& c, const AttentionWeights& w, const Rope& rope, int layer,
                   const float* x, const Chunk& chunk, kv::KvPool& pool,
                   attn::Dispatcher& dispatcher, float* out) {
  const int64_t T = chunk.T, H = c.num_attention_heads;
  const int64_t nope = c.qk_nope_head_dim, rdim = c.qk_rope_head_dim, qk = c.qk_head_dim();
  const int64_t latent = c.kv_lora_rank, row = latent + rdim, v = c.v_head_dim;

  // q, per head [nope | rope].
  std::vector<float> q(static_cast<size_t>(T * H * qk));
  if (c.has_q_lora()) {
    std::vector<float> qa(static_cast<size_t>(T * c.q_lora_rank));
    linear(x, T, w.q_a_proj, qa.data());
    rms_norm(qa.data(), T, c.q_lora_rank, w.q_a_layernorm, kLatentNormEps, qa.data());
    linear(qa.data(), T, w.q_b_proj, q.data());
  } else {
    linear(x, T, w.q_proj, q.data());
  }

  // The KV rows of the new tokens.
  std::vector<float> ckv(static_cast<size_t>(T * row));
  linear(x, T, w.kv_a_proj_with_mqa, ckv.data());
  rms_norm(ckv.data(), T, latent, w.kv_a_layernorm, kLatentNormEps, ckv.data(), row, row);
  // Reused, as attention_op's o; named by a reference so the parallel_for lambdas (other threads)
  // write this thread's buffer, not their own thread_local.
  thread_local std::vector<bf16> kv_rows_storage;
  std::vector<bf16>& kv_rows = kv_rows_storage;
  kv_rows.resize(static_cast<size_t>(T * row));
  parallel_for(0, T, T * row * 4, [&](int64_t t) {
    float* r = ckv.data() + t * row;
    rope.apply(r + latent, chunk.positions[static_cast<size_t>(t)]);
    for (int64_t i = 0; i < row; ++i)
      kv_rows[static_cast<size_t>(t * row + i)] = bf16::from_float(r[i]);
  });
  MLASPEC_RETURN_IF_ERROR(kv::write_rows(
      pool, layer, TensorView(const_cast<int32_t*>(chunk.slots.data()), DType::kI32, {T}),
      TensorView(kv_rows.data(), DType::kBF16, {T, row})));

  // Absorbed q rows: q_nope @ W_UK[h] (one GEMM per head over the T tokens) and rope(q_pe).
  std::vector<float> q_row(static_cast<size_t>(T * H * row));
  for (int64_t h = 0; h < H; ++h) {
    if (row_invariant_gemm()) {
      if (!w.w_uk.data_bf16.empty()) {
        gemm_nn_row_invariant(q.data() + h * qk, T, H * qk,
                              w.w_uk.data_bf16.data() + h * nope * latent, latent, latent, nope,
                              q_row.data() + h * row, H * row);
      } else {
        gemm_nn_row_invariant(q.data() + h * qk, T, H * qk, w.w_uk.row(h * nope), latent, latent,
                              nope, q_row.data() + h * row, H * row);
      }
      continue;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(T),
                static_cast<blasint>(latent), static_cast<blasint>(nope), 1.0f, q.data() + h * qk,
                static_cast<blasint>(H * qk), w.w_uk.row(h * nope), static_cast<blasint>(latent),
                0.0f, q_row.data() + h * row, static_cast<blasint>(H * row));
  }
  thread_local std::vector<bf16> q_bf16_storage;  // reused, as kv_rows
  std::vector<bf16>& q_bf16 = q_bf16_storage;
  q_bf16.resize(q_row.size());
  parallel_for(0, T, T * H * row * 4, [&](int64_t t) {
    for (int64_t h = 0; h < H; ++h) {
      float* dst = q_row.data() + (t * H + h) * row;
      std::copy(q.data() + (t * H + h) * qk + nope, q.data() + (t * H + h + 1) * qk, dst + latent);
      rope.apply(dst + latent, chunk.positions[static_cast<size_t>(t)]);
      for (int64_t i = 0; i < row; ++i) {
        q_bf16[static_cast<size_t>((t * H + h) * row + i)] = bf16::from_float(dst[i]);
      }
    }
  });

  std::vector<float> o_f32(static_cast<size_t>(T * H * latent));
  if (chunk.f32_attention) {
    attention_f32(q_row.data(), ckv.data(), T, H, row, latent,
                  static_cast<float>(c.softmax_scale()), o_f32.data());
  } else {
    MLASPEC_RETURN_IF_ERROR(attention_op(c, layer, q_bf16, chunk, pool, dispatcher, o_f32));
  }

  // o[h] @ W_UV[h]^T per head, then o_proj.

  std::vector<float> heads(static_cast<size_t>(T * H * v));
  for (int64_t h = 0; h < H; ++h) {
    if (row_invariant_gemm()) {
      // Head h's rows of W_UV start at panel h * v / 16 when v is a multiple of 16 (packed).
      if (w.w_uv.packed() && v % 16 == 0) {
        // Head h's panels start at panel h * v / 16, each ceil(latent / 2) pairs of 16 words.
        if (!w.w_uv.panels_bf16.empty()) {
          gemm_nt_panels(o_f32.data() + h * latent, T, H * latent,
                         w.w_uv.panels_bf16.data() + h * v * ((latent + 1) / 2), v, latent,
                         heads.data() + h * v, H * v);
        } else {
          gemm_nt_panels(o_f32.data() + h * latent, T, H * latent,
                         w.w_uv.panels.data() + h * v * latent, v, latent, heads.data() + h * v,
                         H * v);
        }
      } else {
        gemm_nt_row_invariant(o_f32.data() + h * latent, T, H * latent, w.w_uv.row(h * v), v,
                              latent, heads.data() + h * v, H * v);
      }
      continue;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(T),
                static_cast<blasint>(v), static_cast<blasint>(latent), 1.0f,
                o_f32.data() + h * latent, static_cast<blasint>(H * latent), w.w_uv.row(h * v),
                static_cast<blasint>(latent), 0.0f, heads.data() + h * v,
                static_cast<blasint>(H * v));
  }
  linear(heads.data(), T, w.o_proj, out);
  return Status::Ok();
}

}  // namespace mlaspec::model::cpu
