// Built only when CUDA is off: the CUDA backends exist in the registry (their caps come from
// src/attention/cuda/traits.h) but cannot be created.
#include "mlaspec/attention/backend.h"

namespace mlaspec::attn {

Result<std::unique_ptr<Backend>> make_cuda_fold_backend() {
  return unsupported(
      "cuda_fold is unavailable: mlaspec was built without CUDA (MLASPEC_CUDA=OFF "
      "or no nvcc found at configure time)");
}

Result<std::unique_ptr<Backend>> make_cuda_rowwise_backend() {
  return unsupported(
      "cuda_rowwise is unavailable: mlaspec was built without CUDA (MLASPEC_CUDA=OFF "
      "or no nvcc found at configure time)");
}

}  // namespace mlaspec::attn

#include "mlaspec/attention/dcp.h"

namespace mlaspec::attn::dcp {

Status rank_partials_cuda(const VerifyArgs&, const ShardLayout&, int, TensorView, TensorView,
                          void*) {
  return unsupported("DCP on the GPU is unavailable: mlaspec was built without CUDA");
}

Status merge_gathered_cuda(TensorView, TensorView, const ShardLayout&, TensorView, TensorView,
                           void*, const TensorView&) {
  return unsupported("DCP on the GPU is unavailable: mlaspec was built without CUDA");
}

Status premerge_rank_partials_cuda(TensorView, TensorView, TensorView, TensorView, void*,
                                   const TensorView&) {
  return unsupported("DCP on the GPU is unavailable: mlaspec was built without CUDA");
}

}  // namespace mlaspec::attn::dcp
