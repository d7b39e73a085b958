// Fuzz target: cost-model profile JSON (a user's --profile file). Parsing returns a profile or a
// Status for any input; every machine of an accepted profile prices exact and fp8-math shapes,
// calibrated or derived, at a time that is not negative (terms are checked >= 0 at parse).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "mlaspec/attention/cost_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mlaspec;
  using namespace mlaspec::attn;
  auto p = parse_profile({reinterpret_cast<const char*>(data), size}, "fuzz/profile.json");
  if (!p.ok()) return 0;
  for (const CostModel& m : p->machines) {
    for (const CostEntry& e : m.entries()) {
      for (bool fp8_math : {false, true}) {
        VerifyShape s;
        s.batch = 3;
        s.q_len = 5;
        s.num_heads = 16;
        s.kv_dtype = fp8_math ? DType::kFP8E4M3 : e.kv_dtype;
        s.max_seq_len = 70001;
        s.total_kv = 3 * 70001;
        s.total_q = 15;
        s.fp8_math = fp8_math;
        auto est = m.estimate(e.backend, KvReadPattern::kOncePerRequest, s);
        if (est && est->us < 0) __builtin_trap();
      }
    }
  }
  return 0;
}
