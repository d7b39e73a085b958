#include "mlaspec/kvcache/plan.h"

#include <limits>
#include <numeric>
#include <sstream>

namespace mlaspec::kv {
namespace {
std::string str(int64_t v) {
  return std::to_string(v);
}
}  // namespace

std::string PoolPlan::to_string() const {
  std::ostringstream os;
  os << "tokens=" << tokens << ", target=" << target_pages << " pages (" << target_bytes / (1 << 20)
     << " MiB), draft=" << draft_pages << " pages (" << draft_bytes / (1 << 20) << " MiB)";
  return os.str();
}

Result<PoolPlan> plan_pools(const PoolPlanRequest& r) {
  if (r.byte_budget <= 0)
    return invalid_argument("pool plan: byte budget " + str(r.byte_budget) + " must be > 0");
  if (r.target_bytes_per_token <= 0) {
    return invalid_argument("pool plan: target bytes per token " + str(r.target_bytes_per_token) +
                            " must be > 0");
  }
  if (r.draft_bytes_per_token < 0) {
    return invalid_argument("pool plan: draft bytes per token " + str(r.draft_bytes_per_token) +
                            " is negative");
  }
  if (r.target_page_size < 1)
    return invalid_argument("pool plan: target page size " + str(r.target_page_size) +
                            " is below 1");
  const bool has_draft = r.draft_bytes_per_token > 0;
  if (has_draft && r.draft_page_size < 1) {
    return invalid_argument("pool plan: draft page size " + str(r.draft_page_size) + " is below 1");
  }
  // Token capacity granule: a whole number of pages in each pool.
  const int64_t granule = has_draft
                              ? std::lcm(int64_t{r.target_page_size}, int64_t{r.draft_page_size})
                              : int64_t{r.target_page_size};
  const int64_t per_token = r.target_bytes_per_token + r.draft_bytes_per_token;
  const int64_t granule_bytes = granule * per_token;
  int64_t granules = r.byte_budget / granule_bytes;
  if (granules < 1) {
    return resource_exhausted("pool plan: byte budget " + str(r.byte_budget) + " is below the " +
                              str(granule_bytes) + " bytes of " + str(granule) +
                              " tokens in both pools (" + str(per_token) + " bytes per token)");
  }
  // Page ids and slots are int32.
  const int64_t max_tokens = std::numeric_limits<int32_t>::max();
  granules = std::min(granules, max_tokens / granule);
  PoolPlan p;
  p.tokens = granules * granule;
  p.target_pages = static_cast<int>(p.tokens / r.target_page_size);
  p.target_bytes = p.tokens * r.target_bytes_per_token;
  if (has_draft) {
    p.draft_pages = static_cast<int>(p.tokens / r.draft_page_size);
    p.draft_bytes = p.tokens * r.draft_bytes_per_token;
  }
  return p;
}

}  // namespace mlaspec::kv
