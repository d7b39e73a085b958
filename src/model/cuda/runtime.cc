// The CUDA runtime's forward (ARCHITECTURE.md §3: bf16 activations, f32 accumulation, the same
// layer sequence as the CPU runtime), its decoder loop and GEMM entry here; the layers in mla.cc
// and moe.cc, weights and scratch in weights.cc. Per request and per chunk of at most
// max_chunk_tokens:
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
#include <algorithm>

#include "runtime_impl.h"

namespace mlaspec::model::gpu {

Status gemm(cublasHandle_t blas, bool deterministic, const RowInvariantGemm& g) {
  if (g.T == 0 || g.N == 0) return Status::Ok();
  if (deterministic || g.w_type == GemmType::kF32) return gemm_row_invariant(g, nullptr);
  const float alpha = 1.0f, beta = 0.0f;
  return cublas_status(
      cublasGemmStridedBatchedEx(
          blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(g.N), static_cast<int>(g.T),
          static_cast<int>(g.K), &alpha, g.w, CUDA_R_16BF, static_cast<int>(g.ldw), g.stride_w, g.x,
          CUDA_R_16BF, static_cast<int>(g.ldx), g.stride_x, &beta, g.y,
          g.y_type == GemmType::kF32 ? CUDA_R_32F : CUDA_R_16BF, static_cast<int>(g.ldy),
          g.stride_y, g.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "cublasGemmStridedBatchedEx [" + str(g.T) + " x " + str(g.K) + "] @ [" + str(g.K) + " x " +
          str(g.N) + "] x " + str(g.batch));
}

Status linear(cublasHandle_t blas, bool deterministic, const uint16_t* x, int64_t T, const DMat& w,
              void* y, GemmType y_type) {
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
  return gemm(blas, deterministic, g);
}

Status Runtime::gemm(const RowInvariantGemm& g) {
  return gpu::gemm(blas_, deterministic_, g);
}

Status Runtime::linear(const uint16_t* x, int64_t T, const DMat& w, void* y, GemmType y_type) {
  return gpu::linear(blas_, deterministic_, x, T, w, y, y_type);
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

Result<int64_t> CudaRuntime::available_bytes() {
  size_t free = 0, total = 0;
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaMemGetInfo(&free, &total), "cudaMemGetInfo"));
  return static_cast<int64_t>(free);
}

Result<std::unique_ptr<CudaRuntime>> CudaRuntime::create(const ModelConfig& config,
                                                         const ModelWeights& weights,
                                                         const cpu::Rope& rope) {
  auto rt = std::make_unique<Runtime>(config, weights);
  MLASPEC_RETURN_IF_ERROR(rt->init(rope));
  return std::unique_ptr<CudaRuntime>(std::move(rt));
}

}  // namespace mlaspec::model::gpu
