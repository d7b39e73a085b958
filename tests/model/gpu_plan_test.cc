// The CUDA runtime's host-side plans (src/model/gpu_plan.h), checked on the CPU:
//   - attention in blocks of 32 queries (the CUDA backends' q_len limit) gives the same bits as
//     one call of all T queries, with the CPU reference backend on a scrambled page table;
//   - a fused batch (requests of 1..75 new tokens after 0..90 cached ones, one after the other)
//     planned as one: every request's rows are bitwise its own one call's, consecutive blocks of
//     equal q_len share a call, and padding columns hold a page of the block's own table;
//   - MoE groups: every (token, expert) pair once, experts ascending, and each token's combine
//     rows in ascending expert order with its weights.
#include "model/gpu_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "mlaspec/attention/backend.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/kvcache/pool.h"

namespace mlaspec::model {
namespace {

constexpr int64_t kH = 8, kRow = 576, kLatent = 512, kPage = 16;

std::vector<bf16> random_bf16(size_t n, std::mt19937& rng) {
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<bf16> v(n);
  for (bf16& x : v) x = bf16::from_float(d(rng));
  return v;
}

// One call of every query vs the block plan's calls; out and lse must agree bitwise.
void check_blocks(int64_t first, int64_t T) {
  std::mt19937 rng(static_cast<uint32_t>(first * 1000 + T));
  const int64_t pages = (first + T + kPage - 1) / kPage + 1;
  kv::KvPoolSpec spec;
  spec.layout = kv::KvLayout::mla();
  spec.num_pages = static_cast<int>(pages);
  spec.page_size = static_cast<int>(kPage);
  kv::KvPool pool = kv::KvPool::create(spec).value();
  const std::vector<bf16> rows = random_bf16(static_cast<size_t>(pages * kPage * kRow), rng);
  std::memcpy(pool.data(), rows.data(), rows.size() * sizeof(bf16));
  std::vector<int32_t> table(static_cast<size_t>(pages));
  for (int64_t j = 0; j < pages; ++j)
    table[static_cast<size_t>(j)] = static_cast<int32_t>(pages - 1 - j);
  std::vector<bf16> q = random_bf16(static_cast<size_t>(T * kH * kRow), rng);

  std::unique_ptr<attn::Backend> ref = attn::make_cpu_reference_backend();
  attn::VerifyOptions vo;
  vo.deterministic = true;
  const float scale = 1.0f / 24.0f;

  // One call.
  const int64_t used = (first + T + kPage - 1) / kPage;
  int32_t seq_len = static_cast<int32_t>(first + T);
  std::vector<bf16> out1(static_cast<size_t>(T * kH * kLatent));
  std::vector<float> lse1(static_cast<size_t>(T * kH));
  attn::VerifyArgs a;
  a.q = TensorView(q.data(), DType::kBF16, {1, T, kH, kRow});
  a.kv = pool.layer_view(0);
  a.block_table = TensorView(table.data(), DType::kI32, {1, used});
  a.seq_lens = TensorView(&seq_len, DType::kI32, {1});
  a.sm_scale = scale;
  a.out = TensorView(out1.data(), DType::kBF16, {1, T, kH, kLatent});
  a.lse = TensorView(lse1.data(), DType::kF32, {1, T, kH});
  ASSERT_TRUE(ref->run(a, vo).ok());

  // The plan's calls.
  AttentionBlockPlan plan = plan_attention_blocks(T, first, table, kPage, 32);
  EXPECT_EQ(plan.pages, used);
  std::vector<bf16> out2(out1.size(), bf16{0xffff});
  std::vector<float> lse2(lse1.size(), NAN);
  int64_t covered = 0;
  for (const AttentionBlockCall& c : plan.calls) {
    EXPECT_LE(c.q_len, 32);
    const int64_t t0 = c.first_block * 32;
    attn::VerifyArgs b;
    b.q = TensorView(q.data() + t0 * kH * kRow, DType::kBF16, {c.batch, c.q_len, kH, kRow});
    b.kv = pool.layer_view(0);
    b.block_table = TensorView(plan.block_table.data() + c.first_block * plan.pages, DType::kI32,
                               {c.batch, plan.pages});
    b.seq_lens = TensorView(plan.seq_lens.data() + c.first_block, DType::kI32, {c.batch});
    b.sm_scale = scale;
    b.out =
        TensorView(out2.data() + t0 * kH * kLatent, DType::kBF16, {c.batch, c.q_len, kH, kLatent});
    b.lse = TensorView(lse2.data() + t0 * kH, DType::kF32, {c.batch, c.q_len, kH});
    const Status st = ref->run(b, vo);
    ASSERT_TRUE(st.ok()) << st.to_string();
    covered += c.batch * c.q_len;
  }
  EXPECT_EQ(covered, T);
  EXPECT_EQ(std::memcmp(out1.data(), out2.data(), out1.size() * sizeof(bf16)), 0)
      << "first " << first << " T " << T;
  EXPECT_EQ(std::memcmp(lse1.data(), lse2.data(), lse1.size() * sizeof(float)), 0)
      << "first " << first << " T " << T;
}

TEST(GpuPlan, AttentionBlocksEqualOneCall) {
  check_blocks(0, 75);   // two full blocks and a remainder of 11
  check_blocks(37, 64);  // full blocks only, after cached tokens
  check_blocks(5, 9);    // the remainder only
  check_blocks(0, 1);
}

TEST(GpuPlan, AttentionBlockSeqLens) {
  const std::vector<int32_t> table = {7, 3, 5, 1, 0, 2, 4, 6};
  const AttentionBlockPlan p = plan_attention_blocks(70, 10, table, 16, 32);
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].batch, 2);
  EXPECT_EQ(p.calls[0].q_len, 32);
  EXPECT_EQ(p.calls[1].first_block, 2);
  EXPECT_EQ(p.calls[1].q_len, 6);
  EXPECT_EQ(p.seq_lens, (std::vector<int32_t>{42, 74, 80}));
  EXPECT_EQ(p.pages, 5);
  for (int b = 0; b < 3; ++b) {
    EXPECT_TRUE(std::equal(table.begin(), table.begin() + 5, p.block_table.begin() + b * 5));
  }
}

// Runs the plan's calls over q [tokens, kH, kRow] with the CPU reference; returns out.
std::vector<bf16> run_plan(const AttentionBlockPlan& plan, const std::vector<bf16>& q,
                           int64_t tokens, kv::KvPool& pool, float scale) {
  std::unique_ptr<attn::Backend> ref = attn::make_cpu_reference_backend();
  attn::VerifyOptions vo;
  vo.deterministic = true;
  std::vector<bf16> out(static_cast<size_t>(tokens * kH * kLatent), bf16{0xffff});
  std::vector<float> lse(static_cast<size_t>(tokens * kH), NAN);
  int64_t covered = 0;
  for (const AttentionBlockCall& c : plan.calls) {
    EXPECT_EQ(c.first_token, covered);
    attn::VerifyArgs b;
    b.q = TensorView(const_cast<bf16*>(q.data()) + c.first_token * kH * kRow, DType::kBF16,
                     {c.batch, c.q_len, kH, kRow});
    b.kv = pool.layer_view(0);
    b.block_table =
        TensorView(const_cast<int32_t*>(plan.block_table.data()) + c.first_block * plan.pages,
                   DType::kI32, {c.batch, plan.pages});
    b.seq_lens = TensorView(const_cast<int32_t*>(plan.seq_lens.data()) + c.first_block, DType::kI32,
                            {c.batch});
    b.sm_scale = scale;
    b.out = TensorView(out.data() + c.first_token * kH * kLatent, DType::kBF16,
                       {c.batch, c.q_len, kH, kLatent});
    b.lse = TensorView(lse.data() + c.first_token * kH, DType::kF32, {c.batch, c.q_len, kH});
    const Status st = ref->run(b, vo);
    EXPECT_TRUE(st.ok()) << st.to_string();
    covered += c.batch * c.q_len;
  }
  EXPECT_EQ(covered, tokens);
  return out;
}

TEST(GpuPlan, FusedBatchEqualsEachRequestAlone) {
  std::mt19937 rng(11);
  // (cached tokens, new tokens): decode, verify blocks, prefill chunks across the 32 boundary.
  const std::vector<std::pair<int64_t, int64_t>> reqs = {
      {0, 1}, {40, 1}, {17, 8}, {90, 8}, {5, 3}, {0, 75}, {33, 1}, {64, 32}, {3, 8}};
  std::vector<std::vector<int32_t>> tables;
  int32_t next = 0;
  for (const auto& [first, T] : reqs) {
    const int64_t used = (first + T + kPage - 1) / kPage;
    std::vector<int32_t> t(static_cast<size_t>(used));
    for (int32_t& p : t) p = next++;
    std::shuffle(t.begin(), t.end(), rng);
    tables.push_back(std::move(t));
  }
  kv::KvPoolSpec spec;
  spec.layout = kv::KvLayout::mla();
  spec.num_pages = next;
  spec.page_size = static_cast<int>(kPage);
  kv::KvPool pool = kv::KvPool::create(spec).value();
  const std::vector<bf16> rows = random_bf16(static_cast<size_t>(next * kPage * kRow), rng);
  std::memcpy(pool.data(), rows.data(), rows.size() * sizeof(bf16));

  std::vector<AttentionPiece> pieces;
  int64_t tokens = 0;
  for (size_t i = 0; i < reqs.size(); ++i) {
    pieces.push_back({reqs[i].second, reqs[i].first, tables[i]});
    tokens += reqs[i].second;
  }
  const std::vector<bf16> q = random_bf16(static_cast<size_t>(tokens * kH * kRow), rng);
  const float scale = 1.0f / 24.0f;
  const AttentionBlockPlan plan = plan_attention_batch(pieces, kPage, 32);
  // 1 | 1 merged with nothing else: {1}, {1} are consecutive -> one call; then 8, 8 -> one; ...
  ASSERT_EQ(plan.calls.size(), 8u);
  EXPECT_EQ(plan.calls[0].batch, 2);  // the two decode tokens
  EXPECT_EQ(plan.calls[1].batch, 2);  // the two 8-token verify blocks
  EXPECT_EQ(plan.pages, (90 + 8 + kPage - 1) / kPage);
  const std::vector<bf16> fused = run_plan(plan, q, tokens, pool, scale);

  int64_t t0 = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const AttentionBlockPlan alone = plan_attention_batch({&pieces[i], 1}, kPage, 32);
    const std::vector<bf16> qi(q.begin() + t0 * kH * kRow,
                               q.begin() + (t0 + pieces[i].T) * kH * kRow);
    const std::vector<bf16> out = run_plan(alone, qi, pieces[i].T, pool, scale);
    EXPECT_EQ(std::memcmp(out.data(), fused.data() + t0 * kH * kLatent, out.size() * sizeof(bf16)),
              0)
        << "request " << i;
    t0 += pieces[i].T;
  }
  // Every column of a block's row (padding included) is a page of the block's own request.
  size_t b = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    for (int64_t q0 = 0; q0 < pieces[i].T; q0 += 32, ++b) {
      const int32_t* row = plan.block_table.data() + b * static_cast<size_t>(plan.pages);
      for (int64_t j = 0; j < plan.pages; ++j) {
        EXPECT_NE(std::find(tables[i].begin(), tables[i].end(), row[j]), tables[i].end())
            << "block " << b << " column " << j;
      }
    }
  }
  EXPECT_EQ(b, plan.seq_lens.size());

  // A power-of-two table width (CUDA graph passes): the same calls on a wider table, padded with
  // pages of each block's own request, and the same bits.
  const AttentionBlockPlan wide = plan_attention_batch(pieces, kPage, 32, /*pow2_pages=*/true);
  EXPECT_EQ(wide.pages, 8);  // 7 pages, rounded up to a power of two
  ASSERT_EQ(wide.calls.size(), plan.calls.size());
  EXPECT_EQ(wide.seq_lens, plan.seq_lens);
  for (size_t r = 0; r < plan.seq_lens.size(); ++r) {
    const int32_t* narrow_row = plan.block_table.data() + r * static_cast<size_t>(plan.pages);
    const int32_t* wide_row = wide.block_table.data() + r * static_cast<size_t>(wide.pages);
    EXPECT_TRUE(std::equal(narrow_row, narrow_row + plan.pages, wide_row)) << "block " << r;
    for (int64_t j = plan.pages; j < wide.pages; ++j) EXPECT_EQ(wide_row[j], narrow_row[0]);
  }
  const std::vector<bf16> padded = run_plan(wide, q, tokens, pool, scale);
  EXPECT_EQ(std::memcmp(padded.data(), fused.data(), fused.size() * sizeof(bf16)), 0);
}

TEST(GpuPlan, MoeGroupsAndCombineOrder) {
  std::mt19937 rng(7);
  const int64_t T = 13;
  const int k = 3, E = 8;
  std::vector<int> chosen(static_cast<size_t>(T * k));
  std::vector<float> weight(chosen.size());
  for (int64_t t = 0; t < T; ++t) {
    std::vector<int> e(E);
    for (int i = 0; i < E; ++i) e[static_cast<size_t>(i)] = i;
    std::shuffle(e.begin(), e.end(), rng);
    for (int i = 0; i < k; ++i) {
      chosen[static_cast<size_t>(t * k + i)] = e[static_cast<size_t>(i)];
      weight[static_cast<size_t>(t * k + i)] =
          static_cast<float>(t * 100 + e[static_cast<size_t>(i)]);
    }
  }
  const MoeGroupPlan p = plan_moe_groups(chosen, weight, T, k, E);
  ASSERT_EQ(p.rows.size(), static_cast<size_t>(T * k));
  ASSERT_EQ(p.expert_begin.size(), static_cast<size_t>(E + 1));
  EXPECT_EQ(p.expert_begin.front(), 0);
  EXPECT_EQ(p.expert_begin.back(), T * k);
  // Row r belongs to expert e = the one whose range holds it; tokens ascend within an expert.
  std::vector<int> expert_of(p.rows.size());
  for (int e = 0; e < E; ++e) {
    for (int64_t r = p.expert_begin[static_cast<size_t>(e)];
         r < p.expert_begin[static_cast<size_t>(e) + 1]; ++r) {
      expert_of[static_cast<size_t>(r)] = e;
      if (r > p.expert_begin[static_cast<size_t>(e)]) {
        EXPECT_LT(p.rows[static_cast<size_t>(r) - 1], p.rows[static_cast<size_t>(r)]);
      }
    }
  }
  for (int64_t t = 0; t < T; ++t) {
    int last = -1;
    for (int i = 0; i < k; ++i) {
      const int32_t r = p.combine_row[static_cast<size_t>(t * k + i)];
      ASSERT_GE(r, 0);
      EXPECT_EQ(p.rows[static_cast<size_t>(r)], t);
      const int e = expert_of[static_cast<size_t>(r)];
      EXPECT_GT(e, last) << "token " << t << ": experts must ascend";
      last = e;
      EXPECT_EQ(p.combine_weight[static_cast<size_t>(t * k + i)], static_cast<float>(t * 100 + e));
    }
  }
}

}  // namespace
}  // namespace mlaspec::model
