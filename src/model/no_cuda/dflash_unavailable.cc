// Builds without CUDA: a DFlash drafter cannot be loaded for the CUDA device.
#include "../cuda/dflash_runtime.h"

namespace mlaspec::model::gpu {

Result<std::unique_ptr<DFlashCudaRuntime>> DFlashCudaRuntime::create(const DFlashConfig&,
                                                                     const DFlashWeights&,
                                                                     const Matrix&, const Matrix&,
                                                                     const cpu::Rope&, bool) {
  return unsupported(
      "DFlash drafter device cuda: mlaspec was built without CUDA (configure with "
      "-DMLASPEC_CUDA=ON on a machine with the CUDA toolkit)");
}

}  // namespace mlaspec::model::gpu
