// config.json of the DeepSeek-V3 family, with transformers' defaults per family.
#include "mlaspec/model/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace mlaspec::model {
namespace {

using nlohmann::json;

// Reads typed keys of one JSON object; every error names the file, the key and the value.
class Reader {
 public:
  Reader(const json& obj, std::string source, std::string prefix = "")
      : obj_(obj), source_(std::move(source)), prefix_(std::move(prefix)) {}

  bool has(const char* key) const { return obj_.contains(key) && !obj_.at(key).is_null(); }
  bool is_null(const char* key) const { return obj_.contains(key) && obj_.at(key).is_null(); }
  std::string where(const char* key) const { return source_ + ": key \"" + prefix_ + key + "\""; }
  std::string value_text(const char* key) const { return obj_.at(key).dump(); }

  Status get_int(const char* key, int64_t fallback, int64_t* out) const {
    if (!has(key)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = obj_.at(key);
    if (v.is_number_integer()) {
      *out = v.get<int64_t>();
      return Status::Ok();
    }
    // Some configs write integral values as floats (4096.0).
    if (v.is_number_float()) {
      const double d = v.get<double>();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) {
        *out = static_cast<int64_t>(d);
        return Status::Ok();
      }
    }
    return invalid_argument(where(key) + " = " + v.dump() + " is not an integer");
  }
  // An int in [lo, hi].
  Status get_int(const char* key, int64_t fallback, int64_t lo, int64_t hi, int* out) const {
    int64_t v = 0;
    MLASPEC_RETURN_IF_ERROR(get_int(key, fallback, &v));
    if (v < lo || v > hi) {
      return invalid_argument(where(key) + " = " + std::to_string(v) + " is out of range [" +
                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    *out = static_cast<int>(v);
    return Status::Ok();
  }
  Status get_double(const char* key, double fallback, double* out) const {
    if (!has(key)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = obj_.at(key);
    if (!v.is_number()) return invalid_argument(where(key) + " = " + v.dump() + " is not a number");
    *out = v.get<double>();
    if (!std::isfinite(*out)) return invalid_argument(where(key) + " is not finite");
    return Status::Ok();
  }
  Status get_bool(const char* key, bool fallback, bool* out) const {
    if (!has(key)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = obj_.at(key);
    if (!v.is_boolean()) return invalid_argument(where(key) + " = " + v.dump() + " is not a bool");
    *out = v.get<bool>();
    return Status::Ok();
  }
  Status get_string(const char* key, const std::string& fallback, std::string* out) const {
    if (!has(key)) {
      *out = fallback;
      return Status::Ok();
    }
    const json& v = obj_.at(key);
    if (!v.is_string()) return invalid_argument(where(key) + " = " + v.dump() + " is not a string");
    *out = v.get<std::string>();
    return Status::Ok();
  }

 private:
  const json& obj_;
  std::string source_;
  std::string prefix_;
};

Status unsupported_value(const Reader& r, const char* key, const std::string& value,
                         const std::string& supported) {
  return unsupported(r.where(key) + " = " + value + " is unsupported; supported: " + supported);
}

constexpr int64_t kMaxDim = int64_t{1} << 24;

// RoPE: `rope_parameters` (transformers >= 5) or the legacy `rope_scaling` + `rope_theta`.
Status read_rope(const json& root, const Reader& top, std::string_view source, ModelConfig* c) {
  RopeConfig& rope = c->rope;
  double top_theta = 10000.0;
  MLASPEC_RETURN_IF_ERROR(top.get_double("rope_theta", 10000.0, &top_theta));
  const char* key = top.has("rope_parameters") ? "rope_parameters"
                    : top.has("rope_scaling")  ? "rope_scaling"
                                               : nullptr;
  rope.theta = top_theta;
  if (key == nullptr) return Status::Ok();
  const json& params = root.at(key);
  if (!params.is_object()) {
    return invalid_argument(top.where(key) + " = " + params.dump() + " is not an object");
  }
  const Reader r(params, std::string(source), std::string(key) + ".");
  std::string type;
  MLASPEC_RETURN_IF_ERROR(r.get_string("type", "default", &type));
  MLASPEC_RETURN_IF_ERROR(r.get_string("rope_type", type, &type));
  MLASPEC_RETURN_IF_ERROR(r.get_double("rope_theta", top_theta, &rope.theta));
  if (!(rope.theta > 1.0)) {
    return invalid_argument(r.where("rope_theta") + " = " + std::to_string(rope.theta) +
                            " must be > 1");
  }
  double partial = 1.0;
  MLASPEC_RETURN_IF_ERROR(r.get_double("partial_rotary_factor", 1.0, &partial));
  if (partial != 1.0) {
    return unsupported_value(r, "partial_rotary_factor", r.value_text("partial_rotary_factor"),
                             "1 (MLA rotates all qk_rope_head_dim values)");
  }
  if (type == "default") {
    rope.type = RopeConfig::Type::kDefault;
    return Status::Ok();
  }
  if (type != "yarn") {
    return unsupported(r.where(r.has("rope_type") ? "rope_type" : "type") + " = \"" + type +
                       "\" is unsupported; supported: default, yarn");
  }
  rope.type = RopeConfig::Type::kYarn;
  // transformers: a top-level original_max_position_embeddings wins, else the dict's, else
  // max_position_embeddings.
  int64_t orig = c->max_position_embeddings;
  MLASPEC_RETURN_IF_ERROR(r.get_int("original_max_position_embeddings", orig, &orig));
  MLASPEC_RETURN_IF_ERROR(top.get_int("original_max_position_embeddings", orig, &orig));
  if (orig < 1) {
    return invalid_argument(r.where("original_max_position_embeddings") + " = " +
                            std::to_string(orig) + " must be >= 1");
  }
  rope.original_max_position_embeddings = orig;
  MLASPEC_RETURN_IF_ERROR(r.get_double(
      "factor", static_cast<double>(c->max_position_embeddings) / static_cast<double>(orig),
      &rope.factor));
  if (!(rope.factor > 0.0)) {
    return invalid_argument(r.where("factor") + " = " + std::to_string(rope.factor) +
                            " must be > 0");
  }
  // `or 32` / `or 1` in transformers: 0 counts as absent.
  MLASPEC_RETURN_IF_ERROR(r.get_double("beta_fast", 32.0, &rope.beta_fast));
  MLASPEC_RETURN_IF_ERROR(r.get_double("beta_slow", 1.0, &rope.beta_slow));
  if (rope.beta_fast == 0.0) rope.beta_fast = 32.0;
  if (rope.beta_slow == 0.0) rope.beta_slow = 1.0;
  if (!(rope.beta_fast > 0.0) || !(rope.beta_slow > 0.0)) {
    return invalid_argument(std::string(source) + ": " + key + " beta_fast " +
                            std::to_string(rope.beta_fast) + " and beta_slow " +
                            std::to_string(rope.beta_slow) + " must be > 0");
  }
  MLASPEC_RETURN_IF_ERROR(r.get_double("mscale", 0.0, &rope.mscale));
  MLASPEC_RETURN_IF_ERROR(r.get_double("mscale_all_dim", 0.0, &rope.mscale_all_dim));
  MLASPEC_RETURN_IF_ERROR(r.get_bool("truncate", true, &rope.truncate));
  if (r.has("attention_factor")) {
    MLASPEC_RETURN_IF_ERROR(r.get_double("attention_factor", 1.0, &rope.attention_factor));
  } else if (rope.mscale != 0.0 && rope.mscale_all_dim != 0.0) {
    rope.attention_factor = yarn_get_mscale(rope.factor, rope.mscale) /
                            yarn_get_mscale(rope.factor, rope.mscale_all_dim);
  } else {
    rope.attention_factor = yarn_get_mscale(rope.factor, 1.0);
  }
  return Status::Ok();
}

Status read_quantization(const json& root, const Reader& top, std::string_view source,
                         ModelConfig* c) {
  if (!top.has("quantization_config")) return Status::Ok();
  const json& q = root.at("quantization_config");
  if (!q.is_object()) {
    return invalid_argument(top.where("quantization_config") + " = " + q.dump() +
                            " is not an object");
  }
  const Reader r(q, std::string(source), "quantization_config.");
  std::string method, fmt;
  MLASPEC_RETURN_IF_ERROR(r.get_string("quant_method", "", &method));
  if (method != "fp8") {
    return unsupported_value(r, "quant_method", "\"" + method + "\"",
                             "fp8 (DeepSeek-V3's 128x128 block-scaled e4m3 weights)");
  }
  MLASPEC_RETURN_IF_ERROR(r.get_string("fmt", "e4m3", &fmt));
  if (fmt != "e4m3") return unsupported_value(r, "fmt", "\"" + fmt + "\"", "e4m3");
  c->fp8.enabled = true;
  if (r.has("weight_block_size")) {
    const json& b = q.at("weight_block_size");
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_integer() || !b[1].is_number_integer() ||
        b[0].get<int64_t>() < 1 || b[1].get<int64_t>() < 1 || b[0].get<int64_t>() > 65536 ||
        b[1].get<int64_t>() > 65536) {
      return invalid_argument(r.where("weight_block_size") + " = " + b.dump() +
                              " is not two positive integers [rows, cols] <= 65536");
    }
    c->fp8.block_rows = static_cast<int>(b[0].get<int64_t>());
    c->fp8.block_cols = static_cast<int>(b[1].get<int64_t>());
  }
  return Status::Ok();
}

}  // namespace

std::string_view family_name(Family f) {
  return f == Family::kDeepseekV2 ? "deepseek_v2" : "deepseek_v3";
}

std::string_view router_name(RouterKind r) {
  switch (r) {
    case RouterKind::kSigmoidNoauxTc:
      return "sigmoid noaux_tc";
    case RouterKind::kSoftmaxGreedy:
      return "softmax greedy";
    case RouterKind::kSoftmaxGroupLimitedGreedy:
      return "softmax group_limited_greedy";
  }
  return "?";
}

double yarn_get_mscale(double scale, double mscale) {
  if (scale <= 1.0) return 1.0;
  return 0.1 * mscale * std::log(scale) + 1.0;
}

double ModelConfig::softmax_scale() const {
  double scale = 1.0 / std::sqrt(static_cast<double>(qk_head_dim()));
  if (rope.type == RopeConfig::Type::kYarn && rope.mscale_all_dim != 0.0) {
    const double m = yarn_get_mscale(rope.factor, rope.mscale_all_dim);
    scale *= m * m;
  }
  return scale;
}

Result<ModelConfig> parse_model_config(std::string_view json_text, std::string_view source) {
  const json root = json::parse(json_text.begin(), json_text.end(), nullptr,
                                /*allow_exceptions=*/false);
  const std::string src(source);
  if (root.is_discarded()) return data_loss(src + ": not valid JSON");
  if (!root.is_object()) return data_loss(src + ": the top level is not a JSON object");
  const Reader r(root, src);
  ModelConfig c;

  MLASPEC_RETURN_IF_ERROR(r.get_string("model_type", "", &c.model_type));
  if (c.model_type == "deepseek_v3" || c.model_type == "kimi_k2") {
    c.family = Family::kDeepseekV3;
  } else if (c.model_type == "deepseek_v2") {
    c.family = Family::kDeepseekV2;
  } else {
    return unsupported_value(r, "model_type", "\"" + c.model_type + "\"",
                             "deepseek_v3, kimi_k2, deepseek_v2");
  }
  const bool v3 = c.family == Family::kDeepseekV3;

  // Sizes (transformers' defaults of DeepseekV3Config / DeepseekV2Config).
  MLASPEC_RETURN_IF_ERROR(r.get_int("vocab_size", v3 ? 129280 : 102400, 1, kMaxDim, &c.vocab_size));
  MLASPEC_RETURN_IF_ERROR(r.get_int("hidden_size", v3 ? 7168 : 4096, 1, kMaxDim, &c.hidden_size));
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("intermediate_size", v3 ? 18432 : 11008, 1, kMaxDim, &c.intermediate_size));
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("moe_intermediate_size", v3 ? 2048 : 1407, 1, kMaxDim, &c.moe_intermediate_size));
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("num_hidden_layers", v3 ? 61 : 32, 1, 4096, &c.num_hidden_layers));
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("num_attention_heads", v3 ? 128 : 32, 1, 1024, &c.num_attention_heads));
  MLASPEC_RETURN_IF_ERROR(r.get_double("rms_norm_eps", 1e-6, &c.rms_norm_eps));
  if (!(c.rms_norm_eps > 0.0)) {
    return invalid_argument(r.where("rms_norm_eps") + " = " + r.value_text("rms_norm_eps") +
                            " must be > 0");
  }
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("max_position_embeddings", v3 ? 4096 : 2048, &c.max_position_embeddings));
  if (c.max_position_embeddings < 1 || c.max_position_embeddings > (int64_t{1} << 31)) {
    return invalid_argument(r.where("max_position_embeddings") + " = " +
                            std::to_string(c.max_position_embeddings) +
                            " is out of range [1, 2^31]");
  }
  MLASPEC_RETURN_IF_ERROR(r.get_bool("tie_word_embeddings", false, &c.tie_word_embeddings));

  std::string act;
  MLASPEC_RETURN_IF_ERROR(r.get_string("hidden_act", "silu", &act));
  if (act != "silu") return unsupported_value(r, "hidden_act", "\"" + act + "\"", "silu");
  bool bias = false;
  MLASPEC_RETURN_IF_ERROR(r.get_bool("attention_bias", false, &bias));
  if (bias) return unsupported_value(r, "attention_bias", "true", "false");
  MLASPEC_RETURN_IF_ERROR(r.get_bool("mlp_bias", false, &bias));
  if (bias) return unsupported_value(r, "mlp_bias", "true", "false");

  // MLA. q_lora_rank null means a plain q_proj.
  MLASPEC_RETURN_IF_ERROR(r.get_int("q_lora_rank", 1536, 0, kMaxDim, &c.q_lora_rank));
  if (r.is_null("q_lora_rank")) c.q_lora_rank = 0;
  MLASPEC_RETURN_IF_ERROR(r.get_int("kv_lora_rank", 512, 0, kMaxDim, &c.kv_lora_rank));
  if (c.kv_lora_rank != 512) {
    return unsupported_value(r, "kv_lora_rank", std::to_string(c.kv_lora_rank),
                             "512 (the attention op's KV row is 576 = 512 latent + 64 rope)");
  }
  MLASPEC_RETURN_IF_ERROR(r.get_int("qk_rope_head_dim", 64, 0, kMaxDim, &c.qk_rope_head_dim));
  if (c.qk_rope_head_dim != 64) {
    return unsupported_value(r, "qk_rope_head_dim", std::to_string(c.qk_rope_head_dim),
                             "64 (the attention op's KV row is 576 = 512 latent + 64 rope)");
  }
  MLASPEC_RETURN_IF_ERROR(r.get_int("qk_nope_head_dim", 128, 1, 4096, &c.qk_nope_head_dim));
  MLASPEC_RETURN_IF_ERROR(r.get_int("v_head_dim", 128, 1, 4096, &c.v_head_dim));

  MLASPEC_RETURN_IF_ERROR(read_rope(root, r, source, &c));
  if (v3) {
    MLASPEC_RETURN_IF_ERROR(r.get_bool("rope_interleave", true, &c.rope.interleave));
  } else {
    // DeepseekV2Attention rotates interleaved pairs (complex multiplication), always.
    c.rope.interleave = true;
  }

  // MoE.
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("n_routed_experts", v3 ? 256 : 64, 0, 65536, &c.n_routed_experts));
  MLASPEC_RETURN_IF_ERROR(r.get_int("n_shared_experts", v3 ? 1 : 2, 0, 1024, &c.n_shared_experts));
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("first_k_dense_replace", v3 ? 3 : 0, 0, 4096, &c.first_k_dense_replace));
  MLASPEC_RETURN_IF_ERROR(r.get_bool("norm_topk_prob", v3, &c.norm_topk_prob));
  MLASPEC_RETURN_IF_ERROR(
      r.get_double("routed_scaling_factor", v3 ? 2.5 : 1.0, &c.routed_scaling_factor));
  int moe_layer_freq = 1;
  MLASPEC_RETURN_IF_ERROR(r.get_int("moe_layer_freq", 1, 0, 4096, &moe_layer_freq));
  if (moe_layer_freq != 1) {
    return unsupported_value(
        r, "moe_layer_freq", std::to_string(moe_layer_freq),
        "1 (transformers makes every layer from first_k_dense_replace on MoE)");
  }
  MLASPEC_RETURN_IF_ERROR(
      r.get_int("num_nextn_predict_layers", v3 ? 1 : 0, 0, 64, &c.num_nextn_predict_layers));

  std::string scoring, topk_method;
  MLASPEC_RETURN_IF_ERROR(r.get_string("scoring_func", v3 ? "sigmoid" : "softmax", &scoring));
  MLASPEC_RETURN_IF_ERROR(r.get_string("topk_method", v3 ? "noaux_tc" : "greedy", &topk_method));
  if (v3) {
    if (scoring != "sigmoid") {
      return unsupported_value(r, "scoring_func", "\"" + scoring + "\"",
                               "sigmoid for " + c.model_type);
    }
    if (topk_method != "noaux_tc") {
      return unsupported_value(r, "topk_method", "\"" + topk_method + "\"",
                               "noaux_tc for " + c.model_type);
    }
    c.router = RouterKind::kSigmoidNoauxTc;
  } else {
    if (scoring != "softmax") {
      return unsupported_value(r, "scoring_func", "\"" + scoring + "\"", "softmax for deepseek_v2");
    }
    if (topk_method == "greedy") {
      c.router = RouterKind::kSoftmaxGreedy;
    } else if (topk_method == "group_limited_greedy") {
      c.router = RouterKind::kSoftmaxGroupLimitedGreedy;
    } else {
      return unsupported_value(r, "topk_method", "\"" + topk_method + "\"",
                               "greedy, group_limited_greedy for deepseek_v2");
    }
    if (c.norm_topk_prob) {
      return unsupported_value(r, "norm_topk_prob", "true",
                               "false for deepseek_v2 (transformers' DeepseekV2 router never "
                               "renormalises, so there is no reference for true)");
    }
  }

  const bool any_moe = c.first_k_dense_replace < c.num_hidden_layers;
  if (any_moe) {
    if (c.n_routed_experts < 1) {
      return invalid_argument(r.where("n_routed_experts") + " = " +
                              std::to_string(c.n_routed_experts) + " but layers " +
                              std::to_string(c.first_k_dense_replace) + ".." +
                              std::to_string(c.num_hidden_layers - 1) + " are MoE");
    }
    if (!v3 && !r.has("num_experts_per_tok")) {
      return invalid_argument(r.where("num_experts_per_tok") + " is missing; MoE layers need it");
    }
    MLASPEC_RETURN_IF_ERROR(
        r.get_int("num_experts_per_tok", 8, 1, c.n_routed_experts, &c.num_experts_per_tok));
    const bool grouped = c.router != RouterKind::kSoftmaxGreedy;
    if (grouped) {
      if (!r.has("n_group") && !v3) {
        return invalid_argument(r.where("n_group") + " is missing; " + topk_method + " needs it");
      }
      MLASPEC_RETURN_IF_ERROR(r.get_int("n_group", 8, 1, c.n_routed_experts, &c.n_group));
      if (c.n_routed_experts % c.n_group != 0) {
        return invalid_argument(r.where("n_group") + " = " + std::to_string(c.n_group) +
                                " does not divide n_routed_experts " +
                                std::to_string(c.n_routed_experts));
      }
      if (c.router == RouterKind::kSigmoidNoauxTc && c.n_routed_experts / c.n_group < 2) {
        return unsupported(r.where("n_group") + " = " + std::to_string(c.n_group) + " leaves " +
                           std::to_string(c.n_routed_experts / c.n_group) +
                           " expert per group; noaux_tc scores a group by its top 2");
      }
      if (!r.has("topk_group") && !v3) {
        return invalid_argument(r.where("topk_group") + " is missing; " + topk_method +
                                " needs it");
      }
      MLASPEC_RETURN_IF_ERROR(r.get_int("topk_group", 4, 1, c.n_group, &c.topk_group));
      const int reachable = c.topk_group * (c.n_routed_experts / c.n_group);
      if (c.num_experts_per_tok > reachable) {
        return invalid_argument(r.where("num_experts_per_tok") + " = " +
                                std::to_string(c.num_experts_per_tok) + " exceeds the " +
                                std::to_string(reachable) + " experts of topk_group " +
                                std::to_string(c.topk_group) + " groups");
      }
    } else {
      c.n_group = 1;
      c.topk_group = 1;
    }
  }

  MLASPEC_RETURN_IF_ERROR(read_quantization(root, r, source, &c));
  return c;
}

Result<ModelConfig> load_model_config(const std::filesystem::path& path) {
  std::filesystem::path file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) file = path / "config.json";
  std::ifstream in(file, std::ios::binary);
  if (!in) return not_found(file.string() + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model_config(text.str(), file.string());
}

std::string ModelConfig::describe() const {
  std::ostringstream os;
  os << "model_type " << model_type << " (" << family_name(family) << " family)\n"
     << "vocab " << vocab_size << ", hidden " << hidden_size << ", layers " << num_hidden_layers
     << ", heads " << num_attention_heads << ", rms_norm_eps " << rms_norm_eps
     << ", max_position_embeddings " << max_position_embeddings << "\n"
     << "MLA: q_lora_rank " << (has_q_lora() ? std::to_string(q_lora_rank) : "none (q_proj)")
     << ", kv_lora_rank " << kv_lora_rank << ", qk_nope " << qk_nope_head_dim << ", qk_rope "
     << qk_rope_head_dim << ", v " << v_head_dim << "\n"
     << "RoPE: " << (rope.type == RopeConfig::Type::kYarn ? "yarn" : "default") << ", theta "
     << rope.theta << (rope.interleave ? ", interleaved pairs" : ", rotate_half pairs");
  if (rope.type == RopeConfig::Type::kYarn) {
    os << ", factor " << rope.factor << ", beta_fast " << rope.beta_fast << ", beta_slow "
       << rope.beta_slow << ", mscale " << rope.mscale << ", mscale_all_dim " << rope.mscale_all_dim
       << ", original_max_position_embeddings " << rope.original_max_position_embeddings
       << ", cos/sin factor " << rope.attention_factor;
  }
  os << "\nsoftmax scale " << softmax_scale() << "\n";
  if (first_k_dense_replace < num_hidden_layers) {
    os << "MoE: layers " << first_k_dense_replace << ".." << num_hidden_layers - 1 << ", "
       << n_routed_experts << " routed experts (inter " << moe_intermediate_size << "), top "
       << num_experts_per_tok << ", " << n_shared_experts << " shared, router "
       << router_name(router);
    if (router != RouterKind::kSoftmaxGreedy) {
      os << " (" << n_group << " groups, keep " << topk_group << ")";
    }
    os << ", norm_topk_prob " << (norm_topk_prob ? "true" : "false") << ", routed_scaling_factor "
       << routed_scaling_factor << "\n";
  }
  if (first_k_dense_replace > 0) {
    os << "dense MLP: layers 0.." << std::min(first_k_dense_replace, num_hidden_layers) - 1
       << " (inter " << intermediate_size << ")\n";
  }
  os << "tie_word_embeddings " << (tie_word_embeddings ? "true" : "false") << ", weights "
     << (fp8.enabled ? "fp8 e4m3 blocks " + std::to_string(fp8.block_rows) + "x" +
                           std::to_string(fp8.block_cols)
                     : std::string("unquantized"))
     << ", MTP modules " << num_nextn_predict_layers << " (not run)";
  return os.str();
}

}  // namespace mlaspec::model
