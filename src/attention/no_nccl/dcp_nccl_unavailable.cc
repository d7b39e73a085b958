// Built when NCCL is not found: the DCP NCCL path reports that it is missing.
#include "mlaspec/attention/dcp_nccl.h"

namespace mlaspec::attn::dcp {
namespace {
Status no_nccl() {
  return unsupported(
      "DCP across GPUs is unavailable: mlaspec was built without NCCL (needs CUDA "
      "and nccl.h/libnccl; set MLASPEC_NCCL_ROOT)");
}
}  // namespace

bool built_with_nccl() {
  return false;
}
Result<std::string> NcclComm::unique_id() {
  return no_nccl();
}
Result<std::unique_ptr<NcclComm>> NcclComm::join(std::string_view, int, int) {
  return no_nccl();
}
NcclComm::~NcclComm() = default;
Status NcclComm::all_gather_inplace(float*, size_t, void*) {
  return no_nccl();
}
Status verify_step(NcclComm&, const VerifyArgs&, const ShardLayout&, DcpWorkspace&, TensorView,
                   TensorView, void*, DcpMerge) {
  return no_nccl();
}

}  // namespace mlaspec::attn::dcp
