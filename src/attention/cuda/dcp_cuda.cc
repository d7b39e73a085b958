// Decode context parallelism on the CUDA backends (attention/dcp.h): a rank's chunk partials on
// the fold kernel, and the merges of gathered or a rank's own partials on the combine kernel.
// Argument checks and the combine's plans live here; the fold launch goes through the process's
// fold backend (cuda_backend.cc: run_dcp_rank_partials).
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "cuda_backend.h"
#include "dcp_runs.h"
#include "launch.h"
#include "mlaspec/attention/dcp.h"
#include "traits.h"

namespace mlaspec::attn::dcp {
namespace {

// Checks a [.., B, cpr, Q, H (, 512)] f32 partial buffer on the device.
Status expect_parts(const TensorView& t, const char* name, std::initializer_list<int64_t> shape) {
  MLASPEC_RETURN_IF_ERROR(t.expect(name, DType::kF32, shape, Device::kCUDA));
  if (!t.is_contiguous()) return invalid_argument(std::string(name) + " must be contiguous");
  return Status::Ok();
}

}  // namespace

Status rank_partials_cuda(const VerifyArgs& local, const ShardLayout& layout, int rank,
                          TensorView o_parts, TensorView lse_parts, void* stream) {
  if (local.q.empty() || local.kv.pages.empty() || local.seq_lens_host.empty()) {
    return invalid_argument("DCP rank partials need q, kv.pages and seq_lens_host");
  }
  MLASPEC_RETURN_IF_ERROR(layout.validate(static_cast<int>(local.kv.pages.size(1))));
  if (rank < 0 || rank >= layout.world) {
    return invalid_argument("rank " + std::to_string(rank) + " is outside [0, " +
                            std::to_string(layout.world) + ")");
  }
  if (layout.chunk_tokens > (int64_t{1} << 30)) {
    return invalid_argument("DCP chunk of " + std::to_string(layout.chunk_tokens) +
                            " tokens is too large");
  }
  // Every run's chunks per rank is the whole call's (the layout's cpr).
  const int64_t cpr = layout.chunks_per_rank(local.seq_lens_host);
  auto run_partials_of = [&](const VerifyArgs& u, float* o, float* l) {
    return cuda::run_dcp_rank_partials(u, layout.world, rank, static_cast<int>(layout.chunk_tokens),
                                       cpr, o, l, static_cast<cudaStream_t>(stream));
  };
  if (!local.ragged()) {
    const int64_t B = local.q.size(0), Q = local.q.size(1), H = local.q.size(2);
    MLASPEC_RETURN_IF_ERROR(expect_parts(o_parts, "o_parts", {B, cpr, Q, H, kHeadDimV}));
    MLASPEC_RETURN_IF_ERROR(expect_parts(lse_parts, "lse_parts", {B, cpr, Q, H}));
    return run_partials_of(local, o_parts.data_as<float>(), lse_parts.data_as<float>());
  }
  // The whole call checked first (inputs, and the fold kernel serving its widest run), so no run
  // fails after an earlier one wrote.
  MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(local, Device::kCUDA));
  VerifyOptions fixed_chunks;
  fixed_chunks.deterministic = true;
  MLASPEC_RETURN_IF_ERROR(can_serve(cuda::kFoldCaps, shape_of(local, fixed_chunks)));
  return for_each_run_partials(local, cpr, o_parts, lse_parts, Device::kCUDA,
                               [&](const VerifyArgs& u, const TensorView& o, const TensorView& l) {
                                 return run_partials_of(u, o.data_as<float>(), l.data_as<float>());
                               });
}

namespace {

// The combine's limits and the GPU merge tree's block sizes.
Status check_combine(const ShardLayout& layout, int64_t W, int64_t B, int64_t cpr) {
  if (W != layout.world) {
    return invalid_argument("gathered partials come from " + std::to_string(W) +
                            " ranks but the layout has world " + std::to_string(layout.world));
  }
  if (B > cuda::CommonTraits::kMaxBatch || W * cpr > (int64_t{1} << 24)) {
    return invalid_argument("gathered partials of batch " + std::to_string(B) + " x " +
                            std::to_string(W * cpr) + " chunks exceed the combine's limits");
  }
  if (layout.block_chunks != 1 && layout.block_chunks != kDeterministicBlockChunks) {
    return invalid_argument("DCP merge blocks of " + std::to_string(layout.block_chunks) +
                            " chunks: the GPU merge folds blocks of 1 or " +
                            std::to_string(kDeterministicBlockChunks) + " chunks");
  }
  return Status::Ok();
}

// The merge of a uniform call's (or run's) gathered partials [W, B, cpr, Q, H(, 512)], checked.
Status merge_uniform(const TensorView& o_gathered, const TensorView& lse_gathered,
                     const ShardLayout& layout, const TensorView& out, const TensorView& lse,
                     cudaStream_t stream) {
  const int64_t W = o_gathered.size(0), B = o_gathered.size(1), cpr = o_gathered.size(2),
                Q = o_gathered.size(3), H = o_gathered.size(4);
  cuda::CombineParams c = {};
  c.o_part = o_gathered.data_as<const float>();
  c.lse_part = lse_gathered.data_as<const float>();
  c.out = out.data();
  c.lse = lse.data_as<float>();
  for (int d = 0; d < 3; ++d) {
    c.out_stride[d] = out.stride(d);
    c.lse_stride[d] = lse.stride(d);
  }
  c.batch = static_cast<int32_t>(B);
  c.q_len = static_cast<int32_t>(Q);
  c.num_heads = static_cast<int32_t>(H);
  c.rows = static_cast<int32_t>(Q * H);
  for (int64_t b = 0; b <= B; ++b) {
    c.plan.split_begin[b] = static_cast<int32_t>(b * cpr * W);
    c.plan.part_begin[b] = static_cast<int32_t>(b * cpr);
  }
  c.plan.total_splits = static_cast<int32_t>(B * cpr * W);
  c.plan.total_part_slots = static_cast<int32_t>(B * cpr);
  c.plan.max_splits = static_cast<int32_t>(cpr * W);
  c.plan.block_splits = layout.block_chunks;  // folded by the combine (blocks_folded 0)
  c.world = static_cast<int32_t>(W);
  c.write_all = 1;
  c.rank_slots = B * cpr;
  return cuda::cuda_status(cuda::run_combine(c, stream), "DCP combine kernel launch");
}

}  // namespace

Status merge_gathered_cuda(TensorView o_gathered, TensorView lse_gathered,
                           const ShardLayout& layout, TensorView out, TensorView lse, void* stream,
                           const TensorView& q_indptr_host) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (q_indptr_host.empty()) {
    if (o_gathered.ndim() != 6) {
      return invalid_argument("gathered o partials have rank " + std::to_string(o_gathered.ndim()) +
                              ", expected 6 [world, B, chunks_per_rank, q_len, H, 512]");
    }
    const int64_t W = o_gathered.size(0), B = o_gathered.size(1), cpr = o_gathered.size(2),
                  Q = o_gathered.size(3), H = o_gathered.size(4);
    MLASPEC_RETURN_IF_ERROR(check_combine(layout, W, B, cpr));
    MLASPEC_RETURN_IF_ERROR(expect_parts(o_gathered, "o_gathered", {W, B, cpr, Q, H, kHeadDimV}));
    MLASPEC_RETURN_IF_ERROR(expect_parts(lse_gathered, "lse_gathered", {W, B, cpr, Q, H}));
    MLASPEC_RETURN_IF_ERROR(out.expect("out", DType::kBF16, {B, Q, H, kHeadDimV}, Device::kCUDA));
    MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {B, Q, H}, Device::kCUDA));
    return merge_uniform(o_gathered, lse_gathered, layout, out, lse, s);
  }
  // Ragged: everything checked before the first run's launch.
  MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {-1, -1}, Device::kCUDA));
  const int64_t T = lse.size(0), H = lse.size(1), W = layout.world;
  MLASPEC_RETURN_IF_ERROR(out.expect("out", DType::kBF16, {T, H, kHeadDimV}, Device::kCUDA));
  Result<std::vector<UniformRun>> runs = uniform_runs(q_indptr_host, T);
  MLASPEC_RETURN_IF_ERROR(runs.status());
  if (o_gathered.ndim() != 3 || W < 1 || o_gathered.size(0) < W * T ||
      o_gathered.size(0) % (W * T) != 0) {
    return invalid_argument("gathered o partials " + o_gathered.describe() +
                            " are not a ragged gathered buffer [world * chunks_per_rank * " +
                            std::to_string(T) + ", H, 512] of world " + std::to_string(W));
  }
  const int64_t cpr = o_gathered.size(0) / (W * T);
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(o_gathered, "o_gathered", W * cpr * T, H, true, Device::kCUDA));
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(lse_gathered, "lse_gathered", W * cpr * T, H, false, Device::kCUDA));
  for (const UniformRun& run : runs.value()) {
    MLASPEC_RETURN_IF_ERROR(check_combine(layout, W, run.count, cpr));
  }
  for (const UniformRun& run : runs.value()) {
    MLASPEC_RETURN_IF_ERROR(merge_uniform(
        run_partials(o_gathered, run, W * cpr, {W, run.count, cpr, run.q_len, H, kHeadDimV}),
        run_partials(lse_gathered, run, W * cpr, {W, run.count, cpr, run.q_len, H}), layout,
        run_rows(out, run), run_rows(lse, run), s));
  }
  return Status::Ok();
}

namespace {

// The pre-merge of a uniform call's (or run's) chunk partials [B, cpr, Q, H(, 512)], checked.
Status premerge_uniform(const TensorView& o_parts, const TensorView& lse_parts,
                        const TensorView& o_red, const TensorView& lse_red, cudaStream_t stream) {
  const int64_t B = o_parts.size(0), cpr = o_parts.size(1), Q = o_parts.size(2),
                H = o_parts.size(3);
  cuda::CombineParams c = {};
  c.o_part = o_parts.data_as<const float>();
  c.lse_part = lse_parts.data_as<const float>();
  c.o_f32 = o_red.data_as<float>();
  c.lse_f32 = lse_red.data_as<float>();
  c.batch = static_cast<int32_t>(B);
  c.q_len = static_cast<int32_t>(Q);
  c.num_heads = static_cast<int32_t>(H);
  c.rows = static_cast<int32_t>(Q * H);
  for (int64_t b = 0; b <= B; ++b) {
    c.plan.split_begin[b] = static_cast<int32_t>(b * cpr);
    c.plan.part_begin[b] = static_cast<int32_t>(b * cpr);
  }
  c.plan.total_splits = static_cast<int32_t>(B * cpr);
  c.plan.total_part_slots = static_cast<int32_t>(B * cpr);
  c.plan.max_splits = static_cast<int32_t>(cpr);
  c.write_all = 1;  // a single-chunk request is merged (copied) too
  return cuda::cuda_status(cuda::run_combine(c, stream), "DCP pre-merge kernel launch");
}

Status check_premerge_limits(int64_t B, int64_t cpr) {
  if (B > cuda::CommonTraits::kMaxBatch || cpr > (int64_t{1} << 24)) {
    return invalid_argument("rank partials of batch " + std::to_string(B) + " x " +
                            std::to_string(cpr) + " chunks exceed the combine's limits");
  }
  return Status::Ok();
}

}  // namespace

Status premerge_rank_partials_cuda(TensorView o_parts, TensorView lse_parts, TensorView o_red,
                                   TensorView lse_red, void* stream,
                                   const TensorView& q_indptr_host) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (q_indptr_host.empty()) {
    if (o_parts.ndim() != 5) {
      return invalid_argument("o partials have rank " + std::to_string(o_parts.ndim()) +
                              ", expected 5 [B, chunks_per_rank, q_len, H, 512]");
    }
    const int64_t B = o_parts.size(0), cpr = o_parts.size(1), Q = o_parts.size(2),
                  H = o_parts.size(3);
    MLASPEC_RETURN_IF_ERROR(check_premerge_limits(B, cpr));
    MLASPEC_RETURN_IF_ERROR(expect_parts(o_parts, "o_parts", {B, cpr, Q, H, kHeadDimV}));
    MLASPEC_RETURN_IF_ERROR(expect_parts(lse_parts, "lse_parts", {B, cpr, Q, H}));
    MLASPEC_RETURN_IF_ERROR(expect_parts(o_red, "o_red", {B, 1, Q, H, kHeadDimV}));
    MLASPEC_RETURN_IF_ERROR(expect_parts(lse_red, "lse_red", {B, 1, Q, H}));
    return premerge_uniform(o_parts, lse_parts, o_red, lse_red, s);
  }
  // Ragged: everything checked before the first run's launch.
  MLASPEC_RETURN_IF_ERROR(lse_red.expect("lse_red", DType::kF32, {-1, -1}, Device::kCUDA));
  const int64_t T = lse_red.size(0), H = lse_red.size(1);
  Result<std::vector<UniformRun>> runs = uniform_runs(q_indptr_host, T);
  MLASPEC_RETURN_IF_ERROR(runs.status());
  if (o_parts.ndim() != 3 || o_parts.size(0) < T || o_parts.size(0) % T != 0) {
    return invalid_argument("o partials " + o_parts.describe() +
                            " are not a ragged partial buffer [chunks_per_rank * " +
                            std::to_string(T) + ", H, 512]");
  }
  const int64_t cpr = o_parts.size(0) / T;
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(o_parts, "o_parts", cpr * T, H, true, Device::kCUDA));
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(lse_parts, "lse_parts", cpr * T, H, false, Device::kCUDA));
  MLASPEC_RETURN_IF_ERROR(expect_ragged_partials(o_red, "o_red", T, H, true, Device::kCUDA));
  MLASPEC_RETURN_IF_ERROR(expect_ragged_partials(lse_red, "lse_red", T, H, false, Device::kCUDA));
  for (const UniformRun& run : runs.value()) {
    MLASPEC_RETURN_IF_ERROR(check_premerge_limits(run.count, cpr));
  }
  for (const UniformRun& run : runs.value()) {
    MLASPEC_RETURN_IF_ERROR(
        premerge_uniform(run_partials(o_parts, run, cpr, {run.count, cpr, run.q_len, H, kHeadDimV}),
                         run_partials(lse_parts, run, cpr, {run.count, cpr, run.q_len, H}),
                         run_partials(o_red, run, 1, {run.count, 1, run.q_len, H, kHeadDimV}),
                         run_partials(lse_red, run, 1, {run.count, 1, run.q_len, H}), s));
  }
  return Status::Ok();
}

}  // namespace mlaspec::attn::dcp
