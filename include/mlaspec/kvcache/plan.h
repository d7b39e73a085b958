// Sizing the target and draft pools from one byte budget.
//
// Policy: equal token capacity. Every request that holds target KV also holds draft KV for the
// same tokens (the drafter is conditioned on the same context), so the useful capacity of the
// pair is the smaller of the two; splitting the budget so both hold the same number of tokens
// wastes nothing. With bytes per token bt (target) and bd (draft), the plan takes the largest
// token count T, a multiple of lcm(target page size, draft page size), with T * (bt + bd) <=
// budget, and gives each pool T / page_size pages. bd = 0 (a drafter without a KV cache, or no
// drafter) gives the whole budget to the target.
#pragma once

#include <cstdint>
#include <string>

#include "mlaspec/core/status.h"

namespace mlaspec::kv {

struct PoolPlanRequest {
  int64_t byte_budget = 0;
  int64_t target_bytes_per_token = 0;  // kv_bytes_per_token(...) of the target (all layers)
  int64_t draft_bytes_per_token = 0;   // of the drafter; 0 = no draft pool
  int target_page_size = 64;
  int draft_page_size = 64;
};

struct PoolPlan {
  int64_t tokens = 0;  // token capacity of each pool
  int target_pages = 0;
  int draft_pages = 0;  // 0 when draft_bytes_per_token = 0
  int64_t target_bytes = 0;
  int64_t draft_bytes = 0;
  std::string to_string() const;  // "tokens=... target=N pages (X MiB), draft=M pages (Y MiB)"
};

// kInvalidArgument for non-positive sizes; kResourceExhausted if the budget cannot hold one page
// of each pool.
Result<PoolPlan> plan_pools(const PoolPlanRequest& request);

}  // namespace mlaspec::kv
