// Merging partial attention states (o_s, lse_s) computed over disjoint KV ranges.
#include <cmath>
#include <limits>
#include <string>

#include "mlaspec/attention/verify.h"

namespace mlaspec::attn {

namespace {

// The checks merge_partials and fold_partials share; the partials' [B, q_len, H] in *dims.
Status check_partials(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                      const TensorView& out, const TensorView& lse, const char* what, bool bf16_out,
                      int64_t (&dims)[3]) {
  if (o_parts.empty()) return invalid_argument(std::string(what) + " needs at least one partial");
  if (o_parts.size() != lse_parts.size()) {
    return invalid_argument(std::string(what) + " got " + std::to_string(o_parts.size()) +
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
  if (out.dtype() != DType::kF32 && !(bf16_out && out.dtype() == DType::kBF16)) {
    return invalid_argument(std::string(what) + " output has dtype " +
                            std::string(dtype_name(out.dtype())) +
                            (bf16_out ? ", expected f32 or bf16" : ", expected f32"));
  }
  MLASPEC_RETURN_IF_ERROR(out.expect("out", out.dtype(), {B, Q, H, kHeadDimV}, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {B, Q, H}, Device::kCPU));
  dims[0] = B;
  dims[1] = Q;
  dims[2] = H;
  return Status::Ok();
}

const float* row_of(const TensorView& t, int64_t b, int64_t i, int64_t h) {
  return t.data_as<const float>() + b * t.stride(0) + i * t.stride(1) + h * t.stride(2);
}

float element(const TensorView& t, int64_t b, int64_t i, int64_t h) {
  return *row_of(t, b, i, h);
}

}  // namespace

Status fold_partials(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                     TensorView out, TensorView lse) {
  int64_t dims[3];
  MLASPEC_RETURN_IF_ERROR(
      check_partials(o_parts, lse_parts, out, lse, "fold_partials", /*bf16_out=*/false, dims));
  const float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t b = 0; b < dims[0]; ++b) {
    for (int64_t i = 0; i < dims[1]; ++i) {
      for (int64_t h = 0; h < dims[2]; ++h) {
        float acc[kHeadDimV] = {};
        float state = kNegInf;
        for (size_t s = 0; s < o_parts.size(); ++s) {
          const float ls = element(lse_parts[s], b, i, h);
          if (ls == kNegInf) continue;  // empty: the state stays as it is
          const float* o = row_of(o_parts[s], b, i, h);
          float w_old = 0.0f, w_new = 1.0f, next = ls;
          if (state != kNegInf) {
            next = std::fmax(state, ls) + std::log1p(std::exp(-std::fabs(state - ls)));
            w_old = std::exp(state - next);
            w_new = std::exp(ls - next);
          }
          for (int d = 0; d < kHeadDimV; ++d) acc[d] = std::fma(w_new, o[d], w_old * acc[d]);
          state = next;
        }
        float* dst =
            out.data_as<float>() + b * out.stride(0) + i * out.stride(1) + h * out.stride(2);
        for (int d = 0; d < kHeadDimV; ++d) dst[d] = acc[d];
        lse.data_as<float>()[b * lse.stride(0) + i * lse.stride(1) + h * lse.stride(2)] = state;
      }
    }
  }
  return Status::Ok();
}

Status merge_partials(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                      TensorView out, TensorView lse) {
  int64_t dims[3];
  MLASPEC_RETURN_IF_ERROR(
      check_partials(o_parts, lse_parts, out, lse, "merge_partials", /*bf16_out=*/true, dims));
  const int64_t B = dims[0], Q = dims[1], H = dims[2];

  const float kNegInf = -std::numeric_limits<float>::infinity();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < Q; ++i) {
      for (int64_t h = 0; h < H; ++h) {
        auto lse_of = [&](size_t s) { return element(lse_parts[s], b, i, h); };
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
            const float* o = row_of(o_parts[s], b, i, h);
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
