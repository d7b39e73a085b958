// Split-KV partials and their merge.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "common/verify_problem.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn {
namespace {

struct Partial {
  std::vector<float> o, lse;
  TensorView o_view(int B, int Q, int H) {
    return TensorView(o.data(), DType::kF32, {B, Q, H, kHeadDimV});
  }
  TensorView lse_view(int B, int Q, int H) {
    return TensorView(lse.data(), DType::kF32, {B, Q, H});
  }
};

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::ProblemSpec s;
    s.batch = 2;
    s.q_len = 5;
    s.num_heads = 8;
    s.page_size = 16;
    s.seq_lens = {150, 61};
    s.kv_dtype = DType::kFP8E4M3;
    s.kv_scale = 0.3f;
    p = testing::make_problem(s);
    out.assign(static_cast<size_t>(p.out_elems()), 0);
    lse.assign(static_cast<size_t>(p.lse_elems()), 0);
    args = p.host_args(TensorView(out.data(), DType::kBF16, {2, 5, 8, kHeadDimV}),
                       TensorView(lse.data(), DType::kF32, {2, 5, 8}));
  }
  Partial partial(int64_t begin, int64_t end) {
    Partial r;
    r.o.assign(static_cast<size_t>(p.out_elems()), std::nanf(""));
    r.lse.assign(static_cast<size_t>(p.lse_elems()), std::nanf(""));
    Status st = cpu_verify_partial(args, begin, end, r.o_view(2, 5, 8), r.lse_view(2, 5, 8));
    EXPECT_TRUE(st.ok()) << st.to_string();
    return r;
  }
  // merge_partials (merge) or fold_partials (fold) of `parts` into a fresh NaN-poisoned partial.
  template <typename Fn>
  Partial reduce(std::vector<Partial*> parts, Fn fn) {
    std::vector<TensorView> os, ls;
    for (Partial* q : parts) {
      os.push_back(q->o_view(2, 5, 8));
      ls.push_back(q->lse_view(2, 5, 8));
    }
    Partial r;
    r.o.assign(static_cast<size_t>(p.out_elems()), std::nanf(""));
    r.lse.assign(static_cast<size_t>(p.lse_elems()), std::nanf(""));
    Status st = fn(os, ls, r.o_view(2, 5, 8), r.lse_view(2, 5, 8));
    EXPECT_TRUE(st.ok()) << st.to_string();
    return r;
  }
  Partial merge(std::vector<Partial*> parts) { return reduce(parts, merge_partials); }
  Partial fold(std::vector<Partial*> parts) { return reduce(parts, fold_partials); }
  static bool same_bits(const Partial& a, const Partial& b) {
    return std::memcmp(a.o.data(), b.o.data(), a.o.size() * 4) == 0 &&
           std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4) == 0;
  }
  testing::Problem p;
  std::vector<uint16_t> out;
  std::vector<float> lse;
  VerifyArgs args;
};

TEST_F(MergeTest, SinglePartialIsExact) {
  Partial full = partial(0, 1 << 20);
  Partial merged = merge({&full});
  EXPECT_EQ(0, std::memcmp(full.o.data(), merged.o.data(), full.o.size() * 4));
  EXPECT_EQ(0, std::memcmp(full.lse.data(), merged.lse.data(), full.lse.size() * 4));
  // And the full-range partial is the full call before bf16 rounding.
  ASSERT_TRUE(cpu_verify(args).ok());
  for (size_t k = 0; k < out.size(); ++k) ASSERT_EQ(out[k], float_to_bf16_bits(full.o[k]));
  for (size_t k = 0; k < lse.size(); ++k) ASSERT_EQ(lse[k], full.lse[k]);
}

TEST_F(MergeTest, SplitsMergeToTheFullResult) {
  Partial full = partial(0, 1 << 20);
  // Boundaries that cut pages and that lie past some rows' visible range.
  Partial a = partial(0, 37), b = partial(37, 100), c = partial(100, 1 << 20);
  Partial m = merge({&a, &b, &c});
  for (size_t k = 0; k < full.o.size(); ++k)
    ASSERT_NEAR(m.o[k], full.o[k], 2e-6 + 2e-6 * std::fabs(full.o[k]));
  for (size_t k = 0; k < full.lse.size(); ++k)
    ASSERT_NEAR(m.lse[k], full.lse[k], 2e-6 * (1 + std::fabs(full.lse[k])));
}

TEST_F(MergeTest, MergeIsAssociativeWithinTolerance) {
  Partial a = partial(0, 20), b = partial(20, 90), c = partial(90, 1 << 20);
  Partial ab = merge({&a, &b}), bc = merge({&b, &c});
  Partial left = merge({&ab, &c}), right = merge({&a, &bc});
  for (size_t k = 0; k < left.o.size(); ++k)
    ASSERT_NEAR(left.o[k], right.o[k], 2e-6 + 2e-6 * std::fabs(left.o[k]));
  for (size_t k = 0; k < left.lse.size(); ++k)
    ASSERT_NEAR(left.lse[k], right.lse[k], 2e-6 * (1 + std::fabs(left.lse[k])));
}

TEST_F(MergeTest, EmptyRangesAreNeutral) {
  // Request 1 has 61 keys: [100, 200) is empty for all its rows, and [61, 61) for everyone.
  Partial empty = partial(61, 61);
  for (float v : empty.lse) ASSERT_EQ(v, -std::numeric_limits<float>::infinity());
  for (float v : empty.o) ASSERT_EQ(v, 0.0f);
  Partial a = partial(0, 100), tail = partial(100, 1 << 20);
  for (int64_t r = 5 * 8; r < 10 * 8; ++r)
    ASSERT_EQ(tail.lse[r], -std::numeric_limits<float>::infinity());
  Partial with = merge({&a, &empty, &tail});
  Partial without = merge({&a, &tail});
  EXPECT_EQ(0, std::memcmp(with.o.data(), without.o.data(), with.o.size() * 4));
  EXPECT_EQ(0, std::memcmp(with.lse.data(), without.lse.data(), with.lse.size() * 4));
  // All partials empty: out = 0, lse = -inf.
  Partial none = merge({&empty, &empty});
  for (float v : none.o) ASSERT_EQ(v, 0.0f);
  for (float v : none.lse) ASSERT_EQ(v, -std::numeric_limits<float>::infinity());
}

// An empty partial first must not lend the merge its lse as the max offset: merge({empty, a,
// tail}) is merge({a, tail}) bit for bit (a merge offsetting by partial 0's lse = -inf would
// compute exp(+inf) and give NaN or zero).
TEST_F(MergeTest, EmptyPartialFirstIsNeutral) {
  Partial empty = partial(61, 61);
  Partial a = partial(0, 100), tail = partial(100, 1 << 20);
  Partial without = merge({&a, &tail});
  EXPECT_TRUE(same_bits(merge({&empty, &a, &tail}), without));
  EXPECT_TRUE(same_bits(merge({&empty, &empty, &a, &tail}), without));
  EXPECT_TRUE(same_bits(fold({&empty, &a, &tail}), fold({&a, &tail})));
}

// Partials whose lse differ by more than ~88 (exp underflows in fp32 past that): the merge must
// offset by the largest lse, whichever partial holds it, giving a finite output equal to the
// larger partial and its lse. Offsetting by partial 0's lse overflows exp() when partial 0 is the
// small one.
TEST_F(MergeTest, LseFarApartGivesTheLargerPartial) {
  Partial small = partial(0, 37), large = partial(37, 1 << 20);
  for (float& v : small.lse) v = -50.0f;  // a partial that (nearly) nothing attends to
  for (float& v : large.lse) {
    if (v != -std::numeric_limits<float>::infinity()) v = 60.0f;  // 110 above the other
  }
  for (const auto& parts :
       {std::vector<Partial*>{&small, &large}, std::vector<Partial*>{&large, &small}}) {
    for (bool use_fold : {false, true}) {
      SCOPED_TRACE(std::string(use_fold ? "fold" : "merge") +
                   (parts[0] == &small ? ", small first" : ", large first"));
      Partial m = use_fold ? fold(parts) : merge(parts);
      for (size_t r = 0; r < large.lse.size(); ++r) {
        // Rows of request 1 past its 61 keys see nothing in `large`: the small partial alone.
        const Partial& want =
            large.lse[r] == -std::numeric_limits<float>::infinity() ? small : large;
        ASSERT_TRUE(std::isfinite(m.lse[r])) << r;
        ASSERT_EQ(m.lse[r], want.lse[r]) << r;
        for (int d = 0; d < kHeadDimV; ++d) {
          const size_t k = r * kHeadDimV + static_cast<size_t>(d);
          ASSERT_TRUE(std::isfinite(m.o[k])) << k;
          ASSERT_EQ(m.o[k], want.o[k]) << k;
        }
      }
    }
  }
}

// The deterministic block fold (level 1 of the merge tree): the full result within rounding,
// a lone partial exactly, empty partials skipped bitwise, every element written.
TEST_F(MergeTest, FoldIsTheFullResultAndSkipsEmpties) {
  Partial full = partial(0, 1 << 20);
  EXPECT_TRUE(same_bits(fold({&full}), full));
  Partial a = partial(0, 37), b = partial(37, 100), c = partial(100, 1 << 20);
  Partial f = fold({&a, &b, &c});
  for (size_t k = 0; k < full.o.size(); ++k)
    ASSERT_NEAR(f.o[k], full.o[k], 4e-6 + 4e-6 * std::fabs(full.o[k])) << k;
  for (size_t k = 0; k < full.lse.size(); ++k)
    ASSERT_NEAR(f.lse[k], full.lse[k], 2e-6 * (1 + std::fabs(full.lse[k]))) << k;
  // Empty partials anywhere, request 1's rows past its 61 keys in c: skipped, bit for bit.
  Partial empty = partial(61, 61);
  EXPECT_TRUE(same_bits(fold({&empty, &a, &empty, &b, &c, &empty}), f));
  Partial none = fold({&empty, &empty});
  for (float v : none.o) ASSERT_EQ(v, 0.0f);
  for (float v : none.lse) ASSERT_EQ(v, -std::numeric_limits<float>::infinity());
  // Two levels (fold blocks, merge the blocks) give the one-level merge within rounding.
  Partial ab = fold({&a, &b}), two = merge({&ab, &c}), one = merge({&a, &b, &c});
  for (size_t k = 0; k < one.o.size(); ++k)
    ASSERT_NEAR(two.o[k], one.o[k], 4e-6 + 4e-6 * std::fabs(one.o[k])) << k;
}

TEST_F(MergeTest, BadArgumentsAreNamed) {
  Partial a = partial(0, 10);
  std::vector<TensorView> os = {a.o_view(2, 5, 8)}, ls;
  Partial r = a;
  Status st = merge_partials(os, ls, r.o_view(2, 5, 8), r.lse_view(2, 5, 8));
  EXPECT_EQ(st.message(), "merge_partials got 1 o partials but 0 lse partials");
  ls = {a.lse_view(2, 5, 4)};
  st = merge_partials(os, ls, r.o_view(2, 5, 8), r.lse_view(2, 5, 8));
  EXPECT_NE(st.message().find("lse partial 0 dimension 2 is 4, expected 8"), std::string::npos)
      << st.message();
  st = fold_partials(os, ls, r.o_view(2, 5, 8), r.lse_view(2, 5, 8));
  EXPECT_NE(st.message().find("lse partial 0 dimension 2 is 4, expected 8"), std::string::npos)
      << st.message();
  std::vector<uint16_t> bf(static_cast<size_t>(p.out_elems()));
  ls = {a.lse_view(2, 5, 8)};
  st = fold_partials(os, ls, TensorView(bf.data(), DType::kBF16, {2, 5, 8, kHeadDimV}),
                     r.lse_view(2, 5, 8));
  EXPECT_EQ(st.message(), "fold_partials output has dtype bf16, expected f32");
  st = cpu_verify_partial(args, 10, 5, a.o_view(2, 5, 8), a.lse_view(2, 5, 8));
  EXPECT_NE(st.message().find("kv range [10, 5)"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace mlaspec::attn
