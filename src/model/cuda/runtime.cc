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
// call), with tokens, positions, KV slots, logit rows, block tables and seq_lens uploaded in one
// copy per pass, and the logits and captured hidden states downloaded in one copy each. Everything
// runs on the runtime's stream; passes of at most kCudaGraphMaxTokens rows replay the work
// between attention calls from CUDA graphs ("CUDA graphs" below).
// GEMMs: cuBLAS (bf16 in, f32 accumulate; the MoE router in plain f32, as transformers' runs) by
// default, except one-row calls, which take the row-invariant kernel's GEMV form (faster than
// cuBLAS there); the row-invariant kernel (kernels.h) in deterministic mode. The residual
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
#include <cstring>
#include <string>

#include "mlaspec/core/log.h"

#include "../gpu_plan.h"
#include "runtime_impl.h"

namespace mlaspec::model::gpu {

Status gemm(cublasHandle_t blas, bool deterministic, const RowInvariantGemm& g) {
  if (g.T == 0 || g.N == 0) return Status::Ok();
  // f32 x f32 (the MoE router) goes to cuBLAS in plain f32 (CUBLAS_COMPUTE_32F, no TF32) in
  // default mode: at a 1024-token prefill chunk the row-invariant kernel's warp per column is a
  // small grid for a [1024 x 2048] x [2048 x 64] product. Mixed f32 / bf16 operands only the
  // row-invariant kernel takes.
  const bool f32 = g.w_type == GemmType::kF32 && g.x_type == GemmType::kF32;
  // One-row calls (decode at batch 1, the lm_head's last row of a prefill) go to the GEMV in
  // default mode too: at one row it read every V2-Lite projection faster than cuBLAS, at 2 and 4
  // rows not all (kernels.h, gemv_serves).
  if (deterministic || (g.w_type == GemmType::kF32 && !f32) || (g.T == 1 && gemv_serves(g))) {
    cudaStream_t stream = nullptr;  // the handle's stream: the kernel runs where cuBLAS would
    MLASPEC_RETURN_IF_ERROR(cublas_status(cublasGetStream(blas, &stream), "cublasGetStream"));
    return gemm_row_invariant(g, stream);
  }
  const cudaDataType_t in = f32 ? CUDA_R_32F : CUDA_R_16BF;
  const float alpha = 1.0f, beta = 0.0f;
  return cublas_status(
      cublasGemmStridedBatchedEx(
          blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(g.N), static_cast<int>(g.T),
          static_cast<int>(g.K), &alpha, g.w, in, static_cast<int>(g.ldw), g.stride_w, g.x, in,
          static_cast<int>(g.ldx), g.stride_x, &beta, g.y,
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
  fp8_math_attention_ = options.fp8_math_attention;
  gpu::set_dependent_launch(dependent_launch_);
  const int64_t max_chunk =
      options.max_chunk_tokens > 0 ? options.max_chunk_tokens : kDefaultCudaChunkTokens;
  for (size_t b = 0; b < batch.size(); ++b) {
    size_output(batch[b].logits, static_cast<int64_t>(batch[b].tokens.size()),
                options.capture_layers.size(), c_.hidden_size, c_.vocab_size, &out[b]);
    if (options.argmax_only) {
      out[b].logits = {};
      out[b].argmax.assign(static_cast<size_t>(out[b].logit_rows), -1);
    }
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
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "forward"));
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
  // Each piece's logit rows are consecutive in the gathered rows and in its request's output.
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
  // Every slot lies in the pool: Model::Impl::validate checked each page the pass touches against
  // it (the KV writes, captured or not, take the slots as given).
  const int64_t T = static_cast<int64_t>(tokens.size());
  const int64_t rows = static_cast<int64_t>(logit_src.size());
  const int64_t captures = static_cast<int64_t>(options.capture_layers.size());
  const PhaseEnd phase_end(phases_);
  phases_.begin_if_on("uploads, embed");
  // Graph passes (below) take a table of a power-of-two width: its stride is a launch parameter.
  const bool graph_pass =
      options.cuda_graphs && graphs_on_ && !phases_.on() && T <= kCudaGraphMaxTokens;
  const AttentionBlockPlan plan =
      plan_attention_batch(attention, page_size, kAttentionBlock, graph_pass);
  max_pages = std::max(max_pages, plan.pages);
  MLASPEC_RETURN_IF_ERROR(reserve(T, max_pages));
  MLASPEC_RETURN_IF_ERROR(grow(
      hidden_, static_cast<size_t>(std::max<int64_t>(1, captures * T * hidden)) * sizeof(float)));

  // One upload: tokens, positions, slots, logit rows, seq_lens, block table. The staging buffer is
  // reused once the previous pass's copy has left it.
  const int64_t n_ints = 3 * T + rows + static_cast<int64_t>(plan.seq_lens.size()) +
                         static_cast<int64_t>(plan.block_table.size());
  MLASPEC_RETURN_IF_ERROR(grow(ints_, static_cast<size_t>(n_ints) * sizeof(int32_t)));
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaEventSynchronize(uploaded_), "upload staging"));
  MLASPEC_RETURN_IF_ERROR(host_ints_.reserve(static_cast<size_t>(n_ints) * sizeof(int32_t)));
  int32_t* h = host_ints_.as<int32_t>();
  const std::vector<int32_t>* parts[] = {&tokens,    &positions,     &slots,
                                         &logit_src, &plan.seq_lens, &plan.block_table};
  for (const std::vector<int32_t>* v : parts) {
    h = std::copy(v->begin(), v->end(), h);
  }
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaMemcpyAsync(ints_.data(), host_ints_.as<int32_t>(),
                                                      static_cast<size_t>(n_ints) * sizeof(int32_t),
                                                      cudaMemcpyHostToDevice, stream_),
                                      "pass inputs upload"));
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaEventRecord(uploaded_, stream_), "cudaEventRecord"));
  const int32_t* d = at<int32_t>(ints_);
  Pass pass;
  pass.T = T;
  pass.rows = rows;
  pass.tokens = d;
  pass.positions = d + T;
  pass.slots = d + 2 * T;
  pass.logit_idx = d + 3 * T;
  pass.pool = &pool;
  pass.capture_layers = options.capture_layers;
  pass.argmax_only = options.argmax_only;
  const int32_t* seq_lens = d + 3 * T + rows;
  const int32_t* table = seq_lens + plan.seq_lens.size();

  // Decode and verify passes run from CUDA graphs (the MoE's grouped path keeps them free of host
  // round trips): the whole pass, attention included, where every attention call can be replayed
  // (the dispatcher picks each call's backend now, and the pick and its launch are part of the
  // key), else the segments between eager attention calls.
  static_assert(kCudaGraphMaxTokens <= kGroupedMoeMaxTokens);
  Graphs* graphs = nullptr;
  std::vector<AttentionPick> picks;
  bool whole = false;
  if (graph_pass) {
    if (graphs_generation_ != scratch_generation_) {
      clear_graphs();  // the scratch moved: every graph holds old addresses
      graphs_generation_ = scratch_generation_;
    }
    std::string key = graph_key(pass);
    if (attention_graphs_on_) {
      std::string attention_key;
      auto replay =
          attention_replay(pool, dispatcher, plan, table, seq_lens, &picks, &attention_key);
      if (!replay.ok()) return replay.status();
      whole = *replay;
      if (whole) key += "/attention/" + attention_key;
    }
    auto it = graphs_.find(key);
    if (it == graphs_.end()) {
      constexpr size_t kMaxGraphs = 64;  // pass keys kept; beyond, the least recently used goes
      if (graphs_.size() >= kMaxGraphs) {
        graphs_.erase(std::min_element(
            graphs_.begin(), graphs_.end(),
            [](const auto& a, const auto& b) { return a.second->last_use < b.second->last_use; }));
      }
      auto g = std::make_unique<Graphs>();
      g->exec.assign(whole ? 1 : static_cast<size_t>(c_.num_hidden_layers) + 1, nullptr);
      it = graphs_.emplace(std::move(key), std::move(g)).first;
    }
    graphs = it->second.get();
    graphs->last_use = ++graph_uses_;
  }
  ++(graphs != nullptr ? graph_stats_.graph_passes : graph_stats_.eager_passes);
  const int L = c_.num_hidden_layers;
  if (whole) {
    MLASPEC_RETURN_IF_ERROR(run_whole(pass, graphs, [&]() -> Status {
      for (int s = 0; s <= L; ++s) {
        MLASPEC_RETURN_IF_ERROR(segment(s, pass));
        if (s < L) {
          MLASPEC_RETURN_IF_ERROR(mla_attention(s, pool, dispatcher, plan, table, seq_lens, picks));
        }
      }
      return Status::Ok();
    }));
    // (a failed capture turns whole-pass graphs off: that pass ran eagerly)
    if (attention_graphs_on_) ++graph_stats_.attention_graph_passes;
    // Each call counted as the dispatcher's run() counts it (replayed, captured and launched, or
    // run eagerly after a failed capture).
    for (const AttentionPick& pick : picks) {
      for (int l = 0; l < L; ++l) dispatcher.record_call(pick.backend, pick.shape);
    }
  } else {
    for (int s = 0; s <= L; ++s) {
      // (a failed capture turns graphs off and drops them: the rest of the pass runs eagerly)
      MLASPEC_RETURN_IF_ERROR(run_segment(s, pass, graphs_on_ ? graphs : nullptr));
      if (s < L) {
        MLASPEC_RETURN_IF_ERROR(mla_attention(s, pool, dispatcher, plan, table, seq_lens, {}));
      }
    }
  }

  // Downloads: the logit rows (or their argmax) and the captured layers, one copy each, then into
  // the outputs.
  if (rows == 0 && captures == 0) return Status::Ok();
  phases_.begin_if_on("downloads");
  const int64_t row_values = options.argmax_only ? 1 : vocab;  // f32 or int32, 4 bytes each
  const int64_t n_logits = rows * row_values, n_hidden = captures * T * hidden;
  MLASPEC_RETURN_IF_ERROR(
      host_out_.reserve(static_cast<size_t>(n_logits + n_hidden) * sizeof(float)));
  float* hl = host_out_.as<float>();
  float* hh = hl + n_logits;
  if (n_logits > 0) {
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaMemcpyAsync(hl, options.argmax_only ? argmax_.data() : logits_.data(),
                                    static_cast<size_t>(n_logits) * sizeof(float),
                                    cudaMemcpyDeviceToHost, stream_),
                    "logits download"));
  }
  if (n_hidden > 0) {
    MLASPEC_RETURN_IF_ERROR(cuda_status(
        cudaMemcpyAsync(hh, hidden_.data(), static_cast<size_t>(n_hidden) * sizeof(float),
                        cudaMemcpyDeviceToHost, stream_),
        "hidden state download"));
  }
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamSynchronize(stream_), "forward pass"));
  int64_t src = 0;
  for (const LogitRun& r : logit_runs) {
    if (options.argmax_only) {
      std::memcpy(out[r.request].argmax.data() + r.dst, hl + src,
                  static_cast<size_t>(r.rows) * sizeof(int32_t));
    } else {
      std::copy_n(hl + src * vocab, r.rows * vocab, out[r.request].logits.data() + r.dst * vocab);
    }
    src += r.rows;
  }
  for (int64_t k = 0; k < captures; ++k) {
    int64_t row0 = 0;
    for (const Piece& p : pieces) {
      std::copy_n(hh + (k * T + row0) * hidden, p.T * hidden,
                  out[p.request].hidden[static_cast<size_t>(k)].data() + p.begin * hidden);
      row0 += p.T;
    }
  }
  return Status::Ok();
}

// ---- CUDA graphs ----
//
// A pass's work outside attention depends only on its shape: the rows T, the logit rows, the
// captured layers, the mode and the pool (whose layer addresses and fp8 scales the KV writes
// hold); its inputs (tokens, positions, slots, logit rows) sit at fixed offsets of ints_.
// Attention's launches depend on the seq_lens too, through the split plan made on the host, and
// on the backend the dispatcher picks. So per pass the dispatcher picks each attention call's
// backend on the host and that backend says what its launch would be (Backend::replay_key: the
// kernel's parameter bytes, plan included, and launch shape); the pass's key is its shape plus
// each call's pick and launch, and the whole pass, attention included, is captured once per key
// and replayed with the new inputs (their seq_lens and block tables at fixed addresses too). So
// graphs are captured per batch shape and per attention backend, and the backend is still chosen
// per batch by the cost model at replay time. A new plan (a request's context crossing a split
// boundary: fixed chunks of 1024 tokens per 64 heads in deterministic mode, the adaptive split's
// in default mode, 256 tokens at short contexts) or a doubled block-table width is a new key:
// captured once, then replayed (a batch of B requests meets one about every 1024 / B or 256 / B
// steps). Where a call
// cannot be replayed (its backend's workspace must grow first), the pass replays the segments
// between eager attention calls instead (vLLM's piecewise cut). A capture that fails turns that
// kind of graph off for the runtime with a warning and the pass goes on eagerly; a reallocated
// scratch buffer drops every graph; beyond 64 keys the least recently used is dropped.

std::string Runtime::graph_key(const Pass& p) const {
  std::string k = str(p.T) + "/" + str(p.rows) + (deterministic_ ? "/det" : "/def") +
                  (p.argmax_only ? "/argmax/" : "/logits/");
  for (int l : p.capture_layers) k += str(l) + ",";
  const kv::KvPool& pool = *p.pool;
  k += "/" + str(static_cast<int64_t>(reinterpret_cast<uintptr_t>(pool.buffer().data()))) + "/" +
       str(pool.num_slots()) + "/" + str(pool.page_size()) + "/" +
       str(static_cast<int64_t>(pool.dtype()));
  if (pool.dtype() != DType::kBF16) {
    for (int l = 0; l < pool.num_layers(); ++l) {
      const float scale = pool.layer_scale(l);
      uint32_t bits = 0;
      std::memcpy(&bits, &scale, sizeof(bits));
      k += "," + str(bits);
    }
  }
  return k;
}

void Runtime::clear_graphs() {
  graphs_.clear();
}

Result<bool> Runtime::attention_replay(kv::KvPool& pool, attn::Dispatcher& dispatcher,
                                       const AttentionBlockPlan& plan, const int32_t* table,
                                       const int32_t* seq_lens, std::vector<AttentionPick>* picks,
                                       std::string* key) {
  std::vector<AttentionPick> chosen;
  std::string k;
  const attn::VerifyOptions vo = attention_options();
  for (const AttentionBlockCall& call : plan.calls) {
    // Layer 0 stands for every layer: the others differ only in their pool layer's address and
    // fp8 scale, which graph_key holds.
    const attn::VerifyArgs args = attention_args(0, pool, plan, call, table, seq_lens);
    attn::SelectOptions so;
    so.data_device = Device::kCUDA;
    const attn::VerifyShape shape = attn::shape_of(args, vo);
    auto d = dispatcher.select(shape, so);
    if (!d.ok()) return d.status().with_context("layer 0");
    auto backend = dispatcher.registry().get(d->backend_index);
    if (!backend.ok()) return backend.status();
    auto launch = (*backend)->replay_key(args, vo);
    if (!launch.ok()) return launch.status().with_context("layer 0");
    if (launch->empty()) return false;
    chosen.push_back({d->backend_index, shape});
    k += str(d->backend_index) + ":" + str(static_cast<int64_t>(launch->size())) + ":";
    k += *launch;
  }
  *picks = std::move(chosen);
  *key = std::move(k);
  return true;
}

Status Runtime::replay_or_capture(cudaGraphExec_t& exec, const std::function<Status()>& work,
                                  const std::function<void(const std::string&)>& failed) {
  if (exec == nullptr) {
    MLASPEC_RETURN_IF_ERROR(cuda_status(
        cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "begin capture"));
    // An exception out of `work` must not leave the stream capturing (every later pass would fail).
    struct EndCaptureOnThrow {
      cudaStream_t stream;
      bool armed = true;
      ~EndCaptureOnThrow() {
        if (!armed) return;
        cudaGraph_t g = nullptr;
        cudaStreamEndCapture(stream, &g);
        if (g != nullptr) cudaGraphDestroy(g);
        cudaGetLastError();
      }
    } guard{stream_};
    const Status st = work();
    guard.armed = false;
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    cudaError_t made = ended;
    if (st.ok() && ended == cudaSuccess) made = cudaGraphInstantiate(&exec, graph, 0);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (!st.ok() || made != cudaSuccess) {
      cudaGetLastError();  // a failed capture leaves no sticky error; clear the last one
      exec = nullptr;
      failed(st.ok() ? std::string(cudaGetErrorString(made)) : st.message());
      return work();  // captured work does not run: run it now
    }
    ++graph_stats_.captured;
  }
  ++graph_stats_.replayed;
  return cuda_status(cudaGraphLaunch(exec, stream_), "cudaGraphLaunch");
}

Status Runtime::run_whole(const Pass& p, Graphs* g, const std::function<Status()>& body) {
  return replay_or_capture(g->exec[0], body, [&](const std::string& why) {
    attention_graphs_on_ = false;
    log_warn("CUDA graphs of whole passes off for this model: capturing a " + str(p.T) +
             "-row pass with its attention calls failed (" + why +
             "); attention runs eagerly between graphs of the rest");
  });
}

Status Runtime::run_segment(int s, const Pass& p, Graphs* g) {
  if (g == nullptr) return segment(s, p);
  return replay_or_capture(
      g->exec[static_cast<size_t>(s)], [&] { return segment(s, p); },
      [&](const std::string& why) {
        graphs_on_ = false;
        clear_graphs();  // g too: nothing below touches it
        log_warn("CUDA graphs off for this model: capturing segment " + str(s) + " of a " +
                 str(p.T) + "-row pass failed (" + why + "); running eagerly");
      });
}

Status Runtime::segment(int s, const Pass& p) {
  const int64_t hidden = c_.hidden_size, T = p.T;
  const float eps = static_cast<float>(c_.rms_norm_eps);
  float* x = at<float>(x_);
  const PhaseEnd phase_end(phases_);
  // The MLP's output (delta_) while its residual add waits for the norm after it (add_rms_norm),
  // or a MoE layer's combine left to that norm (add_rms_norm_combine).
  const float* pending = nullptr;
  MoeCombineArgs combine;
  bool pending_combine = false;
  auto norm_rows = [&](const float* w) {
    if (pending_combine) {
      return add_rms_norm_combine(x, combine, T, hidden, w, eps, nullptr, 0, at<uint16_t>(hb_),
                                  hidden, stream_);
    }
    if (pending != nullptr) {
      return add_rms_norm(x, pending, T, hidden, w, eps, nullptr, 0, at<uint16_t>(hb_), hidden,
                          stream_);
    }
    return rms_norm(x, hidden, T, hidden, w, eps, nullptr, 0, at<uint16_t>(hb_), hidden, stream_);
  };
  if (s == 0) {
    MLASPEC_RETURN_IF_ERROR(embed(embed_.ptr(), p.tokens, T, hidden, x, stream_));
  } else {
    // The rest of layer s - 1: MLA's output, the MLP / MoE, the residual adds.
    const int l = s - 1;
    const DLayer& d = layers_[static_cast<size_t>(l)];
    MLASPEC_RETURN_IF_ERROR(mla_out(l, T));
    phases_.begin_if_on("norms, adds");
    MLASPEC_RETURN_IF_ERROR(add_rms_norm(x, at<float>(delta_), T, hidden, d.post_norm.ptr(), eps,
                                         at<float>(hf_), hidden, at<uint16_t>(hb_), hidden,
                                         stream_));
    // The MLP's residual add: inside the next norm (layer s's input norm, or the final norm),
    // unless no norm follows (a pass without logit rows after its last layer) or the layer's
    // hidden state is captured (it is the sum's).
    const bool norm_follows = s < c_.num_hidden_layers || p.rows > 0;
    const bool captured =
        std::find(p.capture_layers.begin(), p.capture_layers.end(), l) != p.capture_layers.end();
    const bool add_in_norm = norm_follows && !captured;
    if (d.is_moe) {
      pending_combine = add_in_norm && combine_in_norm_;
      MLASPEC_RETURN_IF_ERROR(moe(l, T, pending_combine ? &combine : nullptr));
    } else {
      phases_.begin_if_on("dense mlp");
      MLASPEC_RETURN_IF_ERROR(mlp(d.mlp, at<uint16_t>(hb_), T, at<float>(delta_)));
    }
    phases_.begin_if_on("norms, adds");
    if (add_in_norm) {
      if (!pending_combine) pending = at<float>(delta_);  // else the norm makes the combine too
    } else {
      MLASPEC_RETURN_IF_ERROR(add_inplace(x, at<float>(delta_), T * hidden, stream_));
    }
    for (size_t k = 0; k < p.capture_layers.size(); ++k) {
      if (p.capture_layers[k] != l) continue;
      MLASPEC_RETURN_IF_ERROR(
          cuda_status(cudaMemcpyAsync(at<float>(hidden_, static_cast<int64_t>(k) * T * hidden), x,
                                      static_cast<size_t>(T * hidden) * sizeof(float),
                                      cudaMemcpyDeviceToDevice, stream_),
                      "hidden state copy"));
    }
  }
  if (s < c_.num_hidden_layers) {
    // Layer s up to its attention.
    const DLayer& d = layers_[static_cast<size_t>(s)];
    phases_.begin_if_on("norms, adds");
    MLASPEC_RETURN_IF_ERROR(norm_rows(d.input_norm.ptr()));
    return mla_in(s, p);
  }
  // The final norm of every row, then the lm_head over the rows asked for, gathered.
  if (p.rows == 0) return Status::Ok();
  phases_.begin_if_on("lm_head");
  MLASPEC_RETURN_IF_ERROR(norm_rows(norm_.ptr()));
  MLASPEC_RETURN_IF_ERROR(
      gather_rows(at<uint16_t>(hb_), p.logit_idx, p.rows, hidden, at<uint16_t>(xs_), stream_));
  const DMat& head = head_.empty() ? embed_ : head_;
  MLASPEC_RETURN_IF_ERROR(linear(at<uint16_t>(xs_), p.rows, head, logits_.data(), GemmType::kF32));
  if (!p.argmax_only) return Status::Ok();
  return argmax_rows(at<float>(logits_), p.rows, c_.vocab_size, at<int32_t>(argmax_), stream_);
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
