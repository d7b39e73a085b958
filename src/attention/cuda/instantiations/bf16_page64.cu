// bf16 KV, page size 64. One instantiation per file so the build parallelises.
// Default: the sm90 kernel (TMA + wgmma). -DMLASPEC_VERIFY_MMA_SYNC=1 selects the mma.sync kernel
// (bulk copies + ldmatrix), kept as a reference point for perf comparisons.
#include "../launch.h"
#if MLASPEC_VERIFY_MMA_SYNC
#include "../verify_kernel.cuh"
#define MLASPEC_TRAITS KernelTraits<uint16_t, 64>
#define MLASPEC_INIT init_verify_kernel_impl
#define MLASPEC_RUN run_verify_kernel_impl
#define MLASPEC_OCC max_active_clusters_impl
#else
#include "../verify_kernel_sm90.cuh"
#define MLASPEC_TRAITS Sm90Traits<uint16_t, 64>
#define MLASPEC_INIT init_verify_kernel_sm90
#define MLASPEC_RUN run_verify_kernel_sm90
#define MLASPEC_OCC max_active_clusters_sm90
#endif

namespace mlaspec::attn::cuda {

template <>
cudaError_t init_verify_kernel<uint16_t, 64>() {
  return MLASPEC_INIT<MLASPEC_TRAITS>();
}

template <>
cudaError_t run_verify_kernel<uint16_t, 64>(const VerifyParams& params, int cluster, int grid_y,
                                          cudaStream_t stream) {
  return MLASPEC_RUN<MLASPEC_TRAITS>(params, cluster, grid_y, stream);
}

template <>
cudaError_t max_active_clusters<uint16_t, 64>(int cluster, int* count) {
  return MLASPEC_OCC<MLASPEC_TRAITS>(cluster, count);
}

}  // namespace mlaspec::attn::cuda
