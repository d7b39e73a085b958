// Decode context parallelism simulated on the CPU: ranks hold disjoint shards of every request's
// pages, compute per-chunk partials, and the all-gathered partials merge to the one-device result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
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

}  // namespace
}  // namespace mlaspec::attn::dcp
