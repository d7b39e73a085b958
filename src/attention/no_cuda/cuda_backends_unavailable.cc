// Built only when CUDA is off: the CUDA backends exist in the registry (their caps come from
// src/attention/cuda/traits.h) but cannot be created.
#include "mlaspec/attention/backend.h"

namespace mlaspec::attn {

Result<std::unique_ptr<Backend>> make_cuda_fold_backend() {
  return unsupported("cuda_fold is unavailable: mlaspec was built without CUDA (MLASPEC_CUDA=OFF "
                     "or no nvcc found at configure time)");
}

Result<std::unique_ptr<Backend>> make_cuda_rowwise_backend() {
  return unsupported("cuda_rowwise is unavailable: mlaspec was built without CUDA (MLASPEC_CUDA=OFF "
                     "or no nvcc found at configure time)");
}

}  // namespace mlaspec::attn
