// Decode context parallelism simulated on the CPU: ranks hold disjoint shards of every request's
// pages, compute per-chunk partials, and the all-gathered partials merge to the one-device result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/verify_problem.h"
#include "mlaspec/attention/dcp.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn::dcp {
namespace {

struct Merged {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

// Runs `world` simulated ranks and merges their gathered partials (premerge: each rank merges its
// own chunks first and only those merged partials are gathered).
Merged run_dcp(testing::Problem& p, const ShardLayout& layout, bool premerge = false) {
  const auto& s = p.spec;
  const int64_t B = s.batch, Q = s.q_len, H = s.num_heads;
  int64_t max_len = 0;
  for (int32_t l : p.seq_lens) max_len = std::max<int64_t>(max_len, l);
  const int64_t cpr = layout.chunks_per_rank(max_len);
  std::vector<std::vector<float>> o(layout.world), l(layout.world);
  std::vector<TensorView> ov, lv;
  int64_t pages_total = 0;
  for (int r = 0; r < layout.world; ++r) {
    VerifyArgs global = p.host_args(TensorView(), TensorView());
    Result<RankShard> shard = make_rank_shard(global, layout, r);
    EXPECT_TRUE(shard.ok()) << shard.status().to_string();
    pages_total += shard.value().num_pages;
    VerifyArgs local = global;
    local.kv.pages = TensorView(shard.value().kv.data(), s.kv_dtype,
                                {shard.value().num_pages, s.page_size, kv_row_width(s.kv_dtype)});
    local.block_table = TensorView(shard.value().block_table.data(), DType::kI32, {B, p.max_pages});
    o[r].assign(static_cast<size_t>(B * cpr * Q * H * kHeadDimV), std::nanf(""));
    l[r].assign(static_cast<size_t>(B * cpr * Q * H), std::nanf(""));
    ov.emplace_back(o[r].data(), DType::kF32,
                    std::initializer_list<int64_t>{B, cpr, Q, H, kHeadDimV});
    lv.emplace_back(l[r].data(), DType::kF32, std::initializer_list<int64_t>{B, cpr, Q, H});
    Status st = rank_partials_cpu(local, layout, r, ov.back(), lv.back());
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  // Sharding is real: the ranks together hold each used page once (plus at most one placeholder
  // page per rank that owns nothing).
  int64_t used = 0;
  for (int32_t len : p.seq_lens) used += (len + s.page_size - 1) / s.page_size;
  EXPECT_LE(pages_total, used + layout.world);
  EXPECT_GE(pages_total, used);
  std::vector<std::vector<float>> ro(layout.world), rl(layout.world);
  if (premerge) {
    for (int r = 0; r < layout.world; ++r) {
      ro[r].assign(static_cast<size_t>(B * Q * H * kHeadDimV), std::nanf(""));
      rl[r].assign(static_cast<size_t>(B * Q * H), std::nanf(""));
      const TensorView o_red(ro[r].data(), DType::kF32, {B, 1, Q, H, kHeadDimV});
      const TensorView l_red(rl[r].data(), DType::kF32, {B, 1, Q, H});
      Status st = premerge_rank_partials(ov[r], lv[r], o_red, l_red);
      EXPECT_TRUE(st.ok()) << st.to_string();
      ov[r] = o_red;
      lv[r] = l_red;
    }
  }
  Merged m;
  m.out.assign(static_cast<size_t>(p.out_elems()), 0xffff);
  m.lse.assign(static_cast<size_t>(p.lse_elems()), std::nanf(""));
  Status st = merge_rank_partials(ov, lv, layout,
                                  TensorView(m.out.data(), DType::kBF16, {B, Q, H, kHeadDimV}),
                                  TensorView(m.lse.data(), DType::kF32, {B, Q, H}));
  EXPECT_TRUE(st.ok()) << st.to_string();
  return m;
}

TEST(DcpSimulated, AnyWorldSizeIsBitwiseTheSameAndMatchesTheReference) {
  // fp8_tile too: a shard copies whole 656-byte rows (kv_row_bytes), scales included.
  for (DType kv : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile}) {
    testing::ProblemSpec s = testing::dcp_spec(kv, 16);
    // Lengths ending just past a chunk boundary (the mask spans two chunks on different ranks),
    // exactly on one, and shorter than one chunk.
    s.seq_lens = {64 * 5 + 3, 64 * 4, 40};
    testing::Problem p = testing::make_problem(s);
    const Merged one = run_dcp(p, ShardLayout{1, 64});
    for (int world : {2, 3, 4, 8}) {
      // Merge trees of one level, of blocks of 2 chunks (the 6 chunks of request 0 span three)
      // and of deterministic mode's 8 (all in one block): the tree is fixed by chunk positions.
      for (int block : {1, 2, kDeterministicBlockChunks}) {
        const Merged ref_tree =
            block == kDeterministicBlockChunks ? one : run_dcp(p, ShardLayout{1, 64, block});
        const Merged many = run_dcp(p, ShardLayout{world, 64, block});
        ASSERT_EQ(ref_tree.out, many.out) << "world " << world << " blocks of " << block;
        ASSERT_EQ(0, std::memcmp(ref_tree.lse.data(), many.lse.data(), one.lse.size() * 4))
            << "world " << world << " blocks of " << block;
      }
    }
    // And each tree's result is the reference's within fp32 reassociation error.
    std::vector<uint16_t> out(static_cast<size_t>(p.out_elems()));
    std::vector<float> lse(static_cast<size_t>(p.lse_elems()));
    ASSERT_TRUE(cpu_verify(p.host_args(TensorView(out.data(), DType::kBF16, {3, 8, 16, kHeadDimV}),
                                       TensorView(lse.data(), DType::kF32, {3, 8, 16})))
                    .ok());
    for (int block : {1, 2, kDeterministicBlockChunks}) {
      const Merged m =
          block == kDeterministicBlockChunks ? one : run_dcp(p, ShardLayout{1, 64, block});
      for (size_t k = 0; k < out.size(); ++k) {
        const float a = bf16_bits_to_float(out[k]), b = bf16_bits_to_float(m.out[k]);
        ASSERT_NEAR(a, b, std::ldexp(std::fabs(a), -7) + 1e-5) << "blocks of " << block << " " << k;
      }
      for (size_t k = 0; k < lse.size(); ++k)
        ASSERT_NEAR(lse[k], m.lse[k], 1e-5 * (1 + std::fabs(lse[k]))) << "blocks of " << block;
    }
  }
}

TEST(DcpSimulated, PremergedRanksMatchTheChunkOrderMergeToRounding) {
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    testing::ProblemSpec s = testing::dcp_spec(kv, 16);
    // Ranks with several chunks, with one, and with none of the short request's.
    s.seq_lens = {64 * 7 + 3, 64 * 4, 40};
    testing::Problem p = testing::make_problem(s);
    const Merged one = run_dcp(p, ShardLayout{1, 64});
    for (int world : {1, 2, 3, 8}) {
      SCOPED_TRACE("world " + std::to_string(world));
      const Merged pre = run_dcp(p, ShardLayout{world, 64}, /*premerge=*/true);
      for (size_t k = 0; k < one.out.size(); ++k) {
        const float a = bf16_bits_to_float(one.out[k]), b = bf16_bits_to_float(pre.out[k]);
        ASSERT_TRUE(std::isfinite(b)) << k;
        ASSERT_NEAR(b, a, std::ldexp(std::fabs(a), -7) + 1e-5) << k;
      }
      for (size_t k = 0; k < one.lse.size(); ++k) {
        ASSERT_NEAR(pre.lse[k], one.lse[k], 1e-5 * (1 + std::fabs(one.lse[k]))) << k;
      }
    }
  }
}

TEST(DcpSimulated, PremergeShapeErrorsAreNamed) {
  std::vector<float> o(2 * 3 * 1 * 8 * kHeadDimV), l(2 * 3 * 8), ro(2 * 8 * kHeadDimV), rl(2 * 8);
  const TensorView op(o.data(), DType::kF32, {2, 3, 1, 8, kHeadDimV}),
      lp(l.data(), DType::kF32, {2, 3, 1, 8});
  EXPECT_EQ(
      premerge_rank_partials(op, lp, TensorView(ro.data(), DType::kF32, {2, 2, 1, 8, kHeadDimV}),
                             TensorView(rl.data(), DType::kF32, {2, 1, 1, 8}))
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(premerge_rank_partials(TensorView(o.data(), DType::kF32, {2, 3, 8, kHeadDimV}), lp,
                                   TensorView(ro.data(), DType::kF32, {2, 1, 1, 8, kHeadDimV}),
                                   TensorView(rl.data(), DType::kF32, {2, 1, 1, 8}))
                .message(),
            "o partials have rank 4, expected 5 [B, chunks_per_rank, q_len, H, 512]");
}

TEST(DcpSimulated, LayoutErrorsAreNamed) {
  EXPECT_EQ(ShardLayout({0, 64}).validate(16).message(), "DCP world size 0 is below 1");
  EXPECT_EQ(ShardLayout({2, 40}).validate(16).message(),
            "DCP chunk of 40 tokens is not a positive multiple of the page size 16 (a page must "
            "live on one rank)");
  EXPECT_EQ(ShardLayout({2, 64, 0}).validate(16).message(),
            "DCP merge blocks of 0 chunks: need at least 1");
  {
    // The merge takes a layout without a page size, so it checks the block size itself.
    std::vector<float> o(1 * 2 * 1 * 8 * kHeadDimV), l(1 * 2 * 1 * 8), out(1 * 8 * kHeadDimV),
        lse(8);
    const std::vector<TensorView> ov = {TensorView(o.data(), DType::kF32, {1, 2, 1, 8, kHeadDimV})},
                                  lv = {TensorView(l.data(), DType::kF32, {1, 2, 1, 8})};
    EXPECT_EQ(merge_rank_partials(ov, lv, ShardLayout{1, 64, -3},
                                  TensorView(out.data(), DType::kF32, {1, 1, 8, kHeadDimV}),
                                  TensorView(lse.data(), DType::kF32, {1, 1, 8}))
                  .message(),
              "DCP merge blocks of -3 chunks: need at least 1");
  }
  testing::ProblemSpec s;
  testing::Problem p = testing::make_problem(s);
  Result<RankShard> r =
      make_rank_shard(p.host_args(TensorView(), TensorView()), ShardLayout{2, 64}, 2);
  EXPECT_EQ(r.status().message(), "rank 2 is outside [0, 2)");
  EXPECT_EQ(ShardLayout({3, 64}).chunks_per_rank(64 * 7 + 1), 3);
}

// ---- Ragged batches (per-request q_len, q_indptr) ---------------------------------------------

// A ragged call over a Problem's KV with host q_indptr; out/lse supplied by the caller.
VerifyArgs ragged_args(testing::Problem& p, testing::RaggedQ& rq, TensorView out, TensorView lse) {
  VerifyArgs a = p.host_args(out, lse);
  a.q = TensorView(rq.q.data(), DType::kBF16, {rq.T, p.spec.num_heads, kHeadDimQK});
  a.q_indptr = TensorView(rq.indptr.data(), DType::kI32, {static_cast<int64_t>(rq.indptr.size())});
  return a;
}

// run_dcp for a ragged call: every rank's partials [cpr * T, H, 512] (poisoned first), optionally
// pre-merged to [T, H, 512], then merged into poisoned out [T, H, 512] / lse [T, H].
Merged run_dcp_ragged(testing::Problem& p, testing::RaggedQ& rq, const ShardLayout& layout,
                      bool premerge = false) {
  const auto& s = p.spec;
  const int64_t T = rq.T, H = s.num_heads, B = s.batch;
  int64_t max_len = 0;
  for (int32_t l : p.seq_lens) max_len = std::max<int64_t>(max_len, l);
  const int64_t cpr = layout.chunks_per_rank(max_len);
  const int64_t sent = premerge ? 1 : cpr;
  const TensorView indptr(rq.indptr.data(), DType::kI32, {B + 1});
  std::vector<std::vector<float>> o(layout.world), l(layout.world), ro(layout.world),
      rl(layout.world);
  std::vector<TensorView> ov, lv;
  for (int r = 0; r < layout.world; ++r) {
    const VerifyArgs global = ragged_args(p, rq, {}, {});
    Result<RankShard> shard = make_rank_shard(global, layout, r);
    EXPECT_TRUE(shard.ok()) << shard.status().to_string();
    VerifyArgs local = global;
    local.kv.pages = TensorView(shard.value().kv.data(), s.kv_dtype,
                                {shard.value().num_pages, s.page_size, kv_row_width(s.kv_dtype)});
    local.block_table = TensorView(shard.value().block_table.data(), DType::kI32, {B, p.max_pages});
    o[r].assign(static_cast<size_t>(cpr * T * H * kHeadDimV), std::nanf(""));
    l[r].assign(static_cast<size_t>(cpr * T * H), std::nanf(""));
    const TensorView o_parts(o[r].data(), DType::kF32, {cpr * T, H, kHeadDimV});
    const TensorView l_parts(l[r].data(), DType::kF32, {cpr * T, H});
    Status st = rank_partials_cpu(local, layout, r, o_parts, l_parts);
    EXPECT_TRUE(st.ok()) << st.to_string();
    // Every slot written: an empty chunk is lse = -inf, never the poison.
    for (const float v : l[r]) EXPECT_FALSE(std::isnan(v)) << "rank " << r << " partial unwritten";
    if (premerge) {
      ro[r].assign(static_cast<size_t>(T * H * kHeadDimV), std::nanf(""));
      rl[r].assign(static_cast<size_t>(T * H), std::nanf(""));
      st = premerge_rank_partials(o_parts, l_parts,
                                  TensorView(ro[r].data(), DType::kF32, {T, H, kHeadDimV}),
                                  TensorView(rl[r].data(), DType::kF32, {T, H}), indptr);
      EXPECT_TRUE(st.ok()) << st.to_string();
      ov.emplace_back(ro[r].data(), DType::kF32, std::initializer_list<int64_t>{T, H, kHeadDimV});
      lv.emplace_back(rl[r].data(), DType::kF32, std::initializer_list<int64_t>{T, H});
    } else {
      ov.push_back(o_parts);
      lv.push_back(l_parts);
    }
  }
  EXPECT_EQ(ov[0].size(0), sent * T);
  Merged m;
  m.out.assign(static_cast<size_t>(T * H * kHeadDimV), 0xffff);
  m.lse.assign(static_cast<size_t>(T * H), std::nanf(""));
  Status st =
      merge_rank_partials(ov, lv, layout, TensorView(m.out.data(), DType::kBF16, {T, H, kHeadDimV}),
                          TensorView(m.lse.data(), DType::kF32, {T, H}), indptr);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return m;
}

// Request b alone through DCP: a uniform call with B = 1 and q_len = q_lens[b].
Merged request_alone(testing::Problem& p, testing::RaggedQ& rq, int64_t b,
                     const ShardLayout& layout) {
  testing::ProblemSpec s = p.spec;
  testing::Problem one = p;
  const int64_t n = rq.q_lens[b], H = s.num_heads;
  one.spec.batch = 1;
  one.spec.q_len = static_cast<int>(n);
  one.q.assign(rq.q.begin() + rq.indptr[b] * H * kHeadDimQK,
               rq.q.begin() + rq.indptr[b + 1] * H * kHeadDimQK);
  one.block_table.assign(p.block_table.begin() + b * p.max_pages,
                         p.block_table.begin() + (b + 1) * p.max_pages);
  one.seq_lens = {p.seq_lens[b]};
  one.spec.seq_lens = one.seq_lens;
  return run_dcp(one, layout);
}

bool all_written(const Merged& m) {
  for (const uint16_t v : m.out)
    if (std::isnan(bf16_bits_to_float(v))) return false;
  for (const float v : m.lse)
    if (std::isnan(v)) return false;
  return true;
}

// Sweep: H 8..128, page sizes 1/16/64, bf16, fp8 and fp8_tile KV, q_len 1 mixed with 32,
// seq_len == q_len, contexts that are not chunk or page multiples, merge blocks of 8 and 2, world
// 1..8: the merged ragged result is bitwise the same for every world size, each request's rows
// are bitwise that request alone, and it is the reference's ragged result to fp32 reassociation.
TEST(DcpRagged, AnyWorldSizeIsBitwiseTheSameAndEachRequestEqualsItselfAlone) {
  std::mt19937_64 rng(39);
  int cases = 0;
  for (const int H : {8, 16, 64, 128}) {
    for (const int page : {1, 16, 64}) {
      const DType kvs[] = {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile};
      const DType kv = kvs[cases % 3];
      testing::ProblemSpec s;
      s.num_heads = H;
      s.page_size = page;
      s.kv_dtype = kv;
      s.kv_scale = kv == DType::kFP8E4M3 ? 0.25f : 1.0f;
      s.batch = H >= 64 ? 3 : 5;
      s.seed = rng();
      std::vector<int32_t> q_lens;
      for (int b = 0; b < s.batch; ++b) {
        // 1 and 32 side by side, a repeated width (a run of two), seq_len == q_len for request 1,
        // otherwise contexts reaching several 64-token chunks.
        const int32_t n = b == 0 ? 1 : b == 1 ? 32 : b == 2 ? 1 : b == 3 ? 7 : 7;
        q_lens.push_back(n);
        s.seq_lens.push_back(b == 1 ? n : n + static_cast<int32_t>(rng() % (H >= 64 ? 150 : 300)));
      }
      s.q_len = 1;  // the Problem's own q is unused
      testing::Problem p = testing::make_problem(s);
      testing::RaggedQ rq = testing::make_ragged_q(s, q_lens, rng());
      const int block = cases % 2 ? 2 : kDeterministicBlockChunks;
      const std::string what = s.to_string() + " blocks of " + std::to_string(block);
      const Merged one = run_dcp_ragged(p, rq, ShardLayout{1, 64, block});
      ASSERT_TRUE(all_written(one)) << what;
      const std::vector<int> worlds =
          H >= 64 ? std::vector<int>{2, 3, 8} : std::vector<int>{2, 3, 4, 5, 6, 7, 8};
      for (const int world : worlds) {
        const Merged many = run_dcp_ragged(p, rq, ShardLayout{world, 64, block});
        ASSERT_EQ(one.out, many.out) << what << " world " << world;
        ASSERT_EQ(0, std::memcmp(one.lse.data(), many.lse.data(), one.lse.size() * 4))
            << what << " world " << world;
      }
      for (int64_t b = 0; b < s.batch; ++b) {
        const Merged alone = request_alone(p, rq, b, ShardLayout{3, 64, block});
        const int64_t r0 = rq.indptr[b] * H;
        ASSERT_EQ(
            0, std::memcmp(alone.out.data(), one.out.data() + r0 * kHeadDimV, alone.out.size() * 2))
            << what << " request " << b << " (q_len " << q_lens[b] << ") differs from itself alone";
        ASSERT_EQ(0, std::memcmp(alone.lse.data(), one.lse.data() + r0, alone.lse.size() * 4))
            << what << " request " << b << " lse";
      }
      // The reference's ragged result, to fp32 reassociation of the chunk merge.
      std::vector<uint16_t> out(one.out.size(), 0xffff);
      std::vector<float> lse(one.lse.size(), std::nanf(""));
      ASSERT_TRUE(
          cpu_verify(ragged_args(p, rq, TensorView(out.data(), DType::kBF16, {rq.T, H, kHeadDimV}),
                                 TensorView(lse.data(), DType::kF32, {rq.T, H})))
              .ok());
      for (size_t k = 0; k < out.size(); ++k) {
        const float a = bf16_bits_to_float(out[k]), got = bf16_bits_to_float(one.out[k]);
        ASSERT_NEAR(got, a, std::ldexp(std::fabs(a), -7) + 1e-5) << what << " out " << k;
      }
      for (size_t k = 0; k < lse.size(); ++k)
        ASSERT_NEAR(one.lse[k], lse[k], 1e-5 * (1 + std::fabs(lse[k]))) << what << " lse " << k;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 12);
}

TEST(DcpRagged, PremergedRanksMatchTheChunkOrderMergeToRounding) {
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    testing::ProblemSpec s = testing::dcp_spec(kv, 16);
    s.batch = 4;
    s.q_len = 1;
    // Ranks with several chunks, with one, and with none of the short requests'.
    s.seq_lens = {64 * 7 + 3, 32, 40, 64 * 4};
    testing::Problem p = testing::make_problem(s);
    testing::RaggedQ rq = testing::make_ragged_q(s, {5, 32, 1, 1}, 3);
    const Merged one = run_dcp_ragged(p, rq, ShardLayout{1, 64});
    for (int world : {1, 2, 3, 8}) {
      SCOPED_TRACE("world " + std::to_string(world));
      const Merged pre = run_dcp_ragged(p, rq, ShardLayout{world, 64}, /*premerge=*/true);
      ASSERT_TRUE(all_written(pre));
      for (size_t k = 0; k < one.out.size(); ++k) {
        const float a = bf16_bits_to_float(one.out[k]), b = bf16_bits_to_float(pre.out[k]);
        ASSERT_NEAR(b, a, std::ldexp(std::fabs(a), -7) + 1e-5) << k;
      }
      for (size_t k = 0; k < one.lse.size(); ++k) {
        ASSERT_NEAR(pre.lse[k], one.lse[k], 1e-5 * (1 + std::fabs(one.lse[k]))) << k;
      }
    }
  }
}

// A malformed q_indptr (validate.cc's checks and messages) or a partial buffer of the wrong shape
// is refused by every entry point before anything is written.
TEST(DcpRagged, BadIndptrOrBuffersAreRefusedAndWriteNothing) {
  testing::ProblemSpec s = testing::dcp_spec(DType::kBF16, 16);
  s.q_len = 1;
  s.seq_lens = {40, 9, 100};
  testing::Problem p = testing::make_problem(s);
  testing::RaggedQ rq = testing::make_ragged_q(s, {5, 9, 2}, 1);
  const int64_t T = 16, H = 16, cpr = 1;
  const ShardLayout layout{2, 64};
  struct Case {
    std::vector<int32_t> indptr;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{1, 5, 14, 16}, "q_indptr[0] = 1, expected 0"},
      {{0, 5, 5, 16},
       "q_indptr[2] = 5 is not above q_indptr[1] = 5 (every request brings >= 1 query token)"},
      {{0, 5, 14, 15}, "q_indptr[3] = 15 does not match q's 16 rows"},
      {{0}, "q_indptr has 1 entries; a batch of B requests needs B + 1 >= 2"},
  };
  std::vector<float> o(cpr * T * H * kHeadDimV, std::nanf("")), l(cpr * T * H, std::nanf(""));
  std::vector<uint16_t> out(T * H * kHeadDimV, 0xffff);
  std::vector<float> lse(T * H, std::nanf(""));
  const TensorView o_parts(o.data(), DType::kF32, {cpr * T, H, kHeadDimV});
  const TensorView l_parts(l.data(), DType::kF32, {cpr * T, H});
  const std::vector<TensorView> ov = {o_parts, o_parts}, lv = {l_parts, l_parts};
  auto nothing_written = [&] {
    for (const float v : o) ASSERT_TRUE(std::isnan(v));
    for (const float v : l) ASSERT_TRUE(std::isnan(v));
    for (const uint16_t v : out) ASSERT_EQ(v, 0xffff);
    for (const float v : lse) ASSERT_TRUE(std::isnan(v));
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    rq.indptr = c.indptr;
    const TensorView indptr(rq.indptr.data(), DType::kI32,
                            {static_cast<int64_t>(rq.indptr.size())});
    const VerifyArgs a = ragged_args(p, rq, {}, {});
    EXPECT_EQ(make_rank_shard(a, layout, 0).status().message(), c.message);
    EXPECT_EQ(rank_partials_cpu(a, layout, 0, o_parts, l_parts).message(), c.message);
    EXPECT_EQ(
        merge_rank_partials(ov, lv, layout, TensorView(out.data(), DType::kBF16, {T, H, kHeadDimV}),
                            TensorView(lse.data(), DType::kF32, {T, H}), indptr)
            .message(),
        c.message);
    std::vector<float> ro(T * H * kHeadDimV, std::nanf("")), rl(T * H, std::nanf(""));
    EXPECT_EQ(premerge_rank_partials(o_parts, l_parts,
                                     TensorView(ro.data(), DType::kF32, {T, H, kHeadDimV}),
                                     TensorView(rl.data(), DType::kF32, {T, H}), indptr)
                  .message(),
              c.message);
    for (const float v : ro) ASSERT_TRUE(std::isnan(v));
    nothing_written();
  }
  // A valid q_indptr with a rank's partials of the wrong size, or the uniform 5-d layout.
  rq = testing::make_ragged_q(s, {5, 9, 2}, 1);
  const TensorView indptr(rq.indptr.data(), DType::kI32, {4});
  std::vector<float> short_o((T - 1) * H * kHeadDimV);
  const std::vector<TensorView> bad = {
      o_parts, TensorView(short_o.data(), DType::kF32, {T - 1, H, kHeadDimV})};
  const Status st =
      merge_rank_partials(bad, lv, layout, TensorView(out.data(), DType::kBF16, {T, H, kHeadDimV}),
                          TensorView(lse.data(), DType::kF32, {T, H}), indptr);
  EXPECT_EQ(st.message(),
            "rank 1's o partials dimension 0 is 15, expected 16 (shape [15, 16, 512])");
  EXPECT_EQ(rank_partials_cpu(ragged_args(p, rq, {}, {}), layout, 0,
                              TensorView(o.data(), DType::kF32, {1, cpr, T, H, kHeadDimV}), l_parts)
                .code(),
            StatusCode::kInvalidArgument);
  nothing_written();
}

}  // namespace
}  // namespace mlaspec::attn::dcp
