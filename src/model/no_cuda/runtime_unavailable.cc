// Builds without CUDA: a model cannot be loaded for the CUDA runtime.
#include "../cuda/runtime.h"

namespace mlaspec::model::gpu {

Result<std::unique_ptr<CudaRuntime>> CudaRuntime::create(const ModelConfig&, const ModelWeights&,
                                                         const cpu::Rope&) {
  return unsupported(
      "model device cuda: mlaspec was built without CUDA (configure with -DMLASPEC_CUDA=ON on a "
      "machine with the CUDA toolkit)");
}

Result<int64_t> CudaRuntime::available_bytes() {
  return unsupported("model device cuda: mlaspec was built without CUDA");
}

}  // namespace mlaspec::model::gpu
