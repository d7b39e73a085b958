// fp8 math on the CPU reference (VerifyOptions::fp8_math; cpu_verify_fp8_math): e4m3 Q and P,
// held to its stated bound (fp8_math_row_bound) against the fp64 oracle of the same KV on every
// row, every output written, rows independent of their batchmates and q_len, and the option
// refused where it means nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "common/verify_problem.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn {
namespace {

using testing::make_problem;
using testing::Problem;
using testing::ProblemSpec;

struct Outputs {
  std::vector<uint16_t> out;
  std::vector<float> lse;
  explicit Outputs(const Problem& p)
      : out(static_cast<size_t>(p.out_elems()), 0xffff),  // NaN: must be overwritten
        lse(static_cast<size_t>(p.lse_elems()), std::nanf("")) {}
  VerifyArgs args(Problem& p) {
    const int64_t B = p.spec.batch, q = p.spec.q_len, H = p.spec.num_heads;
    return p.host_args(TensorView(out.data(), DType::kBF16, {B, q, H, kHeadDimV}),
                       TensorView(lse.data(), DType::kF32, {B, q, H}));
  }
};

Status run_fp8_math(const VerifyArgs& a) {
  VerifyOptions o;
  o.fp8_math = true;
  return make_cpu_reference_backend()->run(a, o);
}

// Largest error seen relative to each row's bound, and the errors' size relative to the output's
// (what a user of the mode sees on random data; printed, and held to a loose ceiling).
struct Seen {
  double worst_out = 0, worst_lse = 0;  // |error| / bound
  double err_sq = 0, ref_sq = 0;        // sum of squares of out - exact and of exact
};

void expect_within_bound(Problem& p, Seen* seen) {
  Outputs o(p);
  VerifyArgs a = o.args(p);
  ASSERT_TRUE(run_fp8_math(a).ok()) << p.spec.to_string();
  Result<OracleResult> oracle = oracle_verify(a);
  ASSERT_TRUE(oracle.ok()) << oracle.status().to_string();
  const int64_t q_len = p.spec.q_len, H = p.spec.num_heads;
  for (int64_t b = 0; b < p.spec.batch; ++b) {
    for (int64_t i = 0; i < q_len; ++i) {
      for (int64_t h = 0; h < H; ++h) {
        const int64_t row = (b * q_len + i) * H + h;
        const double exact_lse = oracle->lse[static_cast<size_t>(row)];
        const Fp8MathRowBound bound = fp8_math_row_bound(a, b, i, h, exact_lse);
        const float lse = o.lse[static_cast<size_t>(row)];
        ASSERT_FALSE(std::isnan(lse)) << "lse row " << row << " unwritten, " << p.spec.to_string();
        const double lse_err = std::fabs(lse - exact_lse);
        ASSERT_LE(lse_err, bound.lse_bound) << "lse row " << row << ", " << p.spec.to_string();
        seen->worst_lse = std::max(seen->worst_lse, lse_err / bound.lse_bound);
        for (int d = 0; d < kHeadDimV; ++d) {
          const size_t k = static_cast<size_t>(row * kHeadDimV + d);
          const double got = bf16_bits_to_float(o.out[k]), exact = oracle->out[k];
          ASSERT_FALSE(std::isnan(got)) << "out[" << k << "] unwritten, " << p.spec.to_string();
          const double err = std::fabs(got - exact);
          ASSERT_LE(err, bound.out_bound) << "out[" << k << "], " << p.spec.to_string();
          seen->worst_out = std::max(seen->worst_out, err / bound.out_bound);
          seen->err_sq += err * err;
          seen->ref_sq += exact * exact;
        }
      }
    }
  }
}

// Every H and page size, q_len over 1..16, seq_len == q_len next to ragged lengths, KV scales
// from 0.02 to 1.5 and Q from N(0, 0.3) to N(0, 4).
TEST(Fp8Math, WithinItsBoundOfTheExactAttentionAcrossSweep) {
  std::mt19937 rng(77);
  Seen seen;
  int cases = 0;
  for (int H : {1, 8, 16, 64, 128}) {
    for (int page : {1, 16, 64}) {
      ProblemSpec s;
      s.num_heads = H;
      s.page_size = page;
      s.kv_dtype = DType::kFP8E4M3;
      s.q_len = 1 + (cases * 5) % 16;
      s.kv_scale = std::array<float, 3>{0.02f, 0.25f, 1.5f}[cases % 3];
      s.q_std = std::array<float, 3>{1.0f, 0.3f, 4.0f}[cases % 3];
      s.batch = H >= 64 ? 2 : 3;
      for (int b = 0; b < s.batch; ++b) {
        s.seq_lens.push_back(b == 0 ? s.q_len
                                    : s.q_len + static_cast<int>(rng() % (H >= 64 ? 150 : 400)));
      }
      s.seed = 900 + cases;
      Problem p = make_problem(s);
      expect_within_bound(p, &seen);
      if (HasFatalFailure()) return;
      ++cases;
    }
  }
  const double rel_rms = std::sqrt(seen.err_sq / seen.ref_sq);
  std::printf(
      "[fp8 math] %d cases: worst |out err| / bound %.3f, worst |lse err| / bound %.3f, "
      "rms(out err) / rms(out) %.4f\n",
      cases, seen.worst_out, seen.worst_lse, rel_rms);
  // The bound is a worst case; on random data the error is far inside it. A ceiling on the
  // typical error catches a mode that is within the bound only because the bound is loose.
  EXPECT_LT(rel_rms, 0.08);
}

// A zero Q row has no scale to take (s_q = 1): every score is 0 and the output is the mean of the
// visible V rows, within the bound.
TEST(Fp8Math, ZeroQueryRowGivesTheMeanOfVisibleValues) {
  ProblemSpec s;
  s.kv_dtype = DType::kFP8E4M3;
  s.kv_scale = 0.5f;
  s.num_heads = 8;
  s.q_len = 2;
  s.seq_lens = {40};
  s.seed = 5;
  Problem p = make_problem(s);
  std::fill(p.q.begin(), p.q.end(), uint16_t{0});
  Seen seen;
  expect_within_bound(p, &seen);
}

// P is rounded to e4m3 (as p * 448) and the weights normalized by the rounded sum: two keys, the
// second at p = 0.3 of the first, so p * 448 = 134.4 rounds to 128 and the output is
// (448 V_0 + 128 V_1) / 576, where exact math gives (V_0 + 0.3 V_1) / 1.3. Q has one nonzero value,
// which its own scale keeps exact, so only P's rounding is left to see.
TEST(Fp8Math, RoundsPToE4m3AndNormalizesByTheRoundedSum) {
  ProblemSpec s;
  s.kv_dtype = DType::kFP8E4M3;
  s.kv_scale = 1.0f;
  s.num_heads = 1;
  s.page_size = 16;
  s.seq_lens = {2};
  s.seed = 3;
  Problem p = make_problem(s);
  const uint8_t one = float_to_fp8e4m3_bits(1.0f);
  for (int j = 0; j < 2; ++j) {
    const int64_t slot = int64_t{p.block_table[0]} * s.page_size + j;
    uint8_t* row = p.kv.data() + slot * kHeadDimQK;
    std::fill(row, row + kHeadDimQK, uint8_t{0});
    row[0] = j == 0 ? one : 0;  // scores: sm * q_0 for key 0, 0 for key 1
    row[1 + j] = one;           // V_j = e_{1 + j}
  }
  std::fill(p.q.begin(), p.q.end(), uint16_t{0});
  p.q[0] = float_to_bf16_bits(-std::log(0.3f) / p.sm_scale);
  Outputs o(p);
  ASSERT_TRUE(run_fp8_math(o.args(p)).ok());
  EXPECT_NEAR(bf16_bits_to_float(o.out[1]), 448.0 / 576, 0x1p-8);
  EXPECT_NEAR(bf16_bits_to_float(o.out[2]), 128.0 / 576, 0x1p-8);
  Outputs exact(p);
  ASSERT_TRUE(make_cpu_reference_backend()->run(exact.args(p), VerifyOptions{}).ok());
  EXPECT_NEAR(bf16_bits_to_float(exact.out[2]), 0.3 / 1.3, 0x1p-8);  // what rounding P moved
}

// Rows depend on their own q and visible keys only: a ragged call (q_len 1 next to 32, seq_len
// == q_len) gives each request the bits it gets alone, and the mode differs from exact math.
TEST(Fp8Math, RaggedRowsEqualEachRequestAloneAndDifferFromExactMath) {
  ProblemSpec s;
  s.kv_dtype = DType::kFP8E4M3;
  s.kv_scale = 0.25f;
  s.num_heads = 16;
  s.page_size = 16;
  s.batch = 4;
  s.seq_lens = {33, 32, 300, 1};
  s.seed = 11;
  Problem p = make_problem(s);
  const std::vector<int32_t> q_lens = {1, 32, 7, 1};
  testing::RaggedQ rq = testing::make_ragged_q(s, q_lens, 12);
  const int64_t H = s.num_heads;
  std::vector<uint16_t> out(static_cast<size_t>(rq.T * H * kHeadDimV), 0xffff);
  std::vector<float> lse(static_cast<size_t>(rq.T * H), std::nanf(""));
  VerifyArgs a = p.host_args({}, {});
  a.q = TensorView(rq.q.data(), DType::kBF16, {rq.T, H, kHeadDimQK});
  a.q_indptr = TensorView(rq.indptr.data(), DType::kI32, {static_cast<int64_t>(rq.indptr.size())});
  a.out = TensorView(out.data(), DType::kBF16, {rq.T, H, kHeadDimV});
  a.lse = TensorView(lse.data(), DType::kF32, {rq.T, H});
  ASSERT_TRUE(run_fp8_math(a).ok());
  for (size_t b = 0; b < q_lens.size(); ++b) {
    const int64_t n = q_lens[b];
    std::vector<uint16_t> o1(static_cast<size_t>(n * H * kHeadDimV), 0xffff);
    std::vector<float> l1(static_cast<size_t>(n * H), std::nanf(""));
    VerifyArgs one = a;
    one.q_indptr = {};
    one.q = TensorView(rq.q.data() + rq.indptr[b] * H * kHeadDimQK, DType::kBF16,
                       {1, n, H, kHeadDimQK});
    one.block_table =
        TensorView(p.block_table.data() + b * p.max_pages, DType::kI32, {1, p.max_pages});
    one.seq_lens = TensorView(p.seq_lens.data() + b, DType::kI32, {1});
    one.out = TensorView(o1.data(), DType::kBF16, {1, n, H, kHeadDimV});
    one.lse = TensorView(l1.data(), DType::kF32, {1, n, H});
    ASSERT_TRUE(run_fp8_math(one).ok());
    EXPECT_EQ(0, std::memcmp(o1.data(), out.data() + rq.indptr[b] * H * kHeadDimV, o1.size() * 2))
        << "request " << b;
    EXPECT_EQ(0, std::memcmp(l1.data(), lse.data() + rq.indptr[b] * H, l1.size() * 4))
        << "request " << b;
  }
  std::vector<uint16_t> exact_out(out.size(), 0xffff);
  std::vector<float> exact_lse(lse.size(), std::nanf(""));
  VerifyArgs e = a;
  e.out = TensorView(exact_out.data(), DType::kBF16, {rq.T, H, kHeadDimV});
  e.lse = TensorView(exact_lse.data(), DType::kF32, {rq.T, H});
  ASSERT_TRUE(make_cpu_reference_backend()->run(e, VerifyOptions{}).ok());
  EXPECT_NE(0, std::memcmp(exact_out.data(), out.data(), out.size() * 2))
      << "fp8 math gave exact math's bits: the option was ignored";
}

// Only fp8_e4m3 KV has e4m3 codes to multiply: bf16 and the per-tile layout are refused by name,
// before anything is written.
TEST(Fp8Math, RefusedOnKvWithoutLayerScaledCodes) {
  EXPECT_TRUE(kCpuReferenceCaps.fp8_math);
  for (DType kv : {DType::kBF16, DType::kFP8Tile}) {
    ProblemSpec s;
    s.kv_dtype = kv;
    s.seq_lens = {20};
    Problem p = make_problem(s);
    Outputs o(p);
    const Status st = run_fp8_math(o.args(p));
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_EQ(st.message(),
              "fp8-math mode is for fp8 KV; kv dtype is " + std::string(dtype_name(kv)));
    EXPECT_EQ(cpu_verify_fp8_math(o.args(p)).message(), st.message());  // called directly too
    EXPECT_TRUE(std::all_of(o.out.begin(), o.out.end(), [](uint16_t v) { return v == 0xffff; }));
  }
}

}  // namespace
}  // namespace mlaspec::attn
