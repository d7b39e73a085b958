// Defines the launcher specialisations of launch.h for one (KV dtype, page size): the 64-row and
// the narrow verify kernels. Each file in this folder instantiates one pair, so the nine kernel
// variants (bf16, fp8_e4m3, fp8_tile x 3 page sizes) compile in parallel; fp8 math (Fp8MathKv) has
// the 64-row kernel only (MLASPEC_INSTANTIATE_VERIFY_WIDE).
#pragma once

#include "../hopper/kernel_narrow.cuh"
#include "../hopper/kernel_wide.cuh"
#include "../launch.h"

// The 64-row kernel's launchers (every instantiation has them).
#define MLASPEC_INSTANTIATE_VERIFY_WIDE_LAUNCHERS(KV_T, PAGE)                                    \
  template <>                                                                                    \
  cudaError_t run_verify_kernel<KV_T, PAGE>(const VerifyParams& params, int cluster, int grid_y, \
                                            cudaStream_t stream) {                               \
    return run_verify_kernel_sm90<Sm90Traits<KV_T, PAGE>>(params, cluster, grid_y, stream);      \
  }                                                                                              \
  template <>                                                                                    \
  cudaError_t max_active_clusters<KV_T, PAGE>(int cluster, int* count) {                         \
    return max_active_clusters_sm90<Sm90Traits<KV_T, PAGE>>(cluster, count);                     \
  }

#define MLASPEC_INSTANTIATE_VERIFY(KV_T, PAGE)                                             \
  namespace mlaspec::attn::cuda {                                                          \
  template <>                                                                              \
  cudaError_t init_verify_kernel<KV_T, PAGE>() {                                           \
    const cudaError_t err = init_verify_kernel_sm90<Sm90Traits<KV_T, PAGE>>();             \
    return err != cudaSuccess ? err : init_verify_narrow_sm90<NarrowTraits<KV_T, PAGE>>(); \
  }                                                                                        \
  template <>                                                                              \
  cudaError_t run_verify_narrow_kernel<KV_T, PAGE>(const VerifyParams& params, int grid_y, \
                                                   cudaStream_t stream) {                  \
    return run_verify_narrow_sm90<NarrowTraits<KV_T, PAGE>>(params, grid_y, stream);       \
  }                                                                                        \
  MLASPEC_INSTANTIATE_VERIFY_WIDE_LAUNCHERS(KV_T, PAGE)                                    \
  }  // namespace mlaspec::attn::cuda

// The 64-row kernel alone (fp8 math: it serves every such call; launch.h declares no narrow
// launcher for it).
#define MLASPEC_INSTANTIATE_VERIFY_WIDE(KV_T, PAGE)           \
  namespace mlaspec::attn::cuda {                             \
  template <>                                                 \
  cudaError_t init_verify_kernel<KV_T, PAGE>() {              \
    return init_verify_kernel_sm90<Sm90Traits<KV_T, PAGE>>(); \
  }                                                           \
  MLASPEC_INSTANTIATE_VERIFY_WIDE_LAUNCHERS(KV_T, PAGE)       \
  }  // namespace mlaspec::attn::cuda
