// The CUDA runtime of Model (LoadOptions::device = kCUDA): bf16 weights on the device, the
// forward's layers as kernels and GEMMs, attention through the model's dispatcher on a CUDA pool.
// Model::Impl validates a batch and calls run_request() per request, as the CPU runtime does.
// Built with CUDA: this folder (runtime_impl.h lists its files); without: ../no_cuda/ refuses
// create().
#pragma once

#include <memory>

#include "../layers.h"
#include "mlaspec/model/model.h"

namespace mlaspec::model::gpu {

class CudaRuntime {
 public:
  virtual ~CudaRuntime() = default;
  // Uploads `weights` (bf16) to the current CUDA device. `rope` gives the RoPE frequencies.
  static Result<std::unique_ptr<CudaRuntime>> create(const ModelConfig& config,
                                                     const ModelWeights& weights,
                                                     const cpu::Rope& rope);
  // Free memory of the current CUDA device, in bytes.
  static Result<int64_t> available_bytes();
  // One request of a validated batch (Model::forward's contract); `pool` is a CUDA pool.
  virtual Status run_request(const ForwardRequest& r, kv::KvPool& pool,
                             const ForwardOptions& options, attn::Dispatcher& dispatcher,
                             RequestOutput* out) = 0;
};

}  // namespace mlaspec::model::gpu
