// Sizing the target and draft pools from one byte budget.
#include <gtest/gtest.h>

#include "mlaspec/kvcache/plan.h"
#include "mlaspec/kvcache/pool.h"

namespace mlaspec::kv {
namespace {

constexpr DType BF = DType::kBF16, FP8 = DType::kFP8E4M3;

TEST(PoolPlan, EqualTokenCapacity) {
  // DeepSeek-V3-like target: 61 layers of fp8 MLA rows; a 1-layer bf16 MLA drafter.
  const int64_t bt = kv_bytes_per_token(KvLayout::mla(), 61, FP8);  // 35136
  const int64_t bd = kv_bytes_per_token(KvLayout::mla(), 1, BF);    // 1152
  PoolPlanRequest r;
  r.byte_budget = int64_t{8} << 30;
  r.target_bytes_per_token = bt;
  r.draft_bytes_per_token = bd;
  PoolPlan p = plan_pools(r).value();
  EXPECT_EQ(p.tokens % 64, 0);
  EXPECT_EQ(p.target_pages, p.tokens / 64);
  EXPECT_EQ(p.draft_pages, p.tokens / 64);
  EXPECT_EQ(p.target_bytes, p.tokens * bt);
  EXPECT_EQ(p.draft_bytes, p.tokens * bd);
  EXPECT_LE(p.target_bytes + p.draft_bytes, r.byte_budget);
  EXPECT_GT(p.target_bytes + p.draft_bytes + 64 * (bt + bd), r.byte_budget);  // maximal
  EXPECT_EQ(p.tokens, (r.byte_budget / (64 * (bt + bd))) * 64);
  EXPECT_NE(p.to_string().find("tokens="), std::string::npos);

  // Different page sizes: capacity is a multiple of both.
  r.target_page_size = 64;
  r.draft_page_size = 16;
  r.byte_budget = 1000 * (bt + bd);
  p = plan_pools(r).value();
  EXPECT_EQ(p.tokens, 960);
  EXPECT_EQ(p.target_pages, 15);
  EXPECT_EQ(p.draft_pages, 60);
  r.target_page_size = 48;
  r.draft_page_size = 64;  // lcm 192
  p = plan_pools(r).value();
  EXPECT_EQ(p.tokens, 960);
  EXPECT_EQ(p.target_pages, 20);
  EXPECT_EQ(p.draft_pages, 15);

  // No draft KV: everything to the target.
  r.draft_bytes_per_token = 0;
  r.target_page_size = 64;
  r.byte_budget = 100 * 64 * bt + 5;
  p = plan_pools(r).value();
  EXPECT_EQ(p.target_pages, 100);
  EXPECT_EQ(p.draft_pages, 0);
  EXPECT_EQ(p.draft_bytes, 0);
}

TEST(PoolPlan, Errors) {
  PoolPlanRequest r;
  r.byte_budget = 1000;
  r.target_bytes_per_token = 100;
  r.draft_bytes_per_token = 10;
  Status st = plan_pools(r).status();
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("byte budget 1000 is below the 7040 bytes of 64 tokens"),
            std::string::npos)
      << st.message();
  r.byte_budget = 0;
  EXPECT_EQ(plan_pools(r).status().code(), StatusCode::kInvalidArgument);
  r.byte_budget = 1 << 20;
  r.target_bytes_per_token = 0;
  EXPECT_EQ(plan_pools(r).status().code(), StatusCode::kInvalidArgument);
  r.target_bytes_per_token = 10;
  r.draft_bytes_per_token = -1;
  EXPECT_EQ(plan_pools(r).status().code(), StatusCode::kInvalidArgument);
  r.draft_bytes_per_token = 1;
  r.draft_page_size = 0;
  EXPECT_EQ(plan_pools(r).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mlaspec::kv
