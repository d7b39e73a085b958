// ModelConfig: a DeepSeek-V3-family config.json as mlaspec reads it (ARCHITECTURE.md §3.5).
//
// Families: model_type "deepseek_v3" and "kimi_k2" (transformers' DeepseekV3ForCausalLM: sigmoid
// router with e_score_correction_bias, noaux_tc group-limited top-k) and "deepseek_v2"
// (DeepseekV2ForCausalLM: softmax router, greedy or group_limited_greedy top-k). Every key the
// forward uses is read; a missing key takes transformers' default for that family. A value the
// engine cannot run (kv_lora_rank != 512, qk_rope_head_dim != 64, hidden_act != silu, an unknown
// rope type, ...) is an error naming the key, the value and what is supported.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "mlaspec/core/status.h"

namespace mlaspec::model {

enum class Family : uint8_t { kDeepseekV2, kDeepseekV3 };
std::string_view family_name(Family f);

// How a MoE layer picks its experts.
enum class RouterKind : uint8_t {
  kSigmoidNoauxTc,             // V3: sigmoid scores, + e_score_correction_bias to choose, group
                               // score = sum of its top-2, keep topk_group groups, top-k
  kSoftmaxGreedy,              // V2: softmax scores, plain top-k
  kSoftmaxGroupLimitedGreedy,  // V2: softmax, group score = its max, keep topk_group groups, top-k
};
std::string_view router_name(RouterKind r);

struct RopeConfig {
  enum class Type : uint8_t { kDefault, kYarn };
  Type type = Type::kDefault;
  double theta = 10000.0;
  // The pairs rotated together: interleaved (x0, x1), (x2, x3), ... (DeepSeek's layout, V2 always)
  // or the halves (x_i, x_{i+32}) (rotate_half).
  bool interleave = false;
  // YaRN (type kYarn only).
  double factor = 1.0;
  double beta_fast = 32.0;
  double beta_slow = 1.0;
  double mscale = 0.0;          // 0: absent
  double mscale_all_dim = 0.0;  // 0: absent
  int64_t original_max_position_embeddings = 0;
  bool truncate = true;
  // YaRN's factor on cos/sin (transformers' attention_factor): given, or
  // mscale(factor, mscale) / mscale(factor, mscale_all_dim) when both are set, else
  // mscale(factor, 1). 1 for plain RoPE.
  double attention_factor = 1.0;
};

// fp8 block-scaled weights (quantization_config of DeepSeek-V3's checkpoints).
struct Fp8Quantization {
  bool enabled = false;
  int block_rows = 128;
  int block_cols = 128;
};

struct ModelConfig {
  std::string model_type;  // as written: deepseek_v3, kimi_k2, deepseek_v2
  Family family = Family::kDeepseekV3;

  int vocab_size = 0;
  int hidden_size = 0;
  int intermediate_size = 0;      // dense MLP layers
  int moe_intermediate_size = 0;  // each routed expert; shared experts are n_shared times wider
  int num_hidden_layers = 0;
  int num_attention_heads = 0;
  double rms_norm_eps = 1e-6;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;

  // MLA.
  int q_lora_rank = 0;  // 0: no q LoRA (plain q_proj, q_lora_rank null)
  int kv_lora_rank = 512;
  int qk_nope_head_dim = 128;
  int qk_rope_head_dim = 64;
  int v_head_dim = 128;
  RopeConfig rope;

  // MoE: layers [first_k_dense_replace, num_hidden_layers) are MoE when n_routed_experts > 0.
  int n_routed_experts = 0;
  int n_shared_experts = 0;
  int num_experts_per_tok = 0;
  int n_group = 1;
  int topk_group = 1;
  int first_k_dense_replace = 0;
  RouterKind router = RouterKind::kSigmoidNoauxTc;
  bool norm_topk_prob = false;
  double routed_scaling_factor = 1.0;

  Fp8Quantization fp8;
  int num_nextn_predict_layers = 0;  // MTP modules in the checkpoint (not run; tensors skipped)

  int qk_head_dim() const { return qk_nope_head_dim + qk_rope_head_dim; }
  bool has_q_lora() const { return q_lora_rank > 0; }
  bool is_moe_layer(int layer) const {
    return n_routed_experts > 0 && layer >= first_k_dense_replace;
  }
  // The attention's softmax scale: qk_head_dim^-0.5, times mscale(factor, mscale_all_dim)^2 under
  // YaRN when mscale_all_dim is set (transformers' yarn_apply_mscale).
  double softmax_scale() const;

  // Multi-line description for `inspect-model`.
  std::string describe() const;
};

// YaRN's mscale: 0.1 * mscale * ln(scale) + 1 for scale > 1, else 1.
double yarn_get_mscale(double scale, double mscale);

// Parses config.json text; `source` names the file in errors.
Result<ModelConfig> parse_model_config(std::string_view json_text, std::string_view source);
// Reads `dir`/config.json (or `path` itself when it is a file).
Result<ModelConfig> load_model_config(const std::filesystem::path& path);

}  // namespace mlaspec::model
