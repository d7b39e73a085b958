// The CUDA runtime's internals (src/model/cuda/): device weights, the Runtime class and the
// helpers its files share. runtime.cc: the decoder loop and the GEMM entry; weights.cc: upload and
// scratch; mla.cc, moe.cc: the layers (as the CPU runtime's mla.cc / moe.cc).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "kernels.h"
#include "runtime.h"

namespace mlaspec::model::gpu {

// transformers builds q_a_layernorm and kv_a_layernorm with the RMSNorm default eps.
inline constexpr float kLatentNormEps = 1e-6f;
// The CUDA verify kernels' q_len limit (attention/cuda/traits.h CommonTraits::kMaxQLen).
inline constexpr int64_t kAttentionBlock = 32;
// MoE layers of calls of at most this many tokens (decode steps, verify blocks) run their routed
// experts through the grouped row-invariant GEMM (kernels.h), with no host round trip; longer
// chunks launch cuBLAS GEMMs per touched expert after copying the experts' row counts to the host.
// Deterministic mode always takes the grouped path (bitwise the per-expert row-invariant GEMMs).
inline constexpr int64_t kGroupedMoeMaxTokens = 16;

inline std::string str(int64_t v) {
  return std::to_string(v);
}

Status cuda_status(cudaError_t err, const std::string& what);
Status cublas_status(cublasStatus_t st, const std::string& what);
// Checks that a CUDA device is visible (else kUnsupported "<who> device cuda: no CUDA device is
// visible") and creates a cuBLAS handle.
Status open_device(const std::string& who, cublasHandle_t* blas);
// Grows `b` to at least `bytes` on the device (poisoned with 0xff).
Status ensure(Buffer& b, size_t bytes);

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

struct DMlp {
  DMat gate_up;  // [2 * inter, hidden]: gate_proj rows, then up_proj rows
  DMat down;     // [hidden, inter]
  int64_t inter = 0;
  bool empty() const { return gate_up.empty(); }
};

struct DLayer {
  DVec input_norm, post_norm;
  DMat q_proj, q_a_proj, q_b_proj, kv_a_proj;
  DVec q_a_norm, kv_a_norm;
  DMat w_uk_t;  // [H * latent, nope]: head h's W_UK transposed, so q_nope @ W_UK is x @ W^T
  DMat w_uv;    // [H * v, latent]
  DMat o_proj;
  bool is_moe = false;
  DMlp mlp;
  Buffer router;     // f32 [E, hidden]
  DVec router_bias;  // e_score_correction_bias (noaux_tc), else empty
  std::vector<DMlp> experts;
  Buffer expert_gate_up, expert_down;  // device arrays [E] of the experts' matrices' pointers
  DMlp shared;
};

// The GEMM entry of the CUDA runtimes (runtime.cc): cuBLAS (bf16 in, f32 accumulate), or the
// row-invariant kernel when `deterministic` or the weights are f32.
Status gemm(cublasHandle_t blas, bool deterministic, const RowInvariantGemm& g);
// y[T, W.rows] = x[T, W.cols] @ W^T (x bf16 packed).
Status linear(cublasHandle_t blas, bool deterministic, const uint16_t* x, int64_t T, const DMat& w,
              void* y, GemmType y_type);

// Host weights to the device (weights.cc): matrices as bf16, vectors as f32, an MLP's gate and up
// projections stacked into one [2 * inter, hidden] matrix.
Status upload_matrix(DMat& m, const Matrix& w);
Status upload_vec(DVec& v, const std::vector<float>& h);
Status upload_mlp(DMlp& d, const MlpWeights& w);

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
  const ModelWeights& host_;  // the host weights (uploaded by init())
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
      lse_, heads_, gu_, act_, xs_, ys_, router_logits_, chosen_, rweights_, row_of_, begin_, gidx_,
      cpos_, cw_, touched_, table_, seq_lens_, logits_;
};

}  // namespace mlaspec::model::gpu
