// The CUDA runtime's weights on the device (bf16, W_UK transposed per head, gate and up stacked)
// and its scratch buffers.
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/parallel.h"
#include "mlaspec/model/footprint.h"
#include "runtime_impl.h"

namespace mlaspec::model::gpu {
namespace {

Status upload(Buffer& b, const void* src, size_t bytes) {
  Result<Buffer> nb = Buffer::allocate(std::max<size_t>(bytes, 256), Device::kCUDA);
  if (!nb.ok()) return nb.status();
  b = std::move(*nb);
  return b.copy_from_host(src, bytes);
}

// Weights on their way to the device as bf16: converted on the host (matrix_rows_to_bf16, from
// the f32 values or straight from a deferred matrix's checkpoint bytes) in chunks into one of two
// pinned buffers, each copied asynchronously while the next chunk converts. Nothing the size of
// a whole matrix is allocated on the host (a zero-filled staging vector per matrix cost seconds
// at real size). Process-wide, guarded by a mutex; freed by release_upload_staging().
class Staging {
 public:
  static constexpr size_t kChunkBytes = size_t{32} << 20;

  Status rows(uint16_t* dev, const std::vector<const Matrix*>& parts) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_) {
      for (int s = 0; s < 2; ++s) {
        MLASPEC_RETURN_IF_ERROR(buf_[s].reserve(kChunkBytes));
        MLASPEC_RETURN_IF_ERROR(cuda_status(
            cudaEventCreateWithFlags(&done_[s], cudaEventDisableTiming), "cudaEventCreate"));
      }
      capacity_ = kChunkBytes;
      ready_ = true;
    }
    for (const Matrix* p : parts) {
      const int64_t cols = p->cols;
      if (static_cast<size_t>(cols) * sizeof(uint16_t) > capacity_) {
        // A row wider than a chunk: larger buffers, once their copies are done.
        for (int s = 0; s < 2; ++s) {
          MLASPEC_RETURN_IF_ERROR(
              cuda_status(cudaEventSynchronize(done_[s]), "waiting for a weight copy"));
        }
        capacity_ = static_cast<size_t>(cols) * sizeof(uint16_t);
        for (int s = 0; s < 2; ++s) MLASPEC_RETURN_IF_ERROR(buf_[s].reserve(capacity_));
      }
      const int64_t chunk_rows =
          std::max<int64_t>(1, static_cast<int64_t>(capacity_) / 2 / std::max<int64_t>(cols, 1));
      // Rows in parallel blocks of ~64 Ki values.
      const int64_t block_rows =
          std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(cols, 1));
      for (int64_t r0 = 0; r0 < p->rows; r0 += chunk_rows) {
        const int64_t r1 = std::min<int64_t>(p->rows, r0 + chunk_rows);
        // The buffer's previous copy must be done before it is written again.
        MLASPEC_RETURN_IF_ERROR(
            cuda_status(cudaEventSynchronize(done_[slot_]), "waiting for a weight copy"));
        uint16_t* h = buf_[slot_].as<uint16_t>();
        parallel_for(0, (r1 - r0 + block_rows - 1) / block_rows, [&](int64_t b) {
          const int64_t a = r0 + b * block_rows, e = std::min(r1, a + block_rows);
          matrix_rows_to_bf16(*p, a, e, h + (a - r0) * cols);
        });
        const size_t bytes = static_cast<size_t>((r1 - r0) * cols) * sizeof(uint16_t);
        MLASPEC_RETURN_IF_ERROR(cuda_status(
            cudaMemcpyAsync(dev, h, bytes, cudaMemcpyHostToDevice, nullptr), "copying weights"));
        MLASPEC_RETURN_IF_ERROR(
            cuda_status(cudaEventRecord(done_[slot_], nullptr), "cudaEventRecord"));
        dev += (r1 - r0) * cols;
        slot_ ^= 1;
      }
    }
    return Status::Ok();
  }

  Status release() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ready_) return Status::Ok();
    Status st = Status::Ok();
    for (int s = 0; s < 2; ++s) {
      const cudaError_t e = cudaEventSynchronize(done_[s]);
      if (st.ok()) st = cuda_status(e, "waiting for the weight copies");
      cudaEventDestroy(done_[s]);
      done_[s] = nullptr;
      buf_[s].reset();
    }
    ready_ = false;
    slot_ = 0;
    return st;
  }

 private:
  std::mutex mu_;
  PinnedBuffer buf_[2];
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool ready_ = false;
  int slot_ = 0;
  size_t capacity_ = 0;  // bytes each buffer holds (kChunkBytes, or one row when wider)
};

Staging& staging() {
  static Staging s;
  return s;
}

Status upload_rows(DMat& m, const std::vector<const Matrix*>& parts) {
  if (parts.empty() || parts[0]->empty()) return Status::Ok();
  m.cols = parts[0]->cols;
  m.rows = 0;
  for (const Matrix* p : parts) m.rows += p->rows;
  const size_t bytes = static_cast<size_t>(m.rows * m.cols) * sizeof(uint16_t);
  Result<Buffer> nb = Buffer::allocate(std::max<size_t>(bytes, 256), Device::kCUDA);
  if (!nb.ok()) return nb.status();
  m.buf = std::move(*nb);
  return staging().rows(static_cast<uint16_t*>(m.buf.data()), parts);
}

}  // namespace

Status upload_matrix(DMat& m, const Matrix& w) {
  return upload_rows(m, {&w});
}

Status release_upload_staging() {
  return staging().release();
}

Status upload_vec(DVec& v, const std::vector<float>& h) {
  v.size = static_cast<int64_t>(h.size());
  if (h.empty()) return Status::Ok();
  return upload(v.buf, h.data(), h.size() * sizeof(float));
}

Status upload_mlp(DMlp& d, const MlpWeights& w) {
  if (w.gate_proj.empty()) return Status::Ok();
  d.inter = w.gate_proj.rows;
  MLASPEC_RETURN_IF_ERROR(upload_rows(d.gate_up, {&w.gate_proj, &w.up_proj}));
  return upload_matrix(d.down, w.down_proj);
}

Status cuda_status(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(what + ": " + cudaGetErrorString(err));
}

Status cublas_status(cublasStatus_t st, const std::string& what) {
  if (st == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return internal_error(what + ": cuBLAS status " + str(static_cast<int64_t>(st)));
}

bool env_is(const char* name, const char* value) {
  const char* env = std::getenv(name);
  return env != nullptr && std::string(env) == value;
}

// Grows `b` to at least `bytes` on the device (poisoned with 0xff).
Status ensure(Buffer& b, size_t bytes) {
  if (b.bytes() >= bytes && b.data() != nullptr) return Status::Ok();
  Result<Buffer> nb = Buffer::allocate(std::max<size_t>(bytes, 256), Device::kCUDA);
  if (!nb.ok()) return nb.status();
  b = std::move(*nb);
  return b.fill_bytes(0xff);
}

Status open_device(const std::string& who, cublasHandle_t* blas) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    cudaGetLastError();
    return unsupported(who + " device cuda: no CUDA device is visible");
  }
  return cublas_status(cublasCreate(blas), "cublasCreate");
}

PinnedBuffer::~PinnedBuffer() {
  reset();
}

void PinnedBuffer::reset() {
  if (data_ != nullptr) cudaFreeHost(data_);
  data_ = nullptr;
  bytes_ = 0;
}

Status PinnedBuffer::reserve(size_t bytes) {
  if (bytes <= bytes_ && data_ != nullptr) return Status::Ok();
  if (data_ != nullptr) cudaFreeHost(data_);
  data_ = nullptr;
  bytes_ = 0;
  const size_t n = std::max<size_t>(bytes + bytes / 2, 4096);  // room to grow
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaMallocHost(&data_, n), "cudaMallocHost " + str(n)));
  bytes_ = n;
  return Status::Ok();
}

Status Runtime::grow(Buffer& b, size_t bytes) {
  const void* before = b.data();
  MLASPEC_RETURN_IF_ERROR(ensure(b, bytes));
  if (b.data() != before) ++scratch_generation_;
  return Status::Ok();
}

Status Runtime::init(const cpu::Rope& rope) {
  const UploadStagingScope staging_scope;
  MLASPEC_RETURN_IF_ERROR(open_device("model", &blas_));
  // One stream for the whole forward (a graph is captured from a stream other than the legacy
  // default one); blocking, so it stays ordered with the default stream's work of other parts.
  MLASPEC_RETURN_IF_ERROR(cuda_status(cudaStreamCreate(&stream_), "cudaStreamCreate"));
  MLASPEC_RETURN_IF_ERROR(cublas_status(cublasSetStream(blas_, stream_), "cublasSetStream"));
  // cublasSetStream resets the workspace to cuBLAS's pool; a fixed one keeps captured GEMMs valid.
  constexpr size_t kBlasWorkspace = size_t{32} << 20;
  MLASPEC_RETURN_IF_ERROR(ensure(blas_workspace_, kBlasWorkspace));
  MLASPEC_RETURN_IF_ERROR(cublas_status(
      cublasSetWorkspace(blas_, blas_workspace_.data(), kBlasWorkspace), "cublasSetWorkspace"));
  phases_.set_stream(stream_);
  // The shared experts' stream (moe.cc: they run beside the routed experts), its own cuBLAS
  // handle and workspace, and the events that fork it from the forward's stream and join it back.
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking), "cudaStreamCreate"));
  MLASPEC_RETURN_IF_ERROR(cublas_status(cublasCreate(&blas_side_), "cublasCreate"));
  MLASPEC_RETURN_IF_ERROR(cublas_status(cublasSetStream(blas_side_, side_), "cublasSetStream"));
  MLASPEC_RETURN_IF_ERROR(ensure(blas_side_workspace_, kBlasWorkspace));
  MLASPEC_RETURN_IF_ERROR(
      cublas_status(cublasSetWorkspace(blas_side_, blas_side_workspace_.data(), kBlasWorkspace),
                    "cublasSetWorkspace"));
  for (cudaEvent_t* e : {&fork_, &join_}) {
    MLASPEC_RETURN_IF_ERROR(
        cuda_status(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "cudaEventCreate"));
  }
  MLASPEC_RETURN_IF_ERROR(
      cuda_status(cudaEventCreateWithFlags(&uploaded_, cudaEventDisableTiming), "cudaEventCreate"));
  // The A/B switches (env_is).
  graphs_on_ = !env_is("MLASPEC_CUDA_GRAPHS", "0");
  // "segments": the graphs of the work between attention calls only, attention eager (an A/B of
  // attention inside the graphs).
  attention_graphs_on_ = !env_is("MLASPEC_CUDA_GRAPHS", "segments");
  // "per_expert": long passes launch a GEMM per touched expert (f32 outputs).
  grouped_cublas_ = !env_is("MLASPEC_CUDA_EXPERTS", "per_expert");
  // "serial": the shared experts on the forward's stream, after the router.
  shared_overlap_ = !env_is("MLASPEC_CUDA_SHARED", "serial");
  // "separate": the KV rows' norm and RoPE as two launches.
  fused_mla_in_ = !env_is("MLASPEC_CUDA_MLA_IN", "separate");
  // "separate": a MoE layer's combine as its own launch before the norm after it.
  combine_in_norm_ = !env_is("MLASPEC_CUDA_COMBINE", "separate");
  // "separate": routing and its plan as two launches at every pass size.
  fused_route_ = !env_is("MLASPEC_CUDA_ROUTE", "separate");
  // "separate": the experts' gather, gate_up GEMV and SwiGLU as three launches.
  fused_swiglu_ = !env_is("MLASPEC_CUDA_SWIGLU", "separate");
  // "off": every kernel waits for the one before it to end (no programmatic dependent launch).
  dependent_launch_ = !env_is("MLASPEC_CUDA_PDL", "off");
  // "fixed": default mode's attention keeps deterministic mode's fixed split chunks.
  adaptive_splits_ = !env_is("MLASPEC_ATTENTION_SPLITS", "fixed");
  // A/B switches of the MoE's grouped path (runtime_impl.h), read once per load.
  auto env_tokens = [](const char* name, int64_t lo, int64_t hi, int64_t* out) {
    const char* env = std::getenv(name);
    if (env == nullptr) return Status::Ok();
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end == env || *end != '\0' || v < lo || v > hi) {
      return invalid_argument(std::string(name) + "=" + env + ": not a token count in [" +
                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    *out = v;
    return Status::Ok();
  };
  MLASPEC_RETURN_IF_ERROR(
      env_tokens("MLASPEC_GROUPED_TC_MIN_TOKENS", 0, int64_t{1} << 30, &grouped_tc_min_tokens_));
  MLASPEC_RETURN_IF_ERROR(env_tokens("MLASPEC_GROUPED_MAX_TOKENS", kCudaGraphMaxTokens,
                                     kDefaultCudaChunkTokens, &grouped_max_tokens_));
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
      MLASPEC_RETURN_IF_ERROR(upload_vec(d.router_bias, w.moe.e_score_correction_bias));
      d.experts.resize(w.moe.experts.size());
      for (size_t e = 0; e < d.experts.size(); ++e) {
        MLASPEC_RETURN_IF_ERROR(upload_mlp(d.experts[e], w.moe.experts[e]));
      }
      MLASPEC_RETURN_IF_ERROR(upload_mlp(d.shared, w.moe.shared_experts));
      // The experts' weight pointers on the device, for the grouped GEMMs (moe.cc).
      std::vector<const uint16_t*> gate_up, down;
      for (const DMlp& e : d.experts) {
        gate_up.push_back(e.gate_up.ptr());
        down.push_back(e.down.ptr());
      }
      MLASPEC_RETURN_IF_ERROR(
          upload(d.expert_gate_up, gate_up.data(), gate_up.size() * sizeof(const uint16_t*)));
      MLASPEC_RETURN_IF_ERROR(
          upload(d.expert_down, down.data(), down.size() * sizeof(const uint16_t*)));
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
  MLASPEC_RETURN_IF_ERROR(release_upload_staging());
  return cuda_status(cudaDeviceSynchronize(), "uploading the weights");
}

Status Runtime::reserve(int64_t T, int64_t pages) {
  if (T <= cap_T_ && pages <= cap_pages_) return Status::Ok();
  cap_T_ = std::max(cap_T_, T);
  cap_pages_ = std::max(cap_pages_, pages);
  const ScratchBytes s = scratch_bytes(c_, cap_T_, cap_pages_, kAttentionBlock);
  const auto sz = [](int64_t bytes) { return static_cast<size_t>(bytes); };
  MLASPEC_RETURN_IF_ERROR(grow(x_, sz(s.x)));
  MLASPEC_RETURN_IF_ERROR(grow(hf_, sz(s.hf)));
  MLASPEC_RETURN_IF_ERROR(grow(hb_, sz(s.hb)));
  MLASPEC_RETURN_IF_ERROR(grow(delta_, sz(s.delta)));
  MLASPEC_RETURN_IF_ERROR(grow(shared_, sz(s.shared)));
  MLASPEC_RETURN_IF_ERROR(grow(qa_, sz(s.qa)));
  MLASPEC_RETURN_IF_ERROR(grow(qab_, sz(s.qab)));
  MLASPEC_RETURN_IF_ERROR(grow(q_, sz(s.q)));
  MLASPEC_RETURN_IF_ERROR(grow(ckv_, sz(s.ckv)));
  MLASPEC_RETURN_IF_ERROR(grow(kvr_, sz(s.kvr)));
  MLASPEC_RETURN_IF_ERROR(grow(qn_, sz(s.qn)));
  MLASPEC_RETURN_IF_ERROR(grow(qatt_, sz(s.qatt)));
  MLASPEC_RETURN_IF_ERROR(grow(o_, sz(s.o)));
  MLASPEC_RETURN_IF_ERROR(grow(lse_, sz(s.lse)));
  MLASPEC_RETURN_IF_ERROR(grow(heads_, sz(s.heads)));
  MLASPEC_RETURN_IF_ERROR(grow(gu_, sz(s.gu)));
  MLASPEC_RETURN_IF_ERROR(grow(act_, sz(s.act)));
  MLASPEC_RETURN_IF_ERROR(grow(sgu_, sz(s.sgu)));
  MLASPEC_RETURN_IF_ERROR(grow(sact_, sz(s.sact)));
  MLASPEC_RETURN_IF_ERROR(grow(xs_, sz(s.xs)));
  MLASPEC_RETURN_IF_ERROR(grow(ys_, sz(s.ys)));
  MLASPEC_RETURN_IF_ERROR(grow(router_logits_, sz(s.router_logits)));
  MLASPEC_RETURN_IF_ERROR(grow(chosen_, sz(s.chosen)));
  MLASPEC_RETURN_IF_ERROR(grow(rweights_, sz(s.rweights)));
  MLASPEC_RETURN_IF_ERROR(grow(row_of_, sz(s.row_of)));
  MLASPEC_RETURN_IF_ERROR(grow(begin_, sz(s.begin)));
  MLASPEC_RETURN_IF_ERROR(grow(gidx_, sz(s.gidx)));
  MLASPEC_RETURN_IF_ERROR(grow(cpos_, sz(s.cpos)));
  MLASPEC_RETURN_IF_ERROR(grow(cw_, sz(s.cw)));
  MLASPEC_RETURN_IF_ERROR(grow(touched_, sz(s.touched)));
  // tokens, positions, slots, logit rows [T each], then seq_lens and the block table.
  MLASPEC_RETURN_IF_ERROR(grow(ints_, sz(s.tokens) * 4 + sz(s.seq_lens) + sz(s.table)));
  MLASPEC_RETURN_IF_ERROR(grow(argmax_, sz(s.tokens)));  // one int32 per row
  return grow(logits_, sz(s.logits));
}

}  // namespace mlaspec::model::gpu
