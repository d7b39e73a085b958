// The benchmark harness on a CUDA backend: a call is checked against the CPU reference, then timed
// as exactly the replays asked for (TimeOptions::reps; it once took at least 30 whatever was asked,
// while calibrate and bench recorded the smaller count).
#include <gtest/gtest.h>

#include "mlaspec/attention/registry.h"
#include "mlaspec/bench/harness.h"

namespace mlaspec::bench {
namespace {

TEST(GpuBenchTiming, TimesTheRepsAskedFor) {
  auto registry = attn::BackendRegistry::with_builtin_backends();
  Result<attn::Backend*> fold = registry->get("cuda_fold");
  ASSERT_TRUE(fold.ok()) << fold.status().to_string();
  BenchConfig c;
  c.num_heads = 16;
  c.q_len = 2;
  c.seq_len = 777;
  for (int reps : {1, 3, 41}) {
    TimeOptions o;
    o.reps = reps;
    o.warmup = 1;
    Result<Timing> t = time_backend(*fold.value(), c, o);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_TRUE(t.value().checked);
    EXPECT_EQ(t.value().reps, reps);
    ASSERT_EQ(t.value().samples_us.size(), static_cast<size_t>(reps));
    for (double us : t.value().samples_us) EXPECT_GT(us, 0.0);
  }
}

}  // namespace
}  // namespace mlaspec::bench
