// Device-side random fills for the verify perf mode (see perf_fill.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace mlaspec::attn::perf {
cudaError_t fill_random_bf16(void* dst, int64_t n, uint64_t seed);
cudaError_t fill_random_fp8(void* dst, int64_t n, uint64_t seed, float scale);
}  // namespace mlaspec::attn::perf
