// Multi-head latent attention on the GPU, in the absorbed form of the CPU runtime's mla.cc:
// q (LoRA or plain) -> KV rows [kv_a_layernorm(c) | rope(k_pe)] into the pool -> q rows
// [q_nope @ W_UK[h] | rope(q_pe)] -> attention through the dispatcher per the pass's plan (blocks
// of at most 32 queries, ../gpu_plan.h) -> o[h] @ W_UV[h]^T -> o_proj. Rows may belong to several
// requests: RoPE reads each row's position, the KV write each row's slot. In three parts (the
// runtime's graph segments end and start at attention): mla_in, mla_attention, mla_out.
#include "../gpu_plan.h"
#include "mlaspec/attention/verify.h"
#include "mlaspec/kvcache/writer.h"
#include "runtime_impl.h"

namespace mlaspec::model::gpu {

Status Runtime::per_head(const void* x, int64_t x_row, const uint16_t* w, int64_t N, int64_t K,
                         void* y, int64_t y_row, int64_t T) {
  const int64_t H = c_.num_attention_heads;
  RowInvariantGemm g;
  g.x = x;
  g.ldx = H * x_row;
  g.stride_x = x_row;
  g.w = w;
  g.ldw = K;
  g.stride_w = N * K;
  g.y = y;
  g.y_type = GemmType::kBF16;
  g.ldy = H * y_row;
  g.stride_y = y_row;
  g.T = T;
  g.N = N;
  g.K = K;
  g.batch = static_cast<int>(H);
  return gemm(g);
}

Status Runtime::mla_in(int layer, const Pass& p) {
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const int64_t T = p.T, H = c_.num_attention_heads, nope = c_.qk_nope_head_dim;
  const int64_t latent = c_.kv_lora_rank, row = latent + c_.qk_rope_head_dim;
  const uint16_t* hb = at<uint16_t>(hb_);

  // Phases (MLASPEC_PHASES): each begin() closes the one before.
  const PhaseEnd phase_end(phases_);
  phases_.begin_if_on("mla in proj");
  // q [T, H, nope + rope].
  if (c_.has_q_lora()) {
    MLASPEC_RETURN_IF_ERROR(linear(hb, T, d.q_a_proj, at<float>(qa_), GemmType::kF32));
    MLASPEC_RETURN_IF_ERROR(rms_norm(at<float>(qa_), c_.q_lora_rank, T, c_.q_lora_rank,
                                     d.q_a_norm.ptr(), kLatentNormEps, nullptr, 0,
                                     at<uint16_t>(qab_), c_.q_lora_rank, stream_));
    MLASPEC_RETURN_IF_ERROR(
        linear(at<uint16_t>(qab_), T, d.q_b_proj, at<float>(q_), GemmType::kF32));
  } else {
    MLASPEC_RETURN_IF_ERROR(linear(hb, T, d.q_proj, at<float>(q_), GemmType::kF32));
  }

  // KV rows [kv_a_layernorm(c) | rope(k_pe)] -> the pool (the slots were checked for the pass).
  MLASPEC_RETURN_IF_ERROR(linear(hb, T, d.kv_a_proj, at<float>(ckv_), GemmType::kF32));
  if (fused_mla_in_) {
    MLASPEC_RETURN_IF_ERROR(kv_norm_rows(at<float>(ckv_), T, latent, d.kv_a_norm.ptr(),
                                         kLatentNormEps, p.positions, rope_, at<uint16_t>(kvr_),
                                         stream_));
  } else {
    MLASPEC_RETURN_IF_ERROR(rms_norm(at<float>(ckv_), row, T, latent, d.kv_a_norm.ptr(),
                                     kLatentNormEps, at<float>(ckv_), row, nullptr, 0, stream_));
    MLASPEC_RETURN_IF_ERROR(
        kv_rows(at<float>(ckv_), T, latent, p.positions, rope_, at<uint16_t>(kvr_), stream_));
  }
  phases_.begin_if_on("kv write");
  kv::WriteOptions wo;
  wo.stream = stream_;
  MLASPEC_RETURN_IF_ERROR(
      kv::write_rows(*p.pool, layer,
                     TensorView(const_cast<int32_t*>(p.slots), DType::kI32, {T}, Device::kCUDA),
                     TensorView(kvr_.data(), DType::kBF16, {T, row}, Device::kCUDA), wo)
          .with_context("layer " + str(layer)));

  // Absorbed q rows: [q_nope @ W_UK[h] | rope(q_pe)].
  phases_.begin_if_on("q absorb");
  MLASPEC_RETURN_IF_ERROR(split_q(at<float>(q_), T, H, nope, latent, p.positions, rope_,
                                  at<uint16_t>(qn_), at<uint16_t>(qatt_), stream_));
  return per_head(qn_.data(), nope, d.w_uk_t.ptr(), latent, nope, qatt_.data(), row, T);
}

attn::VerifyOptions Runtime::attention_options() const {
  attn::VerifyOptions vo;
  // Deterministic mode's fixed chunks make a row's sums the same in every pass (decode, verify,
  // any batch); default mode gives that up for its GEMMs already, and its attention takes the
  // adaptive split, which fills the GPU at short contexts (at S = 4k a fixed 1024-token chunk is
  // four CTAs for a whole decode call).
  vo.deterministic = deterministic_ || !adaptive_splits_;
  vo.fp8_math = fp8_math_attention_;
  vo.stream = stream_;
  return vo;
}

attn::VerifyArgs Runtime::attention_args(int layer, kv::KvPool& pool,
                                         const AttentionBlockPlan& plan,
                                         const AttentionBlockCall& call, const int32_t* table,
                                         const int32_t* seq_lens) {
  const int64_t H = c_.num_attention_heads;
  const int64_t latent = c_.kv_lora_rank, row = latent + c_.qk_rope_head_dim;
  const int64_t used_pages = plan.pages;
  const int64_t B = call.batch, q_len = call.q_len, b0 = call.first_block;
  const int64_t t0 = call.first_token;
  attn::VerifyArgs args;
  args.q = TensorView(at<uint16_t>(qatt_, t0 * H * row), DType::kBF16, {B, q_len, H, row},
                      Device::kCUDA);
  args.kv = pool.layer_view(layer);
  args.block_table = TensorView(const_cast<int32_t*>(table) + b0 * used_pages, DType::kI32,
                                {B, used_pages}, Device::kCUDA);
  args.seq_lens = TensorView(const_cast<int32_t*>(seq_lens) + b0, DType::kI32, {B}, Device::kCUDA);
  args.block_table_host =
      TensorView(const_cast<int32_t*>(plan.block_table.data()) + b0 * used_pages, DType::kI32,
                 {B, used_pages});
  args.seq_lens_host =
      TensorView(const_cast<int32_t*>(plan.seq_lens.data()) + b0, DType::kI32, {B});
  args.sm_scale = static_cast<float>(c_.softmax_scale());
  args.out = TensorView(at<uint16_t>(o_, t0 * H * latent), DType::kBF16, {B, q_len, H, latent},
                        Device::kCUDA);
  args.lse = TensorView(at<float>(lse_, t0 * H), DType::kF32, {B, q_len, H}, Device::kCUDA);
  return args;
}

Status Runtime::mla_attention(int layer, kv::KvPool& pool, attn::Dispatcher& dispatcher,
                              const AttentionBlockPlan& plan, const int32_t* table,
                              const int32_t* seq_lens, std::span<const AttentionPick> picks) {
  const PhaseEnd phase_end(phases_);
  phases_.begin_if_on("attention");
  const attn::VerifyOptions vo = attention_options();
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    const attn::VerifyArgs args = attention_args(layer, pool, plan, plan.calls[c], table, seq_lens);
    if (picks.empty()) {
      MLASPEC_RETURN_IF_ERROR(dispatcher.run(args, vo).with_context("layer " + str(layer)));
    } else {
      auto backend = dispatcher.registry().get(picks[c].backend);
      if (!backend.ok()) return backend.status();
      MLASPEC_RETURN_IF_ERROR((*backend)->run(args, vo).with_context("layer " + str(layer)));
    }
  }
  return Status::Ok();
}

Status Runtime::mla_out(int layer, int64_t T) {
  // o[h] @ W_UV[h]^T per head, then o_proj.
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const int64_t latent = c_.kv_lora_rank, v = c_.v_head_dim;
  const PhaseEnd phase_end(phases_);
  phases_.begin_if_on("mla out proj");
  MLASPEC_RETURN_IF_ERROR(
      per_head(o_.data(), latent, d.w_uv.ptr(), v, latent, heads_.data(), v, T));
  return linear(at<uint16_t>(heads_), T, d.o_proj, delta_.data(), GemmType::kF32);
}

}  // namespace mlaspec::model::gpu
