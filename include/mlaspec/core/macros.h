// Portability macros shared by host and CUDA code.
#pragma once

#if defined(__CUDACC__)
#define MLASPEC_HD __host__ __device__
#define MLASPEC_HD_INLINE __host__ __device__ __forceinline__
#else
#define MLASPEC_HD
#define MLASPEC_HD_INLINE inline
#endif
