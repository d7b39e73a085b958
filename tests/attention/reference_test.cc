// The CPU reference against the fp64 oracle over a property sweep, plus analytic cases.
//
// Bound (stated in docs/attention.md): per element |ref - oracle| <= 2^-8 * |oracle| + 1e-4 for
// out (bf16 output rounding is at most 2^-9 relative; fp32 accumulation over <= 600 keys of
// N(0,1) values adds < 1e-4 absolute), and |lse_ref - lse_oracle| <= 1e-4 * (1 + |lse|).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "common/verify_problem.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/reference.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::attn {
namespace {

using testing::make_problem;
using testing::Problem;
using testing::ProblemSpec;

struct Outputs {
  std::vector<uint16_t> out;
  std::vector<float> lse;
  TensorView out_view(const Problem& p) {
    return TensorView(out.data(), DType::kBF16,
                      {p.spec.batch, p.spec.q_len, p.spec.num_heads, kHeadDimV});
  }
  TensorView lse_view(const Problem& p) {
    return TensorView(lse.data(), DType::kF32, {p.spec.batch, p.spec.q_len, p.spec.num_heads});
  }
};

Outputs poisoned_outputs(const Problem& p) {
  Outputs o;
  o.out.assign(static_cast<size_t>(p.out_elems()), 0xffff);  // NaN: must be overwritten
  o.lse.assign(static_cast<size_t>(p.lse_elems()), std::nanf(""));
  return o;
}

void expect_matches_oracle(Problem& p) {
  Outputs o = poisoned_outputs(p);
  VerifyArgs a = p.host_args(o.out_view(p), o.lse_view(p));
  ASSERT_TRUE(cpu_verify(a).ok()) << p.spec.to_string();
  Result<OracleResult> oracle = oracle_verify(a);
  ASSERT_TRUE(oracle.ok()) << oracle.status().to_string();
  for (size_t k = 0; k < o.out.size(); ++k) {
    const double ref = bf16_bits_to_float(o.out[k]);
    const double exact = oracle.value().out[k];
    ASSERT_FALSE(std::isnan(ref)) << "out[" << k << "] unwritten or NaN for " << p.spec.to_string();
    ASSERT_LE(std::fabs(ref - exact), std::ldexp(1.0, -8) * std::fabs(exact) + 1e-4)
        << "out[" << k << "] for " << p.spec.to_string();
  }
  for (size_t k = 0; k < o.lse.size(); ++k) {
    const double exact = oracle.value().lse[k];
    ASSERT_FALSE(std::isnan(o.lse[k])) << "lse[" << k << "] unwritten for " << p.spec.to_string();
    ASSERT_LE(std::fabs(o.lse[k] - exact), 1e-4 * (1 + std::fabs(exact)))
        << "lse[" << k << "] for " << p.spec.to_string();
  }
}

// The sweep: every H and page size, q_len 1..16, ragged seq_lens (including seq_len == q_len and
// lengths that are not page multiples), bf16, fp8 with several scales and fp8_tile (per-tile
// scales: the oracle reads the same dequantized values, so the bound is the arithmetic's alone).
TEST(CpuReference, AgreesWithFp64OracleAcrossSweep) {
  std::mt19937 rng(2024);
  int cases = 0;
  for (int H : {1, 8, 16, 32, 64, 128}) {
    for (int page : {1, 16, 64}) {
      for (DType kv : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile}) {
        ProblemSpec s;
        s.num_heads = H;
        s.page_size = page;
        s.kv_dtype = kv;
        s.q_len = 1 + (cases * 5) % 16;  // walks q_len over 1..16
        s.kv_scale =
            kv == DType::kFP8E4M3 ? std::array<float, 3>{0.02f, 0.25f, 1.5f}[cases % 3] : 1.0f;
        s.batch = H >= 64 ? 2 : 3;
        for (int b = 0; b < s.batch; ++b) {
          // b = 0: seq_len == q_len; others ragged, not page multiples.
          const int len =
              b == 0 ? s.q_len : s.q_len + static_cast<int>(rng() % (H >= 64 ? 90 : 200));
          s.seq_lens.push_back(len);
        }
        s.seed = 100 + cases;
        Problem p = make_problem(s);
        expect_matches_oracle(p);
        if (HasFatalFailure()) return;
        ++cases;
      }
    }
  }
  // Every q_len 1..16 at least once with a mid-size H.
  for (int q = 1; q <= 16; ++q) {
    ProblemSpec s;
    s.num_heads = 8;
    s.q_len = q;
    s.page_size = 16;
    s.seq_lens = {q, q + 17, q + 64};
    s.batch = 3;
    s.seed = 500 + q;
    Problem p = make_problem(s);
    expect_matches_oracle(p);
    if (HasFatalFailure()) return;
  }
}

TEST(CpuReference, OneVisibleKeyGivesThatValueRow) {
  // q_len = 3, seq_len = 3: token 0 sees only key 0, so its output is V row 0 exactly and its lse
  // is the scaled score.
  ProblemSpec s;
  s.num_heads = 4;
  s.q_len = 3;
  s.seq_lens = {3};
  s.page_size = 16;
  Problem p = make_problem(s);
  Outputs o = poisoned_outputs(p);
  VerifyArgs a = p.host_args(o.out_view(p), o.lse_view(p));
  ASSERT_TRUE(cpu_verify(a).ok());
  const int page0 = p.block_table[0];
  const auto* v0 =
      reinterpret_cast<const uint16_t*>(p.kv.data()) + static_cast<size_t>(page0) * 16 * kHeadDimQK;
  for (int h = 0; h < 4; ++h) {
    for (int d = 0; d < kHeadDimV; ++d) ASSERT_EQ(o.out[h * kHeadDimV + d], v0[d]) << h << "," << d;
    double dot = 0;
    for (int d = 0; d < kHeadDimQK; ++d) {
      dot += double(bf16_bits_to_float(p.q[h * kHeadDimQK + d])) * bf16_bits_to_float(v0[d]);
    }
    EXPECT_NEAR(o.lse[h], dot * p.sm_scale, 1e-4);
  }
}

TEST(CpuReference, EqualScoresGiveTheMeanOfVisibleValues) {
  // q = 0 makes every score 0: out = mean of the visible V rows, lse = log(#visible).
  ProblemSpec s;
  s.num_heads = 2;
  s.q_len = 4;
  s.seq_lens = {37};
  s.page_size = 16;
  Problem p = make_problem(s);
  std::fill(p.q.begin(), p.q.end(), 0);
  Outputs o = poisoned_outputs(p);
  VerifyArgs a = p.host_args(o.out_view(p), o.lse_view(p));
  ASSERT_TRUE(cpu_verify(a).ok());
  for (int i = 0; i < 4; ++i) {
    const int visible = 37 - 4 + i + 1;
    for (int d = 0; d < kHeadDimV; ++d) {
      double mean = 0;
      for (int j = 0; j < visible; ++j) {
        const int page = p.block_table[j / 16];
        const auto* row = reinterpret_cast<const uint16_t*>(p.kv.data()) +
                          (static_cast<size_t>(page) * 16 + j % 16) * kHeadDimQK;
        mean += bf16_bits_to_float(row[d]);
      }
      mean /= visible;
      for (int h = 0; h < 2; ++h) {
        const float got = bf16_bits_to_float(o.out[(i * 2 + h) * kHeadDimV + d]);
        ASSERT_NEAR(got, mean, std::ldexp(std::fabs(mean), -8) + 1e-5) << i << "," << d;
      }
    }
    for (int h = 0; h < 2; ++h) EXPECT_NEAR(o.lse[i * 2 + h], std::log(double(visible)), 1e-5);
  }
}

TEST(CpuReference, ResultDoesNotDependOnThreadCount) {
  ProblemSpec s;
  s.num_heads = 16;
  s.q_len = 5;
  s.batch = 2;
  s.seq_lens = {100, 77};
  s.kv_dtype = DType::kFP8E4M3;
  s.kv_scale = 0.1f;
  Problem p = make_problem(s);
  Outputs a1 = poisoned_outputs(p), a4 = poisoned_outputs(p);
  const int saved = num_threads();
  set_num_threads(1);
  ASSERT_TRUE(cpu_verify(p.host_args(a1.out_view(p), a1.lse_view(p))).ok());
  set_num_threads(4);
  ASSERT_TRUE(cpu_verify(p.host_args(a4.out_view(p), a4.lse_view(p))).ok());
  set_num_threads(saved);
  EXPECT_EQ(a1.out, a4.out);
  EXPECT_EQ(0, std::memcmp(a1.lse.data(), a4.lse.data(), a1.lse.size() * 4));
}

TEST(CpuReference, RowHelperMatchesFullCall) {
  ProblemSpec s;
  s.num_heads = 8;
  s.q_len = 3;
  s.batch = 2;
  s.seq_lens = {50, 90};
  Problem p = make_problem(s);
  Outputs o = poisoned_outputs(p);
  VerifyArgs a = p.host_args(o.out_view(p), o.lse_view(p));
  ASSERT_TRUE(cpu_verify(a).ok());
  float row[kHeadDimV];
  const float lse = cpu_verify_row(a, 1, 2, 5, row);
  const int64_t r = (1 * 3 + 2) * 8 + 5;
  EXPECT_EQ(lse, o.lse[r]);
  for (int d = 0; d < kHeadDimV; ++d)
    ASSERT_EQ(float_to_bf16_bits(row[d]), o.out[r * kHeadDimV + d]);
}

// The folded full call (rows 16 at a time, SIMD across rows) does row_attention's float
// operations in its order for every row: bitwise the per-row helper's o (before and after bf16
// rounding) and lse, for q_len 1..17 (tiles that split a token's heads, partial last tiles),
// head counts that do and do not divide the tile, rows that see no key, bf16, fp8 and fp8_tile.
// Checks every row of cpu_verify's full call against cpu_verify_row, bitwise.
void expect_folded_equals_row_helper(const ProblemSpec& s) {
  Problem p = make_problem(s);
  Outputs o = poisoned_outputs(p);
  VerifyArgs a = p.host_args(o.out_view(p), o.lse_view(p));
  ASSERT_TRUE(cpu_verify(a).ok()) << s.to_string();
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < s.q_len; ++i) {
      for (int64_t h = 0; h < s.num_heads; ++h) {
        float row[kHeadDimV];
        const float lse = cpu_verify_row(a, b, i, h, row);
        const int64_t r = (b * s.q_len + i) * s.num_heads + h;
        ASSERT_EQ(0, std::memcmp(&lse, &o.lse[r], sizeof lse)) << s.to_string() << " row " << r;
        for (int d = 0; d < kHeadDimV; ++d)
          ASSERT_EQ(float_to_bf16_bits(row[d]), o.out[r * kHeadDimV + d])
              << s.to_string() << " row " << r << " d " << d;
      }
    }
  }
}

// Every (q_len, heads, dtype) of the lists, batch 3 with these seq_lens past each q_len.
void sweep_folded(std::initializer_list<int> q_lens, std::initializer_list<int> head_counts,
                  std::initializer_list<DType> dtypes, int page_size,
                  const std::function<std::vector<int>(int)>& seq_lens, uint64_t seed) {
  for (const int q_len : q_lens) {
    for (const int heads : head_counts) {
      for (const DType dtype : dtypes) {
        ProblemSpec s;
        s.num_heads = heads;
        s.q_len = q_len;
        s.batch = 3;
        s.page_size = page_size;
        s.kv_dtype = dtype;
        s.kv_scale = dtype == DType::kFP8E4M3 ? 0.25f : 1.0f;
        s.seq_lens = seq_lens(q_len);
        s.seed = seed++;
        expect_folded_equals_row_helper(s);
      }
    }
  }
}

TEST(CpuReference, FoldedCallEqualsRowHelperBitwise) {
  sweep_folded(
      {1, 2, 3, 5, 7, 8, 9, 12, 16, 17}, {1, 3, 8, 16},
      {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile}, 16,
      [](int q) {
        return std::vector<int>{q, q + 37, q + 70};
      },
      100);
}

// Contexts around kWholeRequestKeys (2048): requests of several row tasks widened whole below it
// and a 64-key chunk at a time in each task above it; a single-task request (q_len 1, H 8)
// always chunk by chunk. Every row still bitwise the per-row helper's.
TEST(CpuReference, FoldedCallAtLongerContextsEqualsRowHelperBitwise) {
  sweep_folded(
      {1, 8}, {3, 8}, {DType::kBF16, DType::kFP8Tile}, 64,
      [](int) {
        return std::vector<int>{2040, 2049, 2113};
      },
      300);
}

}  // namespace
}  // namespace mlaspec::attn
