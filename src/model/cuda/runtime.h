// The CUDA runtime of Model (LoadOptions::device = kCUDA): bf16 weights on the device, the
// forward's layers as kernels and GEMMs, attention through the model's dispatcher on a CUDA pool.
// Model::Impl validates a batch and hands it to run_batch() whole.
// Built with CUDA: this folder (runtime_impl.h lists its files); without: ../no_cuda/ refuses
// create().
#pragma once

#include <memory>
#include <span>
#include <string>

#include "../layers.h"
#include "mlaspec/model/model.h"

namespace mlaspec::model::gpu {

using GraphStats = CudaGraphStats;

class CudaRuntime {
 public:
  virtual ~CudaRuntime() = default;
  // Uploads `weights` (bf16) to the current CUDA device. `rope` gives the RoPE frequencies.
  static Result<std::unique_ptr<CudaRuntime>> create(const ModelConfig& config,
                                                     const ModelWeights& weights,
                                                     const cpu::Rope& rope);
  // Free memory of the current CUDA device, in bytes.
  static Result<int64_t> available_bytes();
  // A validated batch (Model::forward's contract); `pool` is a CUDA pool; out has one entry per
  // request. Requests of at most one chunk are fused into shared passes (runtime.cc).
  virtual Status run_batch(std::span<const ForwardRequest> batch, kv::KvPool& pool,
                           const ForwardOptions& options, attn::Dispatcher& dispatcher,
                           std::span<RequestOutput> out) = 0;
  // Model::set_phase_profiling / phase_report.
  virtual void set_phase_profiling(bool on) = 0;
  virtual std::string phase_report(bool reset) = 0;
  // Model::cuda_graph_stats.
  virtual GraphStats graph_stats() const = 0;
};

}  // namespace mlaspec::model::gpu
