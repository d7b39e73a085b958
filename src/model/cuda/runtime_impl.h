// The CUDA runtime's internals (src/model/cuda/): device weights, the Runtime class and the
// helpers its files share. runtime.cc: the decoder loop and the GEMM entry; weights.cc: upload and
// scratch; mla.cc, moe.cc: the layers (as the CPU runtime's mla.cc / moe.cc).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "../gpu_plan.h"
#include "kernels.h"
#include "runtime.h"

namespace mlaspec::model::gpu {

// transformers builds q_a_layernorm and kv_a_layernorm with the RMSNorm default eps.
inline constexpr float kLatentNormEps = 1e-6f;
// The CUDA verify kernels' q_len limit (attention/cuda/traits.h CommonTraits::kMaxQLen).
inline constexpr int64_t kAttentionBlock = 32;
// MoE layers of calls of at most this many tokens (decode steps, verify blocks up to batch 16 x
// q_len 8) run their routed experts through the grouped row-invariant GEMM (kernels.h), with no
// host round trip (so CUDA graphs can hold them); longer chunks launch cuBLAS GEMMs per touched
// expert after copying the experts' row counts to the host. Deterministic mode always takes the
// grouped path (bitwise the per-expert row-invariant GEMMs). MLASPEC_GROUPED_MAX_TOKENS=N (N in
// [kCudaGraphMaxTokens, 1024]) sets it for the process: an A/B of the grouped path on longer
// passes (knowledge.md, "The grouped path beyond 128 tokens").
inline constexpr int64_t kGroupedMoeMaxTokens = 128;
// Default mode: grouped passes of fewer tokens than this take the grouped GEMV (kernels.h), not
// tensor cores. Measured on an H100 (CudaModelKernels.GroupedGemmTimings, DeepSeek-V2-Lite's
// gate_up, uniform routing): the GEMV moves the touched weights at 1.7-2.4 TB/s up to 16 tokens
// and 1.8 at 32 (tensor cores: 1.0-1.6; the row-invariant kernel 1.2-1.9); from 64 tokens the
// tensor cores lead (1.66 TB/s against 1.15). The crossover interpolates to ~38 tokens.
// MLASPEC_GROUPED_TC_MIN_TOKENS=N sets it for the process (A/B timing; 0: always tensor cores).
inline constexpr int64_t kGroupedTcMinTokens = 40;

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
// Whether the environment variable `name` is set to `value`: the A/B switches (docs/model.md
// "Switches"; model.cc refuses values outside their lists before a runtime is made) are each on
// unless set to their one other value.
bool env_is(const char* name, const char* value);

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
// Waits for the weight copies in flight and frees the pinned staging buffers (weights.cc).
Status release_upload_staging();
// Releases the staging on every exit of a scope that uploads weights (an init that fails halfway
// too); the success path calls release_upload_staging() itself to see its status.
struct UploadStagingScope {
  UploadStagingScope() = default;
  UploadStagingScope(const UploadStagingScope&) = delete;
  UploadStagingScope& operator=(const UploadStagingScope&) = delete;
  ~UploadStagingScope() { (void)release_upload_staging(); }
};

// Where a forward's time goes, per phase (MLASPEC_PHASES=1 in the environment; off, it costs a
// branch per phase): CUDA events around each phase give its GPU time (which includes any gap the
// GPU spent waiting for the host to launch it), a host clock its launch time; totals are printed
// to stderr when the runtime is destroyed. Events are read after the forward's final sync.
class PhaseTimer {
 public:
  PhaseTimer();
  ~PhaseTimer();
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  bool on() const { return on_; }
  void set_on(bool on) { on_ = on; }
  void set_stream(cudaStream_t s) { stream_ = s; }
  void reset() { totals_.clear(); }
  // Closes the open phase and opens `name` (phases do not nest). begin_if_on: a no-op when off.
  void begin(const char* name);
  void begin_if_on(const char* name) {
    if (on_) begin(name);
  }
  void end();
  // After a device sync: adds the recorded phases' times to the totals.
  void resolve();
  // One line per phase: GPU ms, host ms, calls, share of the GPU total.
  std::string report() const;

 private:
  struct Mark {
    const char* name;
    cudaEvent_t a, b;
    double host_ms;
  };
  struct Total {
    double gpu_ms = 0, host_ms = 0;
    int64_t calls = 0;
  };
  cudaEvent_t event();
  bool on_ = false;
  cudaStream_t stream_ = nullptr;  // where the events are recorded
  std::vector<Mark> pending_;
  std::vector<cudaEvent_t> free_;
  const char* open_ = nullptr;
  cudaEvent_t open_event_ = nullptr;
  double open_host_ = 0;
  std::vector<std::pair<std::string, Total>> totals_;  // in first-seen order
};

// Closes the open phase (if any) when the scope ends.
class PhaseEnd {
 public:
  explicit PhaseEnd(PhaseTimer& t) : t_(t) {}
  ~PhaseEnd() {
    if (t_.on()) t_.end();
  }
  PhaseEnd(const PhaseEnd&) = delete;
  PhaseEnd& operator=(const PhaseEnd&) = delete;

 private:
  PhaseTimer& t_;
};

// Page-locked host memory that grows as needed (the forward's uploads and downloads stage through
// it: one copy each way per pass).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  Status reserve(size_t bytes);
  void reset();  // frees the buffer
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// Passes of at most this many rows replay their non-attention work from CUDA graphs (runtime.cc,
// "CUDA graphs"); longer ones (prefill chunks) run eagerly.
inline constexpr int64_t kCudaGraphMaxTokens = 128;

class Runtime final : public CudaRuntime {
 public:
  Runtime(const ModelConfig& c, const ModelWeights& w) : c_(c), host_(w) {}
  ~Runtime() override;

  Status init(const cpu::Rope& rope);
  Status run_batch(std::span<const ForwardRequest> batch, kv::KvPool& pool,
                   const ForwardOptions& options, attn::Dispatcher& dispatcher,
                   std::span<RequestOutput> out) override;
  void set_phase_profiling(bool on) override { phases_.set_on(on); }
  std::string phase_report(bool reset) override {
    std::string r = phases_.report();
    if (reset) phases_.reset();
    return r;
  }
  GraphStats graph_stats() const override { return graph_stats_; }

 private:
  // T new tokens of request `request`, from its token `begin`: one part of a pass.
  struct Piece {
    size_t request = 0;
    int64_t begin = 0, T = 0;
  };
  // What one pass's segments read besides the weights and scratch: its shape, the device copies
  // of its tokens, positions, KV slots and logit rows (offsets into ints_ that depend on T and
  // rows only), the pool and the captured layers.
  struct Pass {
    int64_t T = 0, rows = 0;
    const int32_t *tokens = nullptr, *positions = nullptr, *slots = nullptr, *logit_idx = nullptr;
    kv::KvPool* pool = nullptr;
    std::span<const int> capture_layers;
    bool argmax_only = false;  // ForwardOptions::argmax_only: argmax_ gets each logit row's id
  };
  // The graphs of one pass key (graph_key()), made on first use: L + 1 segment executables, or
  // one of the whole pass with its attention calls (its key names each call's backend and
  // launch).
  struct Graphs {
    std::vector<cudaGraphExec_t> exec;
    uint64_t last_use = 0;  // graph_uses_ at the last replay (the cache drops the oldest)
    ~Graphs();
  };
  // One attention call's backend, as the dispatcher picked it, and its shape (for the counters).
  struct AttentionPick {
    int backend = -1;
    attn::VerifyShape shape;
  };
  // Attention inside the pass's graph: the backend the dispatcher picks for each call of the plan
  // (`picks`, in plan order) and the calls' replay keys appended to `key`. False (picks and key
  // untouched) when some call cannot be replayed from a graph now.
  Result<bool> attention_replay(kv::KvPool& pool, attn::Dispatcher& dispatcher,
                                const AttentionBlockPlan& plan, const int32_t* table,
                                const int32_t* seq_lens, std::vector<AttentionPick>* picks,
                                std::string* key);
  // The arguments of attention call `call` of the plan at `layer`.
  attn::VerifyArgs attention_args(int layer, kv::KvPool& pool, const AttentionBlockPlan& plan,
                                  const AttentionBlockCall& call, const int32_t* table,
                                  const int32_t* seq_lens);
  attn::VerifyOptions attention_options() const;
  // The whole pass: segments and attention calls, from g (captured on first use).
  Status run_whole(const Pass& p, Graphs* g, const std::function<Status()>& body);
  // Launches `exec`, capturing `work` into it first where it is empty; a failed capture tells
  // `failed` why, then runs `work` eagerly.
  Status replay_or_capture(cudaGraphExec_t& exec, const std::function<Status()>& work,
                           const std::function<void(const std::string&)>& failed);
  // One pass over the pieces' tokens, laid out one after the other (runtime.cc).
  Status run_pieces(std::span<const ForwardRequest> batch, std::span<const Piece> pieces,
                    kv::KvPool& pool, const ForwardOptions& options, attn::Dispatcher& dispatcher,
                    std::span<RequestOutput> out);
  // Segment s of a pass (s = 0 .. L): the work between two attention calls. Segment 0: embed and
  // layer 0 up to its attention; segment s: the rest of layer s - 1 and layer s up to its
  // attention; segment L: the rest of the last layer, the final norm and the lm_head.
  Status segment(int s, const Pass& p);
  // run segment s eagerly, or from g (capturing it on first use).
  Status run_segment(int s, const Pass& p, Graphs* g);
  std::string graph_key(const Pass& p) const;
  void clear_graphs();
  Status gemm(const RowInvariantGemm& g);
  // y[T, W.rows] = x[T, W.cols] @ W^T (x bf16 packed).
  Status linear(const uint16_t* x, int64_t T, const DMat& w, void* y, GemmType y_type);
  Status mlp(const DMlp& m, const uint16_t* x, int64_t T, float* out);
  // mlp() on `stream` through `blas` (bound to it), with gate_up / SwiGLU scratch gu / act.
  Status mlp_on(const DMlp& m, const uint16_t* x, int64_t T, float* out, float* gu, uint16_t* act,
                cudaStream_t stream, cublasHandle_t blas);
  // Every head h at once (one strided-batched GEMM): y[t, h, 0:N] = bf16(x[t, h, 0:K] @ W[h]^T),
  // x bf16 with x_row values per head, W bf16 [H][N, K], y with y_row values per head.
  Status per_head(const void* x, int64_t x_row, const uint16_t* w, int64_t N, int64_t K, void* y,
                  int64_t y_row, int64_t T);
  // MLA (mla.cc) in three parts: before attention (q, the KV rows into the pool, the absorbed q
  // rows), attention through the dispatcher per the pass's plan (its tables in ints_), after it
  // (W_UV, o_proj into delta_).
  Status mla_in(int layer, const Pass& p);
  // `picks` (attention_replay): run call c on backend picks[c] (not counted: the caller counts the
  // pass's calls) instead of letting the dispatcher choose and count per call.
  Status mla_attention(int layer, kv::KvPool& pool, attn::Dispatcher& dispatcher,
                       const AttentionBlockPlan& plan, const int32_t* table,
                       const int32_t* seq_lens, std::span<const AttentionPick> picks);
  Status mla_out(int layer, int64_t T);
  // The layer's output into delta_ (the combine of its experts); with `deferred`, the combine is
  // left to the norm after the layer (add_rms_norm_combine): its arguments are written there and
  // delta_ is not.
  Status moe(int layer, int64_t T, MoeCombineArgs* deferred = nullptr);
  // A long pass's routed expert GEMMs (gate_up, SwiGLU, down) with the experts' row offsets
  // `begin` [E + 1] on the host: cuBLAS per touched expert.
  // *bf16_out: the experts' outputs are bf16 in xs_ (the grouped cuBLAS call), else f32 in ys_.
  Status experts_long(const DLayer& d, const std::vector<int32_t>& begin, bool* bf16_out);
  // The long pass's experts in one cuBLAS grouped GEMM per projection (`touched`: the experts
  // with rows): bf16 outputs (cuBLAS refuses bf16 x bf16 -> f32 grouped).
  Status experts_grouped(const DLayer& d, const std::vector<int32_t>& begin,
                         const std::vector<int>& touched);
  Status reserve(int64_t T, int64_t pages);
  // ensure() that counts reallocations (graphs hold the old addresses).
  Status grow(Buffer& b, size_t bytes);

  const ModelConfig& c_;
  const ModelWeights&
      host_;  // the host weights: read by init() only (Model::load frees the layers after it)
  cublasHandle_t blas_ = nullptr;
  cudaStream_t stream_ = nullptr;  // every kernel, copy and cuBLAS call of the forward
  Buffer blas_workspace_;          // cuBLAS's, set explicitly (graph capture needs it fixed)
  bool deterministic_ = false;
  bool fp8_math_attention_ = false;  // ForwardOptions::fp8_math_attention of the current call
  PhaseTimer phases_;

  DMat embed_, head_;
  DVec norm_;
  std::vector<DLayer> layers_;
  Buffer inv_freq_;
  RopeArgs rope_;

  // Scratch (see reserve()).
  int64_t cap_T_ = 0, cap_pages_ = 0;
  Buffer x_, hf_, hb_, delta_, shared_, qa_, qab_, q_, ckv_, kvr_, qn_, qatt_, o_, lse_, heads_,
      gu_, act_, sgu_, sact_, xs_, ys_, router_logits_, chosen_, rweights_, row_of_, begin_, gidx_,
      cpos_, cw_, touched_, logits_, argmax_;
  int64_t grouped_tc_min_tokens_ = kGroupedTcMinTokens;  // MLASPEC_GROUPED_TC_MIN_TOKENS
  int64_t grouped_max_tokens_ = kGroupedMoeMaxTokens;    // MLASPEC_GROUPED_MAX_TOKENS
  // The pass's int32 inputs, one upload: tokens [T], positions [T], slots [T], logit rows [rows],
  // then the attention plan's seq_lens and block table.
  Buffer ints_;
  Buffer hidden_;  // captured layers' residual streams [captures, T, hidden], downloaded once
  PinnedBuffer host_ints_, host_out_;
  // experts_grouped's pointer arrays, staged here and read by cuBLAS there (not scratch: long
  // passes run eagerly, no graph holds them). Off with MLASPEC_CUDA_EXPERTS=per_expert or once
  // cuBLAS refused the grouped call.
  PinnedBuffer host_ptrs_;
  Buffer expert_ptrs_;
  bool grouped_cublas_ = true;
  // Attention in default mode splits the KV adaptively (as an eager default-mode call would);
  // MLASPEC_ATTENTION_SPLITS=fixed keeps deterministic mode's fixed chunks there too (an A/B).
  // Deterministic mode always uses the fixed chunks.
  bool adaptive_splits_ = true;
  // The KV rows' latent norm and RoPE as one launch (kv_norm_rows); MLASPEC_CUDA_MLA_IN=separate
  // keeps rms_norm then kv_rows (an A/B; the same bits).
  bool fused_mla_in_ = true;
  // A MoE layer's combine inside the norm after it (add_rms_norm_combine) where one follows;
  // MLASPEC_CUDA_COMBINE=separate launches moe_combine (an A/B; the same bits).
  bool combine_in_norm_ = true;
  // Routing and its plan in one launch for passes of a few tokens (route_and_plan);
  // MLASPEC_CUDA_ROUTE=separate keeps two launches at every size (an A/B; the same results).
  bool fused_route_ = true;
  // The routed experts' GEMV passes take their rows in place and apply the SwiGLU in the gate_up
  // GEMV (gemm_grouped_gemv_swiglu); MLASPEC_CUDA_SWIGLU=separate keeps the gather, the f32
  // gate_up and silu_mul as three launches (an A/B; the same bits).
  bool fused_swiglu_ = true;
  // The kernels of kernels.cu launched as programmatic dependents of the kernel before them (set
  // for the thread at the start of each run_batch); MLASPEC_CUDA_PDL=off launches them plainly
  // (an A/B; the same bits).
  bool dependent_launch_ = true;
  // The shared experts beside the routed ones (moe.cc): side_ forked from stream_ at fork_ and
  // joined back at join_ before the combine, with its own cuBLAS handle (a handle's stream and
  // workspace are fixed for graph capture) and scratch (sgu_, sact_). MLASPEC_CUDA_SHARED=serial
  // runs them on stream_ (an A/B); the phase timer does too (it times one stream).
  bool shared_overlap_ = true;
  cudaStream_t side_ = nullptr;
  cublasHandle_t blas_side_ = nullptr;
  Buffer blas_side_workspace_;
  cudaEvent_t fork_ = nullptr, join_ = nullptr;
  cudaEvent_t uploaded_ = nullptr;  // recorded after each upload from host_ints_

  // CUDA graphs (runtime.cc): on unless MLASPEC_CUDA_GRAPHS=0 or a capture failed.
  bool graphs_on_ = true;
  // Attention inside the graphs: on unless MLASPEC_CUDA_GRAPHS=segments or a whole-pass capture
  // failed (segment graphs stay on).
  bool attention_graphs_on_ = true;
  uint64_t graph_uses_ = 0;          // graph-path passes so far (Graphs::last_use)
  uint64_t scratch_generation_ = 0;  // reallocations so far
  uint64_t graphs_generation_ = 0;   // the generation the cached graphs were captured at
  std::map<std::string, std::unique_ptr<Graphs>> graphs_;
  GraphStats graph_stats_;
};

}  // namespace mlaspec::model::gpu
