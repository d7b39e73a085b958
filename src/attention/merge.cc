// Merging partial attention states (o_s, lse_s) computed over disjoint KV ranges.
#include <cmath>
#include <limits>
#include <string>

#include "mlaspec/attention/verify.h"

namespace mlaspec::attn {

Status merge_partials(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                      TensorView out, TensorView lse) {
  if (o_parts.empty()) return invalid_argument("merge_partials needs at least one partial");
  if (o_parts.size() != lse_parts.size()) {
    return invalid_argument("merge_partials got " + std::to_string(o_parts.size()) +
                            " o partials but " + std::to_string(lse_parts.size()) +
                            " lse partials");
  }
  const TensorView& o0 = o_parts[0];
  if (o0.ndim() != 4)
    return invalid_argument("o partial 0 has rank " + std::to_string(o0.ndim()) + ", expected 4");
  const int64_t B = o0.size(0), Q = o0.size(1), H = o0.size(2);
  for (size_t s = 0; s < o_parts.size(); ++s) {
    const std::string n = std::to_string(s);
    MLASPEC_RETURN_IF_ERROR(
        o_parts[s].expect("o partial " + n, DType::kF32, {B, Q, H, kHeadDimV}, Device::kCPU));
    MLASPEC_RETURN_IF_ERROR(
        lse_parts[s].expect("lse partial " + n, DType::kF32, {B, Q, H}, Device::kCPU));
  }
  if (out.dtype() != DType::kF32 && out.dtype() != DType::kBF16) {
    return invalid_argument("merge output has dtype " + std::string(dtype_name(out.dtype())) +
                            ", expected f32 or bf16");
  }
  MLASPEC_RETURN_IF_ERROR(out.expect("out", out.dtype(), {B, Q, H, kHeadDimV}, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {B, Q, H}, Device::kCPU));

  const float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < Q; ++i) {
      for (int64_t h = 0; h < H; ++h) {
        auto lse_of = [&](size_t s) {
          const TensorView& t = lse_parts[s];
          return t.data_as<const float>()[b * t.stride(0) + i * t.stride(1) + h * t.stride(2)];
        };
        float m = kNegInf;
        for (size_t s = 0; s < lse_parts.size(); ++s) m = std::fmax(m, lse_of(s));
        float acc[kHeadDimV] = {};
        float total_lse = kNegInf;
        if (m != kNegInf) {
          // Weights relative to the max keep exp() in range; empty partials (lse = -inf) weigh 0.
          float sum = 0.0f;
          for (size_t s = 0; s < lse_parts.size(); ++s) sum += std::exp(lse_of(s) - m);
          for (size_t s = 0; s < o_parts.size(); ++s) {
            const float w = std::exp(lse_of(s) - m) / sum;
            if (w == 0.0f) continue;
            const TensorView& t = o_parts[s];
            const float* o =
                t.data_as<const float>() + b * t.stride(0) + i * t.stride(1) + h * t.stride(2);
            for (int d = 0; d < kHeadDimV; ++d) acc[d] += w * o[d];
          }
          total_lse = m + std::log(sum);
        }
        const int64_t off = b * out.stride(0) + i * out.stride(1) + h * out.stride(2);
        if (out.dtype() == DType::kF32) {
          for (int d = 0; d < kHeadDimV; ++d) out.data_as<float>()[off + d] = acc[d];
        } else {
          for (int d = 0; d < kHeadDimV; ++d)
            out.data_as<uint16_t>()[off + d] = float_to_bf16_bits(acc[d]);
        }
        lse.data_as<float>()[b * lse.stride(0) + i * lse.stride(1) + h * lse.stride(2)] = total_lse;
      }
    }
  }
  return Status::Ok();
}

}  // namespace mlaspec::attn
