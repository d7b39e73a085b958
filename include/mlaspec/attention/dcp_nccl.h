// Decode context parallelism across processes with NCCL: one process per GPU, one rank each.
// A verify step on a rank = its partials (rank_partials_cuda) into its block of a gathered
// buffer, an in-place ncclAllGather of that buffer, and the merge (merge_gathered_cuda): every
// rank ends with the full result. Without NCCL in the build every call returns kUnsupported.
// NVLink multicast (NVLS) is never used: join() sets NCCL_NVLS_ENABLE=0 unless it is set.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "mlaspec/attention/dcp.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::attn::dcp {

bool built_with_nccl();

class NcclComm {
 public:
  // A fresh NCCL unique id as hex text, made by one process and handed to every rank.
  static Result<std::string> unique_id();
  // Joins the communicator of `world` ranks as `rank`, on the current CUDA device.
  static Result<std::unique_ptr<NcclComm>> join(std::string_view id_hex, int world, int rank);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int world() const { return world_; }
  int rank() const { return rank_; }
  // In-place all-gather of `count` floats per rank: rank r's block is buf[r * count, +count).
  Status all_gather_inplace(float* buf, size_t count, void* stream);

 private:
  NcclComm() = default;
  void* comm_ = nullptr;  // ncclComm_t
  int world_ = 0, rank_ = 0;
};

// Device buffers of one rank's DCP steps, grown on demand. Shapes of a uniform call; a ragged
// one uses dcp.h's ragged layouts of the same sizes (B * q_len -> T).
struct DcpWorkspace {
  Buffer o_gathered;    // [world, B, cpr or 1, q_len, H, 512] f32
  Buffer lse_gathered;  // [world, B, cpr or 1, q_len, H] f32
  Buffer o_local;       // kPremerge: this rank's chunk partials [B, cpr, q_len, H, 512] f32
  Buffer lse_local;     // kPremerge: [B, cpr, q_len, H] f32
};

// How the ranks' partials are merged.
//   kDeterministic: every chunk's partial is all-gathered and merged in global chunk order: bitwise
//     the deterministic one-GPU result for any world size (with deterministic_chunk_tokens(H) as
//     the chunk), at the price of
//     gathering 2 KB per query row per chunk (at S = 1M, q_len 8, H 16: 134 MB per rank).
//   kPremerge: each rank first merges its own chunks (premerge_rank_partials_cuda), so the
//     all-gather carries one partial per rank; equal to the deterministic result up to fp32
//     reassociation of the merge, not bitwise.
enum class DcpMerge { kDeterministic, kPremerge };

// One verify step of this rank (see the file comment). `local` as for rank_partials_cuda;
// out/lse on the device receive the full result on every rank. layout.world must equal the
// communicator's. Ragged calls (local.q_indptr with its host copy; out [T, H, 512], lse [T, H])
// run as their uniform runs (dcp.h): one all-gather of o and of lse per run, all in one NCCL
// group.
Status verify_step(NcclComm& comm, const VerifyArgs& local, const ShardLayout& layout,
                   DcpWorkspace& workspace, TensorView out, TensorView lse, void* stream = nullptr,
                   DcpMerge merge = DcpMerge::kDeterministic);

}  // namespace mlaspec::attn::dcp
