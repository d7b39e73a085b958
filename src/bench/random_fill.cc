#include "mlaspec/bench/random_fill.h"

#include "mlaspec/core/parallel.h"

namespace mlaspec::bench {

#if defined(MLASPEC_WITH_CUDA)
Status fill_random_device(void* dst, DType dtype, int64_t n, uint64_t seed, float stddev,
                          float fp8_scale);
#endif

Status fill_random(void* dst, bool on_device, DType dtype, int64_t n, uint64_t seed, float stddev,
                   float fp8_scale) {
  if (dtype != DType::kBF16 && dtype != DType::kFP8E4M3) {
    return invalid_argument("fill_random supports bf16 and fp8_e4m3, got " +
                            std::string(dtype_name(dtype)));
  }
  if (on_device) {
#if defined(MLASPEC_WITH_CUDA)
    return fill_random_device(dst, dtype, n, seed, stddev, fp8_scale);
#else
    return unsupported("device fill requested but mlaspec was built without CUDA");
#endif
  }
  const float inv_scale = 1.0f / fp8_scale;
  constexpr int64_t kChunk = 1 << 16;
  parallel_for(0, (n + kChunk - 1) / kChunk, [&](int64_t c) {
    const int64_t end = std::min(n, (c + 1) * kChunk);
    for (int64_t k = c * kChunk; k < end; ++k) {
      const float v = random_normalish(seed, static_cast<uint64_t>(k)) * stddev;
      if (dtype == DType::kFP8E4M3) {
        static_cast<uint8_t*>(dst)[k] = float_to_fp8e4m3_bits(v * inv_scale);
      } else {
        static_cast<uint16_t*>(dst)[k] = float_to_bf16_bits(v);
      }
    }
  });
  return Status::Ok();
}

}  // namespace mlaspec::bench
