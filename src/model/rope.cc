// RoPE and YaRN frequencies, as transformers computes them (modeling_rope_utils.py), in f32.
#include <algorithm>
#include <cmath>

#include "layers.h"

namespace mlaspec::model::cpu {
namespace {

// YaRN's inverse dimension formula: the dimension index whose wavelength makes `rotations` turns
// over the original context.
double correction_dim(double rotations, int dim, double base, double max_pos) {
  return (dim * std::log(max_pos / (rotations * 2.0 * M_PI))) / (2.0 * std::log(base));
}

}  // namespace

Rope::Rope(const RopeConfig& config, int dim) : config_(config), dim_(dim) {
  const int half = dim / 2;
  inv_freq_.resize(static_cast<size_t>(half));
  std::vector<float> pos_freq(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i) {
    pos_freq[static_cast<size_t>(i)] =
        std::pow(static_cast<float>(config.theta), static_cast<float>(2 * i) / dim);
  }
  if (config.type == RopeConfig::Type::kDefault) {
    for (int i = 0; i < half; ++i) inv_freq_[static_cast<size_t>(i)] = 1.0f / pos_freq[i];
    return;
  }
  // YaRN: interpolate the low frequencies by `factor`, keep the high ones, ramp in between.
  const double max_pos = static_cast<double>(config.original_max_position_embeddings);
  double low = correction_dim(config.beta_fast, dim, config.theta, max_pos);
  double high = correction_dim(config.beta_slow, dim, config.theta, max_pos);
  if (config.truncate) {
    low = std::floor(low);
    high = std::ceil(high);
  }
  low = std::max(low, 0.0);
  high = std::min(high, static_cast<double>(dim - 1));
  if (low == high) high += 0.001;  // avoids a zero-width ramp
  const float lo = static_cast<float>(low), hi = static_cast<float>(high);
  const float factor = static_cast<float>(config.factor);
  for (int i = 0; i < half; ++i) {
    const float ramp = std::clamp((static_cast<float>(i) - lo) / (hi - lo), 0.0f, 1.0f);
    const float extrapolation = 1.0f - ramp;
    const float f_extra = 1.0f / pos_freq[static_cast<size_t>(i)];
    const float f_inter = 1.0f / (factor * pos_freq[static_cast<size_t>(i)]);
    inv_freq_[static_cast<size_t>(i)] = f_inter * (1.0f - extrapolation) + f_extra * extrapolation;
  }
}

void Rope::apply(float* x, int64_t position) const {
  const int half = dim_ / 2;
  const float scale = static_cast<float>(config_.attention_factor);
  float out[256];
  for (int i = 0; i < half; ++i) {
    const float angle = static_cast<float>(position) * inv_freq_[static_cast<size_t>(i)];
    const float c = std::cos(angle) * scale, s = std::sin(angle) * scale;
    const size_t j = static_cast<size_t>(i);
    const float a = config_.interleave ? x[2 * j] : x[j];
    const float b = config_.interleave ? x[2 * j + 1] : x[j + static_cast<size_t>(half)];
    out[i] = a * c - b * s;
    out[i + half] = b * c + a * s;
  }
  std::copy(out, out + dim_, x);
}

}  // namespace mlaspec::model::cpu
