// The DFlash drafter's forward on the device (dflash_runtime.h), the CPU network's sequence
// (dflash.cc) with the CUDA model runtime's conventions (runtime.cc): bf16 weights, bf16 at every
// GEMM input, f32 accumulation (cuBLAS), the residual stream, norms and RoPE in f32.
//   append_context: the batch's rows at once: concat(hidden at target_layer_ids) -> fc ->
//     hidden_norm -> per layer k_proj / v_proj -> k_norm -> RoPE at each row's position -> the
//     pool's rows (bf16) at each row's slot.
//   propose: the batch's blocks as one [B * block, hidden] activation: embed [anchor, MASK ...] ->
//     per layer: input norm -> q/k/v projections -> q_norm / k_norm -> RoPE at L + i ->
//     attention (kernels.h dflash_attention: each request's context rows from the pool, then its
//     block's own K/V, no mask) -> o_proj -> +residual -> post norm -> SwiGLU MLP -> +residual;
//     slots 1 .. num_draft: final norm -> the target's lm_head. Logits and the normed hidden
//     states come back to the host.
// Every scratch buffer is poisoned (0xff: NaN) when allocated (ensure()).
#include "dflash_runtime.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "runtime_impl.h"

namespace mlaspec::model::gpu {
namespace {

struct DDFlashLayer {
  DVec input_norm, post_norm, q_norm, k_norm;
  DMat q_proj, k_proj, v_proj, o_proj;
  DMlp mlp;
};

class DFlashRuntime final : public DFlashCudaRuntime {
 public:
  explicit DFlashRuntime(const DFlashConfig& c) : c_(c) {}
  ~DFlashRuntime() override {
    if (blas_ != nullptr) cublasDestroy(blas_);
  }

  Status init(const DFlashWeights& w, const Matrix& embed, const Matrix& head,
              const cpu::Rope& rope);
  Status append_context(std::span<const DFlashContextRows> batch, kv::KvPool& pool) override;
  Status propose(std::span<DFlashBlock> batch, const kv::KvPool& pool, int64_t window) override;

 private:
  Status linear(const uint16_t* x, int64_t T, const DMat& w, float* y) {
    return gpu::linear(blas_, false, x, T, w, y, GemmType::kF32);
  }
  // In place over x [T, heads, head_dim]: per-head RMSNorm with `w`, then RoPE at positions[t].
  Status norm_rope(float* x, int64_t T, int heads, const DVec& w, const int32_t* positions) {
    const int64_t d = c_.head_dim;
    MLASPEC_RETURN_IF_ERROR(
        rms_norm(x, d, T * heads, d, w.ptr(), eps(), x, d, nullptr, 0, nullptr));
    return rope_rows(x, T, heads, positions, rope_, nullptr);
  }
  float eps() const { return static_cast<float>(c_.rms_norm_eps); }
  template <typename T>
  static Status upload(Buffer& b, const std::vector<T>& v, const char* what) {
    MLASPEC_RETURN_IF_ERROR(ensure(b, v.size() * sizeof(T)));
    return b.copy_from_host(v.data(), v.size() * sizeof(T)).with_context(what);
  }

  const DFlashConfig c_;
  cublasHandle_t blas_ = nullptr;
  std::vector<DDFlashLayer> layers_;
  DMat fc_, embed_, head_;
  DVec hidden_norm_, norm_;
  Buffer inv_freq_;
  RopeArgs rope_;

  // Scratch: grown on demand.
  Buffer tokens_, positions_, slots_, meta_, pages_, feat_, featb_, h_, xb_, q_, kb_, vb_, attn_,
      o_, gu_, act_, scores_, xn_, xnb_, logits_;
};

Status DFlashRuntime::init(const DFlashWeights& w, const Matrix& embed, const Matrix& head,
                           const cpu::Rope& rope) {
  MLASPEC_RETURN_IF_ERROR(open_device("DFlash drafter", &blas_));
  MLASPEC_RETURN_IF_ERROR(upload_matrix(fc_, w.fc));
  MLASPEC_RETURN_IF_ERROR(upload_matrix(embed_, embed));
  MLASPEC_RETURN_IF_ERROR(upload_matrix(head_, head));
  MLASPEC_RETURN_IF_ERROR(upload_vec(hidden_norm_, w.hidden_norm));
  MLASPEC_RETURN_IF_ERROR(upload_vec(norm_, w.norm));
  layers_.resize(w.layers.size());
  for (size_t l = 0; l < w.layers.size(); ++l) {
    const DFlashLayerWeights& hw = w.layers[l];
    DDFlashLayer& d = layers_[l];
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.input_norm, hw.input_layernorm));
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.post_norm, hw.post_attention_layernorm));
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.q_norm, hw.q_norm));
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.k_norm, hw.k_norm));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.q_proj, hw.q_proj));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.k_proj, hw.k_proj));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.v_proj, hw.v_proj));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.o_proj, hw.o_proj));
    MLASPEC_RETURN_IF_ERROR(upload_mlp(d.mlp, hw.mlp));
  }
  const std::vector<float>& f = rope.inv_freq();
  MLASPEC_RETURN_IF_ERROR(upload(inv_freq_, f, "RoPE frequencies"));
  rope_.inv_freq = at<float>(inv_freq_);
  rope_.dim = c_.head_dim;
  rope_.attention_factor = 1.0f;
  rope_.interleave = false;
  return cuda_status(cudaDeviceSynchronize(), "DFlash drafter upload");
}

Status DFlashRuntime::append_context(std::span<const DFlashContextRows> batch, kv::KvPool& pool) {
  int64_t T = 0;
  for (const DFlashContextRows& r : batch) T += r.rows;
  if (T == 0) return Status::Ok();
  const int64_t Ht = c_.target_hidden_size, H = c_.hidden_size, kvw = c_.kv_width();
  const int64_t K = static_cast<int64_t>(c_.target_layer_ids.size());
  const int64_t ps = pool.page_size();
  // Host side: the batch's rows in order, concat_k hidden[k] per row; positions and slots.
  std::vector<float> feat(static_cast<size_t>(T * K * Ht));
  std::vector<int32_t> positions(static_cast<size_t>(T)), slots(static_cast<size_t>(T));
  int64_t t = 0;
  for (const DFlashContextRows& r : batch) {
    for (int64_t i = 0; i < r.rows; ++i, ++t) {
      for (int64_t k = 0; k < K; ++k) {
        std::copy_n(r.layers[static_cast<size_t>(k)] + i * Ht, Ht, feat.data() + (t * K + k) * Ht);
      }
      const int64_t pos = r.first_position + i;
      positions[static_cast<size_t>(t)] = static_cast<int32_t>(pos);
      slots[static_cast<size_t>(t)] =
          static_cast<int32_t>(r.pages[static_cast<size_t>(pos / ps)] * ps + pos % ps);
    }
  }
  MLASPEC_RETURN_IF_ERROR(upload(feat_, feat, "DFlash context upload"));
  MLASPEC_RETURN_IF_ERROR(upload(positions_, positions, "DFlash position upload"));
  MLASPEC_RETURN_IF_ERROR(upload(slots_, slots, "DFlash slot upload"));
  MLASPEC_RETURN_IF_ERROR(ensure(featb_, static_cast<size_t>(T * K * Ht) * sizeof(uint16_t)));
  MLASPEC_RETURN_IF_ERROR(ensure(h_, static_cast<size_t>(T * H) * sizeof(float)));
  MLASPEC_RETURN_IF_ERROR(ensure(xb_, static_cast<size_t>(T * H) * sizeof(uint16_t)));
  MLASPEC_RETURN_IF_ERROR(ensure(kb_, static_cast<size_t>(T * kvw) * sizeof(float)));
  MLASPEC_RETURN_IF_ERROR(ensure(vb_, static_cast<size_t>(T * kvw) * sizeof(float)));

  MLASPEC_RETURN_IF_ERROR(to_bf16(at<float>(feat_), T * K * Ht, at<uint16_t>(featb_), nullptr));
  MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(featb_), T, fc_, at<float>(h_)));
  MLASPEC_RETURN_IF_ERROR(rms_norm(at<float>(h_), H, T, H, hidden_norm_.ptr(), eps(), nullptr, 0,
                                   at<uint16_t>(xb_), H, nullptr));
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const DDFlashLayer& d = layers_[static_cast<size_t>(l)];
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xb_), T, d.k_proj, at<float>(kb_)));
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xb_), T, d.v_proj, at<float>(vb_)));
    MLASPEC_RETURN_IF_ERROR(
        norm_rope(at<float>(kb_), T, c_.num_key_value_heads, d.k_norm, at<int32_t>(positions_)));
    MLASPEC_RETURN_IF_ERROR(
        write_gqa_rows(at<float>(kb_), at<float>(vb_), T, kvw, at<int32_t>(slots_),
                       static_cast<uint16_t*>(pool.layer_tensor(l).data()), nullptr));
  }
  return cuda_status(cudaDeviceSynchronize(), "DFlash append_context");
}

Status DFlashRuntime::propose(std::span<DFlashBlock> batch, const kv::KvPool& pool,
                              int64_t window) {
  const int64_t B = static_cast<int64_t>(batch.size());
  if (B == 0) return Status::Ok();
  const int64_t Q = c_.block_size, H = c_.hidden_size, d = c_.head_dim, vocab = c_.vocab_size;
  const int64_t nh = c_.num_attention_heads, nkv = c_.num_key_value_heads, kvw = c_.kv_width();
  const int64_t R = B * Q, D = Q - 1;
  // Host side: the block tokens and positions, and each request's context rows and page table.
  std::vector<int32_t> tokens(static_cast<size_t>(R)), positions(static_cast<size_t>(R));
  std::vector<int32_t> meta(static_cast<size_t>(3 * B)), pages;
  int64_t max_keys = 0;
  for (int64_t b = 0; b < B; ++b) {
    const DFlashBlock& blk = batch[static_cast<size_t>(b)];
    const int64_t L = blk.context_len;
    const int64_t first = window > 0 ? std::max<int64_t>(0, L - window) : 0;
    for (int64_t i = 0; i < Q; ++i) {
      tokens[static_cast<size_t>(b * Q + i)] = i == 0 ? blk.anchor : c_.mask_token_id;
      positions[static_cast<size_t>(b * Q + i)] = static_cast<int32_t>(L + i);
    }
    const int64_t need = (L + pool.page_size() - 1) / pool.page_size();
    meta[static_cast<size_t>(b)] = static_cast<int32_t>(pages.size());
    meta[static_cast<size_t>(B + b)] = static_cast<int32_t>(first);
    meta[static_cast<size_t>(2 * B + b)] = static_cast<int32_t>(L - first);
    pages.insert(pages.end(), blk.pages.begin(), blk.pages.begin() + need);
    max_keys = std::max(max_keys, L - first + Q);
  }
  if (pages.empty()) pages.push_back(0);  // a batch of empty contexts: a valid pointer
  MLASPEC_RETURN_IF_ERROR(upload(tokens_, tokens, "DFlash token upload"));
  MLASPEC_RETURN_IF_ERROR(upload(positions_, positions, "DFlash position upload"));
  MLASPEC_RETURN_IF_ERROR(upload(meta_, meta, "DFlash request upload"));
  MLASPEC_RETURN_IF_ERROR(upload(pages_, pages, "DFlash page table upload"));
  const auto bytes = [](int64_t n, size_t elem) { return static_cast<size_t>(n) * elem; };
  MLASPEC_RETURN_IF_ERROR(ensure(h_, bytes(R * H, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(xb_, bytes(R * H, 2)));
  MLASPEC_RETURN_IF_ERROR(ensure(q_, bytes(R * nh * d, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(kb_, bytes(R * kvw, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(vb_, bytes(R * kvw, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(attn_, bytes(R * nh * d, 2)));
  MLASPEC_RETURN_IF_ERROR(ensure(o_, bytes(R * H, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(scores_, bytes(R * nh * max_keys, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(xn_, bytes(B * D * H, 4)));
  MLASPEC_RETURN_IF_ERROR(ensure(xnb_, bytes(B * D * H, 2)));
  MLASPEC_RETURN_IF_ERROR(ensure(logits_, bytes(B * D * vocab, 4)));

  float* h = at<float>(h_);
  uint16_t* xb = at<uint16_t>(xb_);
  const int32_t* pos = at<int32_t>(positions_);
  MLASPEC_RETURN_IF_ERROR(embed(embed_.ptr(), at<int32_t>(tokens_), R, H, h, nullptr));
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const DDFlashLayer& w = layers_[static_cast<size_t>(l)];
    MLASPEC_RETURN_IF_ERROR(
        rms_norm(h, H, R, H, w.input_norm.ptr(), eps(), nullptr, 0, xb, H, nullptr));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.q_proj, at<float>(q_)));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.k_proj, at<float>(kb_)));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.v_proj, at<float>(vb_)));
    MLASPEC_RETURN_IF_ERROR(norm_rope(at<float>(q_), R, static_cast<int>(nh), w.q_norm, pos));
    MLASPEC_RETURN_IF_ERROR(norm_rope(at<float>(kb_), R, static_cast<int>(nkv), w.k_norm, pos));
    DFlashAttentionArgs a;
    a.q = at<float>(q_);
    a.k_block = at<float>(kb_);
    a.v_block = at<float>(vb_);
    a.pool = static_cast<const uint16_t*>(pool.layer_tensor(l).data());
    a.pages = at<int32_t>(pages_);
    a.page_offset = at<int32_t>(meta_);
    a.ctx_first = at<int32_t>(meta_, B);
    a.ctx_rows = at<int32_t>(meta_, 2 * B);
    a.batch = static_cast<int>(B);
    a.block = static_cast<int>(Q);
    a.heads = static_cast<int>(nh);
    a.kv_heads = static_cast<int>(nkv);
    a.dim = static_cast<int>(d);
    a.page_size = pool.page_size();
    a.max_keys = max_keys;
    a.scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.scores = at<float>(scores_);
    a.out = at<uint16_t>(attn_);
    MLASPEC_RETURN_IF_ERROR(dflash_attention(a, nullptr));
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(attn_), R, w.o_proj, at<float>(o_)));
    MLASPEC_RETURN_IF_ERROR(add_inplace(h, at<float>(o_), R * H, nullptr));
    MLASPEC_RETURN_IF_ERROR(
        rms_norm(h, H, R, H, w.post_norm.ptr(), eps(), nullptr, 0, xb, H, nullptr));
    MLASPEC_RETURN_IF_ERROR(ensure(gu_, bytes(R * 2 * w.mlp.inter, 4)));
    MLASPEC_RETURN_IF_ERROR(ensure(act_, bytes(R * w.mlp.inter, 2)));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.mlp.gate_up, at<float>(gu_)));
    MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), R, w.mlp.inter, at<uint16_t>(act_), nullptr));
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(act_), R, w.mlp.down, at<float>(o_)));
    MLASPEC_RETURN_IF_ERROR(add_inplace(h, at<float>(o_), R * H, nullptr));
  }
  // Slots 1 .. num_draft of each block: the final norm, then the target's lm_head.
  for (int64_t b = 0; b < B; ++b) {
    MLASPEC_RETURN_IF_ERROR(rms_norm(h + (b * Q + 1) * H, H, D, H, norm_.ptr(), eps(),
                                     at<float>(xn_, b * D * H), H, at<uint16_t>(xnb_, b * D * H), H,
                                     nullptr));
  }
  MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xnb_), B * D, head_, at<float>(logits_)));
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaDeviceSynchronize(), "DFlash propose"));
  for (int64_t b = 0; b < B; ++b) {
    DFlashBlock& blk = batch[static_cast<size_t>(b)];
    blk.logits.assign(static_cast<size_t>(D * vocab), 0.0f);
    blk.hidden.assign(static_cast<size_t>(D * H), 0.0f);
    MLASPEC_RETURN_IF_ERROR(
        logits_.copy_to_host(blk.logits.data(), bytes(D * vocab, 4), bytes(b * D * vocab, 4)));
    MLASPEC_RETURN_IF_ERROR(
        xn_.copy_to_host(blk.hidden.data(), bytes(D * H, 4), bytes(b * D * H, 4)));
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<DFlashCudaRuntime>> DFlashCudaRuntime::create(const DFlashConfig& config,
                                                                     const DFlashWeights& weights,
                                                                     const Matrix& embed_tokens,
                                                                     const Matrix& lm_head,
                                                                     const cpu::Rope& rope) {
  auto rt = std::make_unique<DFlashRuntime>(config);
  MLASPEC_RETURN_IF_ERROR(rt->init(weights, embed_tokens, lm_head, rope));
  return std::unique_ptr<DFlashCudaRuntime>(std::move(rt));
}

}  // namespace mlaspec::model::gpu
