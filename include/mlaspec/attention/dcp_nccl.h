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

// Device buffers of one rank's DCP steps, grown on demand.
struct DcpWorkspace {
  Buffer o_gathered;    // [world, B, cpr, q_len, H, 512] f32
  Buffer lse_gathered;  // [world, B, cpr, q_len, H] f32
};

// One verify step of this rank (see the file comment). `local` as for rank_partials_cuda;
// out/lse on the device receive the full result on every rank. layout.world must equal the
// communicator's.
Status verify_step(NcclComm& comm, const VerifyArgs& local, const ShardLayout& layout,
                   DcpWorkspace& workspace, TensorView out, TensorView lse, void* stream = nullptr);

}  // namespace mlaspec::attn::dcp
