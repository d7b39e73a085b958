// Model: a DeepSeek-V3-family checkpoint loaded for the CPU runtime, and its batched forward.
//
//   Model m = Model::load("dir").value();                      // config.json + safetensors
//   kv::KvPool pool = kv::KvPool::create(m.kv_pool_spec(pages, 64, DType::kBF16)).value();
//   ForwardRequest r{.tokens = toks, .positions = pos, .pages = pages_of_request,
//                    .logits = LogitsMode::kLast};
//   ForwardOutput out = m.forward({&r, 1}, pool).value();      // out.requests[0].logits [1, vocab]
//
// One call runs a batch of requests. Each brings its new tokens (a prefill chunk of any length, a
// decode token, or a verify block), their positions and its page table in `pool`. The call
// writes the new tokens' KV rows [kv_a_layernorm(c) | rope(k_pe)] to every layer of the pool,
// runs attention through the attention dispatcher (bottom-right causal: new token i sees
// positions [0, positions[i]]), and returns the logits asked for and the residual-stream hidden
// states of ForwardOptions::capture_layers.
//
// Contract: positions are consecutive (positions[i] = positions[0] + i) and the pool already
// holds the request's KV for positions [0, positions[0]) on the same pages; the pages cover
// positions[0] + tokens.size() tokens. Rolling back rejected verify rows is the page table's
// business (kv::PageTables::commit): rows past a request's committed length are overwritten by
// its next forward.
//
// CUDA runtime (LoadOptions::device = kCUDA): the same contract on a CUDA pool; logits and hidden
// states still come back as host vectors. The requests of a batch that fit one chunk run fused in
// shared passes (every weight read once per pass; a longer prompt runs alone, in chunks); in
// deterministic mode a request's results are bitwise the same alone or in any batch, in default
// mode within the cuBLAS GEMMs' rounding. Bounds against the CPU runtime: docs/model.md.
//
// CPU runtime: f32 math, GEMMs through CBLAS; the attention op's boundary rounds q, KV rows and
// its output to bf16 (docs/model.md). A prompt longer than max_chunk_tokens runs in chunks. A
// request's rows are computed apart from every other request's (its own GEMMs, expert groups and
// attention call), so its logits, hidden states and KV rows are bitwise the same alone or in any
// batch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "mlaspec/attention/registry.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/config.h"
#include "mlaspec/model/recurrent_state.h"
#include "mlaspec/model/weights.h"

namespace mlaspec::model {

// Which of a request's new tokens get logits.
enum class LogitsMode : uint8_t {
  kLast,  // the last one (prefill, decode)
  kAll,   // every one (verify: one row per draft position plus the bonus row)
  kNone,  // none (a prefill chunk that is not the prompt's last)
};

struct ForwardRequest {
  std::span<const int32_t> tokens;     // new tokens, >= 1
  std::span<const int32_t> positions;  // their absolute positions, consecutive
  std::span<const int32_t> pages;      // the request's page table in token order
  LogitsMode logits = LogitsMode::kLast;
};

struct ForwardOptions {
  // Residual-stream outputs to return: layer l is the hidden state after decoder layer l
  // (transformers' output_hidden_states[l + 1]), before the final norm. Each in [0, layers).
  std::vector<int> capture_layers;
  // Longest chunk of one request run through the layers at once; 0 = default_chunk_tokens(device).
  int max_chunk_tokens = 0;
  // Validation mode: attention in f32 over the call's own tokens instead of the attention op, so
  // nothing is rounded to bf16 (the op's q / KV / output boundary) and the forward can be held to
  // a pure-f32 reference at ~1e-5. Each request must bring its whole sequence (positions[0] = 0);
  // it runs as one chunk. The KV rows are still written to the pool.
  bool f32_attention = false;
  // Row-invariant GEMMs (src/model/row_invariant_gemm.h): a token's logits, hidden states and KV
  // rows are bitwise the same whether its call carries 1 new token or many (a decode step and a
  // verify block), which lossless greedy speculative decoding needs. Slower than BLAS GEMMs on
  // long prefill chunks (docs/spec.md, "Deterministic mode").
  bool deterministic = false;
  // kCUDA: passes of at most 128 rows (decode and verify steps) replay the work between attention
  // calls from CUDA graphs, captured on a pass shape's first use (docs/model.md, "CUDA graphs");
  // bitwise the same results as running it eagerly. false: eager. The CPU runtime ignores it.
  // MLASPEC_CUDA_GRAPHS=0 in the environment turns graphs off for the whole process.
  bool cuda_graphs = true;
  // Greedy token choice where the forward runs: each request's logit rows come back as
  // RequestOutput::argmax (model::argmax of the row: the lowest id of the largest logit, or -1 for
  // a row model::check_logits refuses: a NaN or +inf, or no finite value) and `logits` stays
  // empty. On the GPU a verify step then downloads B x q_len ids instead of B x q_len x vocab
  // floats; the CPU runtime computes the same from its logits.
  bool argmax_only = false;
  // The attention op in fp8 math (attn::VerifyOptions::fp8_math: Q and P rounded to e4m3, its
  // error bound in attention/reference.h): an opt-in accuracy trade, never the default. Needs an
  // fp8_e4m3 KV pool, and a backend that offers the mode (the CPU reference and the CUDA backends;
  // a backend without it refuses the call by name).
  bool fp8_math_attention = false;
};

// What the CUDA runtime's graphs did since the model was loaded (Model::cuda_graph_stats).
struct CudaGraphStats {
  int64_t captured = 0;  // graphs captured: a whole pass, or one segment between attention calls
  int64_t replayed = 0;  // graph launches
  int64_t eager_passes = 0;  // passes run without graphs (long, profiled, or graphs off)
  int64_t graph_passes = 0;  // passes run from graphs
  // Of graph_passes, those whose attention calls ran inside the graph too (one graph per pass,
  // keyed by each call's backend and launch); the others replayed the segments between eager
  // attention calls.
  int64_t attention_graph_passes = 0;
};

// Prefill chunk length, per device; at most the CPU reference attention's q_len limit (1024).
// The CPU runtime's 256 keeps the per-chunk activations small. The CUDA runtime's 1024 fills the
// GPU's GEMMs: an 8192-token DeepSeek-V2-Lite prompt takes 742 ms in 1024-token chunks against
// 1654 ms in 256-token ones (H100, docs/perf/knowledge.md "Prefill chunk length").
inline constexpr int kDefaultChunkTokens = 256;
inline constexpr int kDefaultCudaChunkTokens = 1024;
constexpr int default_chunk_tokens(Device device) {
  return device == Device::kCUDA ? kDefaultCudaChunkTokens : kDefaultChunkTokens;
}

struct RequestOutput {
  int logit_rows = 0;
  std::vector<float> logits;               // [logit_rows, vocab] (empty with argmax_only)
  std::vector<int32_t> argmax;             // [logit_rows] with ForwardOptions::argmax_only
  std::vector<std::vector<float>> hidden;  // per capture layer: [tokens, hidden]
};

struct ForwardOutput {
  std::vector<RequestOutput> requests;  // in batch order
};

struct LoadOptions {
  std::string attention_policy = "auto";  // "auto" or a backend name (attention/registry.h)
  // Where the forward runs. kCUDA (src/model/cuda/, docs/model.md "CUDA runtime"): weights are
  // uploaded as bf16 (fp8 checkpoints dequantized to bf16), activations are bf16 at every GEMM
  // input with f32 accumulation and an f32 residual stream, and the pool must be a CUDA pool.
  // A build without CUDA refuses kCUDA with "built without CUDA".
  Device device = Device::kCPU;
  // The up-front memory budget (kCUDA; model/footprint.h). When mem_fraction > 0 the load sizes
  // the device weights + the KV pools the caller will create (target_kv_bytes, draft_kv_bytes:
  // KvPool bytes) + the runtime's workspace for chunks of kDefaultCudaChunkTokens, and refuses,
  // before reading any weight, a model whose total exceeds mem_fraction of the device's free memory
  // (resource_exhausted naming the bytes needed, the bytes available and the parts).
  double mem_fraction = 0.0;
  int64_t target_kv_bytes = 0;
  int64_t draft_kv_bytes = 0;
};

class Model {
 public:
  // Reads dir/config.json and the checkpoint's safetensors, converting weights to f32.
  static Result<Model> load(const std::filesystem::path& dir, const LoadOptions& options = {});

  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const ModelConfig& config() const;
  // The host weights. On a model loaded with device kCUDA, `layers` is empty: the layer weights
  // live on the device only (the embedding, final norm, head and the report stay).
  const ModelWeights& weights() const;
  attn::Dispatcher& dispatcher();
  // The model's recurrent-state layers (model/recurrent_state.h), or null when it has none. Every
  // family this runtime loads (DeepSeek-V2/V3, Kimi-K2) is pure MLA: always null, so the
  // speculative step never commits recurrent state for it.
  RecurrentState* recurrent_state() { return nullptr; }

  // Where forward() runs (LoadOptions::device).
  Device device() const;

  // A pool spec for this model: MLA rows, one layer per decoder layer, on the model's device
  // (LoadOptions::device). fp8 pools take
  // one kv_scale per layer (value = code * scale), default 1.
  kv::KvPoolSpec kv_pool_spec(int num_pages, int page_size, DType dtype,
                              std::vector<float> layer_scales = {}) const;

  // Where the CUDA runtime's forward spends its time, per phase (projections, KV write, attention,
  // MoE router / shared / routed experts / combine, norms, lm_head): CUDA events around each
  // phase, read after each forward's final sync, so profiling slows the forward; off by default
  // (on from the start with MLASPEC_PHASES=1, which also prints the totals to stderr at exit).
  // phase_report: a table of the totals since the last reset. The CPU runtime has no phases: an
  // empty report.
  void set_phase_profiling(bool on);
  std::string phase_report(bool reset = true);
  // The CUDA runtime's graph counters (all zero on the CPU runtime).
  CudaGraphStats cuda_graph_stats() const;

  // Runs the batch. Validates everything first (token ids, positions, pages, pool shape, capture
  // layers, chunk size); a validation error writes nothing to the pool. An error of the attention
  // op itself (a backend refusing a shape) returns after the rows of that layer were written.
  Result<ForwardOutput> forward(std::span<const ForwardRequest> batch, kv::KvPool& pool,
                                const ForwardOptions& options = {});

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlaspec::model
