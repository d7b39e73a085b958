// The NCCL DCP path with one rank on one GPU (what a one-GPU machine can check of it): a verify
// step through ncclAllGather must equal the deterministic one-GPU fold result bitwise.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "common/verify_problem.h"
#include "gpu/gpu_test_util.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/dcp_nccl.h"

namespace mlaspec::attn::dcp {
namespace {

TEST(DcpNccl, SingleRankStepEqualsDeterministicOneGpu) {
  MLASPEC_SKIP_WITHOUT_GPU();
  if (!built_with_nccl()) GTEST_SKIP() << "built without NCCL";
  testing::ProblemSpec s;
  s.batch = 2;
  s.q_len = 8;
  s.num_heads = 16;
  s.seq_lens = {3 * 1024 + 5, 900};
  s.seed = 5;
  testing::Problem p = testing::make_problem(s);
  auto up = [](const auto& v) {
    Buffer b(v.size() * sizeof(v[0]), Device::kCUDA);
    throw_if_error(b.copy_from_host(v.data(), b.bytes()));
    return b;
  };
  Buffer q = up(p.q), kv = up(p.kv), bt = up(p.block_table), sl = up(p.seq_lens);
  Buffer out1(p.out_elems() * 2, Device::kCUDA), lse1(p.lse_elems() * 4, Device::kCUDA);
  Buffer out2(p.out_elems() * 2, Device::kCUDA), lse2(p.lse_elems() * 4, Device::kCUDA);
  throw_if_error(out2.fill_bytes(0xff));
  VerifyArgs a = p.host_args(out1.view(DType::kBF16, {2, 8, 16, kHeadDimV}),
                             lse1.view(DType::kF32, {2, 8, 16}));
  a.block_table_host = a.block_table;
  a.seq_lens_host = a.seq_lens;
  a.q = q.view(DType::kBF16, {2, 8, 16, kHeadDimQK});
  a.kv.pages = kv.view(DType::kBF16, {p.num_pages, 64, kHeadDimQK});
  a.block_table = bt.view(DType::kI32, {2, p.max_pages});
  a.seq_lens = sl.view(DType::kI32, {2});
  auto fold = make_cuda_fold_backend();
  ASSERT_TRUE(fold.ok());
  VerifyOptions det;
  det.deterministic = true;
  ASSERT_TRUE(fold.value()->run(a, det).ok());

  Result<std::string> id = NcclComm::unique_id();
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  Result<std::unique_ptr<NcclComm>> comm = NcclComm::join(id.value(), 1, 0);
  ASSERT_TRUE(comm.ok()) << comm.status().to_string();
  DcpWorkspace ws;
  Status st = verify_step(*comm.value(), a, ShardLayout{1, deterministic_chunk_tokens(s.num_heads)},
                          ws, out2.view(DType::kBF16, {2, 8, 16, kHeadDimV}),
                          lse2.view(DType::kF32, {2, 8, 16}));
  ASSERT_TRUE(st.ok()) << st.to_string();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> h1(out1.bytes()), h2(out2.bytes()), l1(lse1.bytes()), l2(lse2.bytes());
  ASSERT_TRUE(out1.copy_to_host(h1.data(), h1.size()).ok());
  ASSERT_TRUE(out2.copy_to_host(h2.data(), h2.size()).ok());
  ASSERT_TRUE(lse1.copy_to_host(l1.data(), l1.size()).ok());
  ASSERT_TRUE(lse2.copy_to_host(l2.data(), l2.size()).ok());
  EXPECT_EQ(h1, h2);
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(NcclComm::join("zz", 1, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(NcclComm::join(id.value(), 2, 2).status().message(), "rank 2 is outside [0, 2)");
}

// A ragged batch (q_len 1 next to 32, a run of two, seq_len == q_len) through one rank's verify
// step: its runs' partials, grouped all-gathers and merges give the deterministic one-GPU ragged
// result bitwise (kDeterministic) or to rounding (kPremerge), every element written.
TEST(DcpNccl, SingleRankRaggedStepEqualsDeterministicOneGpu) {
  MLASPEC_SKIP_WITHOUT_GPU();
  if (!built_with_nccl()) GTEST_SKIP() << "built without NCCL";
  testing::ProblemSpec s;
  s.batch = 4;
  s.q_len = 1;
  s.num_heads = 16;
  s.seq_lens = {3 * 1024 + 5, 32, 900, 2048 + 1};
  s.seed = 6;
  testing::Problem p = testing::make_problem(s);
  testing::RaggedQ rq = testing::make_ragged_q(s, {1, 32, 7, 7}, 8);
  const int64_t T = rq.T, H = s.num_heads, B = s.batch;
  Buffer q = testing::upload(rq.q), kv = testing::upload(p.kv), bt = testing::upload(p.block_table),
         sl = testing::upload(p.seq_lens), ip = testing::upload(rq.indptr);
  Buffer out1(T * H * kHeadDimV * 2, Device::kCUDA), lse1(T * H * 4, Device::kCUDA);
  VerifyArgs a =
      p.host_args(out1.view(DType::kBF16, {T, H, kHeadDimV}), lse1.view(DType::kF32, {T, H}));
  a.block_table_host = a.block_table;
  a.seq_lens_host = a.seq_lens;
  a.q_indptr_host = TensorView(rq.indptr.data(), DType::kI32, {B + 1});
  a.q = q.view(DType::kBF16, {T, H, kHeadDimQK});
  a.kv.pages = kv.view(DType::kBF16, {p.num_pages, 64, kHeadDimQK});
  a.block_table = bt.view(DType::kI32, {B, p.max_pages});
  a.seq_lens = sl.view(DType::kI32, {B});
  a.q_indptr = ip.view(DType::kI32, {B + 1});
  auto fold = make_cuda_fold_backend();
  ASSERT_TRUE(fold.ok());
  VerifyOptions det;
  det.deterministic = true;
  ASSERT_TRUE(fold.value()->run(a, det).ok());
  const std::vector<uint16_t> ref_out = testing::download<uint16_t>(out1);
  const std::vector<float> ref_lse = testing::download<float>(lse1);

  Result<std::string> id = NcclComm::unique_id();
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  Result<std::unique_ptr<NcclComm>> comm = NcclComm::join(id.value(), 1, 0);
  ASSERT_TRUE(comm.ok()) << comm.status().to_string();
  DcpWorkspace ws;
  for (const DcpMerge merge : {DcpMerge::kDeterministic, DcpMerge::kPremerge}) {
    Buffer out2(T * H * kHeadDimV * 2, Device::kCUDA), lse2(T * H * 4, Device::kCUDA);
    throw_if_error(out2.fill_bytes(0xff));
    throw_if_error(lse2.fill_bytes(0xff));
    Status st = verify_step(*comm.value(), a, ShardLayout{1, deterministic_chunk_tokens(H)}, ws,
                            out2.view(DType::kBF16, {T, H, kHeadDimV}),
                            lse2.view(DType::kF32, {T, H}), nullptr, merge);
    ASSERT_TRUE(st.ok()) << st.to_string();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<uint16_t> got_out = testing::download<uint16_t>(out2);
    const std::vector<float> got_lse = testing::download<float>(lse2);
    if (merge == DcpMerge::kDeterministic) {
      EXPECT_EQ(got_out, ref_out);
      EXPECT_EQ(0, std::memcmp(got_lse.data(), ref_lse.data(), ref_lse.size() * 4));
      continue;
    }
    for (size_t k = 0; k < ref_out.size(); ++k) {
      const float x = bf16_bits_to_float(ref_out[k]), y = bf16_bits_to_float(got_out[k]);
      ASSERT_TRUE(std::isfinite(y)) << "out " << k << " not written";
      ASSERT_NEAR(y, x, std::ldexp(std::fabs(x), -7) + 1e-5f) << "out " << k;
    }
    for (size_t k = 0; k < ref_lse.size(); ++k) {
      ASSERT_NEAR(got_lse[k], ref_lse[k], 1e-5f * (1.f + std::fabs(ref_lse[k]))) << k;
    }
  }
}

}  // namespace
}  // namespace mlaspec::attn::dcp
