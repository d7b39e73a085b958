// mlaspec_micro_gemv: a microbenchmark of the decode GEMV's shape parameters (columns per warp,
// loads in flight per lane, warps per block), kept so the measurement behind docs/perf/knowledge.md
// ("the GEMV at one row") can be run again. Not used by the engine or the tests.
//
// The kernel has the engine's order of operations (src/model/cuda/kernels.cu, gemv_columns: lane l
// sums its 8-value chunks l, l + 32, ... by FMAs in increasing k, then a butterfly), so every
// variant must give the same bits as the first; the program checks that before it times. Shapes:
// DeepSeek-V2-Lite's at one token (the routed experts' gate_up and down over 6 of 64 experts, each
// launch taking the next 6 so the weights come from HBM, not L2; q_proj, o_proj, the shared
// experts and the lm_head as single matrices). Reference rows: cuBLAS (bf16 -> f32, the default
// mode's dense GEMV) and a device-to-device copy of the same bytes.
//
// Usage: mlaspec_micro_gemv [--reps N]   (prints one table; µs per call, GB/s of weights read)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "check.cuh"

namespace {

constexpr int kChunk = 8;

__device__ __forceinline__ void load8(const uint16_t* p, float (&v)[kChunk]) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  v[0] = __uint_as_float(u.x << 16), v[1] = __uint_as_float(u.x & 0xffff0000u);
  v[2] = __uint_as_float(u.y << 16), v[3] = __uint_as_float(u.y & 0xffff0000u);
  v[4] = __uint_as_float(u.z << 16), v[5] = __uint_as_float(u.z & 0xffff0000u);
  v[6] = __uint_as_float(u.w << 16), v[7] = __uint_as_float(u.w & 0xffff0000u);
}

// One row of x per matrix (blockIdx.z: matrix ws[first + z], x row z, y row z).
template <int COLS, int UNROLL, int WARPS>
__global__ void __launch_bounds__(WARPS * 32)
    gemv(const uint16_t* x, const uint16_t* const* ws, int first, float* y, int64_t N, int64_t K) {
  const int lane = threadIdx.x % 32;
  const int64_t j0 = (int64_t{blockIdx.x} * WARPS + threadIdx.x / 32) * COLS;
  if (j0 >= N) return;
  const int cols = static_cast<int>(N - j0 < COLS ? N - j0 : COLS);
  const uint16_t* w = ws[first + blockIdx.z] + j0 * K;
  const uint16_t* xr = x + blockIdx.z * K;
  const int64_t chunks = K / kChunk;
  float acc[COLS];
#pragma unroll
  for (int c = 0; c < COLS; ++c) acc[c] = 0.0f;
#pragma unroll UNROLL
  for (int64_t ch = lane; ch < chunks; ch += 32) {
    float wv[COLS][kChunk];
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      if (c < cols) {
        load8(w + c * K + ch * kChunk, wv[c]);
      } else {
#pragma unroll
        for (int i = 0; i < kChunk; ++i) wv[c][i] = 0.0f;
      }
    }
    float xv[kChunk];
    load8(xr + ch * kChunk, xv);
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
#pragma unroll
      for (int i = 0; i < kChunk; ++i) acc[c] = fmaf(xv[i], wv[c][i], acc[c]);
    }
  }
#pragma unroll
  for (int c = 0; c < COLS; ++c) {
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) acc[c] += __shfl_xor_sync(0xffffffffu, acc[c], m);
  }
#pragma unroll
  for (int c = 0; c < COLS; ++c) {
    if (lane == c && c < cols) y[blockIdx.z * N + j0 + c] = acc[c];
  }
}

// R rows of x against one matrix, a warp per column (the engine's plain form, gemv_kernel).
template <int R>
__global__ void __launch_bounds__(128)
    gemv_rows(const uint16_t* x, const uint16_t* w, float* y, int64_t N, int64_t K) {
  const int lane = threadIdx.x % 32;
  const int64_t j = int64_t{blockIdx.x} * 4 + threadIdx.x / 32;
  if (j >= N) return;
  const uint16_t* wr = w + j * K;
  const int64_t chunks = K / kChunk;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.0f;
#pragma unroll 8
  for (int64_t ch = lane; ch < chunks; ch += 32) {
    float wv[kChunk];
    load8(wr + ch * kChunk, wv);
#pragma unroll
    for (int r = 0; r < R; ++r) {
      float xv[kChunk];
      load8(x + r * K + ch * kChunk, xv);
#pragma unroll
      for (int i = 0; i < kChunk; ++i) acc[r] = fmaf(xv[i], wv[i], acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], m);
    if (lane == r) y[r * N + j] = acc[r];
  }
}

struct Shape {
  const char* name;
  int64_t N, K;
  int per_call;  // matrices per launch (x rows)
  int pool;      // matrices allocated (a launch takes the next per_call of them, cyclically)
};

struct Variant {
  const char* name;
  void (*launch)(const uint16_t*, const uint16_t* const*, int, float*, int64_t, int64_t, int,
                 cudaStream_t);
};

template <int COLS, int UNROLL, int WARPS>
void launch(const uint16_t* x, const uint16_t* const* ws, int first, float* y, int64_t N, int64_t K,
            int per_call, cudaStream_t s) {
  const int64_t per_block = int64_t{COLS} * WARPS;
  const dim3 grid(static_cast<unsigned>((N + per_block - 1) / per_block), 1,
                  static_cast<unsigned>(per_call));
  gemv<COLS, UNROLL, WARPS><<<grid, WARPS * 32, 0, s>>>(x, ws, first, y, N, K);
}

#define V(C, U, W)                                         \
  Variant {                                                \
    "cols " #C " unroll " #U " warps " #W, launch<C, U, W> \
  }

}  // namespace

int main(int argc, char** argv) {
  int reps = 50;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
  }
  const Shape shapes[] = {
      {"experts gate_up 6 x [2816 x 2048]", 2816, 2048, 6, 64},
      {"experts down 6 x [2048 x 1408]", 2048, 1408, 6, 64},
      {"shared gate_up [5632 x 2048]", 5632, 2048, 1, 16},
      {"q_proj [3072 x 2048]", 3072, 2048, 1, 16},
      {"o_proj [2048 x 2048]", 2048, 2048, 1, 16},
      {"lm_head [102400 x 2048]", 102400, 2048, 1, 2},
  };
  const Variant variants[] = {
      V(4, 2, 8),  // the engine's grouped form before the measurement (4 rows: unroll 2)
      V(4, 4, 8),  // the grouped form at one row
      V(4, 8, 8), V(2, 4, 8), V(2, 8, 8), V(8, 2, 8), V(8, 4, 8), V(4, 4, 4),
      V(8, 2, 4), V(2, 8, 4), V(1, 8, 8), V(1, 8, 4),  // the plain form (gemm_row_invariant's GEMV)
  };
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasSetStream(blas, s);
  std::mt19937 rng(7);
  std::printf(
      "| shape | variant | us per call | GB/s | same bits as the first |\n|---|---|---|---|---|\n");
  for (const Shape& sh : shapes) {
    const size_t mat = static_cast<size_t>(sh.N * sh.K);
    std::vector<uint16_t> host(mat);
    std::vector<uint16_t*> ptrs(static_cast<size_t>(sh.pool));
    for (int e = 0; e < sh.pool; ++e) {
      for (auto& v : host)
        v = static_cast<uint16_t>(0x3c00 + (rng() % 0x200) - 0x100) ^ (rng() & 0x8000);
      CHECK(cudaMalloc(&ptrs[static_cast<size_t>(e)], mat * 2));
      CHECK(cudaMemcpy(ptrs[static_cast<size_t>(e)], host.data(), mat * 2, cudaMemcpyHostToDevice));
    }
    // The pointer table holds the pool twice over, so a launch's next per_call never wraps.
    std::vector<const uint16_t*> table;
    for (int r = 0; r < 2; ++r) table.insert(table.end(), ptrs.begin(), ptrs.end());
    const uint16_t** dtable;
    CHECK(cudaMalloc(&dtable, table.size() * sizeof(void*)));
    CHECK(cudaMemcpy(dtable, table.data(), table.size() * sizeof(void*), cudaMemcpyHostToDevice));
    std::vector<uint16_t> xh(static_cast<size_t>(sh.per_call * sh.K));
    for (auto& v : xh)
      v = static_cast<uint16_t>(0x3c00 + (rng() % 0x200) - 0x100) ^ (rng() & 0x8000);
    uint16_t* x;
    float* y;
    CHECK(cudaMalloc(&x, xh.size() * 2));
    CHECK(cudaMemcpy(x, xh.data(), xh.size() * 2, cudaMemcpyHostToDevice));
    const size_t ny = static_cast<size_t>(sh.per_call * sh.N);
    CHECK(cudaMalloc(&y, ny * 4));
    const double bytes = static_cast<double>(sh.per_call) * static_cast<double>(mat) * 2;
    auto time = [&](auto&& body) {  // µs per call, after 3 calls untimed
      for (int i = 0; i < 3; ++i) body(i);
      return 1e3 * stream_ms(s, reps, body) / reps;
    };
    auto first_of = [&](int i) { return (i * sh.per_call) % sh.pool; };
    std::vector<float> want;
    for (const Variant& v : variants) {
      CHECK(cudaMemset(y, 0xff, ny * 4));
      v.launch(x, dtable, 0, y, sh.N, sh.K, sh.per_call, s);
      CHECK(cudaStreamSynchronize(s));
      std::vector<float> got(ny);
      CHECK(cudaMemcpy(got.data(), y, ny * 4, cudaMemcpyDeviceToHost));
      bool same = true;
      if (want.empty()) {
        want = got;
      } else {
        same = std::memcmp(want.data(), got.data(), ny * 4) == 0;
      }
      const double us =
          time([&](int i) { v.launch(x, dtable, first_of(i), y, sh.N, sh.K, sh.per_call, s); });
      std::printf("| %s | %s | %.2f | %.0f | %s |\n", sh.name, v.name, us, bytes / us / 1e3,
                  same ? "yes" : "NO");
    }
    if (sh.per_call == 1) {
      // One matrix at 1, 2 and 4 rows: the plain form against cuBLAS (x rows beyond the first
      // reuse row 0's memory region, extended; only the time is compared here).
      uint16_t* xs;
      float* ys;
      CHECK(cudaMalloc(&xs, static_cast<size_t>(4 * sh.K) * 2));
      CHECK(cudaMemset(xs, 0x3f, static_cast<size_t>(4 * sh.K) * 2));
      CHECK(cudaMalloc(&ys, static_cast<size_t>(4 * sh.N) * 4));
      for (int rows : {1, 2, 4}) {
        const float one = 1.0f, zero = 0.0f;
        const dim3 grid(static_cast<unsigned>((sh.N + 3) / 4));
        const double us_gemv = time([&](int i) {
          const uint16_t* w = table[static_cast<size_t>(first_of(i))];
          if (rows == 1) gemv_rows<1><<<grid, 128, 0, s>>>(xs, w, ys, sh.N, sh.K);
          if (rows == 2) gemv_rows<2><<<grid, 128, 0, s>>>(xs, w, ys, sh.N, sh.K);
          if (rows == 4) gemv_rows<4><<<grid, 128, 0, s>>>(xs, w, ys, sh.N, sh.K);
        });
        const double us_blas = time([&](int i) {
          cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(sh.N), rows,
                       static_cast<int>(sh.K), &one, table[static_cast<size_t>(first_of(i))],
                       CUDA_R_16BF, static_cast<int>(sh.K), xs, CUDA_R_16BF, static_cast<int>(sh.K),
                       &zero, ys, CUDA_R_32F, static_cast<int>(sh.N), CUBLAS_COMPUTE_32F,
                       CUBLAS_GEMM_DEFAULT);
        });
        std::printf("| %s | %d rows: plain GEMV (1 column a warp) | %.2f | %.0f | - |\n", sh.name,
                    rows, us_gemv, bytes / us_gemv / 1e3);
        std::printf("| %s | %d rows: cuBLAS GemmEx (bf16 -> f32) | %.2f | %.0f | - |\n", sh.name,
                    rows, us_blas, bytes / us_blas / 1e3);
      }
      CHECK(cudaFree(xs));
      CHECK(cudaFree(ys));
    }
    uint16_t* dst;
    CHECK(cudaMalloc(&dst, mat * 2));
    const double us = time([&](int i) {
      CHECK(cudaMemcpyAsync(dst, table[static_cast<size_t>(first_of(i))], mat * 2,
                            cudaMemcpyDeviceToDevice, s));
    });
    std::printf("| %s | copy of one matrix (x %d for the call's bytes) | %.2f | %.0f | - |\n",
                sh.name, sh.per_call, us, static_cast<double>(mat) * 2 * 2 / us / 1e3);
    CHECK(cudaFree(dst));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    CHECK(cudaFree(dtable));
    for (uint16_t* p : ptrs) CHECK(cudaFree(p));
  }
  cublasDestroy(blas);
  return 0;
}
