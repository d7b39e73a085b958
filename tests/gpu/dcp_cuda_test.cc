// Decode context parallelism on the GPU: ranks simulated on one device (each with only its shard
// of the pages), partials gathered rank after rank as ncclAllGather lays them out, merged by the
// GPU combine. With deterministic mode's chunks the result must be bitwise the deterministic
// one-GPU result for every world size.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <string>
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

// ---- Ragged batches (per-request q_len), mirroring dcp_test.cc's DcpRagged
// ------------------------

// A ragged call's device inputs over a Problem's KV (the whole pool), with host copies.
struct RaggedDevice {
  Buffer q, kv, bt, sl, ip;
  VerifyArgs args;
  RaggedDevice(testing::Problem& p, testing::RaggedQ& rq)
      : q(upload(rq.q)),
        kv(upload(p.kv)),
        bt(upload(p.block_table)),
        sl(upload(p.seq_lens)),
        ip(upload(rq.indptr)) {
    const auto& s = p.spec;
    const int64_t B = s.batch;
    args = p.host_args(TensorView(), TensorView());
    args.block_table_host = args.block_table;
    args.seq_lens_host = args.seq_lens;
    args.q_indptr_host = TensorView(rq.indptr.data(), DType::kI32, {B + 1});
    args.q = q.view(DType::kBF16, {rq.T, s.num_heads, kHeadDimQK});
    args.kv.pages = kv.view(s.kv_dtype, {p.num_pages, s.page_size, kHeadDimQK});
    args.block_table = bt.view(DType::kI32, {B, p.max_pages});
    args.seq_lens = sl.view(DType::kI32, {B});
    args.q_indptr = ip.view(DType::kI32, {B + 1});
  }
};

// The deterministic one-GPU ragged call (fold backend), outputs poisoned first.
Result2 one_gpu_ragged(testing::Problem& p, testing::RaggedQ& rq) {
  const int64_t T = rq.T, H = p.spec.num_heads;
  RaggedDevice d(p, rq);
  Buffer out(T * H * kHeadDimV * 2, Device::kCUDA), lse(T * H * 4, Device::kCUDA);
  throw_if_error(out.fill_bytes(0xff));
  throw_if_error(lse.fill_bytes(0xff));
  d.args.out = out.view(DType::kBF16, {T, H, kHeadDimV});
  d.args.lse = lse.view(DType::kF32, {T, H});
  auto fold = make_cuda_fold_backend();
  throw_if_error(fold.status());
  VerifyOptions o;
  o.deterministic = true;
  throw_if_error(fold.value()->run(d.args, o));
  return {download<uint16_t>(out), download<float>(lse)};
}

// `world` ranks on one device, each with its shard, computing the whole ragged call's partials
// [cpr * T, H, 512] (pre-merged to [T, H, 512] with premerge); the test lays them out as the
// NCCL driver's per-run all-gathers do (dcp.h: run after run, [world, count, sent, q_len, H, 512])
// and merges them on the GPU.
Result2 simulated_ranks_ragged(testing::Problem& p, testing::RaggedQ& rq, int world,
                               bool premerge) {
  const auto& s = p.spec;
  const ShardLayout layout{world, deterministic_chunk_tokens(s.num_heads)};
  int64_t max_len = 0;
  for (int32_t l : p.seq_lens) max_len = std::max<int64_t>(max_len, l);
  const int64_t cpr = layout.chunks_per_rank(max_len);
  const int64_t B = s.batch, T = rq.T, H = s.num_heads, W = world;
  const int64_t sent = premerge ? 1 : cpr;
  Buffer o_g(W * sent * T * H * kHeadDimV * 4, Device::kCUDA),
      l_g(W * sent * T * H * 4, Device::kCUDA);
  throw_if_error(o_g.fill_bytes(0xff));
  throw_if_error(l_g.fill_bytes(0xff));
  RaggedDevice d(p, rq);
  for (int r = 0; r < world; ++r) {
    VerifyArgs global = p.host_args(TensorView(), TensorView());
    global.q = TensorView(rq.q.data(), DType::kBF16, {T, H, kHeadDimQK});
    global.q_indptr = d.args.q_indptr_host;
    Result<RankShard> shard = make_rank_shard(global, layout, r);
    throw_if_error(shard.status());
    Buffer kv = upload(shard.value().kv), bt = upload(shard.value().block_table);
    VerifyArgs local = d.args;
    local.kv.pages = kv.view(s.kv_dtype, {shard.value().num_pages, s.page_size, kHeadDimQK});
    local.block_table = bt.view(DType::kI32, {B, p.max_pages});
    local.block_table_host =
        TensorView(shard.value().block_table.data(), DType::kI32, {B, p.max_pages});
    Buffer oc(cpr * T * H * kHeadDimV * 4, Device::kCUDA), lc(cpr * T * H * 4, Device::kCUDA);
    throw_if_error(oc.fill_bytes(0xff));
    throw_if_error(lc.fill_bytes(0xff));
    Status st = rank_partials_cuda(local, layout, r, oc.view(DType::kF32, {cpr * T, H, kHeadDimV}),
                                   lc.view(DType::kF32, {cpr * T, H}));
    EXPECT_TRUE(st.ok()) << st.to_string();
    Buffer om(T * H * kHeadDimV * 4, Device::kCUDA), lm(T * H * 4, Device::kCUDA);
    if (premerge) {
      st = premerge_rank_partials_cuda(oc.view(DType::kF32, {cpr * T, H, kHeadDimV}),
                                       lc.view(DType::kF32, {cpr * T, H}),
                                       om.view(DType::kF32, {T, H, kHeadDimV}),
                                       lm.view(DType::kF32, {T, H}), nullptr, d.args.q_indptr_host);
      EXPECT_TRUE(st.ok()) << st.to_string();
    }
    const float* o_src = static_cast<const float*>((premerge ? om : oc).data());
    const float* l_src = static_cast<const float*>((premerge ? lm : lc).data());
    // Rank r's part of each run into the run's region of the gathered buffers.
    for (int64_t b = 0, row = 0; b < B;) {
      int64_t end = b + 1;
      while (end < B && rq.q_lens[end] == rq.q_lens[b]) ++end;
      const int64_t rows = (end - b) * sent * rq.q_lens[b] * H;  // this rank's block of the run
      float* o_dst = static_cast<float*>(o_g.data()) + (W * sent * row * H + r * rows) * kHeadDimV;
      float* l_dst = static_cast<float*>(l_g.data()) + W * sent * row * H + r * rows;
      EXPECT_EQ(cudaMemcpy(o_dst, o_src + sent * row * H * kHeadDimV, rows * kHeadDimV * 4,
                           cudaMemcpyDeviceToDevice),
                cudaSuccess);
      EXPECT_EQ(cudaMemcpy(l_dst, l_src + sent * row * H, rows * 4, cudaMemcpyDeviceToDevice),
                cudaSuccess);
      row += (end - b) * rq.q_lens[b];
      b = end;
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  Buffer out(T * H * kHeadDimV * 2, Device::kCUDA), lse(T * H * 4, Device::kCUDA);
  throw_if_error(out.fill_bytes(0xff));
  throw_if_error(lse.fill_bytes(0xff));
  Status st = merge_gathered_cuda(o_g.view(DType::kF32, {W * sent * T, H, kHeadDimV}),
                                  l_g.view(DType::kF32, {W * sent * T, H}), layout,
                                  out.view(DType::kBF16, {T, H, kHeadDimV}),
                                  lse.view(DType::kF32, {T, H}), nullptr, d.args.q_indptr_host);
  EXPECT_TRUE(st.ok()) << st.to_string();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {download<uint16_t>(out), download<float>(lse)};
}

// q_len 1 next to 32, a run of two equal widths, seq_len == q_len, contexts across several
// deterministic chunks; H 16 and 128, bf16 and fp8, world 1..8: bitwise the deterministic
// one-GPU ragged result (which is each request alone), every element written; pre-merged ranks
// agree with it to rounding.
TEST(DcpCuda, RaggedSimulatedRanksMatchDeterministicOneGpuBitwise) {
  MLASPEC_SKIP_WITHOUT_GPU();
  int cases = 0;
  for (const int H : {16, 128}) {
    for (const DType kv : {DType::kBF16, DType::kFP8E4M3}) {
      testing::ProblemSpec s = testing::dcp_spec(kv, cases % 2 ? 16 : 64);
      s.num_heads = H;
      s.batch = 5;
      s.q_len = 1;
      s.seq_lens = {5 * 1024 + 3, 32, 700, 3 * 1024 - 1, 2048 + 7};
      s.seed = 31 + cases;
      testing::Problem p = testing::make_problem(s);
      testing::RaggedQ rq = testing::make_ragged_q(s, {1, 32, 1, 7, 7}, 41 + cases);
      const Result2 ref = one_gpu_ragged(p, rq);
      for (uint16_t v : ref.out) ASSERT_TRUE(std::isfinite(bf16_bits_to_float(v)));
      for (float v : ref.lse) ASSERT_TRUE(std::isfinite(v));
      for (int world = 1; world <= 8; ++world) {
        SCOPED_TRACE("H " + std::to_string(H) + " world " + std::to_string(world) + " kv " +
                     std::string(dtype_name(kv)));
        const Result2 got = simulated_ranks_ragged(p, rq, world, /*premerge=*/false);
        size_t diff = 0;
        for (size_t k = 0; k < ref.out.size(); ++k) diff += got.out[k] != ref.out[k];
        EXPECT_EQ(diff, 0u) << "out elements differing from the deterministic one-GPU result";
        EXPECT_EQ(0, std::memcmp(got.lse.data(), ref.lse.data(), ref.lse.size() * 4));
        if (world % 3 != 2) continue;  // pre-merge at worlds 2, 5, 8
        const Result2 pre = simulated_ranks_ragged(p, rq, world, /*premerge=*/true);
        for (size_t k = 0; k < ref.out.size(); ++k) {
          const float a = bf16_bits_to_float(ref.out[k]), b = bf16_bits_to_float(pre.out[k]);
          ASSERT_TRUE(std::isfinite(b)) << "out " << k << " not written";
          ASSERT_NEAR(b, a, std::ldexp(std::fabs(a), -7) + 1e-5f) << "out " << k;
        }
        for (size_t k = 0; k < ref.lse.size(); ++k) {
          ASSERT_NEAR(pre.lse[k], ref.lse[k], 1e-5f * (1.f + std::fabs(ref.lse[k]))) << k;
        }
      }
      ++cases;
    }
  }
}

TEST(DcpCuda, RaggedBadIndptrIsRefusedBeforeAnyLaunch) {
  MLASPEC_SKIP_WITHOUT_GPU();
  testing::ProblemSpec s = testing::dcp_spec(DType::kBF16, 64);
  s.q_len = 1;
  s.seq_lens = {40, 9, 100};
  testing::Problem p = testing::make_problem(s);
  testing::RaggedQ rq = testing::make_ragged_q(s, {5, 9, 2}, 1);
  rq.indptr = {0, 5, 5, 16};
  RaggedDevice d(p, rq);
  const int64_t T = 16, H = 16;
  Buffer o(T * H * kHeadDimV * 4 * 2, Device::kCUDA), l(T * H * 4 * 2, Device::kCUDA);
  Buffer out(T * H * kHeadDimV * 2, Device::kCUDA);
  throw_if_error(o.fill_bytes(0xff));
  throw_if_error(out.fill_bytes(0xff));
  const std::string message =
      "q_indptr[2] = 5 is not above q_indptr[1] = 5 (every request brings >= 1 query token)";
  const ShardLayout layout{2, 1024};
  EXPECT_EQ(rank_partials_cuda(d.args, layout, 0, o.view(DType::kF32, {T, H, kHeadDimV}),
                               l.view(DType::kF32, {T, H}))
                .message(),
            message);
  EXPECT_EQ(merge_gathered_cuda(o.view(DType::kF32, {2 * T, H, kHeadDimV}),
                                l.view(DType::kF32, {2 * T, H}), layout,
                                out.view(DType::kBF16, {T, H, kHeadDimV}),
                                l.view(DType::kF32, {T, H}), nullptr, d.args.q_indptr_host)
                .message(),
            message);
  for (uint16_t v : download<uint16_t>(out)) ASSERT_EQ(v, 0xffff);
  for (float v : download<float>(o)) ASSERT_TRUE(std::isnan(v));
}

}  // namespace
}  // namespace mlaspec::attn::dcp
