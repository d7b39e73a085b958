// model/footprint.h: parameter counts against published model sizes, the expected-experts
// estimate, and the memory budget's refusal (the error names the bytes needed and available).
#include "mlaspec/model/footprint.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlaspec::model {
namespace {

// DeepSeek-V2-Lite's config.json (15.7B parameters, 2.4B activated per token).
ModelConfig v2_lite() {
  ModelConfig c;
  c.vocab_size = 102400;
  c.hidden_size = 2048;
  c.intermediate_size = 10944;
  c.moe_intermediate_size = 1408;
  c.num_hidden_layers = 27;
  c.num_attention_heads = 16;
  c.q_lora_rank = 0;
  c.kv_lora_rank = 512;
  c.qk_nope_head_dim = 128;
  c.qk_rope_head_dim = 64;
  c.v_head_dim = 128;
  c.n_routed_experts = 64;
  c.n_shared_experts = 2;
  c.num_experts_per_tok = 6;
  c.first_k_dense_replace = 1;
  c.router = RouterKind::kSoftmaxGreedy;
  return c;
}

// DeepSeek-V3's (671B parameters, 37B activated; the MTP layer not counted: 14B of the 685B).
ModelConfig v3() {
  ModelConfig c;
  c.vocab_size = 129280;
  c.hidden_size = 7168;
  c.intermediate_size = 18432;
  c.moe_intermediate_size = 2048;
  c.num_hidden_layers = 61;
  c.num_attention_heads = 128;
  c.q_lora_rank = 1536;
  c.n_routed_experts = 256;
  c.n_shared_experts = 1;
  c.num_experts_per_tok = 8;
  c.n_group = 8;
  c.topk_group = 4;
  c.first_k_dense_replace = 3;
  return c;
}

TEST(Footprint, PublishedSizes) {
  const WeightFootprint a = weight_footprint(v2_lite());
  EXPECT_NEAR(a.total_params() / 1e9, 15.7, 0.1);
  EXPECT_EQ(a.moe_layers, 26);
  EXPECT_EQ(a.routed_experts, 64);
  EXPECT_EQ(a.expert_params, 3 * 2048 * 1408);
  // Activated per token: 6 experts, plus the embedding row (negligible).
  EXPECT_NEAR(a.step_params(6) / 1e9, 2.4, 0.15);
  const WeightFootprint b = weight_footprint(v3());
  EXPECT_NEAR(b.total_params() / 1e9, 671, 2);
  EXPECT_NEAR(b.step_params(8) / 1e9, 37, 1.5);
  // Tying the embeddings drops the separate table and nothing a step reads.
  ModelConfig tied = v2_lite();
  tied.tie_word_embeddings = true;
  const WeightFootprint t = weight_footprint(tied);
  EXPECT_EQ(t.total_params(), a.total_params() - int64_t{102400} * 2048);
  EXPECT_EQ(t.step_params(6), a.step_params(6));
}

TEST(Footprint, ExpectedDistinctExperts) {
  const ModelConfig c = v2_lite();
  EXPECT_DOUBLE_EQ(expected_distinct_experts(c, 1), 6.0);
  // The figure: eight tokens touch ~35 of 64 experts.
  EXPECT_NEAR(expected_distinct_experts(c, 8), 35.0, 1.0);
  EXPECT_NEAR(expected_distinct_experts(c, 1000), 64.0, 1e-6);
  ModelConfig dense = c;
  dense.n_routed_experts = 0;
  EXPECT_EQ(expected_distinct_experts(dense, 8), 0.0);
}

TEST(Footprint, MemoryBudgetRefusesWhatDoesNotFit) {
  const ModelConfig c = v2_lite();
  const int64_t kv = int64_t{4} << 30, draft = int64_t{1} << 30;
  const MemoryBudget b = size_memory(c, 2, kv, draft, 256);
  EXPECT_NEAR(static_cast<double>(b.weights) / 1e9, 31.4, 0.3);  // bf16, routers f32
  EXPECT_EQ(b.target_kv, kv);
  EXPECT_EQ(b.draft_kv, draft);
  EXPECT_GT(b.workspace, int64_t{64} << 20);
  EXPECT_LT(b.workspace, int64_t{1} << 30);
  EXPECT_EQ(b.total(), b.weights + kv + draft + b.workspace);
  // A workspace grows with the chunk.
  EXPECT_GT(size_memory(c, 2, 0, 0, 1024).workspace, b.workspace);

  const int64_t h200 = int64_t{140} << 30;
  EXPECT_TRUE(check_memory(b, h200, 0.9).ok());
  const Status s = check_memory(b, int64_t{30} << 30, 0.9);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  const std::string m = s.to_string();
  EXPECT_NE(m.find("needs " + std::to_string(b.total()) + " bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("of the " + std::to_string(int64_t{30} << 30) + " bytes available"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("weights "), std::string::npos) << m;
  EXPECT_FALSE(check_memory(b, h200, 0.0).ok());
  EXPECT_FALSE(check_memory(b, h200, 1.5).ok());
}

}  // namespace
}  // namespace mlaspec::model
