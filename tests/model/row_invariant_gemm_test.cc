// The row-invariant GEMMs (src/model/row_invariant_gemm.h): every output element is the documented
// fixed-order sum, bitwise, whatever the number of rows T in the call, the tile the element lands
// in (4-row tiles, single rows against 8 columns, leftovers) and the row stride.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "model/row_invariant_gemm.h"

namespace mlaspec::model::cpu {
namespace {

// The documented order, written out plainly: lane i sums k = i, i + 16, ... in k order, then the
// lanes fold 8 pairs, 4, 2, 1.
float documented_dot(const float* a, const float* b, int64_t K) {
  float lane[16] = {};
  for (int64_t k = 0; k < K; ++k) lane[k % 16] += a[k] * b[k];
  for (int w = 8; w >= 1; w /= 2)
    for (int i = 0; i < w; ++i) lane[i] += lane[i + w];
  return lane[0];
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(RowInvariantGemm, NtEqualsTheDocumentedOrderForEveryRowCount) {
  // N values cover whole 16-column blocks, a partial block, and blocks with columns left after
  // the 8- and 2-column tiles; K values with and without a tail after the 16-lane chunks.
  for (const int64_t N : {1, 7, 16, 37}) {
    for (const int64_t K : {5, 16, 64, 131}) {
      const int64_t ldx = K + 3, ldy = N + 2;
      const std::vector<float> W = random_values(static_cast<size_t>(N * K), 7);
      const std::vector<float> x = random_values(static_cast<size_t>(17 * ldx), 11);
      // Each row alone (a decode step) is the reference for the same row in a bigger call.
      std::vector<float> alone(static_cast<size_t>(17 * N));
      for (int64_t t = 0; t < 17; ++t) {
        gemm_nt_row_invariant(x.data() + t * ldx, 1, ldx, W.data(), N, K, alone.data() + t * N, N);
        for (int64_t j = 0; j < N; ++j) {
          const float expect = documented_dot(x.data() + t * ldx, W.data() + j * K, K);
          ASSERT_EQ(0, std::memcmp(&expect, &alone[t * N + j], 4))
              << "N " << N << " K " << K << " row " << t << " col " << j;
        }
      }
      for (int64_t T = 1; T <= 17; ++T) {
        std::vector<float> y(static_cast<size_t>(T * ldy), -1.0f);
        gemm_nt_row_invariant(x.data(), T, ldx, W.data(), N, K, y.data(), ldy);
        for (int64_t t = 0; t < T; ++t) {
          ASSERT_EQ(0, std::memcmp(&alone[t * N], &y[t * ldy], N * 4))
              << "N " << N << " K " << K << " T " << T << " row " << t;
          ASSERT_EQ(y[t * ldy + N], -1.0f) << "wrote past the row";
        }
      }
    }
  }
}

TEST(RowInvariantGemm, NnIsOneRunningSumInKOrder) {
  const int64_t K = 32, N = 40, ldb = 48;
  const std::vector<float> B = random_values(static_cast<size_t>(K * ldb), 3);
  const std::vector<float> x = random_values(static_cast<size_t>(9 * K), 5);
  std::vector<float> y(static_cast<size_t>(9 * N));
  gemm_nn_row_invariant(x.data(), 9, K, B.data(), ldb, N, K, y.data(), N);
  for (int64_t t = 0; t < 9; ++t) {
    for (int64_t c = 0; c < N; ++c) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += x[t * K + k] * B[k * ldb + c];
      ASSERT_EQ(0, std::memcmp(&s, &y[t * N + c], 4)) << "row " << t << " col " << c;
    }
  }
}

}  // namespace
}  // namespace mlaspec::model::cpu
