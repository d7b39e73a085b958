// Decode context parallelism on the GPU: ranks simulated on one device (each with only its shard
// of the pages), partials gathered rank after rank as ncclAllGather lays them out, merged by the
// GPU combine. With deterministic mode's chunks the result must be bitwise the deterministic
// one-GPU result for every world size.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "common/verify_problem.h"
#include "gpu/gpu_test_util.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/dcp.h"

namespace mlaspec::attn::dcp {
namespace {

using testing::download;
using testing::upload;

struct Result2 {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

// The deterministic one-GPU call (fold backend) on the whole pool.
Result2 one_gpu(testing::Problem& p) {
  const auto& s = p.spec;
  Buffer q = upload(p.q), kv = upload(p.kv), bt = upload(p.block_table), sl = upload(p.seq_lens);
  Buffer out(p.out_elems() * 2, Device::kCUDA), lse(p.lse_elems() * 4, Device::kCUDA);
  throw_if_error(out.fill_bytes(0xff));
  throw_if_error(lse.fill_bytes(0xff));
  VerifyArgs a = p.host_args(TensorView(), TensorView());
  a.block_table_host = a.block_table;
  a.seq_lens_host = a.seq_lens;
  a.q = q.view(DType::kBF16, {s.batch, s.q_len, s.num_heads, kHeadDimQK});
  a.kv.pages = kv.view(s.kv_dtype, {p.num_pages, s.page_size, kHeadDimQK});
  a.block_table = bt.view(DType::kI32, {s.batch, p.max_pages});
  a.seq_lens = sl.view(DType::kI32, {s.batch});
  a.out = out.view(DType::kBF16, {s.batch, s.q_len, s.num_heads, kHeadDimV});
  a.lse = lse.view(DType::kF32, {s.batch, s.q_len, s.num_heads});
  auto fold = make_cuda_fold_backend();
  throw_if_error(fold.status());
  VerifyOptions o;
  o.deterministic = true;
  throw_if_error(fold.value()->run(a, o));
  return {download<uint16_t>(out), download<float>(lse)};
}

// `world` ranks, each holding only its shard, computing into its block of a gathered buffer.
// premerge: each rank merges its chunks into one partial first (DcpMerge::kPremerge); the GPU
// pre-merge is also checked against the CPU one on the same partials.
Result2 simulated_ranks(testing::Problem& p, int world, bool premerge = false) {
  const auto& s = p.spec;
  const ShardLayout layout{world, deterministic_chunk_tokens(s.num_heads)};
  int64_t max_len = 0;
  for (int32_t l : p.seq_lens) max_len = std::max<int64_t>(max_len, l);
  const int64_t cpr = layout.chunks_per_rank(max_len);
  const int64_t B = s.batch, Q = s.q_len, H = s.num_heads;
  const int64_t sent = premerge ? 1 : cpr;  // partials per rank in the gathered buffer
  const int64_t o_block = B * sent * Q * H * kHeadDimV, l_block = B * sent * Q * H;
  Buffer o_g(world * o_block * 4, Device::kCUDA), l_g(world * l_block * 4, Device::kCUDA);
  throw_if_error(o_g.fill_bytes(0xff));
  throw_if_error(l_g.fill_bytes(0xff));
  Buffer q = upload(p.q), sl = upload(p.seq_lens);
  for (int r = 0; r < world; ++r) {
    VerifyArgs global = p.host_args(TensorView(), TensorView());
    Result<RankShard> shard = make_rank_shard(global, layout, r);
    throw_if_error(shard.status());
    Buffer kv = upload(shard.value().kv), bt = upload(shard.value().block_table);
    VerifyArgs local;
    local.q = q.view(DType::kBF16, {B, Q, H, kHeadDimQK});
    local.kv.pages = kv.view(s.kv_dtype, {shard.value().num_pages, s.page_size, kHeadDimQK});
    local.kv.kv_scale = global.kv.kv_scale;
    local.block_table = bt.view(DType::kI32, {B, p.max_pages});
    local.block_table_host =
        TensorView(shard.value().block_table.data(), DType::kI32, {B, p.max_pages});
    local.seq_lens = sl.view(DType::kI32, {B});
    local.seq_lens_host = TensorView(p.seq_lens.data(), DType::kI32, {B});
    local.sm_scale = p.sm_scale;
    TensorView o(static_cast<float*>(o_g.data()) + r * o_block, DType::kF32,
                 {B, sent, Q, H, kHeadDimV}, Device::kCUDA);
    TensorView l(static_cast<float*>(l_g.data()) + r * l_block, DType::kF32, {B, sent, Q, H},
                 Device::kCUDA);
    if (!premerge) {
      Status st = rank_partials_cuda(local, layout, r, o, l);
      EXPECT_TRUE(st.ok()) << st.to_string();
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      continue;
    }
    Buffer oc(B * cpr * Q * H * kHeadDimV * 4, Device::kCUDA),
        lc(B * cpr * Q * H * 4, Device::kCUDA);
    const TensorView o_chunks = oc.view(DType::kF32, {B, cpr, Q, H, kHeadDimV});
    const TensorView l_chunks = lc.view(DType::kF32, {B, cpr, Q, H});
    Status st = rank_partials_cuda(local, layout, r, o_chunks, l_chunks);
    EXPECT_TRUE(st.ok()) << st.to_string();
    st = premerge_rank_partials_cuda(o_chunks, l_chunks, o, l);
    EXPECT_TRUE(st.ok()) << st.to_string();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    // The same pre-merge on the CPU from the same partials.
    std::vector<float> ho = download<float>(oc), hl = download<float>(lc);
    std::vector<float> ro(B * Q * H * kHeadDimV, std::nanf("")), rl(B * Q * H, std::nanf(""));
    st = premerge_rank_partials(TensorView(ho.data(), DType::kF32, {B, cpr, Q, H, kHeadDimV}),
                                TensorView(hl.data(), DType::kF32, {B, cpr, Q, H}),
                                TensorView(ro.data(), DType::kF32, {B, 1, Q, H, kHeadDimV}),
                                TensorView(rl.data(), DType::kF32, {B, 1, Q, H}));
    EXPECT_TRUE(st.ok()) << st.to_string();
    std::vector<float> go(ro.size()), gl(rl.size());
    EXPECT_EQ(cudaMemcpy(go.data(), o.data(), go.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(gl.data(), l.data(), gl.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    size_t bad_o = 0, bad_l = 0;
    for (size_t k = 0; k < ro.size(); ++k) {
      bad_o += !(std::fabs(go[k] - ro[k]) <= 1e-5f * std::fabs(ro[k]) + 1e-7f);
    }
    for (size_t k = 0; k < rl.size(); ++k) {
      // An empty row (lse = -inf) stays empty; others agree to fp32 reassociation.
      bad_l += std::isinf(rl[k]) ? gl[k] != rl[k]
                                 : !(std::fabs(gl[k] - rl[k]) <= 1e-5f * (1.f + std::fabs(rl[k])));
    }
    EXPECT_EQ(bad_o, 0u) << "rank " << r << ": GPU pre-merged o differs from the CPU pre-merge";
    EXPECT_EQ(bad_l, 0u) << "rank " << r << ": GPU pre-merged lse differs from the CPU pre-merge";
  }
  Buffer out(p.out_elems() * 2, Device::kCUDA), lse(p.lse_elems() * 4, Device::kCUDA);
  throw_if_error(out.fill_bytes(0xff));
  Status st = merge_gathered_cuda(o_g.view(DType::kF32, {world, B, sent, Q, H, kHeadDimV}),
                                  l_g.view(DType::kF32, {world, B, sent, Q, H}), layout,
                                  out.view(DType::kBF16, {B, Q, H, kHeadDimV}),
                                  lse.view(DType::kF32, {B, Q, H}));
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {download<uint16_t>(out), download<float>(lse)};
}

TEST(DcpCuda, SimulatedRanksMatchDeterministicOneGpuBitwise) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    testing::ProblemSpec s = testing::dcp_spec(kv, 64);
    // Just past a chunk boundary (the mask spans two chunks on different ranks), exactly two
    // chunks, and shorter than one chunk (one non-empty partial).
    s.seq_lens = {5 * 1024 + 3, 2048, 700};
    s.seed = 17;
    testing::Problem p = testing::make_problem(s);
    const Result2 ref = one_gpu(p);
    // The reference's outputs were poisoned (0xff = NaN): every element must have been written,
    // or a bitwise comparison of two unwritten buffers would pass.
    for (uint16_t v : ref.out) ASSERT_TRUE(std::isfinite(bf16_bits_to_float(v)));
    for (float v : ref.lse) ASSERT_TRUE(std::isfinite(v));
    for (int world : {1, 2, 3, 8}) {
      SCOPED_TRACE("world " + std::to_string(world) + " kv " + std::string(dtype_name(kv)));
      const Result2 got = simulated_ranks(p, world);
      ASSERT_EQ(got.out.size(), ref.out.size());
      size_t diff = 0;
      for (size_t k = 0; k < ref.out.size(); ++k) diff += got.out[k] != ref.out[k];
      EXPECT_EQ(diff, 0u) << "out elements differing from the deterministic one-GPU result";
      EXPECT_EQ(0, std::memcmp(got.lse.data(), ref.lse.data(), ref.lse.size() * 4));
    }
  }
}

TEST(DcpCuda, PremergedRanksMatchDeterministicOneGpuToRounding) {
  MLASPEC_SKIP_WITHOUT_GPU();
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    testing::ProblemSpec s = testing::dcp_spec(kv, 64);
    // A rank with several chunks, one with a single chunk, ranks with none for the short request.
    s.seq_lens = {5 * 1024 + 3, 2048, 700};
    s.seed = 23;
    testing::Problem p = testing::make_problem(s);
    const Result2 ref = one_gpu(p);
    for (int world : {1, 2, 3, 8}) {
      SCOPED_TRACE("world " + std::to_string(world) + " kv " + std::string(dtype_name(kv)));
      const Result2 got = simulated_ranks(p, world, /*premerge=*/true);
      ASSERT_EQ(got.out.size(), ref.out.size());
      for (size_t k = 0; k < ref.out.size(); ++k) {
        const float a = bf16_bits_to_float(ref.out[k]), b = bf16_bits_to_float(got.out[k]);
        ASSERT_TRUE(std::isfinite(b)) << "out " << k << " not written";
        ASSERT_NEAR(b, a, std::ldexp(std::fabs(a), -7) + 1e-5f) << "out " << k;
      }
      for (size_t k = 0; k < ref.lse.size(); ++k) {
        ASSERT_NEAR(got.lse[k], ref.lse[k], 1e-5f * (1.f + std::fabs(ref.lse[k]))) << "lse " << k;
      }
    }
  }
}

TEST(DcpCuda, BadLayoutsAreNamed) {
  MLASPEC_SKIP_WITHOUT_GPU();
  testing::ProblemSpec s;
  s.page_size = 16;
  testing::Problem p = testing::make_problem(s);
  Buffer q = upload(p.q), kv = upload(p.kv), bt = upload(p.block_table), sl = upload(p.seq_lens);
  VerifyArgs a = p.host_args(TensorView(), TensorView());
  a.block_table_host = a.block_table;
  a.seq_lens_host = a.seq_lens;
  a.q = q.view(DType::kBF16, {1, 1, 16, kHeadDimQK});
  a.kv.pages = kv.view(DType::kBF16, {p.num_pages, 16, kHeadDimQK});
  a.block_table = bt.view(DType::kI32, {1, p.max_pages});
  a.seq_lens = sl.view(DType::kI32, {1});
  Buffer o(1 << 20, Device::kCUDA), l(1 << 16, Device::kCUDA);
  // 48 tokens: a multiple of the page size but not of the kernel's 64-token tile.
  Status st =
      rank_partials_cuda(a, ShardLayout{2, 48}, 0, o.view(DType::kF32, {1, 3, 1, 16, kHeadDimV}),
                         l.view(DType::kF32, {1, 3, 1, 16}));
  EXPECT_NE(st.message().find("KV tile 64"), std::string::npos) << st.to_string();
  st = rank_partials_cuda(a, ShardLayout{2, 64}, 2, o.view(DType::kF32, {1, 2, 1, 16, kHeadDimV}),
                          l.view(DType::kF32, {1, 2, 1, 16}));
  EXPECT_EQ(st.message(), "rank 2 is outside [0, 2)");
  // The GPU merge folds blocks of 1 or kDeterministicBlockChunks chunks only.
  Buffer out(1 << 16, Device::kCUDA);
  st = merge_gathered_cuda(o.view(DType::kF32, {2, 1, 2, 1, 16, kHeadDimV}),
                           l.view(DType::kF32, {2, 1, 2, 1, 16}), ShardLayout{2, 64, 4},
                           out.view(DType::kBF16, {1, 1, 16, kHeadDimV}),
                           l.view(DType::kF32, {1, 1, 16}));
  EXPECT_EQ(st.message(),
            "DCP merge blocks of 4 chunks: the GPU merge folds blocks of 1 or 8 chunks");
}

}  // namespace
}  // namespace mlaspec::attn::dcp
