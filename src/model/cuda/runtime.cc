// The CUDA runtime's forward (ARCHITECTURE.md §3: bf16 activations, f32 accumulation, the same
// layer sequence as the CPU runtime). Per request and per chunk of at most max_chunk_tokens:
//   embed -> per layer: rms_norm -> MLA (absorbed) -> +residual -> rms_norm -> MLP / MoE ->
//   +residual
//   -> final norm -> lm_head
// GEMMs: cuBLAS (bf16 in, f32 accumulate) by default; the row-invariant kernel (kernels.h) in
// deterministic mode and for the MoE router, which runs in f32 as transformers' does. The residual
// stream, norms, RoPE and the router's inputs stay f32; every GEMM input is bf16.
//
// Attention: the model's dispatcher on the CUDA pool (cuda_fold / cuda_rowwise serve q_len <=
// kMaxQLen = 32), always in deterministic mode as the CPU runtime asks. A chunk of T tokens is
// cut into blocks of 32 queries (../gpu_plan.h: one batched call for the full blocks, one for the
// remainder).
//
// MoE routing: the router logits come back to the host and cpu::route_token picks the experts (the
// CPU runtime's code, so ties break the same way); then per touched expert a gather -> SwiGLU
// GEMMs, and a combine that sums each token's experts in ascending expert order, then the shared
// experts (the CPU runtime's order; ../gpu_plan.h).
//
// Scratch buffers grow as needed and are filled with 0xff bytes (NaN in f32 and bf16) when
// allocated, so an element a kernel failed to write shows as NaN downstream (the tests check that
// every returned value is finite).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../gpu_plan.h"
#include "kernels.h"
#include "mlaspec/attention/verify.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/kvcache/writer.h"
#include "runtime.h"

namespace mlaspec::model::gpu {
namespace {

// transformers builds q_a_layernorm and kv_a_layernorm with the RMSNorm default eps.
constexpr float kLatentNormEps = 1e-6f;
// The CUDA verify kernels' q_len limit (attention/cuda/traits.h CommonTraits::kMaxQLen).
constexpr int64_t kAttentionBlock = 32;

std::string str(int64_t v) {
  return std::to_string(v);
}

Status cuda_status(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(what + ": " + cudaGetErrorString(err));
}

Status cublas_status(cublasStatus_t st, const std::string& what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return internal_error(what + ": cuBLAS status " + str(static_cast<int64_t>(st)));
}

// Grows `b` to at least `bytes` on the device (poisoned with 0xff).
Status ensure(Buffer& b, size_t bytes) {
  if (b.bytes() >= bytes && b.data() != nullptr) return Status::Ok();
  Result<Buffer> nb = Buffer::allocate(std::max<size_t>(bytes, 256), Device::kCUDA);
  if (!nb.ok()) return nb.status();
  b = std::move(*nb);
  return b.fill_bytes(0xff);
}

Status upload(Buffer& b, const void* src, size_t bytes) {
  Result<Buffer> nb = Buffer::allocate(std::max<size_t>(bytes, 256), Device::kCUDA);
  if (!nb.ok()) return nb.status();
  b = std::move(*nb);
  return b.copy_from_host(src, bytes);
}

template <typename T>
T* at(const Buffer& b, int64_t offset = 0) {
  return static_cast<T*>(b.data()) + offset;
}

struct DMat {  // bf16 [rows, cols] on the device
  Buffer buf;
  int64_t rows = 0, cols = 0;
  const uint16_t* ptr() const { return at<uint16_t>(buf); }
  bool empty() const { return rows == 0; }
};

struct DVec {  // f32 on the device
  Buffer buf;
  int64_t size = 0;
  const float* ptr() const { return at<float>(buf); }
};

Status upload_rows(DMat& m, const std::vector<const Matrix*>& parts) {
  if (parts.empty() || parts[0]->empty()) return Status::Ok();
  m.cols = parts[0]->cols;
  m.rows = 0;
  for (const Matrix* p : parts) m.rows += p->rows;
  std::vector<uint16_t> host(static_cast<size_t>(m.rows * m.cols));
  size_t o = 0;
  for (const Matrix* p : parts) {
    for (float v : p->data) host[o++] = bf16::from_float(v).bits;
  }
  return upload(m.buf, host.data(), host.size() * sizeof(uint16_t));
}

Status upload_matrix(DMat& m, const Matrix& w) {
  return upload_rows(m, {&w});
}

Status upload_vec(DVec& v, const std::vector<float>& h) {
  v.size = static_cast<int64_t>(h.size());
  if (h.empty()) return Status::Ok();
  return upload(v.buf, h.data(), h.size() * sizeof(float));
}

struct DMlp {
  DMat gate_up;  // [2 * inter, hidden]: gate_proj rows, then up_proj rows
  DMat down;     // [hidden, inter]
  int64_t inter = 0;
  bool empty() const { return gate_up.empty(); }
};

Status upload_mlp(DMlp& d, const MlpWeights& w) {
  if (w.gate_proj.empty()) return Status::Ok();
  d.inter = w.gate_proj.rows;
  MLASPEC_RETURN_IF_ERROR(upload_rows(d.gate_up, {&w.gate_proj, &w.up_proj}));
  return upload_matrix(d.down, w.down_proj);
}

struct DLayer {
  DVec input_norm, post_norm;
  DMat q_proj, q_a_proj, q_b_proj, kv_a_proj;
  DVec q_a_norm, kv_a_norm;
  DMat w_uk_t;  // [H * latent, nope]: head h's W_UK transposed, so q_nope @ W_UK is x @ W^T
  DMat w_uv;    // [H * v, latent]
  DMat o_proj;
  bool is_moe = false;
  DMlp mlp;
  Buffer router;  // f32 [E, hidden]
  std::vector<DMlp> experts;
  DMlp shared;
};

class Runtime final : public CudaRuntime {
 public:
  Runtime(const ModelConfig& c, const ModelWeights& w) : c_(c), host_(w) {}
  ~Runtime() override {
    if (blas_ != nullptr) cublasDestroy(blas_);
  }

  Status init(const cpu::Rope& rope);
  Status run_request(const ForwardRequest& r, kv::KvPool& pool, const ForwardOptions& options,
                     attn::Dispatcher& dispatcher, RequestOutput* out) override;

 private:
  Status gemm(const RowInvariantGemm& g);
  // y[T, W.rows] = x[T, W.cols] @ W^T (x bf16 packed).
  Status linear(const uint16_t* x, int64_t T, const DMat& w, void* y, GemmType y_type);
  Status mlp(const DMlp& m, const uint16_t* x, int64_t T, float* out);
  // Every head h at once (one strided-batched GEMM): y[t, h, 0:N] = bf16(x[t, h, 0:K] @ W[h]^T),
  // x bf16 with x_row values per head, W bf16 [H][N, K], y with y_row values per head.
  Status per_head(const void* x, int64_t x_row, const uint16_t* w, int64_t N, int64_t K, void* y,
                  int64_t y_row, int64_t T);
  Status mla(int layer, int64_t T, int64_t first, kv::KvPool& pool, attn::Dispatcher& dispatcher,
             const std::vector<int32_t>& slots, const std::vector<int32_t>& table);
  Status moe(int layer, int64_t T);
  Status reserve(int64_t T, int64_t pages);

  const ModelConfig& c_;
  const ModelWeights& host_;  // the host weights (router bias for route_token)
  cublasHandle_t blas_ = nullptr;
  bool deterministic_ = false;

  DMat embed_, head_;
  DVec norm_;
  std::vector<DLayer> layers_;
  Buffer inv_freq_;
  RopeArgs rope_;

  // Scratch (see reserve()).
  int64_t cap_T_ = 0, cap_pages_ = 0;
  Buffer tokens_, slots_, x_, hf_, hb_, delta_, shared_, qa_, qab_, q_, ckv_, kvr_, qn_, qatt_, o_,
      lse_, heads_, gu_, act_, xs_, ys_, router_logits_, gidx_, cpos_, cw_, table_, seq_lens_,
      logits_;
};

Status Runtime::init(const cpu::Rope& rope) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return unsupported("model device cuda: no CUDA device is visible");
  }
  MLASPEC_RETURN_IF_ERROR(cublas_status(cublasCreate(&blas_), "cublasCreate"));
  MLASPEC_RETURN_IF_ERROR(upload_matrix(embed_, host_.embed_tokens));
  if (!host_.lm_head.empty()) MLASPEC_RETURN_IF_ERROR(upload_matrix(head_, host_.lm_head));
  MLASPEC_RETURN_IF_ERROR(upload_vec(norm_, host_.norm));
  const int64_t H = c_.num_attention_heads, nope = c_.qk_nope_head_dim, latent = c_.kv_lora_rank;
  layers_.resize(host_.layers.size());
  for (size_t l = 0; l < layers_.size(); ++l) {
    const LayerWeights& w = host_.layers[l];
    DLayer& d = layers_[l];
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.input_norm, w.input_layernorm));
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.post_norm, w.post_attention_layernorm));
    const AttentionWeights& a = w.self_attn;
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.q_proj, a.q_proj));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.q_a_proj, a.q_a_proj));
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.q_a_norm, a.q_a_layernorm));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.q_b_proj, a.q_b_proj));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.kv_a_proj, a.kv_a_proj_with_mqa));
    MLASPEC_RETURN_IF_ERROR(upload_vec(d.kv_a_norm, a.kv_a_layernorm));
    Matrix uk_t;
    uk_t.rows = static_cast<int>(H * latent);
    uk_t.cols = static_cast<int>(nope);
    uk_t.data.resize(static_cast<size_t>(H * latent * nope));
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t k = 0; k < nope; ++k) {
        const float* src = a.w_uk.row(h * nope + k);
        for (int64_t j = 0; j < latent; ++j) {
          uk_t.data[static_cast<size_t>((h * latent + j) * nope + k)] = src[j];
        }
      }
    }
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.w_uk_t, uk_t));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.w_uv, a.w_uv));
    MLASPEC_RETURN_IF_ERROR(upload_matrix(d.o_proj, a.o_proj));
    d.is_moe = w.is_moe;
    if (w.is_moe) {
      MLASPEC_RETURN_IF_ERROR(
          upload(d.router, w.moe.gate.ptr(), w.moe.gate.data.size() * sizeof(float)));
      d.experts.resize(w.moe.experts.size());
      for (size_t e = 0; e < d.experts.size(); ++e) {
        MLASPEC_RETURN_IF_ERROR(upload_mlp(d.experts[e], w.moe.experts[e]));
      }
      MLASPEC_RETURN_IF_ERROR(upload_mlp(d.shared, w.moe.shared_experts));
    } else {
      MLASPEC_RETURN_IF_ERROR(upload_mlp(d.mlp, w.mlp));
    }
  }
  const std::vector<float>& f = rope.inv_freq();
  MLASPEC_RETURN_IF_ERROR(upload(inv_freq_, f.data(), f.size() * sizeof(float)));
  rope_.inv_freq = at<float>(inv_freq_);
  rope_.dim = c_.qk_rope_head_dim;
  rope_.attention_factor = static_cast<float>(c_.rope.attention_factor);
  rope_.interleave = c_.rope.interleave;
  return cuda_status(cudaDeviceSynchronize(), "uploading the weights");
}

Status Runtime::reserve(int64_t T, int64_t pages) {
  if (T <= cap_T_ && pages <= cap_pages_) return Status::Ok();
  cap_T_ = std::max(cap_T_, T);
  cap_pages_ = std::max(cap_pages_, pages);
  T = cap_T_;
  const int64_t hidden = c_.hidden_size, H = c_.num_attention_heads;
  const int64_t row = c_.kv_lora_rank + c_.qk_rope_head_dim;
  const int64_t k = std::max(1, c_.num_experts_per_tok);
  int64_t inter = c_.intermediate_size;
  if (c_.n_routed_experts > 0) {
    inter = std::max(inter, int64_t{c_.moe_intermediate_size} * std::max(1, c_.n_shared_experts));
  }
  const int64_t gu_rows = std::max(T, c_.n_routed_experts > 0 ? T * k : T);
  const int64_t nb = (T + kAttentionBlock - 1) / kAttentionBlock;
  const size_t f = sizeof(float), b = sizeof(uint16_t), i = sizeof(int32_t);
  const auto sz = [](int64_t n, size_t e) { return static_cast<size_t>(n) * e; };
  MLASPEC_RETURN_IF_ERROR(ensure(tokens_, sz(T, i)));
  MLASPEC_RETURN_IF_ERROR(ensure(slots_, sz(T, i)));
  MLASPEC_RETURN_IF_ERROR(ensure(x_, sz(T * hidden, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(hf_, sz(T * hidden, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(hb_, sz(T * hidden, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(delta_, sz(T * hidden, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(shared_, sz(T * hidden, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(qa_, sz(T * std::max(1, c_.q_lora_rank), f)));
  MLASPEC_RETURN_IF_ERROR(ensure(qab_, sz(T * std::max(1, c_.q_lora_rank), b)));
  MLASPEC_RETURN_IF_ERROR(ensure(q_, sz(T * H * c_.qk_head_dim(), f)));
  MLASPEC_RETURN_IF_ERROR(ensure(ckv_, sz(T * row, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(kvr_, sz(T * row, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(qn_, sz(T * H * c_.qk_nope_head_dim, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(qatt_, sz(T * H * row, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(o_, sz(T * H * c_.kv_lora_rank, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(lse_, sz(T * H, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(heads_, sz(T * H * c_.v_head_dim, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(gu_, sz(gu_rows * 2 * inter, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(act_, sz(gu_rows * inter, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(xs_, sz(T * k * hidden, b)));
  MLASPEC_RETURN_IF_ERROR(ensure(ys_, sz(T * k * hidden, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(router_logits_, sz(T * std::max(1, c_.n_routed_experts), f)));
  MLASPEC_RETURN_IF_ERROR(ensure(gidx_, sz(T * k, i)));
  MLASPEC_RETURN_IF_ERROR(ensure(cpos_, sz(T * k, i)));
  MLASPEC_RETURN_IF_ERROR(ensure(cw_, sz(T * k, f)));
  MLASPEC_RETURN_IF_ERROR(ensure(table_, sz(nb * cap_pages_, i)));
  MLASPEC_RETURN_IF_ERROR(ensure(seq_lens_, sz(nb, i)));
  return ensure(logits_, sz(T * c_.vocab_size, f));
}

Status Runtime::gemm(const RowInvariantGemm& g) {
  if (g.T == 0 || g.N == 0) return Status::Ok();
  if (deterministic_ || g.w_type == GemmType::kF32) return gemm_row_invariant(g, nullptr);
  const float alpha = 1.0f, beta = 0.0f;
  return cublas_status(
      cublasGemmStridedBatchedEx(
          blas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(g.N), static_cast<int>(g.T),
          static_cast<int>(g.K), &alpha, g.w, CUDA_R_16BF, static_cast<int>(g.ldw), g.stride_w, g.x,
          CUDA_R_16BF, static_cast<int>(g.ldx), g.stride_x, &beta, g.y,
          g.y_type == GemmType::kF32 ? CUDA_R_32F : CUDA_R_16BF, static_cast<int>(g.ldy),
          g.stride_y, g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx [" + str(g.T) + " x " + str(g.K) + "] @ [" + str(g.K) + " x " +
          str(g.N) + "] x " + str(g.batch));
}

Status Runtime::linear(const uint16_t* x, int64_t T, const DMat& w, void* y, GemmType y_type) {
  RowInvariantGemm g;
  g.x = x;
  g.ldx = w.cols;
  g.w = w.ptr();
  g.ldw = w.cols;
  g.y = y;
  g.y_type = y_type;
  g.ldy = w.rows;
  g.T = T;
  g.N = w.rows;
  g.K = w.cols;
  return gemm(g);
}

Status Runtime::mlp(const DMlp& m, const uint16_t* x, int64_t T, float* out) {
  MLASPEC_RETURN_IF_ERROR(linear(x, T, m.gate_up, at<float>(gu_), GemmType::kF32));
  MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), T, m.inter, at<uint16_t>(act_), nullptr));
  return linear(at<uint16_t>(act_), T, m.down, out, GemmType::kF32);
}

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

Status Runtime::mla(int layer, int64_t T, int64_t first, kv::KvPool& pool,
                    attn::Dispatcher& dispatcher, const std::vector<int32_t>& slots,
                    const std::vector<int32_t>& table) {
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const int64_t H = c_.num_attention_heads, nope = c_.qk_nope_head_dim;
  const int64_t latent = c_.kv_lora_rank, row = latent + c_.qk_rope_head_dim, v = c_.v_head_dim;
  const uint16_t* hb = at<uint16_t>(hb_);

  // q [T, H, nope + rope].
  if (c_.has_q_lora()) {
    MLASPEC_RETURN_IF_ERROR(linear(hb, T, d.q_a_proj, at<float>(qa_), GemmType::kF32));
    MLASPEC_RETURN_IF_ERROR(rms_norm(at<float>(qa_), c_.q_lora_rank, T, c_.q_lora_rank,
                                     d.q_a_norm.ptr(), kLatentNormEps, nullptr, 0,
                                     at<uint16_t>(qab_), c_.q_lora_rank, nullptr));
    MLASPEC_RETURN_IF_ERROR(
        linear(at<uint16_t>(qab_), T, d.q_b_proj, at<float>(q_), GemmType::kF32));
  } else {
    MLASPEC_RETURN_IF_ERROR(linear(hb, T, d.q_proj, at<float>(q_), GemmType::kF32));
  }

  // KV rows [kv_a_layernorm(c) | rope(k_pe)] -> the pool.
  MLASPEC_RETURN_IF_ERROR(linear(hb, T, d.kv_a_proj, at<float>(ckv_), GemmType::kF32));
  MLASPEC_RETURN_IF_ERROR(rms_norm(at<float>(ckv_), row, T, latent, d.kv_a_norm.ptr(),
                                   kLatentNormEps, at<float>(ckv_), row, nullptr, 0, nullptr));
  MLASPEC_RETURN_IF_ERROR(
      kv_rows(at<float>(ckv_), T, latent, first, rope_, at<uint16_t>(kvr_), nullptr));
  kv::WriteOptions wo;
  wo.slots_host = TensorView(const_cast<int32_t*>(slots.data()), DType::kI32, {T});
  MLASPEC_RETURN_IF_ERROR(
      kv::write_rows(pool, layer, TensorView(slots_.data(), DType::kI32, {T}, Device::kCUDA),
                     TensorView(kvr_.data(), DType::kBF16, {T, row}, Device::kCUDA), wo)
          .with_context("layer " + str(layer)));

  // Absorbed q rows: [q_nope @ W_UK[h] | rope(q_pe)].
  MLASPEC_RETURN_IF_ERROR(split_q(at<float>(q_), T, H, nope, latent, first, rope_,
                                  at<uint16_t>(qn_), at<uint16_t>(qatt_), nullptr));
  MLASPEC_RETURN_IF_ERROR(
      per_head(qn_.data(), nope, d.w_uk_t.ptr(), latent, nope, qatt_.data(), row, T));

  // Attention in blocks of kAttentionBlock queries (gpu_plan.h).
  const AttentionBlockPlan plan =
      plan_attention_blocks(T, first, table, pool.page_size(), kAttentionBlock);
  const int64_t used_pages = plan.pages;
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(table_.data(), plan.block_table.data(),
                             plan.block_table.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
                  "block table upload"));
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(seq_lens_.data(), plan.seq_lens.data(),
                             plan.seq_lens.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
                  "seq_lens upload"));
  attn::VerifyOptions vo;
  vo.deterministic = true;
  for (const AttentionBlockCall& call : plan.calls) {
    const int64_t B = call.batch, q_len = call.q_len, b0 = call.first_block;
    const int64_t t0 = b0 * kAttentionBlock;  // first query token
    attn::VerifyArgs args;
    args.q = TensorView(at<uint16_t>(qatt_, t0 * H * row), DType::kBF16, {B, q_len, H, row},
                        Device::kCUDA);
    args.kv = pool.layer_view(layer);
    args.block_table = TensorView(at<int32_t>(table_, b0 * used_pages), DType::kI32,
                                  {B, used_pages}, Device::kCUDA);
    args.seq_lens = TensorView(at<int32_t>(seq_lens_, b0), DType::kI32, {B}, Device::kCUDA);
    args.block_table_host =
        TensorView(const_cast<int32_t*>(plan.block_table.data()) + b0 * used_pages, DType::kI32,
                   {B, used_pages});
    args.seq_lens_host =
        TensorView(const_cast<int32_t*>(plan.seq_lens.data()) + b0, DType::kI32, {B});
    args.sm_scale = static_cast<float>(c_.softmax_scale());
    args.out = TensorView(at<uint16_t>(o_, t0 * H * latent), DType::kBF16, {B, q_len, H, latent},
                          Device::kCUDA);
    args.lse = TensorView(at<float>(lse_, t0 * H), DType::kF32, {B, q_len, H}, Device::kCUDA);
    MLASPEC_RETURN_IF_ERROR(dispatcher.run(args, vo).with_context("layer " + str(layer)));
  }

  // o[h] @ W_UV[h]^T per head, then o_proj.
  MLASPEC_RETURN_IF_ERROR(
      per_head(o_.data(), latent, d.w_uv.ptr(), v, latent, heads_.data(), v, T));
  return linear(at<uint16_t>(heads_), T, d.o_proj, delta_.data(), GemmType::kF32);
}

Status Runtime::moe(int layer, int64_t T) {
  const DLayer& d = layers_[static_cast<size_t>(layer)];
  const MoeWeights& hw = host_.layers[static_cast<size_t>(layer)].moe;
  const int64_t hidden = c_.hidden_size;
  const int E = c_.n_routed_experts, k = c_.num_experts_per_tok;

  // Router in f32 (transformers computes it in f32), routing on the host.
  RowInvariantGemm rg;
  rg.x = hf_.data();
  rg.x_type = GemmType::kF32;
  rg.ldx = hidden;
  rg.w = d.router.data();
  rg.w_type = GemmType::kF32;
  rg.ldw = hidden;
  rg.y = router_logits_.data();
  rg.ldy = E;
  rg.T = T;
  rg.N = E;
  rg.K = hidden;
  MLASPEC_RETURN_IF_ERROR(gemm(rg));
  std::vector<float> logits(static_cast<size_t>(T * E));
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpy(logits.data(), router_logits_.data(), logits.size() * sizeof(float),
                             cudaMemcpyDeviceToHost),
                  "router logits download"));
  std::vector<int> chosen(static_cast<size_t>(T * k));
  std::vector<float> weight(static_cast<size_t>(T * k));
  for (int64_t t = 0; t < T; ++t) {
    cpu::route_token(c_, hw, logits.data() + t * E, chosen.data() + t * k, weight.data() + t * k);
  }

  const MoeGroupPlan plan = plan_moe_groups(chosen, weight, T, k, E);
  const std::vector<int32_t>& gidx = plan.rows;
  const std::vector<int64_t>& begin = plan.expert_begin;
  const std::vector<int32_t>& cpos = plan.combine_row;
  const std::vector<float>& cw = plan.combine_weight;
  const int64_t N = static_cast<int64_t>(gidx.size());
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpy(gidx_.data(), gidx.data(), gidx.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
      "expert rows upload"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpy(cpos_.data(), cpos.data(), cpos.size() * sizeof(int32_t), cudaMemcpyHostToDevice),
      "combine rows upload"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpy(cw_.data(), cw.data(), cw.size() * sizeof(float), cudaMemcpyHostToDevice),
      "combine weights upload"));
  MLASPEC_RETURN_IF_ERROR(
      gather_rows(at<uint16_t>(hb_), at<int32_t>(gidx_), N, hidden, at<uint16_t>(xs_), nullptr));
  for (int e = 0; e < E; ++e) {
    const int64_t b = begin[static_cast<size_t>(e)], n = begin[static_cast<size_t>(e) + 1] - b;
    if (n == 0) continue;
    MLASPEC_RETURN_IF_ERROR(mlp(d.experts[static_cast<size_t>(e)], at<uint16_t>(xs_, b * hidden), n,
                                at<float>(ys_, b * hidden)));
  }
  const float* shared = nullptr;
  if (!d.shared.empty()) {
    MLASPEC_RETURN_IF_ERROR(mlp(d.shared, at<uint16_t>(hb_), T, at<float>(shared_)));
    shared = at<float>(shared_);
  }
  return moe_combine(at<float>(ys_), at<int32_t>(cpos_), at<float>(cw_), k, shared, T, hidden,
                     at<float>(delta_), nullptr);
}

Status Runtime::run_request(const ForwardRequest& r, kv::KvPool& pool,
                            const ForwardOptions& options, attn::Dispatcher& dispatcher,
                            RequestOutput* out) {
  deterministic_ = options.deterministic;
  const int64_t hidden = c_.hidden_size, vocab = c_.vocab_size;
  const int64_t n = static_cast<int64_t>(r.tokens.size());
  const int64_t max_chunk =
      options.max_chunk_tokens > 0 ? options.max_chunk_tokens : kDefaultChunkTokens;
  const int64_t page_size = pool.page_size();
  const std::vector<int32_t> table(r.pages.begin(), r.pages.end());
  MLASPEC_RETURN_IF_ERROR(reserve(std::min(n, max_chunk), static_cast<int64_t>(table.size())));

  size_output(r.logits, n, options.capture_layers.size(), hidden, vocab, out);

  std::vector<int32_t> slots;
  for (int64_t begin = 0; begin < n; begin += max_chunk) {
    const int64_t T = std::min(max_chunk, n - begin);
    const int64_t first = r.positions[static_cast<size_t>(begin)];
    slots.resize(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
      const int64_t pos = first + t;
      slots[static_cast<size_t>(t)] = static_cast<int32_t>(
          table[static_cast<size_t>(pos / page_size)] * page_size + pos % page_size);
    }
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaMemcpy(tokens_.data(), r.tokens.data() + begin,
                               static_cast<size_t>(T) * sizeof(int32_t), cudaMemcpyHostToDevice),
                    "token upload"));
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaMemcpy(slots_.data(), slots.data(), slots.size() * sizeof(int32_t),
                               cudaMemcpyHostToDevice),
                    "slot upload"));
    float* x = at<float>(x_);
    MLASPEC_RETURN_IF_ERROR(embed(embed_.ptr(), at<int32_t>(tokens_), T, hidden, x, nullptr));
    const float eps = static_cast<float>(c_.rms_norm_eps);
    for (int l = 0; l < c_.num_hidden_layers; ++l) {
      const DLayer& d = layers_[static_cast<size_t>(l)];
      MLASPEC_RETURN_IF_ERROR(rms_norm(x, hidden, T, hidden, d.input_norm.ptr(), eps, nullptr, 0,
                                       at<uint16_t>(hb_), hidden, nullptr));
      MLASPEC_RETURN_IF_ERROR(mla(l, T, first, pool, dispatcher, slots, table));
      MLASPEC_RETURN_IF_ERROR(add_inplace(x, at<float>(delta_), T * hidden, nullptr));
      MLASPEC_RETURN_IF_ERROR(rms_norm(x, hidden, T, hidden, d.post_norm.ptr(), eps, at<float>(hf_),
                                       hidden, at<uint16_t>(hb_), hidden, nullptr));
      if (d.is_moe) {
        MLASPEC_RETURN_IF_ERROR(moe(l, T));
      } else {
        MLASPEC_RETURN_IF_ERROR(mlp(d.mlp, at<uint16_t>(hb_), T, at<float>(delta_)));
      }
      MLASPEC_RETURN_IF_ERROR(add_inplace(x, at<float>(delta_), T * hidden, nullptr));
      for (size_t k = 0; k < options.capture_layers.size(); ++k) {
        if (options.capture_layers[k] != l) continue;
        MLASPEC_RETURN_IF_ERROR(cuda_status(
            cudaMemcpy(out->hidden[k].data() + begin * hidden, x,
                       static_cast<size_t>(T * hidden) * sizeof(float), cudaMemcpyDeviceToHost),
            "hidden state download"));
      }
    }

    const auto [row0, rows, dst] = logit_rows(r.logits, begin, T, n);
    if (rows > 0) {
      MLASPEC_RETURN_IF_ERROR(rms_norm(x + row0 * hidden, hidden, rows, hidden, norm_.ptr(), eps,
                                       nullptr, 0, at<uint16_t>(hb_), hidden, nullptr));
      const DMat& head = head_.empty() ? embed_ : head_;
      MLASPEC_RETURN_IF_ERROR(
          linear(at<uint16_t>(hb_), rows, head, logits_.data(), GemmType::kF32));
      MLASPEC_RETURN_IF_ERROR(cuda_status(
          cudaMemcpy(out->logits.data() + dst * vocab, logits_.data(),
                     static_cast<size_t>(rows * vocab) * sizeof(float), cudaMemcpyDeviceToHost),
          "logits download"));
    }
  }
  return cuda_status(cudaDeviceSynchronize(), "forward");
}

}  // namespace

Result<std::unique_ptr<CudaRuntime>> CudaRuntime::create(const ModelConfig& config,
                                                         const ModelWeights& weights,
                                                         const cpu::Rope& rope) {
  auto rt = std::make_unique<Runtime>(config, weights);
  MLASPEC_RETURN_IF_ERROR(rt->init(rope));
  return std::unique_ptr<CudaRuntime>(std::move(rt));
}

}  // namespace mlaspec::model::gpu
