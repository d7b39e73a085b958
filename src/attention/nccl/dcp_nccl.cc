// Built only when NCCL is found (MLASPEC_WITH_NCCL); src/attention/no_cuda/ or
// src/attention/cuda/dcp_no_nccl.cc provide the kUnsupported versions otherwise.
#include "mlaspec/attention/dcp_nccl.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dcp_runs.h"

namespace mlaspec::attn::dcp {
namespace {

Status nccl_status(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return Status::Ok();
  return internal_error(std::string(what) + " failed: " + ncclGetErrorString(r));
}

}  // namespace

bool built_with_nccl() {
  return true;
}

Result<std::string> NcclComm::unique_id() {
  ncclUniqueId id;
  MLASPEC_RETURN_IF_ERROR(nccl_status(ncclGetUniqueId(&id), "ncclGetUniqueId"));
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    const auto byte = static_cast<unsigned char>(id.internal[i]);
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

Result<std::unique_ptr<NcclComm>> NcclComm::join(std::string_view id_hex, int world, int rank) {
  if (world < 1 || rank < 0 || rank >= world) {
    return invalid_argument("rank " + std::to_string(rank) + " is outside [0, " +
                            std::to_string(world) + ")");
  }
  ncclUniqueId id;
  if (id_hex.size() != 2 * sizeof id.internal) {
    return invalid_argument("NCCL unique id has " + std::to_string(id_hex.size()) +
                            " hex digits, expected " + std::to_string(2 * sizeof id.internal));
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  for (size_t i = 0; i < sizeof id.internal; ++i) {
    const int hi = nibble(id_hex[2 * i]), lo = nibble(id_hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return invalid_argument("NCCL unique id is not lowercase hex");
    id.internal[i] = static_cast<char>(hi * 16 + lo);
  }
  // NVLink multicast can take a shared host's GPUs out of service: never enable it.
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  std::unique_ptr<NcclComm> c(new NcclComm());
  ncclComm_t comm = nullptr;
  MLASPEC_RETURN_IF_ERROR(
      nccl_status(ncclCommInitRank(&comm, world, id, rank), "ncclCommInitRank"));
  c->comm_ = comm;
  c->world_ = world;
  c->rank_ = rank;
  return c;
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) ncclCommDestroy(static_cast<ncclComm_t>(comm_));
}

Status NcclComm::all_gather_inplace(float* buf, size_t count, void* stream) {
  return nccl_status(
      ncclAllGather(buf + static_cast<size_t>(rank_) * count, buf, count, ncclFloat,
                    static_cast<ncclComm_t>(comm_), static_cast<cudaStream_t>(stream)),
      "ncclAllGather");
}

Status verify_step(NcclComm& comm, const VerifyArgs& local, const ShardLayout& layout,
                   DcpWorkspace& ws, TensorView out, TensorView lse, void* stream, DcpMerge merge) {
  if (layout.world != comm.world()) {
    return invalid_argument("DCP layout has world " + std::to_string(layout.world) +
                            " but the communicator has " + std::to_string(comm.world()) + " ranks");
  }
  if (local.q.empty() || local.seq_lens_host.empty()) {
    return invalid_argument("DCP verify step needs q and seq_lens_host");
  }
  // A ragged call runs as its uniform runs (dcp.h): each run's partials, gather and merge are a
  // uniform step's on views of one call-wide buffer, so a uniform call is one run and the same
  // calls as ever. Ragged calls are validated whole first.
  std::vector<UniformRun> runs;
  int64_t T = 0, H = 0;
  if (local.ragged()) {
    MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(local, Device::kCUDA));
    T = local.q.size(0);
    H = local.q.size(1);
    MLASPEC_RETURN_IF_ERROR(out.expect("out", DType::kBF16, {T, H, kHeadDimV}, Device::kCUDA));
    MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {T, H}, Device::kCUDA));
    Result<std::vector<UniformRun>> r = uniform_runs(local.q_indptr_host, T);
    MLASPEC_RETURN_IF_ERROR(r.status());
    runs = std::move(r.value());
  } else {
    T = local.q.size(0) * local.q.size(1);
    H = local.q.size(2);
    runs.push_back({0, local.q.size(0), 0, local.q.size(1)});
  }
  const int64_t W = layout.world;
  const int64_t cpr = layout.chunks_per_rank(local.seq_lens_host);
  // Partials per rank that travel through the all-gather: every chunk's, or one merged.
  const int64_t sent = merge == DcpMerge::kPremerge ? 1 : cpr;
  auto grow = [](Buffer& b, size_t bytes) -> Status {
    if (b.bytes() >= bytes) return Status::Ok();
    Result<Buffer> r = Buffer::allocate(bytes, Device::kCUDA);
    MLASPEC_RETURN_IF_ERROR(r.status());
    b = std::move(r.value());
    return Status::Ok();
  };
  MLASPEC_RETURN_IF_ERROR(
      grow(ws.o_gathered, static_cast<size_t>(W * sent * T * H * kHeadDimV) * 4));
  MLASPEC_RETURN_IF_ERROR(grow(ws.lse_gathered, static_cast<size_t>(W * sent * T * H) * 4));
  if (merge == DcpMerge::kPremerge) {
    MLASPEC_RETURN_IF_ERROR(grow(ws.o_local, static_cast<size_t>(cpr * T * H * kHeadDimV) * 4));
    MLASPEC_RETURN_IF_ERROR(grow(ws.lse_local, static_cast<size_t>(cpr * T * H) * 4));
  }
  // Run j's gathered region is [W, count, sent, q_len, H(, 512)] from query row first_row of the
  // call-wide buffers (W * sent rows each), this rank's block r of it; its chunk partials
  // (kPremerge) [count, cpr, q_len, H(, 512)] from row first_row of o_local / lse_local.
  auto* o = static_cast<float*>(ws.o_gathered.data());
  auto* l = static_cast<float*>(ws.lse_gathered.data());
  auto o_run = [&](const UniformRun& run) { return o + W * sent * run.first_row * H * kHeadDimV; };
  auto l_run = [&](const UniformRun& run) { return l + W * sent * run.first_row * H; };
  const int r = comm.rank();
  size_t j = 0;
  MLASPEC_RETURN_IF_ERROR(for_each_uniform_run(local, [&](const VerifyArgs& u) {
    const UniformRun& run = runs[j++];
    const int64_t B = run.count, Q = run.q_len;
    const TensorView o_mine(o_run(run) + r * B * sent * Q * H * kHeadDimV, DType::kF32,
                            {B, sent, Q, H, kHeadDimV}, Device::kCUDA);
    const TensorView l_mine(l_run(run) + r * B * sent * Q * H, DType::kF32, {B, sent, Q, H},
                            Device::kCUDA);
    if (merge == DcpMerge::kDeterministic) {
      return rank_partials_cuda(u, layout, r, o_mine, l_mine, stream);
    }
    // The run's chunk partials, then merged into this rank's block.
    const int64_t first = cpr * run.first_row * H;
    const TensorView o_chunks(static_cast<float*>(ws.o_local.data()) + first * kHeadDimV,
                              DType::kF32, {B, cpr, Q, H, kHeadDimV}, Device::kCUDA);
    const TensorView l_chunks(static_cast<float*>(ws.lse_local.data()) + first, DType::kF32,
                              {B, cpr, Q, H}, Device::kCUDA);
    MLASPEC_RETURN_IF_ERROR(rank_partials_cuda(u, layout, r, o_chunks, l_chunks, stream));
    return premerge_rank_partials_cuda(o_chunks, l_chunks, o_mine, l_mine, stream);
  }));
  // One in-place all-gather of o and of lse per run; several runs' in one NCCL group, which NCCL
  // issues as one fused collective launch.
  const bool group = runs.size() > 1;
  if (group) MLASPEC_RETURN_IF_ERROR(nccl_status(ncclGroupStart(), "ncclGroupStart"));
  Status gathered = Status::Ok();
  for (const UniformRun& run : runs) {
    const int64_t rows = run.count * sent * run.q_len * H;
    gathered = comm.all_gather_inplace(o_run(run), static_cast<size_t>(rows * kHeadDimV), stream);
    if (gathered.ok()) {
      gathered = comm.all_gather_inplace(l_run(run), static_cast<size_t>(rows), stream);
    }
    if (!gathered.ok()) break;
  }
  // A group once started is ended, whatever failed inside it.
  const Status ended = group ? nccl_status(ncclGroupEnd(), "ncclGroupEnd") : Status::Ok();
  MLASPEC_RETURN_IF_ERROR(gathered);
  MLASPEC_RETURN_IF_ERROR(ended);
  // Merged in global order: chunk k * world + rank (kDeterministic), or rank order (kPremerge,
  // one "chunk" per rank).
  if (!local.ragged()) {
    const int64_t B = runs[0].count, Q = runs[0].q_len;
    return merge_gathered_cuda(
        TensorView(o, DType::kF32, {W, B, sent, Q, H, kHeadDimV}, Device::kCUDA),
        TensorView(l, DType::kF32, {W, B, sent, Q, H}, Device::kCUDA), layout, out, lse, stream);
  }
  return merge_gathered_cuda(
      TensorView(o, DType::kF32, {W * sent * T, H, kHeadDimV}, Device::kCUDA),
      TensorView(l, DType::kF32, {W * sent * T, H}, Device::kCUDA), layout, out, lse, stream,
      local.q_indptr_host);
}

}  // namespace mlaspec::attn::dcp
