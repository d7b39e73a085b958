// config.json: defaults per family, RoPE/YaRN and the softmax scale, and every refusal.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/test_helpers.h"
#include "mlaspec/model/config.h"
#include "model/model_test_util.h"

namespace mlaspec::model {
namespace {

using nlohmann::json;

json tiny_v3() {
  return json{{"model_type", "deepseek_v3"},
              {"vocab_size", 256},
              {"hidden_size", 64},
              {"intermediate_size", 96},
              {"moe_intermediate_size", 32},
              {"num_hidden_layers", 2},
              {"num_attention_heads", 8},
              {"n_routed_experts", 8},
              {"num_experts_per_tok", 2},
              {"n_group", 4},
              {"topk_group", 2},
              {"first_k_dense_replace", 1},
              {"q_lora_rank", 32}};
}

Result<ModelConfig> parse(const json& j) {
  return parse_model_config(j.dump(), "test/config.json");
}

std::string error_of(const json& j) {
  Result<ModelConfig> c = parse(j);
  EXPECT_FALSE(c.ok()) << j.dump();
  return c.ok() ? "" : c.status().to_string();
}

TEST(Config, DeepseekV3DefaultsAreTransformers) {
  const ModelConfig c = parse(json{{"model_type", "deepseek_v3"}}).value();
  EXPECT_EQ(c.family, Family::kDeepseekV3);
  EXPECT_EQ(c.vocab_size, 129280);
  EXPECT_EQ(c.hidden_size, 7168);
  EXPECT_EQ(c.num_hidden_layers, 61);
  EXPECT_EQ(c.num_attention_heads, 128);
  EXPECT_EQ(c.q_lora_rank, 1536);
  EXPECT_EQ(c.qk_nope_head_dim, 128);
  EXPECT_EQ(c.v_head_dim, 128);
  EXPECT_EQ(c.n_routed_experts, 256);
  EXPECT_EQ(c.num_experts_per_tok, 8);
  EXPECT_EQ(c.n_group, 8);
  EXPECT_EQ(c.topk_group, 4);
  EXPECT_EQ(c.first_k_dense_replace, 3);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_DOUBLE_EQ(c.routed_scaling_factor, 2.5);
  EXPECT_TRUE(c.rope.interleave);
  EXPECT_EQ(c.router, RouterKind::kSigmoidNoauxTc);
  EXPECT_FALSE(c.tie_word_embeddings);
  EXPECT_DOUBLE_EQ(c.softmax_scale(), 1.0 / std::sqrt(192.0));
  EXPECT_FALSE(c.is_moe_layer(2));
  EXPECT_TRUE(c.is_moe_layer(3));
}

TEST(Config, DeepseekV2DefaultsAreTransformers) {
  const ModelConfig c =
      parse(json{{"model_type", "deepseek_v2"}, {"num_experts_per_tok", 6}}).value();
  EXPECT_EQ(c.family, Family::kDeepseekV2);
  EXPECT_EQ(c.vocab_size, 102400);
  EXPECT_EQ(c.hidden_size, 4096);
  EXPECT_EQ(c.moe_intermediate_size, 1407);
  EXPECT_EQ(c.n_routed_experts, 64);
  EXPECT_EQ(c.n_shared_experts, 2);
  EXPECT_EQ(c.first_k_dense_replace, 0);
  EXPECT_FALSE(c.norm_topk_prob);
  EXPECT_DOUBLE_EQ(c.routed_scaling_factor, 1.0);
  EXPECT_EQ(c.router, RouterKind::kSoftmaxGreedy);
  EXPECT_TRUE(c.rope.interleave);  // V2 always rotates interleaved pairs
}

TEST(Config, KimiK2IsTheV3Family) {
  json j = tiny_v3();
  j["model_type"] = "kimi_k2";
  j["n_group"] = 1;
  j["topk_group"] = 1;
  const ModelConfig c = parse(j).value();
  EXPECT_EQ(c.family, Family::kDeepseekV3);
  EXPECT_EQ(c.model_type, "kimi_k2");
}

TEST(Config, NullQLoraMeansPlainQProj) {
  json j = tiny_v3();
  j["q_lora_rank"] = nullptr;
  EXPECT_FALSE(parse(j).value().has_q_lora());
}

TEST(Config, GoldenConfigsParse) {
  for (const std::string& name : testing::golden_models()) {
    Result<ModelConfig> c = load_model_config(testing::models_dir() / name);
    ASSERT_TRUE(c.ok()) << name << ": " << c.status().to_string();
  }
}

// YaRN as transformers: cos/sin factor mscale(f, mscale) / mscale(f, mscale_all_dim), softmax
// scale qk_head_dim^-0.5 * mscale(f, mscale_all_dim)^2.
TEST(Config, YarnScalesAsTransformers) {
  json j = tiny_v3();
  j["qk_nope_head_dim"] = 128;
  j["rope_scaling"] = {{"type", "yarn"},
                       {"factor", 40},
                       {"mscale", 1.0},
                       {"mscale_all_dim", 1.0},
                       {"beta_fast", 32},
                       {"beta_slow", 1},
                       {"original_max_position_embeddings", 4096}};
  j["rope_theta"] = 10000;
  ModelConfig c = parse(j).value();
  EXPECT_EQ(c.rope.type, RopeConfig::Type::kYarn);
  EXPECT_DOUBLE_EQ(c.rope.attention_factor, 1.0);
  const double m = 0.1 * std::log(40.0) + 1.0;
  EXPECT_DOUBLE_EQ(c.softmax_scale(), m * m / std::sqrt(192.0));  // DeepSeek-V3's 0.1352...
  EXPECT_NEAR(c.softmax_scale(), 0.13523, 1e-5);

  // mscale without mscale_all_dim: the factor goes to cos/sin, not to the softmax scale.
  j["rope_scaling"].erase("mscale_all_dim");
  c = parse(j).value();
  EXPECT_DOUBLE_EQ(c.rope.attention_factor, m);
  EXPECT_DOUBLE_EQ(c.softmax_scale(), 1.0 / std::sqrt(192.0));

  // DeepSeek-V2's mscale = mscale_all_dim = 0.707.
  j["rope_scaling"]["mscale"] = 0.707;
  j["rope_scaling"]["mscale_all_dim"] = 0.707;
  c = parse(j).value();
  EXPECT_DOUBLE_EQ(c.rope.attention_factor, 1.0);
  const double m2 = 0.1 * 0.707 * std::log(40.0) + 1.0;
  EXPECT_DOUBLE_EQ(c.softmax_scale(), m2 * m2 / std::sqrt(192.0));
}

TEST(Config, RopeParametersOfTransformers5) {
  json j = tiny_v3();
  j["rope_parameters"] = {{"rope_type", "yarn"},
                          {"rope_theta", 50000.0},
                          {"factor", 32.0},
                          {"original_max_position_embeddings", 4096}};
  j["rope_interleave"] = false;
  const ModelConfig c = parse(j).value();
  EXPECT_DOUBLE_EQ(c.rope.theta, 50000.0);
  EXPECT_DOUBLE_EQ(c.rope.factor, 32.0);
  EXPECT_EQ(c.rope.original_max_position_embeddings, 4096);
  EXPECT_DOUBLE_EQ(c.rope.beta_fast, 32.0);
  EXPECT_DOUBLE_EQ(c.rope.beta_slow, 1.0);
  EXPECT_FALSE(c.rope.interleave);
  EXPECT_DOUBLE_EQ(c.rope.attention_factor, 0.1 * std::log(32.0) + 1.0);
}

TEST(Config, YarnFactorDefaultsToTheContextRatio) {
  json j = tiny_v3();
  j["max_position_embeddings"] = 16384;
  j["rope_scaling"] = {{"type", "yarn"}, {"original_max_position_embeddings", 4096}};
  EXPECT_DOUBLE_EQ(parse(j).value().rope.factor, 4.0);
}

TEST(Config, Fp8QuantizationConfig) {
  json j = tiny_v3();
  j["quantization_config"] = {{"quant_method", "fp8"},
                              {"fmt", "e4m3"},
                              {"activation_scheme", "dynamic"},
                              {"weight_block_size", {128, 64}}};
  const ModelConfig c = parse(j).value();
  EXPECT_TRUE(c.fp8.enabled);
  EXPECT_EQ(c.fp8.block_rows, 128);
  EXPECT_EQ(c.fp8.block_cols, 64);
}

struct Refusal {
  const char* name;
  json patch;  // merged into tiny_v3()
  const char* message;
};

class ConfigRefusals : public ::testing::TestWithParam<Refusal> {};

TEST_P(ConfigRefusals, NamesKeyValueAndWhatIsSupported) {
  json j = tiny_v3();
  j.merge_patch(GetParam().patch);
  EXPECT_CONTAINS(error_of(j), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    All, ConfigRefusals,
    ::testing::Values(
        Refusal{"kv_lora_rank",
                {{"kv_lora_rank", 256}},
                "test/config.json: key \"kv_lora_rank\" = 256 is unsupported; supported: 512"},
        Refusal{"qk_rope_head_dim",
                {{"qk_rope_head_dim", 32}},
                "key \"qk_rope_head_dim\" = 32 is unsupported; supported: 64"},
        Refusal{"hidden_act",
                {{"hidden_act", "gelu"}},
                "key \"hidden_act\" = \"gelu\" is unsupported; supported: silu"},
        Refusal{"rope_type",
                {{"rope_scaling", {{"type", "dynamic"}, {"factor", 2.0}}}},
                "key \"rope_scaling.type\" = \"dynamic\" is unsupported; supported: default, yarn"},
        Refusal{"rope_type_v5",
                {{"rope_parameters", {{"rope_type", "llama3"}}}},
                "key \"rope_parameters.rope_type\" = \"llama3\" is unsupported"},
        Refusal{"model_type",
                {{"model_type", "llama"}},
                "key \"model_type\" = \"llama\" is unsupported; supported: deepseek_v3, kimi_k2, "
                "deepseek_v2"},
        Refusal{"attention_bias",
                {{"attention_bias", true}},
                "key \"attention_bias\" = true is unsupported; supported: false"},
        Refusal{"scoring_func",
                {{"scoring_func", "softmax"}},
                "key \"scoring_func\" = \"softmax\" is unsupported; supported: sigmoid"},
        Refusal{"topk_method_v3",
                {{"topk_method", "greedy"}},
                "key \"topk_method\" = \"greedy\" is unsupported; supported: noaux_tc"},
        Refusal{"topk_method_v2",
                {{"model_type", "deepseek_v2"}, {"topk_method", "noaux_tc"}},
                "supported: greedy, group_limited_greedy for deepseek_v2"},
        Refusal{"norm_topk_v2",
                {{"model_type", "deepseek_v2"}, {"norm_topk_prob", true}},
                "key \"norm_topk_prob\" = true is unsupported; supported: false for deepseek_v2"},
        Refusal{"moe_layer_freq",
                {{"moe_layer_freq", 2}},
                "key \"moe_layer_freq\" = 2 is unsupported; supported: 1"},
        Refusal{
            "quant_method",
            {{"quantization_config", {{"quant_method", "awq"}}}},
            "key \"quantization_config.quant_method\" = \"awq\" is unsupported; supported: fp8"},
        Refusal{"quant_fmt",
                {{"quantization_config", {{"quant_method", "fp8"}, {"fmt", "e5m2"}}}},
                "key \"quantization_config.fmt\" = \"e5m2\" is unsupported; supported: e4m3"},
        Refusal{"block_size",
                {{"quantization_config", {{"quant_method", "fp8"}, {"weight_block_size", {0}}}}},
                "weight_block_size\" = [0] is not two positive integers"},
        Refusal{"partial_rotary",
                {{"rope_parameters", {{"rope_type", "default"}, {"partial_rotary_factor", 0.5}}}},
                "partial_rotary_factor\" = 0.5 is unsupported; supported: 1"},
        Refusal{"n_group_divides",
                {{"n_group", 3}},
                "key \"n_group\" = 3 does not divide n_routed_experts 8"},
        Refusal{"group_of_one",
                {{"n_group", 8}, {"topk_group", 2}},
                "leaves 1 expert per group; noaux_tc scores a group by its top 2"},
        Refusal{"topk_reach",
                {{"num_experts_per_tok", 5}},
                "key \"num_experts_per_tok\" = 5 exceeds the 4 experts of topk_group 2 groups"},
        Refusal{"topk_range",
                {{"num_experts_per_tok", 9}},
                "key \"num_experts_per_tok\" = 9 is out of range [1, 8]"},
        Refusal{"v2_groups_missing",
                {{"model_type", "deepseek_v2"},
                 {"topk_method", "group_limited_greedy"},
                 {"n_group", nullptr}},
                "key \"n_group\" is missing; group_limited_greedy needs it"},
        Refusal{"not_integer",
                {{"hidden_size", "64"}},
                "key \"hidden_size\" = \"64\" is not an integer"},
        Refusal{
            "fractional", {{"hidden_size", 64.5}}, "key \"hidden_size\" = 64.5 is not an integer"},
        Refusal{"negative",
                {{"num_hidden_layers", 0}},
                "key \"num_hidden_layers\" = 0 is out of range [1, 4096]"},
        Refusal{"eps", {{"rms_norm_eps", -1}}, "key \"rms_norm_eps\" = -1 must be > 0"},
        Refusal{"not_bool",
                {{"tie_word_embeddings", 1}},
                "key \"tie_word_embeddings\" = 1 is not a bool"},
        Refusal{"yarn_factor",
                {{"rope_scaling", {{"type", "yarn"}, {"factor", -2}}}},
                "key \"rope_scaling.factor\" = -2.000000 must be > 0"},
        Refusal{
            "rope_not_object", {{"rope_scaling", 4}}, "key \"rope_scaling\" = 4 is not an object"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Config, NotJson) {
  Result<ModelConfig> c = parse_model_config("{\"model_type\": ", "x/config.json");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().to_string(), "data_loss: x/config.json: not valid JSON");
  c = parse_model_config("[1, 2]", "x/config.json");
  EXPECT_CONTAINS(c.status().to_string(), "x/config.json: the top level is not a JSON object");
}

TEST(Config, MissingFile) {
  Result<ModelConfig> c = load_model_config("/nonexistent/model");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().to_string(), "not_found: /nonexistent/model: cannot open");
}

}  // namespace
}  // namespace mlaspec::model
