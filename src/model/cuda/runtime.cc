// The CUDA runtime's forward (ARCHITECTURE.md §3: bf16 activations, f32 accumulation, the same
// layer sequence as the CPU runtime), its decoder loop and GEMM entry here; the layers in mla.cc
// and moe.cc, weights and scratch in weights.cc.
//
// One pass runs the new tokens of several requests at once: the requests of a batch that fit one
// chunk (max_chunk_tokens) are laid out one after the other and fused into passes of at most that
// many tokens, so a decode or verify batch of B requests reads every weight once per pass, not
// once per request. A longer request (a prompt) runs alone, chunk after chunk. Per pass:
//   embed -> per layer: rms_norm -> MLA (absorbed) -> +residual -> rms_norm -> MLP / MoE ->
//   +residual
//   -> final norm -> gather of the rows whose logits are asked for -> lm_head
// Every step but attention treats rows independently; attention runs per request through the
// plan of ../gpu_plan.h (blocks of at most 32 queries; consecutive blocks of equal q_len share a
// call), with positions, KV slots, block tables and seq_lens uploaded once per pass.
// GEMMs: cuBLAS (bf16 in, f32 accumulate) by default; the row-invariant kernel (kernels.h) in
// deterministic mode and for the MoE router, which runs in f32 as transformers' does. The residual
// stream, norms, RoPE and the router's inputs stay f32; every GEMM input is bf16. In deterministic
// mode a request's results are therefore bitwise the same alone or fused with any others (every
// kernel's per-row arithmetic is independent of the pass's rows, and attention is in deterministic
// mode); in default mode cuBLAS may pick another kernel for another M.
//
// MoE: routing and its plan on the device (moe.cc), then the experts' GEMMs.
//
// Scratch buffers grow as needed and are filled with 0xff bytes (NaN in f32 and bf16) when
// allocated, so an element a kernel failed to write shows as NaN downstream (the tests check that
// every returned value is finite).
#include <algorithm>

#include "../gpu_plan.h"
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

Status Runtime::run_batch(std::span<const ForwardRequest> batch, kv::KvPool& pool,
                          const ForwardOptions& options, attn::Dispatcher& dispatcher,
                          std::span<RequestOutput> out) {
  deterministic_ = options.deterministic;
  const int64_t max_chunk =
      options.max_chunk_tokens > 0 ? options.max_chunk_tokens : kDefaultChunkTokens;
  for (size_t b = 0; b < batch.size(); ++b) {
    size_output(batch[b].logits, static_cast<int64_t>(batch[b].tokens.size()),
                options.capture_layers.size(), c_.hidden_size, c_.vocab_size, &out[b]);
  }
  // Requests that fit one chunk fuse, in batch order, into passes of at most max_chunk tokens; a
  // longer one runs alone, chunk after chunk (each chunk needs the previous one's KV rows).
  std::vector<Piece> fused;
  int64_t fused_tokens = 0;
  const auto flush = [&]() -> Status {
    const Status st = run_pieces(batch, fused, pool, options, dispatcher, out);
    fused.clear();
    fused_tokens = 0;
    return st;
  };
  for (size_t b = 0; b < batch.size(); ++b) {
    const int64_t n = static_cast<int64_t>(batch[b].tokens.size());
    if (n > max_chunk) {
      for (int64_t begin = 0; begin < n; begin += max_chunk) {
        const Piece chunk{b, begin, std::min(max_chunk, n - begin)};
        MLASPEC_RETURN_IF_ERROR(run_pieces(batch, {&chunk, 1}, pool, options, dispatcher, out)
                                    .with_context("request " + str(static_cast<int64_t>(b))));
      }
      continue;
    }
    if (fused_tokens + n > max_chunk) MLASPEC_RETURN_IF_ERROR(flush());
    fused.push_back({b, 0, n});
    fused_tokens += n;
  }
  MLASPEC_RETURN_IF_ERROR(flush());
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaDeviceSynchronize(), "forward"));
  if (phases_.on()) phases_.resolve();
  return Status::Ok();
}

Status Runtime::run_pieces(std::span<const ForwardRequest> batch, std::span<const Piece> pieces,
                           kv::KvPool& pool, const ForwardOptions& options,
                           attn::Dispatcher& dispatcher, std::span<RequestOutput> out) {
  if (pieces.empty()) return Status::Ok();
  const int64_t hidden = c_.hidden_size, vocab = c_.vocab_size;
  const int64_t page_size = pool.page_size();

  // The pass's rows: each piece's tokens one after the other, with their positions and KV slots;
  // the attention plan; the rows whose logits are asked for.
  std::vector<int32_t> tokens, positions, slots, logit_src;
  std::vector<AttentionPiece> attention;
  // Each piece's logit rows are consecutive in the gathered rows and in its request's output:
  // one download per piece, straight into the output.
  struct LogitRun {
    size_t request;
    int64_t dst, rows;
  };
  std::vector<LogitRun> logit_runs;
  int64_t max_pages = 0;
  for (const Piece& p : pieces) {
    const ForwardRequest& r = batch[p.request];
    const int64_t first = r.positions[static_cast<size_t>(p.begin)];
    const int64_t row0 = static_cast<int64_t>(tokens.size());
    for (int64_t t = 0; t < p.T; ++t) {
      const int64_t pos = first + t;
      tokens.push_back(r.tokens[static_cast<size_t>(p.begin + t)]);
      positions.push_back(static_cast<int32_t>(pos));
      slots.push_back(static_cast<int32_t>(
          r.pages[static_cast<size_t>(pos / page_size)] * page_size + pos % page_size));
    }
    attention.push_back({p.T, first, r.pages});
    max_pages = std::max(max_pages, (first + p.T + page_size - 1) / page_size);
    const auto [lrow0, lrows, dst] =
        logit_rows(r.logits, p.begin, p.T, static_cast<int64_t>(r.tokens.size()));
    for (int64_t i = 0; i < lrows; ++i) logit_src.push_back(static_cast<int32_t>(row0 + lrow0 + i));
    if (lrows > 0) logit_runs.push_back({p.request, dst, lrows});
  }
  const int64_t T = static_cast<int64_t>(tokens.size());
  const PhaseEnd phase_end(phases_);
  phases_.begin_if_on("uploads, embed");
  const AttentionBlockPlan plan = plan_attention_batch(attention, page_size, kAttentionBlock);
  MLASPEC_RETURN_IF_ERROR(reserve(T, max_pages));
  const auto upload_ints = [](Buffer& b, const std::vector<int32_t>& v, const char* what) {
    Status st = ensure(b, std::max<size_t>(v.size(), 1) * sizeof(int32_t));
    if (!st.ok()) return st;
    return cuda_status(
        cudaMemcpy(b.data(), v.data(), v.size() * sizeof(int32_t), cudaMemcpyHostToDevice), what);
  };
  MLASPEC_RETURN_IF_ERROR(upload_ints(tokens_, tokens, "token upload"));
  MLASPEC_RETURN_IF_ERROR(upload_ints(positions_, positions, "position upload"));
  MLASPEC_RETURN_IF_ERROR(upload_ints(slots_, slots, "slot upload"));
  MLASPEC_RETURN_IF_ERROR(upload_ints(table_, plan.block_table, "block table upload"));
  MLASPEC_RETURN_IF_ERROR(upload_ints(seq_lens_, plan.seq_lens, "seq_lens upload"));
  MLASPEC_RETURN_IF_ERROR(upload_ints(logit_idx_, logit_src, "logit rows upload"));

  float* x = at<float>(x_);
  MLASPEC_RETURN_IF_ERROR(embed(embed_.ptr(), at<int32_t>(tokens_), T, hidden, x, nullptr));
  const float eps = static_cast<float>(c_.rms_norm_eps);
  for (int l = 0; l < c_.num_hidden_layers; ++l) {
    const DLayer& d = layers_[static_cast<size_t>(l)];
    phases_.begin_if_on("norms, adds");
    MLASPEC_RETURN_IF_ERROR(rms_norm(x, hidden, T, hidden, d.input_norm.ptr(), eps, nullptr, 0,
                                     at<uint16_t>(hb_), hidden, nullptr));
    MLASPEC_RETURN_IF_ERROR(mla(l, T, pool, dispatcher, slots, plan));
    phases_.begin_if_on("norms, adds");
    MLASPEC_RETURN_IF_ERROR(add_inplace(x, at<float>(delta_), T * hidden, nullptr));
    MLASPEC_RETURN_IF_ERROR(rms_norm(x, hidden, T, hidden, d.post_norm.ptr(), eps, at<float>(hf_),
                                     hidden, at<uint16_t>(hb_), hidden, nullptr));
    if (d.is_moe) {
      MLASPEC_RETURN_IF_ERROR(moe(l, T));
    } else {
      phases_.begin_if_on("dense mlp");
      MLASPEC_RETURN_IF_ERROR(mlp(d.mlp, at<uint16_t>(hb_), T, at<float>(delta_)));
    }
    phases_.begin_if_on("norms, adds");
    MLASPEC_RETURN_IF_ERROR(add_inplace(x, at<float>(delta_), T * hidden, nullptr));
    for (size_t k = 0; k < options.capture_layers.size(); ++k) {
      if (options.capture_layers[k] != l) continue;
      phases_.begin_if_on("hidden download");
      int64_t row0 = 0;
      for (const Piece& p : pieces) {  // straight into each request's output
        MLASPEC_RETURN_IF_ERROR(cuda_status(
            cudaMemcpy(out[p.request].hidden[k].data() + p.begin * hidden, x + row0 * hidden,
                       static_cast<size_t>(p.T * hidden) * sizeof(float), cudaMemcpyDeviceToHost),
            "hidden state download"));
        row0 += p.T;
      }
    }
  }

  // The final norm of every row, then the lm_head over the rows asked for, gathered.
  const int64_t rows = static_cast<int64_t>(logit_src.size());
  if (rows == 0) return Status::Ok();
  phases_.begin_if_on("lm_head");
  MLASPEC_RETURN_IF_ERROR(rms_norm(x, hidden, T, hidden, norm_.ptr(), eps, nullptr, 0,
                                   at<uint16_t>(hb_), hidden, nullptr));
  MLASPEC_RETURN_IF_ERROR(gather_rows(at<uint16_t>(hb_), at<int32_t>(logit_idx_), rows, hidden,
                                      at<uint16_t>(xs_), nullptr));
  const DMat& head = head_.empty() ? embed_ : head_;
  MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xs_), rows, head, logits_.data(), GemmType::kF32));
  int64_t src = 0;
  for (const LogitRun& r : logit_runs) {
    MLASPEC_RETURN_IF_ERROR(cuda_status(
        cudaMemcpy(out[r.request].logits.data() + r.dst * vocab, at<float>(logits_, src * vocab),
                   static_cast<size_t>(r.rows * vocab) * sizeof(float), cudaMemcpyDeviceToHost),
        "logits download"));
    src += r.rows;
  }
  return Status::Ok();
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
