// The DFlash drafter's CUDA forward (DFlashOptions::device = kCUDA): the CPU network's two
// forwards (model/dflash.h) on the device, over a CUDA draft pool. DFlashNetwork validates a batch
// (pool layout, pages, tokens) and hands it here. Built with CUDA: this folder; without:
// ../no_cuda/ refuses create().
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "../layers.h"
#include "mlaspec/model/dflash.h"

namespace mlaspec::model::gpu {

class DFlashCudaRuntime {
 public:
  virtual ~DFlashCudaRuntime() = default;
  // Uploads the drafter's weights and the target's embedding and lm_head (bf16) to the current
  // CUDA device; `rope` gives the drafter's RoPE frequencies (head_dim wide). `cuda_graphs`:
  // propose's device work is replayed from a CUDA graph per shape (DFlashOptions::cuda_graphs).
  static Result<std::unique_ptr<DFlashCudaRuntime>> create(
      const DFlashConfig& config, const DFlashWeights& weights, const Matrix& embed_tokens,
      const Matrix& lm_head, const cpu::Rope& rope, bool cuda_graphs = true);
  // A validated batch (DFlashNetwork::append_context's contract); `pool` is a CUDA pool.
  virtual Status append_context(std::span<const DFlashContextRows> batch, kv::KvPool& pool) = 0;
  // A validated batch; `window` > 0 limits the context to the last `window` positions.
  virtual Status propose(std::span<DFlashBlock> batch, const kv::KvPool& pool, int64_t window) = 0;
};

}  // namespace mlaspec::model::gpu
