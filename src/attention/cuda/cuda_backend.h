// What cuda_backend.cc offers the other host files of the CUDA backends (dcp_cuda.cc).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "mlaspec/attention/backend.h"

namespace mlaspec::attn::cuda {

// err as a Status: Ok, or an internal error naming `what` with CUDA's message.
Status cuda_status(cudaError_t err, const char* what);

// DCP rank partials (attention/dcp.h) on the process's fold backend: every world-th fixed chunk
// of `chunk` tokens starting at `rank`, all written as partials [B, cpr, rows] to o_part /
// lse_part; no combine. Serialised: one backend serves every rank call of the process.
Status run_dcp_rank_partials(const VerifyArgs& args, int world, int rank, int chunk, int64_t cpr,
                             float* o_part, float* lse_part, cudaStream_t stream);

}  // namespace mlaspec::attn::cuda
