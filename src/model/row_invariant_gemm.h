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

// The same product from W packed into column panels (pack_panels): per element one running sum in k
// order, 0 + x[t, 0] * W[j, 0] + x[t, 1] * W[j, 1] + ... (a different order from
// gemm_nt_row_invariant's, so a matrix must always take the same one of the two). The CPU runtime
// packs its weights at load (Matrix::panels) and linear() takes this kernel for them.
void gemm_nt_panels(const float* x, int64_t T, int64_t ldx, const float* panels, int64_t N,
                    int64_t K, float* y, int64_t ldy);
// The same from bf16 panels (pairs of bit patterns; pack_panels' uint32_t overload): each weight
// is widened exactly to f32 as it is loaded, so the result equals the f32 panels' bit for bit when
// every weight is a bf16 value (exactly_bf16), and half the bytes stream from memory.
void gemm_nt_panels(const float* x, int64_t T, int64_t ldx, const uint32_t* panels, int64_t N,
                    int64_t K, float* y, int64_t ldy);

// The packed layout: panel p (rows 16 p .. 16 p + 15 of W [N, K]) is K x 16 floats, k-major
// (W[16 p + l, k] at panels[(p * K + k) * 16 + l]); rows past N are zeros. panel_floats(N, K)
// floats in all. Rows 16 q .. of W start at panel q: a block of whole panels is itself packed.
int64_t panel_floats(int64_t N, int64_t K);
void pack_panels(const float* W, int64_t N, int64_t K, float* panels);
// The bf16 layout: panel p is ceil(K / 2) x 16 words, lane l's word q holding W[16 p + l, 2 q]
// in its low half and W[16 p + l, 2 q + 1] in its high half (zero past K or N); bf16 rounded to
// nearest even, exact when exactly_bf16(W). panel_pair_words(N, K) words in all; rows 16 q ..
// start at panel q here too.
int64_t panel_pair_words(int64_t N, int64_t K);
void pack_panels(const float* W, int64_t N, int64_t K, uint32_t* panels);
// Whether each of the n floats is a bf16 value (its low 16 bits zero): the weights of a bf16
// checkpoint, widened at load.
bool exactly_bf16(const float* W, int64_t n);

// y[t, c] = sum_k x[t, k] * B[k, c] for t < T, c < N, k < K (B row-major with row stride ldb).
// Per element: one running sum in k order.
void gemm_nn_row_invariant(const float* x, int64_t T, int64_t ldx, const float* B, int64_t ldb,
                           int64_t N, int64_t K, float* y, int64_t ldy);
// The same from a bf16 B (bit patterns, row-major with row stride ldb), widened exactly on load.
void gemm_nn_row_invariant(const float* x, int64_t T, int64_t ldx, const uint16_t* B, int64_t ldb,
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
