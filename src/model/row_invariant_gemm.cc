#include "row_invariant_gemm.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <type_traits>
#include <vector>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::model::cpu {
namespace {

thread_local bool g_row_invariant = false;

constexpr int kLanes = 16;

// The fixed-order dot product: lane i sums k = i, i + 16, ... in order; lanes then fold as a
// balanced tree (8 pairs, 4, 2, 1). Written with lanes so the compiler vectorises it without
// reassociating anything. dot_tile computes RT x CT of them at once (RT rows of x against CT rows
// of W), each exactly as this order says: the tile only shares loads and runs RT * CT independent
// accumulator chains, so a result does not depend on the tile it was computed in.
// 16 floats as one value (GCC/Clang vector extension): lanewise IEEE multiply and add, lowered to
// one AVX-512 register, two AVX2 or four SSE registers. Half and quarter widths for the fold.
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));
typedef float Lanes8 __attribute__((vector_size(8 * sizeof(float))));
typedef float Lanes4 __attribute__((vector_size(4 * sizeof(float))));

// The fixed tree over the 16 lanes: lane i += lane i + 8 (i < 8), then i + 4, i + 2, i + 1. The
// additions of one level are independent, so each level is one vector add of two halves: the
// same operations as the scalar loop, in a few instructions instead of ~60.
inline float fold_lanes(const Lanes& acc) {
  Lanes8 lo, hi;
  std::memcpy(&lo, &acc, sizeof lo);
  std::memcpy(&hi, reinterpret_cast<const char*>(&acc) + sizeof lo, sizeof hi);
  lo += hi;
  Lanes4 a, b;
  std::memcpy(&a, &lo, sizeof a);
  std::memcpy(&b, reinterpret_cast<const char*>(&lo) + sizeof a, sizeof b);
  a += b;
  const float l0 = a[0] + a[2], l1 = a[1] + a[3];
  return l0 + l1;
}

template <int RT, int CT>
inline void dot_tile(const float* const (&a)[RT], const float* const (&w)[CT], int64_t K,
                     float (&out)[RT][CT]) {
  Lanes acc[RT][CT] = {};
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes) {
    Lanes xa[RT];
    for (int r = 0; r < RT; ++r) std::memcpy(&xa[r], a[r] + k, sizeof(Lanes));
    for (int c = 0; c < CT; ++c) {
      Lanes wc;
      std::memcpy(&wc, w[c] + k, sizeof wc);
      for (int r = 0; r < RT; ++r) acc[r][c] += xa[r] * wc;
    }
  }
  if (k < K) {
    // The tail (K not a multiple of 16): k + i goes to lane i, as in the main loop.
    for (int r = 0; r < RT; ++r)
      for (int c = 0; c < CT; ++c)
        for (int i = 0; k + i < K; ++i) acc[r][c][i] += a[r][k + i] * w[c][k + i];
  }
  for (int r = 0; r < RT; ++r)
    for (int c = 0; c < CT; ++c) out[r][c] = fold_lanes(acc[r][c]);
}

#if defined(__GNUC__) && defined(__x86_64__)
const bool kWideTiles = __builtin_cpu_supports("avx512f");
#else
const bool kWideTiles = false;
#endif

// y[t, j] for t < T and j in [j0, j1): tiles of 4 rows x 4 (or 2) columns while 4 rows remain, then
// single rows against 8 columns (a decode step), then what is left one by one. Built for several
// x86 ISAs (GCC picks one at load time); every lane does the same IEEE operations in each, and
// the file is compiled with -ffp-contract=off so none fuses a multiply and an add.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void gemm_nt_block(const float* x, int64_t T, int64_t ldx, const float* W, int64_t K, int64_t j0,
                   int64_t j1, float* y, int64_t ldy) {
  int64_t t = 0;
  for (; t + 4 <= T; t += 4) {
    const float* const a[4] = {x + t * ldx, x + (t + 1) * ldx, x + (t + 2) * ldx,
                               x + (t + 3) * ldx};
    int64_t j = j0;
    // 16 accumulators fit AVX-512's 32 registers: 4 x 4 tiles halve the loads per product there
    // (~1.3x at T = 8 with the weights in cache); elsewhere 4 x 2 avoids spilling.
    for (; kWideTiles && j + 4 <= j1; j += 4) {
      const float* const w[4] = {W + j * K, W + (j + 1) * K, W + (j + 2) * K, W + (j + 3) * K};
      float out[4][4];
      dot_tile<4, 4>(a, w, K, out);
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) y[(t + r) * ldy + j + c] = out[r][c];
    }
    for (; j + 2 <= j1; j += 2) {
      const float* const w[2] = {W + j * K, W + (j + 1) * K};
      float out[4][2];
      dot_tile<4, 2>(a, w, K, out);
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 2; ++c) y[(t + r) * ldy + j + c] = out[r][c];
    }
    for (; j < j1; ++j) {
      const float* const w[1] = {W + j * K};
      float out[4][1];
      dot_tile<4, 1>(a, w, K, out);
      for (int r = 0; r < 4; ++r) y[(t + r) * ldy + j] = out[r][0];
    }
  }
  for (; t < T; ++t) {
    const float* const a[1] = {x + t * ldx};
    int64_t j = j0;
    for (; j + 8 <= j1; j += 8) {
      const float* const w[8] = {W + j * K,       W + (j + 1) * K, W + (j + 2) * K,
                                 W + (j + 3) * K, W + (j + 4) * K, W + (j + 5) * K,
                                 W + (j + 6) * K, W + (j + 7) * K};
      float out[1][8];
      dot_tile<1, 8>(a, w, K, out);
      for (int c = 0; c < 8; ++c) y[t * ldy + j + c] = out[0][c];
    }
    for (; j < j1; ++j) {
      const float* const w[1] = {W + j * K};
      float out[1][1];
      dot_tile<1, 1>(a, w, K, out);
      y[t * ldy + j] = out[0][0];
    }
  }
}

// The column-panel kernel. A panel is 16 output columns of a weight matrix laid out k-major:
// element (k, lane) at w[k * kstride + lane] (the packed layout: kstride 16, one contiguous K x 16
// block; or a row-major B with kstride = ldb). Each output element is one running sum in k order,
// 0 + x[0]*w[0] + x[1]*w[1] + ..., its lane of a 16-float vector: the k loop multiplies a
// broadcast x value by the panel row and adds, so RT rows x CV panels share each load and run
// RT * CV independent chains, and no element depends on the tile it lands in (or on T). No fold.
// The weights are f32; bf16 bit patterns (E = uint16_t, row-major B); or bf16 pairs (E =
// uint32_t, packed panels: lane l's word holds k = 2q in its low half and k = 2q + 1 in its high
// half, kstride per pair). bf16 is widened exactly to f32 as it is loaded, so the products and
// sums are the f32 kernel's; a pair word becomes two f32 vectors with one shift and one mask.
typedef uint16_t Bf16Lanes __attribute__((vector_size(kLanes * sizeof(uint16_t))));
typedef uint32_t U32Lanes __attribute__((vector_size(kLanes * sizeof(uint32_t))));

__attribute__((always_inline)) inline void load_lanes(const float* p, Lanes& v) {
  std::memcpy(&v, p, sizeof v);
}
__attribute__((always_inline)) inline void load_lanes(const uint16_t* p, Lanes& v) {
  Bf16Lanes h;
  std::memcpy(&h, p, sizeof h);
  const U32Lanes bits = __builtin_convertvector(h, U32Lanes) << 16;  // bf16 = a float's top half
  std::memcpy(&v, &bits, sizeof v);
}
__attribute__((always_inline)) inline void load_pair(const uint32_t* p, Lanes& even, Lanes& odd) {
  U32Lanes w;
  std::memcpy(&w, p, sizeof w);
  const U32Lanes lo = w << 16, hi = w & 0xffff0000u;
  std::memcpy(&even, &lo, sizeof even);
  std::memcpy(&odd, &hi, sizeof odd);
}

template <int RT, int CV, typename E>
__attribute__((always_inline)) inline void panel_tile(const float* const* a, const E* w,
                                                      int64_t pstride, int64_t kstride, int64_t K,
                                                      Lanes (&out)[RT][CV]) {
  Lanes acc[RT][CV] = {};
  if constexpr (std::is_same_v<E, uint32_t>) {
    // Pairs: a panel stream advances one 64-byte line per pair; prefetch ~1.5 KB ahead.
    const int64_t pairs = K / 2;
    for (int64_t q = 0; q < pairs; ++q) {
      Lanes we[CV], wo[CV];
#pragma GCC unroll 16
      for (int c = 0; c < CV; ++c) {
        const E* p = w + c * pstride + q * kstride;
        __builtin_prefetch(p + 24 * kstride);
        load_pair(p, we[c], wo[c]);
      }
#pragma GCC unroll 16
      for (int r = 0; r < RT; ++r) {
        const float x0 = a[r][2 * q], x1 = a[r][2 * q + 1];
#pragma GCC unroll 16
        for (int c = 0; c < CV; ++c) {
          acc[r][c] += we[c] * x0;
          acc[r][c] += wo[c] * x1;
        }
      }
    }
    if (K % 2 != 0) {  // the last k alone (its pair's high half is padding)
      Lanes we[CV], wo[CV];
      for (int c = 0; c < CV; ++c) load_pair(w + c * pstride + pairs * kstride, we[c], wo[c]);
      for (int r = 0; r < RT; ++r)
        for (int c = 0; c < CV; ++c) acc[r][c] += we[c] * a[r][K - 1];
    }
  } else {
    // Each panel stream advances kstride elements per k: ask for the line ~1.5 KB ahead (weights
    // streamed from DRAM in a decode step; in cache this is a few spare load slots).
    constexpr int64_t kAhead = 24 * sizeof(float) / sizeof(E);
    for (int64_t k = 0; k < K; ++k) {
      Lanes wv[CV];
#pragma GCC unroll 16
      for (int c = 0; c < CV; ++c) {
        const E* p = w + c * pstride + k * kstride;
        __builtin_prefetch(p + kAhead * kstride);
        load_lanes(p, wv[c]);
      }
#pragma GCC unroll 16
      for (int r = 0; r < RT; ++r) {
        const float xr = a[r][k];
#pragma GCC unroll 16
        for (int c = 0; c < CV; ++c) acc[r][c] += wv[c] * xr;
      }
    }
  }
  for (int r = 0; r < RT; ++r)
    for (int c = 0; c < CV; ++c) out[r][c] = acc[r][c];
}

// Rows [0, T) of x against panels [0, P): tile shapes by rows left and the ISA's registers (AVX-512
// has 32 vector registers: 16 accumulators; elsewhere 8 vectors' worth), then single panels.
// In cache (Zen 4, K = 256): 4 x 4 ~44 GMAC/s (8 x 2: ~37, 8 x 3: ~43), the 16-lane dot tiles ~31.
// Output column of panel p, lane l: col0 + 16 p + l, written when below N. Both helpers are forced
// inline: a template GCC leaves out of line is built for the baseline ISA, not the caller's clone.
template <int RT, int CV, typename E>
__attribute__((always_inline)) inline void panel_rows(const float* const* a, const E* w,
                                                      int64_t pstride, int64_t kstride, int64_t K,
                                                      int64_t P, int64_t col0, int64_t N,
                                                      float* const* y) {
  int64_t p = 0;
  for (; p + CV <= P; p += CV) {
    Lanes out[RT][CV];
    panel_tile<RT, CV, E>(a, w + p * pstride, pstride, kstride, K, out);
    for (int r = 0; r < RT; ++r)
      for (int c = 0; c < CV; ++c) {
        const int64_t j = col0 + (p + c) * kLanes;
        std::memcpy(y[r] + j, &out[r][c], sizeof(float) * std::min<int64_t>(kLanes, N - j));
      }
  }
  // The panels left (fewer than CV): for 1 or 2 rows in tiles half as wide, and so on, since a
  // single panel runs only RT chains (an expert's 12 panels at 2 rows were 8 + 4 singles: 24 → 29
  // GMAC/s in cache; a decode row of 192 columns 19 → 23). With 4 rows, single panels measured
  // faster than 4 x 2 (W_UV's 2 panels per head, K = 512: 45 against 38 GMAC/s).
  if constexpr (CV > 1 && RT < 4) {
    if (p < P) {
      panel_rows<RT, CV / 2, E>(a, w + p * pstride, pstride, kstride, K, P - p, col0 + p * kLanes,
                                N, y);
      return;
    }
  }
  for (; p < P; ++p) {
    Lanes out[RT][1];
    panel_tile<RT, 1, E>(a, w + p * pstride, pstride, kstride, K, out);
    for (int r = 0; r < RT; ++r) {
      const int64_t j = col0 + p * kLanes;
      std::memcpy(y[r] + j, &out[r][0], sizeof(float) * std::min<int64_t>(kLanes, N - j));
    }
  }
}

template <typename E>
__attribute__((always_inline)) inline void panel_block_impl(const float* x, int64_t T, int64_t ldx,
                                                            const E* w, int64_t pstride,
                                                            int64_t kstride, int64_t K, int64_t P,
                                                            int64_t col0, int64_t N, float* y,
                                                            int64_t ldy) {
  int64_t t = 0;
  const float* a[8];
  float* yr[8];
  auto rows = [&](int n) {
    for (int r = 0; r < n; ++r) {
      a[r] = x + (t + r) * ldx;
      yr[r] = y + (t + r) * ldy;
    }
  };
  if (kWideTiles) {
    for (; t + 4 <= T; t += 4)
      rows(4), panel_rows<4, 4, E>(a, w, pstride, kstride, K, P, col0, N, yr);
    for (; t + 2 <= T; t += 2)
      rows(2), panel_rows<2, 8, E>(a, w, pstride, kstride, K, P, col0, N, yr);
    for (; t < T; ++t) rows(1), panel_rows<1, 8, E>(a, w, pstride, kstride, K, P, col0, N, yr);
  } else {
    for (; t + 4 <= T; t += 4)
      rows(4), panel_rows<4, 1, E>(a, w, pstride, kstride, K, P, col0, N, yr);
    for (; t + 2 <= T; t += 2)
      rows(2), panel_rows<2, 2, E>(a, w, pstride, kstride, K, P, col0, N, yr);
    for (; t < T; ++t) rows(1), panel_rows<1, 4, E>(a, w, pstride, kstride, K, P, col0, N, yr);
  }
}

// The weights' element type, for the one out-of-line function below.
enum class Weights { kF32, kBf16, kBf16Pairs };

// Built for several ISAs (GCC picks one at load time); the helpers above are inlined into every
// clone, one copy per weight type.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void panel_block_any(const float* x, int64_t T, int64_t ldx, const void* w, Weights type,
                     int64_t pstride, int64_t kstride, int64_t K, int64_t P, int64_t col0,
                     int64_t N, float* y, int64_t ldy) {
  switch (type) {
    case Weights::kF32:
      return panel_block_impl(x, T, ldx, static_cast<const float*>(w), pstride, kstride, K, P, col0,
                              N, y, ldy);
    case Weights::kBf16:
      return panel_block_impl(x, T, ldx, static_cast<const uint16_t*>(w), pstride, kstride, K, P,
                              col0, N, y, ldy);
    case Weights::kBf16Pairs:
      return panel_block_impl(x, T, ldx, static_cast<const uint32_t*>(w), pstride, kstride, K, P,
                              col0, N, y, ldy);
  }
}

template <typename E>
void panel_block(const float* x, int64_t T, int64_t ldx, const E* w, int64_t pstride,
                 int64_t kstride, int64_t K, int64_t P, int64_t col0, int64_t N, float* y,
                 int64_t ldy) {
  constexpr Weights type = std::is_same_v<E, float>      ? Weights::kF32
                           : std::is_same_v<E, uint16_t> ? Weights::kBf16
                                                         : Weights::kBf16Pairs;
  panel_block_any(x, T, ldx, w, type, pstride, kstride, K, P, col0, N, y, ldy);
}

// The last N % 16 columns of a row-major B (gemm_nn): the same running sum per element, scalar.
inline float widen(float v) {
  return v;
}
inline float widen(uint16_t v) {
  return bf16_bits_to_float(v);
}

template <typename E>
void nn_tail_columns(const float* x, int64_t T, int64_t ldx, const E* B, int64_t ldb, int64_t c0,
                     int64_t N, int64_t K, float* y, int64_t ldy) {
  for (int64_t t = 0; t < T; ++t)
    for (int64_t c = c0; c < N; ++c) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += x[t * ldx + k] * widen(B[k * ldb + c]);
      y[t * ldy + c] = s;
    }
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
  // x copied once into 64-byte aligned rows: a 16-lane load that straddles two cache lines costs
  // about twice one that does not (the GEMM ran ~30% faster with aligned rows at T = 8, K = 256).
  // The weights stay where they are; the copy changes no value.
  constexpr int64_t kAlign = 64 / sizeof(float);
  const int64_t ldxa = (K + kAlign - 1) / kAlign * kAlign;
  thread_local std::vector<float> x_storage;
  x_storage.resize(static_cast<size_t>(T * ldxa + kAlign));
  float* xa = x_storage.data();
  xa += (kAlign - reinterpret_cast<uintptr_t>(xa) / sizeof(float) % kAlign) % kAlign;
  for (int64_t t = 0; t < T; ++t) std::memcpy(xa + t * ldxa, x + t * ldx, K * sizeof(float));
  // Blocks of output columns: a block's weight rows stay in cache while every row of x passes.
  constexpr int64_t kBlock = 16;
  const int64_t blocks = (N + kBlock - 1) / kBlock;
  run(blocks, T * N * K, [&](int64_t b) {
    const int64_t j0 = b * kBlock, j1 = std::min(N, j0 + kBlock);
    // The weights stream from memory once per call (they are far larger than the caches): ask for
    // this block's and the next block's lines up front. The tiles read only 2 (or 8) weight rows
    // at a time, too few streams for the hardware prefetcher to keep memory busy; with the
    // requests in flight a 4 x 2 tile pass over 8 rows ran ~1.5x faster on weights from DRAM.
    for (int64_t e = j0 * K, end = std::min(N, j1 + kBlock) * K; e < end; e += kLanes)
      __builtin_prefetch(W + e);
    gemm_nt_block(xa, T, ldxa, W, K, j0, j1, y, ldy);
  });
}

namespace {

template <typename E>
void gemm_nn_impl(const float* x, int64_t T, int64_t ldx, const E* B, int64_t ldb, int64_t N,
                  int64_t K, float* y, int64_t ldy) {
  // B's rows are already k-major: 16 adjacent columns are a panel with kstride ldb.
  const int64_t P = N / kLanes;
  constexpr int64_t kPanels = 8;  // panels per parallel block
  run((P + kPanels - 1) / kPanels, T * N * K, [&](int64_t b) {
    const int64_t p0 = b * kPanels, n = std::min(kPanels, P - p0);
    panel_block(x, T, ldx, B + p0 * kLanes, kLanes, ldb, K, n, p0 * kLanes, N, y, ldy);
  });
  if (P * kLanes < N) nn_tail_columns(x, T, ldx, B, ldb, P * kLanes, N, K, y, ldy);
}

}  // namespace

void gemm_nn_row_invariant(const float* x, int64_t T, int64_t ldx, const float* B, int64_t ldb,
                           int64_t N, int64_t K, float* y, int64_t ldy) {
  gemm_nn_impl(x, T, ldx, B, ldb, N, K, y, ldy);
}

void gemm_nn_row_invariant(const float* x, int64_t T, int64_t ldx, const uint16_t* B, int64_t ldb,
                           int64_t N, int64_t K, float* y, int64_t ldy) {
  gemm_nn_impl(x, T, ldx, B, ldb, N, K, y, ldy);
}

int64_t panel_floats(int64_t N, int64_t K) {
  return (N + kLanes - 1) / kLanes * K * kLanes;
}

void pack_panels(const float* W, int64_t N, int64_t K, float* panels) {
  for (int64_t p = 0; p * kLanes < N; ++p) {
    float* dst = panels + p * K * kLanes;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t l = 0; l < kLanes; ++l) {
        const int64_t j = p * kLanes + l;
        dst[k * kLanes + l] = j < N ? W[j * K + k] : 0.0f;
      }
  }
}

int64_t panel_pair_words(int64_t N, int64_t K) {
  return (N + kLanes - 1) / kLanes * ((K + 1) / 2) * kLanes;
}

void pack_panels(const float* W, int64_t N, int64_t K, uint32_t* panels) {
  const int64_t pairs = (K + 1) / 2;
  auto bits = [&](int64_t j, int64_t k) -> uint32_t {
    return j < N && k < K ? float_to_bf16_bits(W[j * K + k]) : 0u;
  };
  for (int64_t p = 0; p * kLanes < N; ++p) {
    uint32_t* dst = panels + p * pairs * kLanes;
    for (int64_t q = 0; q < pairs; ++q)
      for (int64_t l = 0; l < kLanes; ++l) {
        const int64_t j = p * kLanes + l;
        dst[q * kLanes + l] = bits(j, 2 * q) | bits(j, 2 * q + 1) << 16;
      }
  }
}

bool exactly_bf16(const float* W, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, W + i, sizeof bits);
    if ((bits & 0xffffu) != 0) return false;
  }
  return true;
}

namespace {

// A panel's elements: K x 16 (f32) or ceil(K / 2) x 16 (bf16 pairs); kstride per k or pair.
template <typename E>
void gemm_nt_panels_impl(const float* x, int64_t T, int64_t ldx, const E* panels, int64_t N,
                         int64_t K, float* y, int64_t ldy) {
  const int64_t P = (N + kLanes - 1) / kLanes;
  const int64_t panel = (std::is_same_v<E, uint32_t> ? (K + 1) / 2 : K) * kLanes;
  // Blocks of 4 panels (64 columns, K x 256 bytes in f32): every row tile of x passes over a block
  // while it is in cache; the blocks are the unit of the threads.
  constexpr int64_t kPanels = 4;
  run((P + kPanels - 1) / kPanels, T * N * K, [&](int64_t b) {
    const int64_t p0 = b * kPanels, n = std::min(kPanels, P - p0);
    panel_block(x, T, ldx, panels + p0 * panel, panel, kLanes, K, n, p0 * kLanes, N, y, ldy);
  });
}

}  // namespace

void gemm_nt_panels(const float* x, int64_t T, int64_t ldx, const float* panels, int64_t N,
                    int64_t K, float* y, int64_t ldy) {
  gemm_nt_panels_impl(x, T, ldx, panels, N, K, y, ldy);
}

void gemm_nt_panels(const float* x, int64_t T, int64_t ldx, const uint32_t* panels, int64_t N,
                    int64_t K, float* y, int64_t ldy) {
  gemm_nt_panels_impl(x, T, ldx, panels, N, K, y, ldy);
}

}  // namespace mlaspec::model::cpu
