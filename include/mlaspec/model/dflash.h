// DFlash block drafter network: a checkpoint written by python/dflash/model.py, loaded for the CPU
// runtime, and its two forwards over the drafter's own paged KV pool (docs/dflash.md).
//
//   DFlashNetwork net = DFlashNetwork::load("drafter_dir", target).value();   // checks vs target
//   kv::KvPool pool = kv::KvPool::create(net.kv_pool_spec(pages, 64)).value(); // gqa rows, bf16
//   // after a target forward with capture_layers = net.config().target_layer_ids:
//   net.append_context({&ctx, 1}, pool);      // context K/V of positions p .. p + rows - 1
//   net.propose({&blk, 1}, pool);             // blk.logits: [num_draft, vocab]
//
// The network: num_hidden_layers Qwen3-style decoder layers (GQA, per-head q_norm / k_norm RMSNorm,
// SwiGLU, pre-norm, RoPE rotate_half with rope_theta), conditioned on the target's residual-stream
// hidden states at target_layer_ids, concatenated and projected: ctx = hidden_norm(fc(concat)).
// The embedding and lm_head are the target's (held by reference: the target must outlive the
// network).
//   append_context: each layer's k_proj / v_proj of ctx, k_norm, RoPE at the rows' absolute
//     positions, written to the pool as one GQA row [K (kv_heads * head_dim) | V] per token and
//     layer (rounded to bf16 by kv::write_rows' input; the pool's dtype must be bf16).
//   propose: the block [anchor, MASK x num_draft] at positions L .. L + num_draft, where L is the
//     request's context length (the anchor's position). Every layer: Q from the block; K/V from
//     the pool's context rows at positions [L - window, L) (all of [0, L) without a window) and the
//     block's own K/V (f32, not written anywhere); no mask inside the block. Logits of slots
//     1 .. num_draft: slot k predicts the token at position L + k.
//
// CPU runtime (the default): f32 math, GEMMs through CBLAS (model/layers.h). A request's rows never
// share a GEMM with another request's, so its results are bitwise the same alone or in any batch.
// The only rounding besides f32's is the pool's: context K/V are stored as bf16. CUDA runtime
// (DFlashOptions::device = kCUDA): the same forwards on the device, every request of a call in one
// activation (bf16 at each GEMM input), the same validation and errors.
//
// Conventions: block_size counts the anchor (DFlash's convention); num_draft() = block_size - 1 is
// what the engine speaks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mlaspec/attention/backend.h"
#include "mlaspec/core/status.h"
#include "mlaspec/kvcache/pool.h"
#include "mlaspec/model/config.h"
#include "mlaspec/model/safetensors.h"
#include "mlaspec/model/weights.h"

namespace mlaspec::model {

class Model;

// config.json of a DFlash drafter (python/dflash/model.py's DFlashConfig).
struct DFlashConfig {
  std::string model_type = "dflash";  // or "dspark": a DSpark drafter's backbone (model/dspark.h)
  int hidden_size = 0;
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  int num_key_value_heads = 0;
  int head_dim = 0;
  int intermediate_size = 0;
  int vocab_size = 0;
  int target_hidden_size = 0;
  std::vector<int> target_layer_ids;
  int block_size = 0;  // counts the anchor
  int mask_token_id = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  int64_t sliding_window = 0;  // the draft window in context positions; 0 = the whole context

  int num_draft() const { return block_size - 1; }
  int q_width() const { return num_attention_heads * head_dim; }
  int kv_width() const { return num_key_value_heads * head_dim; }
  int context_width() const {
    return static_cast<int>(target_layer_ids.size()) * target_hidden_size;
  }
  std::string describe() const;
};

// Parses config.json text; `source` names the file in errors. Every key above is required except
// rms_norm_eps, rope_theta, sliding_window (null or absent: no window) and model_type ("dflash"
// or "dspark" when present; other keys are ignored, so a DSpark config reads as its backbone's).
// Values the network cannot run are kInvalidArgument naming the key.
Result<DFlashConfig> parse_dflash_config(std::string_view json_text, std::string_view source);
Result<DFlashConfig> load_dflash_config(const std::filesystem::path& path);

struct DFlashLayerWeights {
  std::vector<float> input_layernorm, post_attention_layernorm;  // [hidden]
  Matrix q_proj, k_proj, v_proj, o_proj;                         // self_attn.*
  std::vector<float> q_norm, k_norm;                             // [head_dim]
  MlpWeights mlp;
};

struct DFlashWeights {
  std::vector<DFlashLayerWeights> layers;
  Matrix fc;  // [hidden, K * target_hidden]
  std::vector<float> hidden_norm, norm;
  int64_t parameters = 0;
};

// Every tensor of the config present with its shape and a float dtype (BF16, F16, F32), no tensor
// left over (for model_type "dspark": none but the heads' markov.* / confidence.*); errors name the
// tensor and its file.
Result<DFlashWeights> load_dflash_weights(const DFlashConfig& config, const Checkpoint& checkpoint);

// One request's new context rows for append_context.
struct DFlashContextRows {
  // One [rows, target_hidden_size] matrix (row-major, row stride target_hidden_size) per entry of
  // target_layer_ids, in that order: a target forward's RequestOutput::hidden for
  // capture_layers = target_layer_ids, advanced by the first row wanted.
  std::vector<const float*> layers;
  int64_t rows = 0;
  int64_t first_position = 0;      // absolute position of row 0
  std::span<const int32_t> pages;  // the request's page table in the drafter's pool
};

// One request's block for propose.
struct DFlashBlock {
  int32_t anchor = 0;              // the token at position context_len
  int64_t context_len = 0;         // L: the pool holds context rows of positions [0, L)
  std::span<const int32_t> pages;  // the request's page table in the drafter's pool
  std::vector<float> logits;       // out: [num_draft, vocab]
  std::vector<float> hidden;       // out: [num_draft, hidden]: norm(h) of slots 1 .. num_draft,
                                   // what the lm_head reads (DSpark's confidence head reads it too)
};

struct DFlashOptions {
  // The draft window: -1 takes the config's sliding_window; 0 sees the whole context; N > 0 the
  // last N context positions (positions stay absolute).
  int64_t draft_window = -1;
  // Where the network runs: kCPU (f32, CBLAS) or kCUDA (src/model/cuda/dflash_runtime.h: bf16
  // weights and GEMM inputs, f32 accumulation; its pool must be a CUDA pool, kv_pool_spec gives
  // one). kCUDA without a CUDA build or device is an error at load.
  Device device = Device::kCPU;
  // kCUDA: propose's device work (the block's layers and the lm_head) is replayed from a CUDA graph
  // per shape (batch, context-length bucket, pool), captured on first use; bitwise the same as
  // running it eagerly. MLASPEC_CUDA_GRAPHS=0 turns it off for the process.
  bool cuda_graphs = true;
};

class DFlashNetwork {
 public:
  // Reads dir/config.json and dir's safetensors; checks the drafter against the target: its
  // target_hidden_size and vocab_size must equal the target's hidden_size and vocab_size, and
  // every target_layer_id must be one of the target's layers. `embed_tokens` and `lm_head`
  // ([vocab, hidden]) are kept by reference.
  static Result<DFlashNetwork> load(const std::filesystem::path& dir,
                                    const ModelConfig& target_config, const Matrix& embed_tokens,
                                    const Matrix& lm_head, const DFlashOptions& options = {});
  // The same with the target model's config, embedding and head.
  static Result<DFlashNetwork> load(const std::filesystem::path& dir, const Model& target,
                                    const DFlashOptions& options = {});

  DFlashNetwork(DFlashNetwork&&) noexcept;
  DFlashNetwork& operator=(DFlashNetwork&&) noexcept;
  ~DFlashNetwork();

  const DFlashConfig& config() const;
  const DFlashWeights& weights() const;
  int num_draft() const { return config().num_draft(); }
  int64_t draft_window() const;  // 0: the whole context

  // The pool this network reads and writes: GQA rows (kv_heads, head_dim), one layer per decoder
  // layer, on the network's device (DFlashOptions::device), named "draft".
  kv::KvPoolSpec kv_pool_spec(int num_pages, int page_size, DType dtype = DType::kBF16) const;
  // What the drafter's attention reads (for the draft pool's dtype rule, spec/draft_pool_rule.h):
  // bf16 pools only.
  static const attn::BackendCaps& attention_caps();

  // Projects each request's rows and writes their K/V to every layer of `pool`. Validates first
  // (pool layout and dtype, rows, positions, pages); an error writes nothing.
  Status append_context(std::span<const DFlashContextRows> batch, kv::KvPool& pool) const;

  // Runs each request's block; fills DFlashBlock::logits. Reads the pool only.
  Status propose(std::span<DFlashBlock> batch, const kv::KvPool& pool) const;

 private:
  struct Impl;
  explicit DFlashNetwork(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlaspec::model
