// The row-invariant GEMMs (src/model/row_invariant_gemm.h): every output element is the documented
// fixed-order sum, bitwise, whatever the number of rows T in the call, the tile the element lands
// in (4-row tiles, single rows against 8 columns, leftovers; for the panel kernels 4 x 4, 2 x 8,
// 1 x 8 panels and single panels) and the row stride.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "mlaspec/core/dtype.h"
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

// The panel kernels' order: one running sum in k order, from 0.
float running_sum(const float* a, const float* b, int64_t K, int64_t bstride) {
  float s = 0.0f;
  for (int64_t k = 0; k < K; ++k) s += a[k] * b[k * bstride];
  return s;
}

TEST(RowInvariantGemm, PanelsEqualOneRunningSumForEveryRowCount) {
  // N: one partial panel, whole panels, whole + partial, more panels than a 4- or 8-panel tile
  // takes (leftover single panels); K odd and even; T = 1..17 covers every tile shape and the
  // leftover rows after them. Every element is written, nothing past a row.
  for (const int64_t N : {1, 7, 16, 37, 48, 160}) {
    for (const int64_t K : {1, 5, 16, 64, 131}) {
      const int64_t ldx = K + 3, ldy = N + 2;
      const std::vector<float> W = random_values(static_cast<size_t>(N * K), 7);
      const std::vector<float> x = random_values(static_cast<size_t>(17 * ldx), 11);
      std::vector<float> panels(static_cast<size_t>(panel_floats(N, K)), -3.0f);
      pack_panels(W.data(), N, K, panels.data());
      for (int64_t T = 1; T <= 17; ++T) {
        std::vector<float> y(static_cast<size_t>(T * ldy), -1.0f);
        gemm_nt_panels(x.data(), T, ldx, panels.data(), N, K, y.data(), ldy);
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t j = 0; j < N; ++j) {
            const float expect = running_sum(x.data() + t * ldx, W.data() + j * K, K, 1);
            ASSERT_EQ(0, std::memcmp(&expect, &y[t * ldy + j], 4))
                << "N " << N << " K " << K << " T " << T << " row " << t << " col " << j;
          }
          ASSERT_EQ(y[t * ldy + N], -1.0f) << "wrote past the row";
        }
      }
    }
  }
}

// Values rounded to bf16 (their low 16 bits cleared after rounding to nearest even), as the
// weights of a bf16 checkpoint are after loading.
std::vector<float> bf16_values(size_t n, uint32_t seed) {
  std::vector<float> v = random_values(n, seed);
  for (float& x : v) x = bf16_bits_to_float(float_to_bf16_bits(x));
  return v;
}

TEST(RowInvariantGemm, Bf16PanelsEqualTheF32PanelsBitwise) {
  // bf16 weights streamed as bf16 pairs and widened on load: the same running sums, bit for bit,
  // for every tile shape (T = 1..17), partial panels and odd K (a last k without its pair); every
  // element written.
  for (const int64_t N : {1, 7, 16, 37, 160}) {
    for (const int64_t K : {1, 5, 64, 131}) {
      const int64_t ldx = K + 3, ldy = N + 2;
      const std::vector<float> W = bf16_values(static_cast<size_t>(N * K), 9);
      ASSERT_TRUE(exactly_bf16(W.data(), N * K));
      const std::vector<float> x = random_values(static_cast<size_t>(17 * ldx), 13);
      std::vector<float> f32(static_cast<size_t>(panel_floats(N, K)));
      std::vector<uint32_t> b16(static_cast<size_t>(panel_pair_words(N, K)), 0xffffffffu);
      pack_panels(W.data(), N, K, f32.data());
      pack_panels(W.data(), N, K, b16.data());
      for (int64_t T = 1; T <= 17; ++T) {
        std::vector<float> y32(static_cast<size_t>(T * ldy), -1.0f), y16(y32.size(), -2.0f);
        gemm_nt_panels(x.data(), T, ldx, f32.data(), N, K, y32.data(), ldy);
        gemm_nt_panels(x.data(), T, ldx, b16.data(), N, K, y16.data(), ldy);
        for (int64_t t = 0; t < T; ++t) {
          ASSERT_EQ(0, std::memcmp(&y32[t * ldy], &y16[t * ldy], N * 4))
              << "N " << N << " K " << K << " T " << T << " row " << t;
          ASSERT_EQ(y16[t * ldy + N], -2.0f) << "wrote past the row";
        }
      }
    }
  }
}

TEST(RowInvariantGemm, Bf16PanelsOfARowBlockArePackedToo) {
  // W_UV's heads in bf16 pairs: head h's rows start at word h * v * ceil(K / 2).
  for (const int64_t K : {40, 41}) {
    const int64_t N = 64, v = 32;
    const std::vector<float> W = bf16_values(static_cast<size_t>(N * K), 2);
    const std::vector<float> x = random_values(static_cast<size_t>(5 * K), 4);
    std::vector<uint32_t> panels(static_cast<size_t>(panel_pair_words(N, K)));
    pack_panels(W.data(), N, K, panels.data());
    std::vector<float> y(static_cast<size_t>(5 * v));
    gemm_nt_panels(x.data(), 5, K, panels.data() + v * ((K + 1) / 2), v, K, y.data(), v);
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t j = 0; j < v; ++j) {
        const float expect = running_sum(x.data() + t * K, W.data() + (v + j) * K, K, 1);
        ASSERT_EQ(0, std::memcmp(&expect, &y[t * v + j], 4)) << "K " << K << " row " << t;
      }
  }
}

TEST(RowInvariantGemm, ExactlyBf16TellsBf16ValuesApart) {
  std::vector<float> v = bf16_values(1000, 3);
  EXPECT_TRUE(exactly_bf16(v.data(), 1000));
  v[517] = std::nextafter(v[517], 10.0f);  // one value with a low bit set
  EXPECT_FALSE(exactly_bf16(v.data(), 1000));
  EXPECT_TRUE(exactly_bf16(v.data(), 517));
}

TEST(RowInvariantGemm, PanelsOfARowBlockArePackedToo) {
  // MLA's W_UV: head h's rows start at panel h * v / 16; the block alone gives the same values.
  const int64_t N = 64, K = 40, v = 32;
  const std::vector<float> W = random_values(static_cast<size_t>(N * K), 2);
  const std::vector<float> x = random_values(static_cast<size_t>(5 * K), 4);
  std::vector<float> panels(static_cast<size_t>(panel_floats(N, K)));
  pack_panels(W.data(), N, K, panels.data());
  std::vector<float> y(static_cast<size_t>(5 * v));
  gemm_nt_panels(x.data(), 5, K, panels.data() + v * K, v, K, y.data(), v);
  for (int64_t t = 0; t < 5; ++t)
    for (int64_t j = 0; j < v; ++j) {
      const float expect = running_sum(x.data() + t * K, W.data() + (v + j) * K, K, 1);
      ASSERT_EQ(0, std::memcmp(&expect, &y[t * v + j], 4)) << "row " << t << " col " << j;
    }
}

TEST(RowInvariantGemm, NnIsOneRunningSumInKOrder) {
  // N: whole 16-column panels plus a scalar tail, a tail alone, more panels than a tile.
  for (const int64_t N : {7, 40, 160}) {
    for (const int64_t K : {1, 32, 37}) {
      const int64_t ldb = N + 8, ldy = N + 1;
      const std::vector<float> B = random_values(static_cast<size_t>(K * ldb), 3);
      const std::vector<float> x = random_values(static_cast<size_t>(17 * K), 5);
      for (int64_t T = 1; T <= 17; ++T) {
        std::vector<float> y(static_cast<size_t>(T * ldy), -1.0f);
        gemm_nn_row_invariant(x.data(), T, K, B.data(), ldb, N, K, y.data(), ldy);
        for (int64_t t = 0; t < T; ++t) {
          for (int64_t c = 0; c < N; ++c) {
            const float s = running_sum(x.data() + t * K, B.data() + c, K, ldb);
            ASSERT_EQ(0, std::memcmp(&s, &y[t * ldy + c], 4))
                << "N " << N << " K " << K << " T " << T << " row " << t << " col " << c;
          }
          ASSERT_EQ(y[t * ldy + N], -1.0f) << "wrote past the row";
        }
      }
    }
  }
}

TEST(RowInvariantGemm, NnFromBf16EqualsNnFromF32Bitwise) {
  // W_UK's bf16 copy: the same running sums as the f32 rows, incl. the scalar tail columns.
  for (const int64_t N : {7, 40, 160}) {
    for (const int64_t K : {1, 32, 37}) {
      const int64_t ldb = N + 8, ldy = N + 1;
      const std::vector<float> B = bf16_values(static_cast<size_t>(K * ldb), 3);
      std::vector<uint16_t> b16(B.size());
      for (size_t i = 0; i < B.size(); ++i) b16[i] = float_to_bf16_bits(B[i]);
      const std::vector<float> x = random_values(static_cast<size_t>(17 * K), 5);
      for (int64_t T = 1; T <= 17; ++T) {
        std::vector<float> y32(static_cast<size_t>(T * ldy), -1.0f), y16(y32.size(), -2.0f);
        gemm_nn_row_invariant(x.data(), T, K, B.data(), ldb, N, K, y32.data(), ldy);
        gemm_nn_row_invariant(x.data(), T, K, b16.data(), ldb, N, K, y16.data(), ldy);
        for (int64_t t = 0; t < T; ++t) {
          ASSERT_EQ(0, std::memcmp(&y32[t * ldy], &y16[t * ldy], N * 4))
              << "N " << N << " K " << K << " T " << T << " row " << t;
          ASSERT_EQ(y16[t * ldy + N], -2.0f) << "wrote past the row";
        }
      }
    }
  }
}

}  // namespace
}  // namespace mlaspec::model::cpu
