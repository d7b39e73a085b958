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
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mlaspec/core/log.h"

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
  DFlashRuntime(const DFlashConfig& c, bool graphs) : c_(c), graphs_on_(graphs) {}
  ~DFlashRuntime() override {
    graphs_.clear();
    if (blas_ != nullptr) cublasDestroy(blas_);
    if (uploaded_ != nullptr) cudaEventDestroy(uploaded_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
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
        rms_norm(x, d, T * heads, d, w.ptr(), eps(), x, d, nullptr, 0, stream_));
    return rope_rows(x, T, heads, positions, rope_, stream_);
  }
  float eps() const { return static_cast<float>(c_.rms_norm_eps); }
  // A propose step's shape: B blocks of Q rows (R = B * Q), the scores scratch's row length, and
  // where its inputs sit in ints_.
  struct Step {
    int64_t B = 0, R = 0, max_keys = 0;
    const int32_t *tokens = nullptr, *positions = nullptr, *meta = nullptr, *draft_rows = nullptr,
                  *pages = nullptr;
  };
  // The device work of propose (captured as one graph per shape): embed, the layers, the final
  // norm of every row, the gather of the draft rows, the lm_head.
  Status propose_forward(const Step& st, const kv::KvPool& pool);
  Status grow(Buffer& b, size_t bytes) {
    const void* before = b.data();
    MLASPEC_RETURN_IF_ERROR(ensure(b, bytes));
    if (b.data() != before) ++generation_;
    return Status::Ok();
  }
  struct Graph {
    cudaGraphExec_t exec = nullptr;
    ~Graph() {
      if (exec != nullptr) cudaGraphExecDestroy(exec);
    }
  };
  // Pageable host data to `b` on the stream (the copy has left `v` when the call returns).
  template <typename T>
  Status upload(Buffer& b, const std::vector<T>& v, const char* what) {
    MLASPEC_RETURN_IF_ERROR(grow(b, v.size() * sizeof(T)));
    return cuda_status(
        cudaMemcpyAsync(b.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice, stream_),
        what);
  }

  const DFlashConfig c_;
  cublasHandle_t blas_ = nullptr;
  std::vector<DDFlashLayer> layers_;
  DMat fc_, embed_, head_;
  DVec hidden_norm_, norm_;
  Buffer inv_freq_;
  RopeArgs rope_;

  // Scratch: grown on demand.
  Buffer positions_, slots_, feat_, featb_, h_, xb_, q_, kb_, vb_, attn_, o_, gu_, act_, scores_,
      xn_, xnb_, xg_, logits_;
  Buffer ints_;  // propose's inputs, one upload: tokens, positions, meta, draft rows, pages
  PinnedBuffer host_ints_, host_out_;
  cudaEvent_t uploaded_ = nullptr;
  cudaStream_t stream_ = nullptr;
  Buffer blas_workspace_;
  // CUDA graphs of propose_forward, per shape (B, scores row length, pool): as the target's
  // runtime (runtime.cc), dropped when a scratch buffer moves.
  bool graphs_on_ = true;
  bool dependent_launch_ = true;  // MLASPEC_CUDA_PDL (kernels.h set_dependent_launch)
  uint64_t generation_ = 0, graphs_generation_ = 0;
  std::map<std::string, std::unique_ptr<Graph>> graphs_;
};

Status DFlashRuntime::init(const DFlashWeights& w, const Matrix& embed, const Matrix& head,
                           const cpu::Rope& rope) {
  const UploadStagingScope staging_scope;
  MLASPEC_RETURN_IF_ERROR(open_device("DFlash drafter", &blas_));
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamCreate(&stream_), "cudaStreamCreate"));
  MLASPEC_RETURN_IF_ERROR(cublas_status(cublasSetStream(blas_, stream_), "cublasSetStream"));
  constexpr size_t kBlasWorkspace = size_t{32} << 20;
  MLASPEC_RETURN_IF_ERROR(ensure(blas_workspace_, kBlasWorkspace));
  MLASPEC_RETURN_IF_ERROR(cublas_status(
      cublasSetWorkspace(blas_, blas_workspace_.data(), kBlasWorkspace), "cublasSetWorkspace"));
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaEventCreateWithFlags(&uploaded_, cudaEventDisableTiming), "cudaEventCreate"));
  // The target runtime's switches (env_is).
  graphs_on_ = !env_is("MLASPEC_CUDA_GRAPHS", "0");
  dependent_launch_ = !env_is("MLASPEC_CUDA_PDL", "off");
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
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "RoPE frequencies"));
  rope_.inv_freq = at<float>(inv_freq_);
  rope_.dim = c_.head_dim;
  rope_.attention_factor = 1.0f;
  rope_.interleave = false;
  MLASPEC_RETURN_IF_ERROR(release_upload_staging());
  return cuda_status(cudaDeviceSynchronize(), "DFlash drafter upload");
}

Status DFlashRuntime::append_context(std::span<const DFlashContextRows> batch, kv::KvPool& pool) {
  int64_t T = 0;
  for (const DFlashContextRows& r : batch) T += r.rows;
  if (T == 0) return Status::Ok();
  gpu::set_dependent_launch(dependent_launch_);
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
  MLASPEC_RETURN_IF_ERROR(grow(featb_, static_cast<size_t>(T * K * Ht) * sizeof(uint16_t)));
  MLASPEC_RETURN_IF_ERROR(grow(h_, static_cast<size_t>(T * H) * sizeof(float)));
  MLASPEC_RETURN_IF_ERROR(grow(xb_, static_cast<size_t>(T * H) * sizeof(uint16_t)));
  MLASPEC_RETURN_IF_ERROR(grow(kb_, static_cast<size_t>(T * kvw) * sizeof(float)));
  MLASPEC_RETURN_IF_ERROR(grow(vb_, static_cast<size_t>(T * kvw) * sizeof(float)));

  MLASPEC_RETURN_IF_ERROR(to_bf16(at<float>(feat_), T * K * Ht, at<uint16_t>(featb_), stream_));
  MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(featb_), T, fc_, at<float>(h_)));
  MLASPEC_RETURN_IF_ERROR(rms_norm(at<float>(h_), H, T, H, hidden_norm_.ptr(), eps(), nullptr, 0,
                                   at<uint16_t>(xb_), H, stream_));
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const DDFlashLayer& d = layers_[static_cast<size_t>(l)];
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xb_), T, d.k_proj, at<float>(kb_)));
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xb_), T, d.v_proj, at<float>(vb_)));
    MLASPEC_RETURN_IF_ERROR(
        norm_rope(at<float>(kb_), T, c_.num_key_value_heads, d.k_norm, at<int32_t>(positions_)));
    MLASPEC_RETURN_IF_ERROR(
        write_gqa_rows(at<float>(kb_), at<float>(vb_), T, kvw, at<int32_t>(slots_),
                       static_cast<uint16_t*>(pool.layer_tensor(l).data()), stream_));
  }
  return cuda_status(cudaStreamSynchronize(stream_), "DFlash append_context");
}

Status DFlashRuntime::propose(std::span<DFlashBlock> batch, const kv::KvPool& pool,
                              int64_t window) {
  const int64_t B = static_cast<int64_t>(batch.size());
  if (B == 0) return Status::Ok();
  gpu::set_dependent_launch(dependent_launch_);
  const int64_t Q = c_.block_size, H = c_.hidden_size, d = c_.head_dim, vocab = c_.vocab_size;
  const int64_t nh = c_.num_attention_heads, kvw = c_.kv_width();
  const int64_t R = B * Q, D = Q - 1;
  // Host side, one upload: the block tokens and positions [R each], each request's meta (page
  // table offset, first context row, context rows) [3B], the draft rows of the final norm's
  // output [B * D], then the page tables.
  std::vector<int32_t> ints(static_cast<size_t>(2 * R + 3 * B + B * D));
  int32_t* tokens = ints.data();
  int32_t* positions = tokens + R;
  int32_t* meta = positions + R;
  int32_t* draft_rows = meta + 3 * B;
  int64_t max_keys = 0, n_pages = 0;
  for (int64_t b = 0; b < B; ++b) {
    const DFlashBlock& blk = batch[static_cast<size_t>(b)];
    const int64_t L = blk.context_len;
    const int64_t first = window > 0 ? std::max<int64_t>(0, L - window) : 0;
    for (int64_t i = 0; i < Q; ++i) {
      tokens[b * Q + i] = i == 0 ? blk.anchor : c_.mask_token_id;
      positions[b * Q + i] = static_cast<int32_t>(L + i);
      if (i > 0) draft_rows[b * D + i - 1] = static_cast<int32_t>(b * Q + i);
    }
    const int64_t need = (L + pool.page_size() - 1) / pool.page_size();
    meta[b] = static_cast<int32_t>(n_pages);
    meta[B + b] = static_cast<int32_t>(first);
    meta[2 * B + b] = static_cast<int32_t>(L - first);
    ints.insert(ints.end(), blk.pages.begin(), blk.pages.begin() + need);
    tokens = ints.data(), positions = tokens + R, meta = positions + R;  // after the insert
    draft_rows = meta + 3 * B;
    n_pages += need;
    max_keys = std::max(max_keys, L - first + Q);
  }
  if (n_pages == 0) ints.push_back(0);  // a batch of empty contexts: a valid pointer
  // The scores scratch's row length, rounded up to a power of two (at least 256) so that one
  // captured graph serves many context lengths; the kernel reads the real lengths from meta.
  int64_t keys = 256;
  while (keys < max_keys) keys *= 2;

  const auto bytes = [](int64_t n, size_t elem) { return static_cast<size_t>(n) * elem; };
  int64_t inter = 0;
  for (const DDFlashLayer& l : layers_) inter = std::max(inter, l.mlp.inter);
  MLASPEC_RETURN_IF_ERROR(grow(ints_, ints.size() * sizeof(int32_t)));
  MLASPEC_RETURN_IF_ERROR(grow(h_, bytes(R * H, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(xb_, bytes(R * H, 2)));
  MLASPEC_RETURN_IF_ERROR(grow(q_, bytes(R * nh * d, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(kb_, bytes(R * kvw, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(vb_, bytes(R * kvw, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(attn_, bytes(R * nh * d, 2)));
  MLASPEC_RETURN_IF_ERROR(grow(o_, bytes(R * H, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(scores_, bytes(R * nh * keys, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(gu_, bytes(R * 2 * inter, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(act_, bytes(R * inter, 2)));
  MLASPEC_RETURN_IF_ERROR(grow(xn_, bytes(R * H, 4)));
  MLASPEC_RETURN_IF_ERROR(grow(xnb_, bytes(R * H, 2)));
  MLASPEC_RETURN_IF_ERROR(grow(xg_, bytes(B * D * H, 2)));
  MLASPEC_RETURN_IF_ERROR(grow(logits_, bytes(B * D * vocab, 4)));

  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(uploaded_), "upload staging"));
  MLASPEC_RETURN_IF_ERROR(host_ints_.reserve(ints.size() * sizeof(int32_t)));
  std::copy(ints.begin(), ints.end(), host_ints_.as<int32_t>());
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(ints_.data(), host_ints_.as<int32_t>(),
                                  ints.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream_),
                  "DFlash inputs upload"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaEventRecord(uploaded_, stream_), "cudaEventRecord"));
  Step st;
  st.B = B;
  st.R = R;
  st.max_keys = keys;
  st.tokens = at<int32_t>(ints_);
  st.positions = st.tokens + R;
  st.meta = st.positions + R;
  st.draft_rows = st.meta + 3 * B;
  st.pages = st.draft_rows + B * D;

  if (!graphs_on_) {
    MLASPEC_RETURN_IF_ERROR(propose_forward(st, pool));
  } else {
    if (graphs_generation_ != generation_) {
      graphs_.clear();  // a scratch buffer moved: the graphs hold old addresses
      graphs_generation_ = generation_;
    }
    std::string key = str(B) + "/" + str(keys) + "/" + str(pool.page_size());
    for (int l = 0; l < c_.num_hidden_layers; ++l) {
      key +=
          "/" + str(static_cast<int64_t>(reinterpret_cast<uintptr_t>(pool.layer_tensor(l).data())));
    }
    std::unique_ptr<Graph>& g = graphs_[key];
    if (g == nullptr) {
      g = std::make_unique<Graph>();
      MLASPEC_RETURN_IF_ERROR(cuda_status(
          cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "begin capture"));
      const Status fwd = propose_forward(st, pool);
      cudaGraph_t graph = nullptr;
      cudaError_t made = cudaStreamEndCapture(stream_, &graph);
      if (fwd.ok() && made == cudaSuccess) made = cudaGraphInstantiate(&g->exec, graph, 0);
      if (graph != nullptr) cudaGraphDestroy(graph);
      if (!fwd.ok() || made != cudaSuccess) {
        cudaGetLastError();
        graphs_on_ = false;
        graphs_.clear();
        log_warn("CUDA graphs off for the DFlash drafter: capturing propose failed (" +
                 (fwd.ok() ? std::string(cudaGetErrorString(made)) : fwd.message()) +
                 "); running eagerly");
        MLASPEC_RETURN_IF_ERROR(propose_forward(st, pool));
      }
    }
    if (graphs_on_) {
      MLASPEC_RETURN_IF_ERROR(
          cuda_status(cudaGraphLaunch(graphs_[key]->exec, stream_), "cudaGraphLaunch"));
    }
  }

  // Downloads: the draft rows' logits and every row's normed hidden state, one copy each.
  MLASPEC_RETURN_IF_ERROR(host_out_.reserve(bytes(B * D * vocab + R * H, 4)));
  float* hl = host_out_.as<float>();
  float* hh = hl + B * D * vocab;
  MLASPEC_RETURN_IF_ERROR(cuda_status(
      cudaMemcpyAsync(hl, logits_.data(), bytes(B * D * vocab, 4), cudaMemcpyDeviceToHost, stream_),
      "DFlash logits download"));
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaMemcpyAsync(hh, xn_.data(), bytes(R * H, 4), cudaMemcpyDeviceToHost, stream_),
                  "DFlash hidden download"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "DFlash propose"));
  for (int64_t b = 0; b < B; ++b) {
    DFlashBlock& blk = batch[static_cast<size_t>(b)];
    blk.logits.assign(hl + b * D * vocab, hl + (b + 1) * D * vocab);
    blk.hidden.assign(hh + (b * Q + 1) * H, hh + (b + 1) * Q * H);
  }
  return Status::Ok();
}

Status DFlashRuntime::propose_forward(const Step& st, const kv::KvPool& pool) {
  const int64_t Q = c_.block_size, H = c_.hidden_size, d = c_.head_dim;
  const int64_t nh = c_.num_attention_heads, nkv = c_.num_key_value_heads;
  const int64_t B = st.B, R = st.R, D = Q - 1;
  float* h = at<float>(h_);
  uint16_t* xb = at<uint16_t>(xb_);
  MLASPEC_RETURN_IF_ERROR(embed(embed_.ptr(), st.tokens, R, H, h, stream_));
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const DDFlashLayer& w = layers_[static_cast<size_t>(l)];
    MLASPEC_RETURN_IF_ERROR(
        rms_norm(h, H, R, H, w.input_norm.ptr(), eps(), nullptr, 0, xb, H, stream_));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.q_proj, at<float>(q_)));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.k_proj, at<float>(kb_)));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.v_proj, at<float>(vb_)));
    MLASPEC_RETURN_IF_ERROR(
        norm_rope(at<float>(q_), R, static_cast<int>(nh), w.q_norm, st.positions));
    MLASPEC_RETURN_IF_ERROR(
        norm_rope(at<float>(kb_), R, static_cast<int>(nkv), w.k_norm, st.positions));
    DFlashAttentionArgs a;
    a.q = at<float>(q_);
    a.k_block = at<float>(kb_);
    a.v_block = at<float>(vb_);
    a.pool = static_cast<const uint16_t*>(pool.layer_tensor(l).data());
    a.pages = st.pages;
    a.page_offset = st.meta;
    a.ctx_first = st.meta + B;
    a.ctx_rows = st.meta + 2 * B;
    a.batch = static_cast<int>(B);
    a.block = static_cast<int>(Q);
    a.heads = static_cast<int>(nh);
    a.kv_heads = static_cast<int>(nkv);
    a.dim = static_cast<int>(d);
    a.page_size = pool.page_size();
    a.max_keys = st.max_keys;
    a.scale = 1.0f / std::sqrt(static_cast<float>(d));
    a.scores = at<float>(scores_);
    a.out = at<uint16_t>(attn_);
    MLASPEC_RETURN_IF_ERROR(dflash_attention(a, stream_));
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(attn_), R, w.o_proj, at<float>(o_)));
    MLASPEC_RETURN_IF_ERROR(add_inplace(h, at<float>(o_), R * H, stream_));
    MLASPEC_RETURN_IF_ERROR(
        rms_norm(h, H, R, H, w.post_norm.ptr(), eps(), nullptr, 0, xb, H, stream_));
    MLASPEC_RETURN_IF_ERROR(linear(xb, R, w.mlp.gate_up, at<float>(gu_)));
    MLASPEC_RETURN_IF_ERROR(silu_mul(at<float>(gu_), R, w.mlp.inter, at<uint16_t>(act_), stream_));
    MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(act_), R, w.mlp.down, at<float>(o_)));
    MLASPEC_RETURN_IF_ERROR(add_inplace(h, at<float>(o_), R * H, stream_));
  }
  // The final norm of every row (the anchors' are not read), the draft rows gathered, then the
  // target's lm_head over them.
  MLASPEC_RETURN_IF_ERROR(
      rms_norm(h, H, R, H, norm_.ptr(), eps(), at<float>(xn_), H, at<uint16_t>(xnb_), H, stream_));
  MLASPEC_RETURN_IF_ERROR(
      gather_rows(at<uint16_t>(xnb_), st.draft_rows, B * D, H, at<uint16_t>(xg_), stream_));
  return linear(at<uint16_t>(xg_), B * D, head_, at<float>(logits_));
}

}  // namespace

Result<std::unique_ptr<DFlashCudaRuntime>> DFlashCudaRuntime::create(
    const DFlashConfig& config, const DFlashWeights& weights, const Matrix& embed_tokens,
    const Matrix& lm_head, const cpu::Rope& rope, bool cuda_graphs) {
  auto rt = std::make_unique<DFlashRuntime>(config, cuda_graphs);
  MLASPEC_RETURN_IF_ERROR(rt->init(weights, embed_tokens, lm_head, rope));
  return std::unique_ptr<DFlashCudaRuntime>(std::move(rt));
}

}  // namespace mlaspec::model::gpu
