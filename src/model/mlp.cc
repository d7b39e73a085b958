// Dense SwiGLU MLP: down_proj(silu(gate_proj(x)) * up_proj(x)).
#include <cblas.h>

#include <cmath>

#include "layers.h"
#include "mlaspec/core/parallel.h"
#include "row_invariant_gemm.h"

namespace mlaspec::model::cpu {

void linear(const float* x, int64_t T, const Matrix& W, float* y, int64_t ldx, int64_t ldy) {
  if (T == 0) return;
  if (ldx == 0) ldx = W.cols;
  if (ldy == 0) ldy = W.rows;
  if (row_invariant_gemm()) {
    if (!W.panels_bf16.empty()) {
      gemm_nt_panels(x, T, ldx, W.panels_bf16.data(), W.rows, W.cols, y, ldy);
    } else if (!W.panels.empty()) {
      gemm_nt_panels(x, T, ldx, W.panels.data(), W.rows, W.cols, y, ldy);
    } else {
      gemm_nt_row_invariant(x, T, ldx, W.ptr(), W.rows, W.cols, y, ldy);
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(T), W.rows, W.cols,
              1.0f, x, static_cast<blasint>(ldx), W.ptr(), W.cols, 0.0f, y,
              static_cast<blasint>(ldy));
}

void silu_mul(const float* gate, const float* up, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void mlp_forward(const MlpWeights& w, const float* x, int64_t T, float* out) {
  const int64_t inter = w.gate_proj.rows;
  std::vector<float> gate(static_cast<size_t>(T * inter)), up(gate.size());
  linear(x, T, w.gate_proj, gate.data());
  linear(x, T, w.up_proj, up.data());
  parallel_for(0, T, T * inter * 16, [&](int64_t t) {  // an exp ~16 multiply-adds
    float* g = gate.data() + t * inter;
    silu_mul(g, up.data() + t * inter, inter, g);
  });
  linear(gate.data(), T, w.down_proj, out);
}

}  // namespace mlaspec::model::cpu
