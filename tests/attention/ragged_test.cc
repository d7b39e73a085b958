// Ragged verify (requests with different q_len in one call, VerifyArgs::q_indptr): the CPU
// reference against the fp64 oracle and against each request run alone with its own q_len,
// over a sweep of shapes; the run splitter the CUDA backends use (for_each_uniform_run);
// validation of q_indptr; the guard refusing it where unserved.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/cuda/traits.h"
#include "common/verify_problem.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/attention/dcp.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn {
namespace {

using testing::make_problem;
using testing::Problem;
using testing::ProblemSpec;

// A ragged call over a Problem's KV: request b's q_len is q_lens[b] (<= seq_lens[b]); q rows are
// drawn fresh. Poisoned outputs.
struct Ragged {
  Problem p;
  std::vector<int32_t> q_lens, indptr;
  std::vector<uint16_t> q, out;
  std::vector<float> lse;
  int64_t T = 0, H = 0;

  Ragged(const ProblemSpec& spec, std::vector<int32_t> lens) : p(make_problem(spec)) {
    q_lens = std::move(lens);
    H = spec.num_heads;
    indptr.push_back(0);
    for (const int32_t n : q_lens) indptr.push_back(indptr.back() + n);
    T = indptr.back();
    std::mt19937_64 rng(spec.seed + 99);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    q.resize(static_cast<size_t>(T * H * kHeadDimQK));
    for (auto& v : q) v = float_to_bf16_bits(normal(rng));
    out.assign(static_cast<size_t>(T * H * kHeadDimV), 0xffff);  // NaN: must be overwritten
    lse.assign(static_cast<size_t>(T * H), std::nanf(""));
  }
  VerifyArgs args() {
    VerifyArgs a = p.host_args({}, {});
    a.q = TensorView(q.data(), DType::kBF16, {T, H, kHeadDimQK});
    a.q_indptr = TensorView(indptr.data(), DType::kI32, {static_cast<int64_t>(indptr.size())});
    a.out = TensorView(out.data(), DType::kBF16, {T, H, kHeadDimV});
    a.lse = TensorView(lse.data(), DType::kF32, {T, H});
    return a;
  }
};

// Request b alone: a uniform call with B = 1, q_len = q_lens[b], its own block-table row.
void expect_each_request_equals_alone(Ragged& r) {
  VerifyArgs ragged = r.args();
  const int64_t max_pages = r.p.max_pages;
  for (size_t b = 0; b < r.q_lens.size(); ++b) {
    const int64_t n = r.q_lens[b];
    std::vector<uint16_t> out(static_cast<size_t>(n * r.H * kHeadDimV), 0xffff);
    std::vector<float> lse(static_cast<size_t>(n * r.H), std::nanf(""));
    VerifyArgs a = ragged;
    a.q_indptr = {};
    a.q = TensorView(r.q.data() + r.indptr[b] * r.H * kHeadDimQK, DType::kBF16,
                     {1, n, r.H, kHeadDimQK});
    a.block_table = TensorView(r.p.block_table.data() + b * max_pages, DType::kI32, {1, max_pages});
    a.seq_lens = TensorView(r.p.seq_lens.data() + b, DType::kI32, {1});
    a.out = TensorView(out.data(), DType::kBF16, {1, n, r.H, kHeadDimV});
    a.lse = TensorView(lse.data(), DType::kF32, {1, n, r.H});
    ASSERT_TRUE(cpu_verify(a).ok());
    ASSERT_EQ(0,
              std::memcmp(out.data(), r.out.data() + r.indptr[b] * r.H * kHeadDimV, out.size() * 2))
        << "request " << b << " (q_len " << n << ") differs from the same request alone";
    ASSERT_EQ(0, std::memcmp(lse.data(), r.lse.data() + r.indptr[b] * r.H, lse.size() * 4))
        << "request " << b << " lse";
  }
}

void expect_matches_oracle(Ragged& r, const std::string& what) {
  VerifyArgs a = r.args();
  Result<OracleResult> oracle = oracle_verify(a);
  ASSERT_TRUE(oracle.ok()) << oracle.status().to_string();
  for (size_t k = 0; k < r.out.size(); ++k) {
    const double got = bf16_bits_to_float(r.out[k]);
    const double exact = oracle->out[k];
    ASSERT_FALSE(std::isnan(got)) << "out[" << k << "] unwritten for " << what;
    ASSERT_LE(std::fabs(got - exact), std::ldexp(1.0, -8) * std::fabs(exact) + 1e-4)
        << "out[" << k << "] for " << what;
  }
  for (size_t k = 0; k < r.lse.size(); ++k) {
    ASSERT_FALSE(std::isnan(r.lse[k])) << "lse[" << k << "] unwritten for " << what;
    ASSERT_LE(std::fabs(r.lse[k] - oracle->lse[k]), 1e-4 * (1 + std::fabs(oracle->lse[k])));
  }
}

// Sweep: H 8..128, page sizes 1..64, bf16 and fp8, q_len 1 mixed with 32, seq_len == q_len,
// contexts that are not page multiples, batches of 1..6 (1..3 at H >= 64, to keep it fast).
TEST(RaggedVerify, EachRequestEqualsItselfAloneAndTheOracle) {
  std::mt19937_64 rng(7);
  int cases = 0;
  for (const int H : {8, 16, 64, 128}) {
    for (const int page : {1, 16, 64}) {
      const DType kv = (cases % 2) ? DType::kFP8E4M3 : DType::kBF16;
      ProblemSpec spec;
      spec.num_heads = H;
      spec.page_size = page;
      spec.kv_dtype = kv;
      spec.kv_scale = kv == DType::kFP8E4M3 ? 0.25f : 1.0f;
      spec.batch = 1 + static_cast<int>(rng() % (H >= 64 ? 3 : 6));
      spec.seed = rng();
      std::vector<int32_t> q_lens;
      for (int b = 0; b < spec.batch; ++b) {
        const int32_t n = b == 0 ? 1 : (b == 1 ? 32 : 1 + static_cast<int32_t>(rng() % 32));
        q_lens.push_back(n);
        // seq_len == q_len for request 2; otherwise up to 150 more keys.
        spec.seq_lens.push_back(b == 2 ? n : n + static_cast<int32_t>(rng() % 150));
      }
      spec.q_len = 1;  // the Problem's own q is unused
      Ragged r(spec, q_lens);
      const VerifyArgs a = r.args();
      ASSERT_TRUE(cpu_verify(a).ok()) << spec.to_string();
      const std::string what = spec.to_string() + " H=" + std::to_string(H);
      expect_matches_oracle(r, what);
      expect_each_request_equals_alone(r);
      ++cases;
    }
  }
  EXPECT_EQ(cases, 12);
}

TEST(RaggedVerify, ShapeAndGuard) {
  ProblemSpec spec;
  spec.batch = 3;
  spec.seq_lens = {40, 9, 100};
  Ragged r(spec, {5, 9, 2});
  const VerifyArgs a = r.args();
  const VerifyShape s = shape_of(a, {});
  EXPECT_TRUE(s.ragged);
  EXPECT_EQ(s.batch, 3);
  EXPECT_EQ(s.q_len, 9);
  EXPECT_EQ(s.total_q, 16);
  EXPECT_EQ(s.max_seq_len, 100);
  EXPECT_EQ(s.total_kv, 149);
  EXPECT_EQ(s.to_string(), "B=3,H=16,q=9,S=100,kv=bf16,page=64,ragged");
  EXPECT_TRUE(can_serve(kCpuReferenceCaps, s).ok());
  // The CUDA backends serve it too (one launch per run of equal q_len); q_len above their 32 is
  // refused by the q_len rule as for a uniform call.
  for (const BackendCaps* caps : {&cuda::kFoldCaps, &cuda::kRowwiseCaps}) {
    EXPECT_TRUE(can_serve(*caps, s).ok()) << caps->name;
    VerifyShape wide = s;
    wide.q_len = 40;
    EXPECT_EQ(can_serve(*caps, wide).code(), StatusCode::kUnsupported);
  }
  EXPECT_NE(describe_caps(kCpuReferenceCaps).find("ragged yes"), std::string::npos);
  EXPECT_NE(describe_caps(cuda::kFoldCaps).find("ragged yes"), std::string::npos);
  // A backend without ragged support is refused with the reason.
  BackendCaps uniform_only = kCpuReferenceCaps;
  uniform_only.ragged = false;
  EXPECT_EQ(can_serve(uniform_only, s).message(),
            std::string(uniform_only.name) +
                " serves one q_len per call; this batch is ragged (per-request q_len up to 9): "
                "split it by q_len or pad it");
  // The CPU backend serves it, and DCP takes it too (dcp_test.cc's DcpRagged tests).
  std::unique_ptr<Backend> cpu = make_cpu_reference_backend();
  EXPECT_TRUE(cpu->run(a, {}).ok());
  dcp::ShardLayout layout;
  layout.world = 2;
  layout.chunk_tokens = 64;
  EXPECT_TRUE(dcp::make_rank_shard(a, layout, 0).ok());
}

// for_each_uniform_run: a ragged call through the reference's uniform path, one call per run of
// equal q_len, gives the reference's ragged result bit for bit; the runs are the maximal ones, in
// order, uniform, and cover every row once (the poisoned outputs are all written).
TEST(RaggedVerify, UniformRunsGiveTheRaggedResultBitwise) {
  struct Case {
    std::vector<int32_t> q_lens;
    std::vector<int32_t> runs;  // expected q_len of each run
  };
  const std::vector<Case> cases = {
      {{3, 3, 1, 1, 1, 32, 3}, {3, 1, 32, 3}},
      {{8}, {8}},
      {{1, 32, 1, 32}, {1, 32, 1, 32}},
      {{5, 5, 5}, {5}},
  };
  std::mt19937_64 rng(11);
  for (const Case& c : cases) {
    for (const int page : {1, 16}) {
      ProblemSpec spec;
      spec.num_heads = 16;
      spec.page_size = page;
      spec.batch = static_cast<int>(c.q_lens.size());
      spec.seed = rng();
      spec.kv_dtype = page == 1 ? DType::kFP8E4M3 : DType::kBF16;
      spec.kv_scale = page == 1 ? 0.5f : 1.0f;
      for (size_t b = 0; b < c.q_lens.size(); ++b) {
        // seq_len == q_len for the first request; ragged contexts elsewhere.
        spec.seq_lens.push_back(c.q_lens[b] + (b == 0 ? 0 : static_cast<int32_t>(rng() % 90)));
      }
      Ragged native(spec, c.q_lens), runs(spec, c.q_lens);
      ASSERT_TRUE(cpu_verify(native.args()).ok());
      std::vector<int32_t> seen;
      const Status st = for_each_uniform_run(runs.args(), [&](const VerifyArgs& u) {
        EXPECT_FALSE(u.ragged());
        EXPECT_EQ(u.q.ndim(), 4);
        seen.push_back(static_cast<int32_t>(u.q.size(1)));
        EXPECT_EQ(u.block_table.size(0), u.q.size(0));
        EXPECT_EQ(u.seq_lens.size(0), u.q.size(0));
        return cpu_verify(u);
      });
      ASSERT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(seen, c.runs) << spec.to_string();
      for (const uint16_t v : runs.out) ASSERT_NE(v, 0xffff) << "a row no run wrote";
      EXPECT_EQ(0, std::memcmp(native.out.data(), runs.out.data(), native.out.size() * 2))
          << spec.to_string();
      EXPECT_EQ(0, std::memcmp(native.lse.data(), runs.lse.data(), native.lse.size() * 4))
          << spec.to_string();
    }
  }
  // A uniform call is passed through as it is; an error from a run stops the loop.
  ProblemSpec spec;
  spec.batch = 3;
  spec.seq_lens = {40, 9, 100};
  Ragged r(spec, {5, 5, 2});
  int calls = 0;
  const Status st = for_each_uniform_run(r.args(), [&](const VerifyArgs&) {
    ++calls;
    return invalid_argument("stop");
  });
  EXPECT_EQ(st.message(), "stop");
  EXPECT_EQ(calls, 1);
}

TEST(RaggedVerify, BadIndptrIsRefusedAndWritesNothing) {
  ProblemSpec spec;
  spec.batch = 3;
  spec.seq_lens = {40, 9, 100};
  struct Case {
    std::vector<int32_t> indptr;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{1, 5, 14, 16}, "q_indptr[0] = 1, expected 0"},
      {{0, 5, 5, 16},
       "q_indptr[2] = 5 is not above q_indptr[1] = 5 (every request brings >= 1 "
       "query token)"},
      {{0, 5, 14, 15}, "q_indptr[3] = 15 does not match q's 16 rows"},
      {{0, 5, 15, 16},
       "seq_lens[1] = 9 is below its q_len 10 (seq_len counts the KV written for "
       "the new tokens)"},
      {{0, 5, 14}, "q_indptr[2] = 14 does not match q's 16 rows"},
      {{0, 5, 16}, "block_table"},  // 2 requests by q_indptr, 3 rows in the block table
      {{0}, "q_indptr has 1 entries; a batch of B requests needs B + 1 >= 2"},
  };
  for (const Case& c : cases) {
    Ragged r(spec, {5, 9, 2});
    r.indptr = c.indptr;
    const VerifyArgs a = r.args();
    const Status st = cpu_verify(a);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.message), std::string::npos) << st.message();
    for (const uint16_t v : r.out) ASSERT_EQ(v, 0xffff) << "written despite " << c.message;
  }
  // Output shapes follow the ragged form.
  Ragged r(spec, {5, 9, 2});
  VerifyArgs a = r.args();
  a.out = TensorView(r.out.data(), DType::kBF16, {3, 9, 16, kHeadDimV});
  EXPECT_FALSE(cpu_verify(a).ok());
}

}  // namespace
}  // namespace mlaspec::attn
