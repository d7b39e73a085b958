// Row-invariant GEMMs for ForwardOptions::deterministic (lossless greedy speculative decoding).
//
// A BLAS sgemm may sum a row's products in a different order depending on how many rows the
// call carries (OpenBLAS sends M = 1 to a gemv kernel with its own accumulators and blocks K
// differently for small M), so a verify step (M = q_len rows) and a decode step (M = 1) can give
// logits that differ in the last bit, and greedy speculative output can then drift from plain
// greedy output. These kernels compute every output element with one fixed order of operations
// that depends on the shapes of the weights only, never on the number of rows.
//
// The mode is a scope (RowInvariantScope) that Model::forward opens for a deterministic call;
// the layers' GEMM call sites ask row_invariant_gemm() and take these kernels while it is open.
// Only the calling thread's GEMMs are affected (the layers issue GEMMs from that thread).
#pragma once

#include <cstdint>

namespace mlaspec::model::cpu {

// y[t, j] = sum_k x[t, k] * W[j, k] for t < T, j < N, k < K (W row-major [N, K]: x @ W^T).
// Per element: 16 partial sums over k mod 16 in k order, then a fixed pairwise tree.
void gemm_nt_row_invariant(const float* x, int64_t T, int64_t ldx, const float* W, int64_t N,
                           int64_t K, float* y, int64_t ldy);

// y[t, c] = sum_k x[t, k] * B[k, c] for t < T, c < N, k < K (B row-major with row stride ldb).
// Per element: one running sum in k order.
void gemm_nn_row_invariant(const float* x, int64_t T, int64_t ldx, const float* B, int64_t ldb,
                           int64_t N, int64_t K, float* y, int64_t ldy);

bool row_invariant_gemm();

class RowInvariantScope {
 public:
  explicit RowInvariantScope(bool on);
  ~RowInvariantScope();
  RowInvariantScope(const RowInvariantScope&) = delete;
  RowInvariantScope& operator=(const RowInvariantScope&) = delete;

 private:
  bool saved_;
};

}  // namespace mlaspec::model::cpu
