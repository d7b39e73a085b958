// The model: loading, validation of a batch, and the forward (decoder layers over each request's
// chunks).
#include "mlaspec/model/model.h"

#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/runtime.h"
#include "layers.h"
#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/core/parallel.h"
#include "mlaspec/model/footprint.h"
#include "mlaspec/model/sampling.h"
#include "row_invariant_gemm.h"

namespace mlaspec::model {

struct Model::Impl {
  ModelConfig config;
  ModelWeights weights;
  cpu::Rope rope;
  attn::DispatchSetup dispatch;
  Device device = Device::kCPU;
  std::unique_ptr<gpu::CudaRuntime> cuda;  // device kCUDA: the CUDA runtime (src/model/cuda/)

  Impl(ModelConfig c, ModelWeights w, attn::DispatchSetup d)
      : config(std::move(c)),
        weights(std::move(w)),
        rope(config.rope, config.qk_rope_head_dim),
        dispatch(std::move(d)) {}

  Status validate(std::span<const ForwardRequest> batch, const kv::KvPool& pool,
                  const ForwardOptions& options) const;
  // A piece of a request: its tokens [begin, begin + T).
  struct PieceRef {
    size_t request;
    int64_t begin, T;
  };
  // One pass of the decoder layers over the pieces' rows stacked (deterministic mode may stack
  // several requests: every layer but attention is then one call over all rows, and row-invariant,
  // so each request's results are its own alone; attention runs per piece).
  Status run_pass(std::span<const ForwardRequest> batch, std::span<const PieceRef> pieces,
                  kv::KvPool& pool, const ForwardOptions& options, std::span<RequestOutput> outs);
};

namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

// OpenBLAS (the default-mode GEMMs, prefill chunks) starts one thread per core and its idle
// workers spin after each call; next to parallel_for's pool that oversubscribes the cores. Unless
// the user set OpenBLAS's own thread count, each CPU model load gives it parallel_for's
// (num_threads(): MLASPEC_THREADS or set_num_threads).
void match_blas_threads() {
#if defined(OPENBLAS_VERSION)
  if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr && std::getenv("OMP_NUM_THREADS") == nullptr)
    openblas_set_num_threads(num_threads());
#endif
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

const ModelConfig& Model::config() const {
  return impl_->config;
}
const ModelWeights& Model::weights() const {
  return impl_->weights;
}
attn::Dispatcher& Model::dispatcher() {
  return *impl_->dispatch.dispatcher;
}
Device Model::device() const {
  return impl_->device;
}

Result<Model> Model::load(const std::filesystem::path& dir, const LoadOptions& options) {
  Result<ModelConfig> config = load_model_config(dir);
  if (!config.ok()) return config.status();
  if (options.device == Device::kCUDA && options.mem_fraction > 0.0) {
    // The budget first, before any weight is read (bf16 on the device: 2 bytes per weight).
    const MemoryBudget budget = size_memory(*config, 2, options.target_kv_bytes,
                                            options.draft_kv_bytes, kDefaultCudaChunkTokens);
    Result<int64_t> available = gpu::CudaRuntime::available_bytes();
    if (!available.ok()) return available.status();
    MLASPEC_RETURN_IF_ERROR(check_memory(budget, *available, options.mem_fraction)
                                .with_context("loading " + dir.string()));
  }
  Result<Checkpoint> ckpt = Checkpoint::open(dir);
  if (!ckpt.ok()) return ckpt.status();
  // On CUDA the projections stay in the checkpoint until the runtime converts them to bf16 on
  // their way to the device (Matrix::source): no f32 host copy of them is made.
  // MLASPEC_CUDA_LOAD=f32 loads them into f32 first as before (the same bits; an A/B of the load).
  bool defer = options.device == Device::kCUDA;
  if (const char* env = std::getenv("MLASPEC_CUDA_LOAD"); env != nullptr && defer) {
    const std::string v = env;
    if (v != "f32" && v != "deferred") {
      return invalid_argument("MLASPEC_CUDA_LOAD=" + v +
                              ": expected f32 (an f32 host copy first) or deferred (the default)");
    }
    defer = v == "deferred";
  }
  // The CUDA runtime's other A/B switches (docs/model.md "Switches"), read again at its init:
  // a misspelt value is refused here by name rather than taken as the default.
  if (options.device == Device::kCUDA) {
    struct Switch {
      const char* name;
      std::vector<std::string> values;
      const char* expected;
    };
    const Switch switches[] = {
        {"MLASPEC_CUDA_GRAPHS",
         {"0", "1", "segments"},
         "0 (no graphs), 1 (whole passes, the default) or segments (attention outside the "
         "graphs)"},
        {"MLASPEC_CUDA_SHARED",
         {"overlap", "serial"},
         "overlap (the shared experts on a second stream beside the routed ones, the default) or "
         "serial (one stream)"},
        {"MLASPEC_ATTENTION_SPLITS",
         {"adaptive", "fixed"},
         "adaptive (default mode's attention splits the KV for the GPU, the default) or fixed "
         "(deterministic mode's 1024-token chunks in default mode too)"},
        {"MLASPEC_CUDA_MLA_IN",
         {"fused", "separate"},
         "fused (the KV rows' latent norm and RoPE in one launch, the default) or separate "
         "(two launches)"},
        {"MLASPEC_CUDA_COMBINE",
         {"norm", "separate"},
         "norm (a MoE layer's combine inside the RMSNorm after it, the default) or separate "
         "(its own launch)"},
        {"MLASPEC_CUDA_ROUTE",
         {"fused", "separate"},
         "fused (routing and its plan in one launch for passes of up to 16 tokens, the default) "
         "or separate (two launches)"},
        {"MLASPEC_CUDA_SWIGLU",
         {"fused", "separate"},
         "fused (the experts' gather, gate_up GEMV and SwiGLU in one launch, the default) or "
         "separate (three launches)"},
        {"MLASPEC_CUDA_PDL",
         {"on", "off"},
         "on (each kernel of the CUDA runtime starts while the one before it ends, the "
         "default) or off (plain stream order)"},
        {"MLASPEC_CUDA_EXPERTS",
         {"grouped", "per_expert"},
         "grouped (the default) or per_expert (a GEMM launch per expert in passes over 128 "
         "tokens)"},
    };
    for (const Switch& sw : switches) {
      const char* env = std::getenv(sw.name);
      if (env == nullptr) continue;
      if (std::find(sw.values.begin(), sw.values.end(), env) == sw.values.end()) {
        return invalid_argument(std::string(sw.name) + "=" + env + ": expected " + sw.expected);
      }
    }
  }
  Result<ModelWeights> weights = load_weights(*config, *ckpt, {.defer_projections = defer});
  if (!weights.ok()) return weights.status();
  attn::DispatchSetupOptions dopts;
  dopts.policy = options.attention_policy;
  dopts.log_warnings = false;
  Result<attn::DispatchSetup> dispatch = attn::make_dispatch(dopts);
  if (!dispatch.ok()) return dispatch.status();
  // The CPU runtime's deterministic GEMMs read column panels packed here, once.
  if (options.device != Device::kCUDA) {
    pack_for_cpu(*weights);
    match_blas_threads();
  }
  auto impl = std::make_unique<Impl>(std::move(*config), std::move(*weights), std::move(*dispatch));
  impl->device = options.device;
  if (options.device == Device::kCUDA) {
    // The CUDA attention backends' head range (one caps for both).
    Result<int> fold = impl->dispatch.registry->index_of("cuda_fold");
    if (fold.ok()) {
      const attn::BackendCaps& caps = impl->dispatch.registry->caps(*fold);
      const int H = impl->config.num_attention_heads;
      if (H < caps.min_heads || H > caps.max_heads) {
        return unsupported("model device cuda: num_attention_heads " + str(H) + " is outside [" +
                           str(caps.min_heads) + ", " + str(caps.max_heads) +
                           "], the heads the CUDA attention backends serve");
      }
    }
    Result<std::unique_ptr<gpu::CudaRuntime>> rt =
        gpu::CudaRuntime::create(impl->config, impl->weights, impl->rope);
    if (!rt.ok()) return rt.status().with_context("loading " + dir.string());
    impl->cuda = std::move(*rt);
    // The layers now live on the device (CudaRuntime::create uploaded them and keeps no reference
    // to the host copies): their host weights (the deferred projections' references into the
    // checkpoint, closed when this returns, and the small f32 parts) go. The embedding, final
    // norm and head stay (a DFlash drafter shares them, and weights() still reports the
    // checkpoint).
    std::vector<LayerWeights>().swap(impl->weights.layers);
  }
  return Model(std::move(impl));
}

kv::KvPoolSpec Model::kv_pool_spec(int num_pages, int page_size, DType dtype,
                                   std::vector<float> layer_scales) const {
  kv::KvPoolSpec spec;
  spec.name = "target";
  spec.layout = kv::KvLayout::mla();
  spec.num_layers = impl_->config.num_hidden_layers;
  spec.num_pages = num_pages;
  spec.page_size = page_size;
  spec.dtype = dtype;
  spec.device = impl_->device;
  spec.layer_scales = std::move(layer_scales);
  return spec;
}

Status Model::Impl::validate(std::span<const ForwardRequest> batch, const kv::KvPool& pool,
                             const ForwardOptions& options) const {
  const ModelConfig& c = config;
  if (pool.spec().layout.kind != kv::KvLayout::Kind::kMLA) {
    return invalid_argument("KV pool " + pool.name() + " has layout " +
                            pool.spec().layout.to_string() + "; the model needs mla(576)");
  }
  if (pool.num_layers() != c.num_hidden_layers) {
    return invalid_argument("KV pool " + pool.name() + " has " + str(pool.num_layers()) +
                            " layers; the model has " + str(c.num_hidden_layers));
  }
  if (pool.device() != device) {
    return unsupported("KV pool " + pool.name() + " is on " +
                       std::string(device_name(pool.device())) + "; the " +
                       std::string(device_name(device)) + " runtime needs a " +
                       std::string(device_name(device)) + " pool (Model::kv_pool_spec)");
  }
  if (options.fp8_math_attention && pool.dtype() != DType::kFP8E4M3) {
    return invalid_argument("fp8_math_attention needs an fp8_e4m3 KV pool; pool " + pool.name() +
                            " is " + std::string(dtype_name(pool.dtype())));
  }
  if (device == Device::kCUDA && options.f32_attention) {
    return unsupported(
        "f32_attention is a CPU runtime validation mode; the cuda runtime runs the attention op");
  }
  for (int l : options.capture_layers) {
    if (l < 0 || l >= c.num_hidden_layers) {
      return out_of_range("capture layer " + str(l) + " is out of range [0, " +
                          str(c.num_hidden_layers) + ")");
    }
  }
  if (options.max_chunk_tokens < 0 ||
      options.max_chunk_tokens > attn::kCpuReferenceCaps.max_q_len) {
    return invalid_argument("max_chunk_tokens " + str(options.max_chunk_tokens) +
                            " is out of range [0, " + str(attn::kCpuReferenceCaps.max_q_len) +
                            "] (the attention op's q_len limit)");
  }
  const int64_t page_size = pool.page_size();
  for (size_t b = 0; b < batch.size(); ++b) {
    const ForwardRequest& r = batch[b];
    const std::string req = "request " + str(static_cast<int64_t>(b)) + ": ";
    if (r.tokens.empty()) return invalid_argument(req + "no new tokens");
    if (r.positions.size() != r.tokens.size()) {
      return invalid_argument(req + str(static_cast<int64_t>(r.positions.size())) +
                              " positions for " + str(static_cast<int64_t>(r.tokens.size())) +
                              " tokens");
    }
    for (size_t i = 0; i < r.tokens.size(); ++i) {
      if (r.tokens[i] < 0 || r.tokens[i] >= c.vocab_size) {
        return out_of_range(req + "token " + str(r.tokens[i]) + " at index " +
                            str(static_cast<int64_t>(i)) + " is out of the vocabulary [0, " +
                            str(c.vocab_size) + ")");
      }
      if (r.positions[i] != r.positions[0] + static_cast<int64_t>(i)) {
        return invalid_argument(req + "positions[" + str(static_cast<int64_t>(i)) +
                                "] = " + str(r.positions[i]) +
                                " does not follow positions[0] = " + str(r.positions[0]) +
                                " (new tokens take consecutive positions after the cached ones)");
      }
    }
    if (options.f32_attention && r.positions[0] != 0) {
      return invalid_argument(req +
                              "f32_attention needs the whole sequence in one call "
                              "(positions[0] = 0), got positions[0] = " +
                              str(r.positions[0]));
    }
    if (r.positions[0] < 0) {
      return out_of_range(req + "positions[0] = " + str(r.positions[0]) + " is negative");
    }
    const int64_t seq_len = int64_t{r.positions[0]} + static_cast<int64_t>(r.tokens.size());
    const int64_t pages = (seq_len + page_size - 1) / page_size;
    if (pages > static_cast<int64_t>(r.pages.size())) {
      return out_of_range(req + str(seq_len) + " tokens need " + str(pages) + " pages of " +
                          str(page_size) + ", the page table has " +
                          str(static_cast<int64_t>(r.pages.size())));
    }
    for (int64_t j = 0; j < pages; ++j) {
      const int32_t page = r.pages[static_cast<size_t>(j)];
      if (page < 0 || page >= pool.num_pages()) {
        return out_of_range(req + "pages[" + str(j) + "] = " + str(page) + " is out of range [0, " +
                            str(pool.num_pages()) + ") of KV pool " + pool.name());
      }
    }
  }
  return Status::Ok();
}

Status Model::Impl::run_pass(std::span<const ForwardRequest> batch, std::span<const PieceRef> refs,
                             kv::KvPool& pool, const ForwardOptions& options,
                             std::span<RequestOutput> outs) {
  const ModelConfig& c = config;
  const int64_t hidden = c.hidden_size, vocab = c.vocab_size;
  const int64_t page_size = pool.page_size();
  int64_t T = 0;
  for (const PieceRef& p : refs) T += p.T;

  // Rows: each piece's embeddings, positions and pool slots, stacked in piece order.
  std::vector<float> x(static_cast<size_t>(T * hidden)), h(x.size()), delta(x.size());
  std::vector<int32_t> positions(static_cast<size_t>(T)), slots(static_cast<size_t>(T));
  std::vector<int32_t> seq_lens(refs.size());
  std::vector<cpu::ChunkPiece> pieces(refs.size());
  int64_t row = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    const ForwardRequest& r = batch[refs[i].request];
    const int64_t first = r.positions[static_cast<size_t>(refs[i].begin)];
    for (int64_t t = 0; t < refs[i].T; ++t) {
      const float* e = weights.embed_tokens.row(r.tokens[static_cast<size_t>(refs[i].begin + t)]);
      std::copy(e, e + hidden, x.begin() + (row + t) * hidden);
      const int64_t pos = first + t;
      positions[static_cast<size_t>(row + t)] = static_cast<int32_t>(pos);
      slots[static_cast<size_t>(row + t)] = static_cast<int32_t>(
          r.pages[static_cast<size_t>(pos / page_size)] * page_size + pos % page_size);
    }
    seq_lens[i] = static_cast<int32_t>(first + refs[i].T);
    const int64_t used_pages = (first + refs[i].T + page_size - 1) / page_size;
    cpu::ChunkPiece& piece = pieces[i];
    piece.request = static_cast<int64_t>(refs[i].request);
    piece.row0 = row;
    piece.T = refs[i].T;
    piece.first_position = first;
    piece.block_table =
        TensorView(const_cast<int32_t*>(r.pages.data()), DType::kI32, {1, used_pages});
    piece.seq_lens = TensorView(&seq_lens[i], DType::kI32, {1});
    row += refs[i].T;
  }
  cpu::Chunk chunk;
  chunk.T = T;
  chunk.positions = positions;
  chunk.slots = slots;
  chunk.pieces = pieces;
  chunk.f32_attention = options.f32_attention;
  chunk.fp8_math = options.fp8_math_attention;

  for (int l = 0; l < c.num_hidden_layers; ++l) {
    const LayerWeights& lw = weights.layers[static_cast<size_t>(l)];
    cpu::rms_norm(x.data(), T, hidden, lw.input_layernorm, c.rms_norm_eps, h.data());
    MLASPEC_RETURN_IF_ERROR(cpu::mla_forward(c, lw.self_attn, rope, l, h.data(), chunk, pool,
                                             *dispatch.dispatcher, delta.data()));
    for (size_t i = 0; i < x.size(); ++i) x[i] += delta[i];
    cpu::rms_norm(x.data(), T, hidden, lw.post_attention_layernorm, c.rms_norm_eps, h.data());
    if (lw.is_moe) {
      cpu::moe_forward(c, lw.moe, h.data(), T, delta.data());
    } else {
      cpu::mlp_forward(lw.mlp, h.data(), T, delta.data());
    }
    for (size_t i = 0; i < x.size(); ++i) x[i] += delta[i];
    for (size_t k = 0; k < options.capture_layers.size(); ++k) {
      if (options.capture_layers[k] != l) continue;
      for (const cpu::ChunkPiece& p : pieces) {
        const PieceRef& ref = refs[static_cast<size_t>(&p - pieces.data())];
        std::copy(x.begin() + p.row0 * hidden, x.begin() + (p.row0 + p.T) * hidden,
                  outs[ref.request].hidden[k].begin() + ref.begin * hidden);
      }
    }
  }

  // Final norm and lm_head for the rows asked for, gathered into one call.
  std::vector<float> head_in;
  std::vector<std::pair<float*, int64_t>> dsts;  // per piece: where its rows go, how many
  for (size_t i = 0; i < refs.size(); ++i) {
    const ForwardRequest& r = batch[refs[i].request];
    const int64_t n = static_cast<int64_t>(r.tokens.size());
    const auto [row0, rows, dst] = logit_rows(r.logits, refs[i].begin, refs[i].T, n);
    if (rows == 0) continue;
    const float* src = x.data() + (pieces[i].row0 + row0) * hidden;
    head_in.insert(head_in.end(), src, src + rows * hidden);
    dsts.emplace_back(outs[refs[i].request].logits.data() + dst * vocab, rows);
  }
  if (!dsts.empty()) {
    const int64_t rows = static_cast<int64_t>(head_in.size()) / hidden;
    std::vector<float> normed(head_in.size()), logits(static_cast<size_t>(rows * vocab));
    cpu::rms_norm(head_in.data(), rows, hidden, weights.norm, c.rms_norm_eps, normed.data());
    cpu::linear(normed.data(), rows, weights.head(), logits.data());
    const float* src = logits.data();
    for (const auto& [dst, n] : dsts) {
      std::copy(src, src + n * vocab, dst);
      src += n * vocab;
    }
  }
  return Status::Ok();
}

void Model::set_phase_profiling(bool on) {
  if (impl_->cuda != nullptr) impl_->cuda->set_phase_profiling(on);
}

CudaGraphStats Model::cuda_graph_stats() const {
  return impl_->cuda != nullptr ? impl_->cuda->graph_stats() : CudaGraphStats{};
}

std::string Model::phase_report(bool reset) {
  return impl_->cuda != nullptr ? impl_->cuda->phase_report(reset) : std::string();
}

Result<ForwardOutput> Model::forward(std::span<const ForwardRequest> batch, kv::KvPool& pool,
                                     const ForwardOptions& options) {
  MLASPEC_RETURN_IF_ERROR(impl_->validate(batch, pool, options));
  const cpu::RowInvariantScope row_invariant(options.deterministic);
  ForwardOutput out;
  out.requests.resize(batch.size());
  if (impl_->cuda != nullptr) {
    MLASPEC_RETURN_IF_ERROR(
        impl_->cuda->run_batch(batch, pool, options, *impl_->dispatch.dispatcher, out.requests));
    return out;
  }
  const ModelConfig& c = impl_->config;
  for (size_t b = 0; b < batch.size(); ++b) {
    size_output(batch[b].logits, static_cast<int64_t>(batch[b].tokens.size()),
                options.capture_layers.size(), c.hidden_size, c.vocab_size, &out.requests[b]);
  }
  // Each request in chunks of at most max_chunk tokens, in order.
  const int64_t max_chunk =
      options.max_chunk_tokens > 0 ? options.max_chunk_tokens : kDefaultChunkTokens;  // CPU
  std::vector<Impl::PieceRef> pieces;
  for (size_t b = 0; b < batch.size(); ++b) {
    const int64_t n = static_cast<int64_t>(batch[b].tokens.size());
    const int64_t chunk = options.f32_attention ? n : max_chunk;
    for (int64_t begin = 0; begin < n; begin += chunk)
      pieces.push_back({b, begin, std::min(chunk, n - begin)});
  }
  // Deterministic mode stacks consecutive pieces into passes of up to max_chunk rows (a decode
  // or verify step of a whole batch is one pass): its GEMMs, norms and MoE are row-invariant, so a
  // request's results are bitwise the same as alone. Otherwise (BLAS GEMMs pick their summation
  // order by shape), and for f32 validation, every piece is its own pass.
  const bool stack = options.deterministic && !options.f32_attention;
  for (size_t i = 0; i < pieces.size();) {
    size_t j = i + 1;
    int64_t rows = pieces[i].T;
    while (stack && j < pieces.size() && rows + pieces[j].T <= max_chunk) rows += pieces[j++].T;
    const std::span<const Impl::PieceRef> pass(pieces.data() + i, j - i);
    Status st = impl_->run_pass(batch, pass, pool, options, out.requests);
    if (j == i + 1) st = st.with_context("request " + std::to_string(pieces[i].request));
    MLASPEC_RETURN_IF_ERROR(st);
    i = j;
  }
  if (options.argmax_only) {
    for (RequestOutput& r : out.requests) {
      r.argmax = argmax_rows(r.logits, c.vocab_size);
      r.logits = {};
    }
  }
  return out;
}

}  // namespace mlaspec::model
