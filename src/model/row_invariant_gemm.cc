#include "row_invariant_gemm.h"

#include <algorithm>
#include <functional>

#include "mlaspec/core/parallel.h"

namespace mlaspec::model::cpu {
namespace {

thread_local bool g_row_invariant = false;

constexpr int kLanes = 16;

// The fixed-order dot product: lane i sums k = i, i + 16, ... in order; lanes then fold as a
// balanced tree (8 pairs, 4, 2, 1). Written with lanes so the compiler vectorises it without
// reassociating anything.
inline float dot_fixed(const float* a, const float* b, int64_t K) {
  float acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes) {
    for (int i = 0; i < kLanes; ++i) acc[i] += a[k + i] * b[k + i];
  }
  for (int i = 0; k + i < K; ++i) acc[i] += a[k + i] * b[k + i];
  for (int w = kLanes / 2; w >= 1; w /= 2) {
    for (int i = 0; i < w; ++i) acc[i] += acc[i + w];
  }
  return acc[0];
}

// Below this many multiply-adds a call runs on the calling thread: parallel_for starts threads per
// call, which costs more than a small GEMM. Threads never change a result (each element is
// computed whole by one thread).
constexpr int64_t kParallelWork = int64_t{1} << 22;

void run(int64_t n, int64_t work, const std::function<void(int64_t)>& fn) {
  if (work < kParallelWork) {
    for (int64_t i = 0; i < n; ++i) fn(i);
  } else {
    parallel_for(0, n, fn);
  }
}

}  // namespace

bool row_invariant_gemm() {
  return g_row_invariant;
}

RowInvariantScope::RowInvariantScope(bool on) : saved_(g_row_invariant) {
  g_row_invariant = on || saved_;
}
RowInvariantScope::~RowInvariantScope() {
  g_row_invariant = saved_;
}

void gemm_nt_row_invariant(const float* x, int64_t T, int64_t ldx, const float* W, int64_t N,
                           int64_t K, float* y, int64_t ldy) {
  // Blocks of output columns: a block's weight rows stay in cache while every row of x passes.
  constexpr int64_t kBlock = 16;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  run(blocks, T * N * K, [&](int64_t b) {
    const int64_t j0 = b * kBlock, j1 = std::min(N, j0 + kBlock);
    for (int64_t t = 0; t < T; ++t) {
      const float* xt = x + t * ldx;
      for (int64_t j = j0; j < j1; ++j) y[t * ldy + j] = dot_fixed(xt, W + j * K, K);
    }
  });
}

void gemm_nn_row_invariant(const float* x, int64_t T, int64_t ldx, const float* B, int64_t ldb,
                           int64_t N, int64_t K, float* y, int64_t ldy) {
  run(T, T * N * K, [&](int64_t t) {
    float* yt = y + t * ldy;
    const float* xt = x + t * ldx;
    std::fill(yt, yt + N, 0.0f);
    for (int64_t k = 0; k < K; ++k) {
      const float a = xt[k];
      const float* bk = B + k * ldb;
      for (int64_t c = 0; c < N; ++c) yt[c] += a * bk[c];
    }
  });
}

}  // namespace mlaspec::model::cpu
