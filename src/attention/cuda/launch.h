// Host launchers of the verify kernels (one explicit instantiation per KV dtype x page size, in
// instantiations/*.cu) and of the split combine. Plain C++ callers include this header only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "verify_params.h"

namespace mlaspec::attn::cuda {

// The KV type tag of the fp8_tile instantiations (656-byte rows: e4m3 codes, one f32 scale per
// 128 of them, bf16 rope; include/mlaspec/core/fp8_tile.h).
struct Fp8TileKv {};
// The KV type tag of the fp8-math instantiations (VerifyOptions::fp8_math): fp8_e4m3 pools read
// with e4m3 tensor-core math (Q and P rounded to e4m3; hopper/fp8_math.cuh). Only the 64-row
// kernel has them: it serves every fp8-math call, row tiles of at most 16 rows included.
struct Fp8MathKv {};

// KvT: uint16_t (bf16), uint8_t (fp8 e4m3), Fp8TileKv (fp8_tile) or Fp8MathKv (fp8 e4m3 in fp8
// math; no narrow kernel); PAGE_SIZE: 16, 32 or 64.
// init_ raises the kernel's dynamic shared-memory limit; call once before the first launch
// (never during stream capture). run_ launches grid (plan.total_groups, grid_y) in clusters of
// (1, cluster, 1) on `stream`.
template <typename KvT, int PAGE_SIZE>
cudaError_t init_verify_kernel();
template <typename KvT, int PAGE_SIZE>
cudaError_t run_verify_kernel(const VerifyParams& params, int cluster, int grid_y,
                              cudaStream_t stream);

// The narrow kernel (hopper/kernel_narrow.cuh) for row tiles of at most kNarrowRows query rows
// (traits.h: uses_narrow_kernel): grid (plan.total_groups = total_splits, grid_y), no clusters.
// init_verify_kernel prepares it too.
template <typename KvT, int PAGE_SIZE>
cudaError_t run_verify_narrow_kernel(const VerifyParams& params, int grid_y, cudaStream_t stream);

// How many clusters of `cluster` CTAs of this kernel fit on the device at once.
template <typename KvT, int PAGE_SIZE>
cudaError_t max_active_clusters(int cluster, int* count);

// Merges the partials of every request the main kernel left to it (combine_needed) into out/lse.
cudaError_t run_combine(const CombineParams& params, cudaStream_t stream);

// Tests only: deterministic calls on the 64-row kernel use split groups of `group_size` splits
// (0, the default: deterministic_group_size decides per call), so a test can reach both ways of
// folding the merge tree's blocks (SplitPlan) on small problems. Process-wide.
void force_deterministic_group_size(int group_size);

}  // namespace mlaspec::attn::cuda
