// RMSNorm, as transformers' DeepseekV3RMSNorm: weight * (x / sqrt(mean(x^2) + eps)).
#include <cmath>

#include "layers.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::model::cpu {

void rms_norm(const float* x, int64_t T, int64_t dim, const std::vector<float>& w, double eps,
              float* y, int64_t ldx, int64_t ldy) {
  if (ldx == 0) ldx = dim;
  if (ldy == 0) ldy = dim;
  parallel_for(0, T, T * dim * 3, [&](int64_t t) {
    const float* xr = x + t * ldx;
    float* yr = y + t * ldy;
    // The mean of squares in double: torch reduces in f32 with pairwise sums, more accurately
    // than a naive f32 loop would.
    double sum = 0.0;
    for (int64_t i = 0; i < dim; ++i) sum += static_cast<double>(xr[i]) * xr[i];
    const float inv = static_cast<float>(1.0 / std::sqrt(sum / static_cast<double>(dim) + eps));
    for (int64_t i = 0; i < dim; ++i) yr[i] = w[static_cast<size_t>(i)] * (xr[i] * inv);
  });
}

}  // namespace mlaspec::model::cpu
