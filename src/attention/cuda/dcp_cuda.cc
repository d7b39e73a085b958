// Decode context parallelism on the CUDA backends (attention/dcp.h): a rank's chunk partials on
// the fold kernel, and the merges of gathered or a rank's own partials on the combine kernel.
// Argument checks and the combine's plans live here; the fold launch goes through the process's
// fold backend (cuda_backend.cc: run_dcp_rank_partials).
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>

#include "cuda_backend.h"
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
  MLASPEC_RETURN_IF_ERROR(require_uniform_q_len(local, "DCP"));
  MLASPEC_RETURN_IF_ERROR(layout.validate(static_cast<int>(local.kv.pages.size(1))));
  if (rank < 0 || rank >= layout.world) {
    return invalid_argument("rank " + std::to_string(rank) + " is outside [0, " +
                            std::to_string(layout.world) + ")");
  }
  if (layout.chunk_tokens > (int64_t{1} << 30)) {
    return invalid_argument("DCP chunk of " + std::to_string(layout.chunk_tokens) +
                            " tokens is too large");
  }
  const int64_t B = local.q.size(0), Q = local.q.size(1), H = local.q.size(2);
  const int64_t cpr = layout.chunks_per_rank(local.seq_lens_host);
  MLASPEC_RETURN_IF_ERROR(expect_parts(o_parts, "o_parts", {B, cpr, Q, H, kHeadDimV}));
  MLASPEC_RETURN_IF_ERROR(expect_parts(lse_parts, "lse_parts", {B, cpr, Q, H}));
  return cuda::run_dcp_rank_partials(
      local, layout.world, rank, static_cast<int>(layout.chunk_tokens), cpr,
      o_parts.data_as<float>(), lse_parts.data_as<float>(), static_cast<cudaStream_t>(stream));
}

Status merge_gathered_cuda(TensorView o_gathered, TensorView lse_gathered,
                           const ShardLayout& layout, TensorView out, TensorView lse,
                           void* stream) {
  if (o_gathered.ndim() != 6) {
    return invalid_argument("gathered o partials have rank " + std::to_string(o_gathered.ndim()) +
                            ", expected 6 [world, B, chunks_per_rank, q_len, H, 512]");
  }
  const int64_t W = o_gathered.size(0), B = o_gathered.size(1), cpr = o_gathered.size(2),
                Q = o_gathered.size(3), H = o_gathered.size(4);
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
  MLASPEC_RETURN_IF_ERROR(expect_parts(o_gathered, "o_gathered", {W, B, cpr, Q, H, kHeadDimV}));
  MLASPEC_RETURN_IF_ERROR(expect_parts(lse_gathered, "lse_gathered", {W, B, cpr, Q, H}));
  MLASPEC_RETURN_IF_ERROR(out.expect("out", DType::kBF16, {B, Q, H, kHeadDimV}, Device::kCUDA));
  MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {B, Q, H}, Device::kCUDA));
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
  return cuda::cuda_status(cuda::run_combine(c, static_cast<cudaStream_t>(stream)),
                           "DCP combine kernel launch");
}

Status premerge_rank_partials_cuda(TensorView o_parts, TensorView lse_parts, TensorView o_red,
                                   TensorView lse_red, void* stream) {
  if (o_parts.ndim() != 5) {
    return invalid_argument("o partials have rank " + std::to_string(o_parts.ndim()) +
                            ", expected 5 [B, chunks_per_rank, q_len, H, 512]");
  }
  const int64_t B = o_parts.size(0), cpr = o_parts.size(1), Q = o_parts.size(2),
                H = o_parts.size(3);
  if (B > cuda::CommonTraits::kMaxBatch || cpr > (int64_t{1} << 24)) {
    return invalid_argument("rank partials of batch " + std::to_string(B) + " x " +
                            std::to_string(cpr) + " chunks exceed the combine's limits");
  }
  MLASPEC_RETURN_IF_ERROR(expect_parts(o_parts, "o_parts", {B, cpr, Q, H, kHeadDimV}));
  MLASPEC_RETURN_IF_ERROR(expect_parts(lse_parts, "lse_parts", {B, cpr, Q, H}));
  MLASPEC_RETURN_IF_ERROR(expect_parts(o_red, "o_red", {B, 1, Q, H, kHeadDimV}));
  MLASPEC_RETURN_IF_ERROR(expect_parts(lse_red, "lse_red", {B, 1, Q, H}));
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
  return cuda::cuda_status(cuda::run_combine(c, static_cast<cudaStream_t>(stream)),
                           "DCP pre-merge kernel launch");
}

}  // namespace mlaspec::attn::dcp
