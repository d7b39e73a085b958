// mlaspec_micro_chain: what one link of a chain of dependent kernels costs inside a CUDA graph,
// kept so the bound on the V2-Lite decode step in docs/perf/knowledge.md ("the chain bound") can be
// measured again. Not used by the engine or the tests.
//
// A decode step at batch 1 is ~19 dependent kernels a layer: a few stream weights (GEMVs), the
// rest are small ops on one 2048-wide row (norms, routing, the combine, RoPE, splits), each of
// which must wait for the one before it. This program captures chains of 540 such links (a
// V2-Lite step's count) into one graph, each link reading the row its predecessor wrote, and
// replays them, with plain stream order and with programmatic dependent launch (each kernel lets
// its successor launch, then waits: griddepcontrol, as the engine's kernels do):
//   empty        one block, one value read and written: the launch and dependency alone
//   row op       one block of 256 threads: the row's sum of squares, then the row scaled (an
//                RMSNorm at batch 1: a load, a block reduction, a store)
//   row op x16   16 blocks, each reducing the whole row and writing its 128 values (a row op
//                spread over SMs, as a norm in a GEMV's prologue would be)
//   GEMV         an o_proj-shaped bf16 [2048 x 2048] GEMV, a warp per column, weights cycling
//                through 16 matrices (128 MB, past L2), its f32 output the next link's input
//   GEMV + row op  the two alternating (how they add up in a chain)
//   GEMV with the row op in its prologue  every block of the GEMV computes the row's scale first
//                (what a norm fused into the GEMV that reads it would cost instead of a link)
// and, as bandwidth references, a device-to-device copy and a plain read of the weights' pool.
// Every chain's final row is compared with a host computation of the same chain first (the links
// must really depend on each other and compute what they say).
//
// Usage: mlaspec_micro_chain [--links N] [--reps N]   (prints one table: µs per link)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "check.cuh"

namespace {

constexpr int kWidth = 2048;   // V2-Lite's hidden size
constexpr int kMatrices = 16;  // GEMV weights cycled through (16 x 8 MB: past the L2)
constexpr int kRowThreads = 256;
constexpr int kSpread = 16;  // blocks of the spread row op

__device__ __forceinline__ void inputs_ready() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__global__ void empty_link(const float* in, float* out) {
  inputs_ready();
  if (threadIdx.x == 0) out[0] = in[0] + 1.0f;
}

// The sum of squares of the row, by the whole block (every thread gets it).
template <int THREADS>
__device__ __forceinline__ float row_sum_squares(const float* in) {
  __shared__ float partial[THREADS / 32];
  float s = 0.0f;
  for (int i = threadIdx.x; i < kWidth; i += THREADS) s = fmaf(in[i], in[i], s);
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) s += __shfl_xor_sync(0xffffffffu, s, m);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = s;
  __syncthreads();
  float t = 0.0f;
#pragma unroll
  for (int w = 0; w < THREADS / 32; ++w) t += partial[w];
  return t;
}

// out = in / rms(in) over values [begin, end) (the scale from the whole row).
__global__ void __launch_bounds__(kRowThreads)
    row_link(const float* in, float* out, int per_block) {
  inputs_ready();
  const float scale = rsqrtf(row_sum_squares<kRowThreads>(in) / kWidth + 1e-6f);
  const int begin = blockIdx.x * per_block;
  for (int i = begin + threadIdx.x; i < begin + per_block; i += kRowThreads) out[i] = in[i] * scale;
}

// out[j] = sum_k w[j][k] * (in[k] * scale), a warp per column j (lane l: k = 8c .. 8c + 7, c = l,
// l + 32, ..); NORM: scale = 1 / rms(in), computed by every block first (the row's norm in the
// GEMV's prologue, instead of a link of its own), else 1.
template <bool NORM>
__global__ void __launch_bounds__(128) gemv_link(const float* in, const uint16_t* w, float* out) {
  inputs_ready();
  const float scale = NORM ? rsqrtf(row_sum_squares<128>(in) / kWidth + 1e-6f) : 1.0f;
  const int lane = threadIdx.x % 32;
  const int j = blockIdx.x * 4 + threadIdx.x / 32;
  const uint16_t* row = w + static_cast<int64_t>(j) * kWidth;
  float acc = 0.0f;
#pragma unroll 8
  for (int c = lane; c < kWidth / 8; c += 32) {
    const uint4 u = *reinterpret_cast<const uint4*>(row + c * 8);
    const float4 a = *reinterpret_cast<const float4*>(in + c * 8);
    const float4 b = *reinterpret_cast<const float4*>(in + c * 8 + 4);
    const uint32_t q[4] = {u.x, u.y, u.z, u.w};
    const float x[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      acc = fmaf(NORM ? x[2 * i] * scale : x[2 * i], __uint_as_float(q[i] << 16), acc);
      acc = fmaf(NORM ? x[2 * i + 1] * scale : x[2 * i + 1], __uint_as_float(q[i] & 0xffff0000u),
                 acc);
    }
  }
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  if (lane == 0) out[j] = acc;
}

// Reads n 16-byte vectors (grid-stride) and writes one word per block: how fast the weights could
// stream with nothing else to do (the bandwidth a decode step's bytes are bound by).
__global__ void __launch_bounds__(256) read_stream(const uint4* p, int64_t n, uint32_t* out) {
  uint32_t acc = 0;
  for (int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) acc ^= __shfl_xor_sync(0xffffffffu, acc, m);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <typename... Args>
void launch(bool pdl, void (*kernel)(Args...), unsigned grid, unsigned block, cudaStream_t s,
            Args... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(block);
  cfg.stream = s;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&cfg, kernel, args...));
}

enum class Link { kEmpty, kRow, kRowSpread, kGemv, kGemvRow, kGemvNorm };
const char* name(Link l) {
  switch (l) {
    case Link::kEmpty:
      return "empty (1 block)";
    case Link::kRow:
      return "row op (1 block, 256 threads)";
    case Link::kRowSpread:
      return "row op x16 (16 blocks)";
    case Link::kGemv:
      return "GEMV bf16 [2048 x 2048]";
    case Link::kGemvRow:
      return "GEMV + row op, alternating";
    case Link::kGemvNorm:
      return "GEMV with the row op in its prologue";
  }
  return "";
}

struct Buffers {
  float* row[2];
  uint16_t* w;  // kMatrices matrices
};

// Link i of a chain: reads row[i % 2], writes row[(i + 1) % 2].
void enqueue(Link l, int i, const Buffers& b, bool pdl, cudaStream_t s) {
  const float* in = b.row[i % 2];
  float* out = b.row[(i + 1) % 2];
  const uint16_t* w = b.w + static_cast<int64_t>(i % kMatrices) * kWidth * kWidth;
  const bool gemv = l == Link::kGemv || (l == Link::kGemvRow && i % 2 == 0);
  if (l == Link::kEmpty) {
    launch(pdl, empty_link, 1, 32, s, in, out);
  } else if (gemv) {
    launch(pdl, gemv_link<false>, kWidth / 4, 128, s, in, w, out);
  } else if (l == Link::kGemvNorm) {
    launch(pdl, gemv_link<true>, kWidth / 4, 128, s, in, w, out);
  } else if (l == Link::kRowSpread) {
    launch(pdl, row_link, kSpread, kRowThreads, s, in, out, kWidth / kSpread);
  } else {
    launch(pdl, row_link, 1, kRowThreads, s, in, out, kWidth);
  }
}

// The same chain on the host (double sums; the check allows f32 rounding).
std::vector<double> host_chain(Link l, int links, const std::vector<float>& x0,
                               const std::vector<uint16_t>& w) {
  std::vector<double> x(x0.begin(), x0.end()), y(kWidth);
  for (int i = 0; i < links; ++i) {
    const bool gemv = l == Link::kGemv || (l == Link::kGemvRow && i % 2 == 0);
    if (l == Link::kEmpty) {
      x[0] += 1.0;
      continue;
    }
    if (l == Link::kGemvNorm) {
      double ss = 0;
      for (double v : x) ss += v * v;
      const double scale = 1.0 / std::sqrt(ss / kWidth + 1e-6);
      for (double& v : x) v *= scale;
    }
    if (gemv || l == Link::kGemvNorm) {
      const uint16_t* m = w.data() + static_cast<int64_t>(i % kMatrices) * kWidth * kWidth;
      for (int j = 0; j < kWidth; ++j) {
        double a = 0;
        for (int k = 0; k < kWidth; ++k) {
          a += x[k] *
               static_cast<double>(__builtin_bit_cast(float, uint32_t{m[j * kWidth + k]} << 16));
        }
        y[j] = a;
      }
    } else {
      double ss = 0;
      for (double v : x) ss += v * v;
      const double scale = 1.0 / std::sqrt(ss / kWidth + 1e-6);
      for (int k = 0; k < kWidth; ++k) y[k] = x[k] * scale;
    }
    std::swap(x, y);
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  int links = 540, reps = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--links") == 0 && i + 1 < argc) links = std::atoi(argv[++i]);
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = std::atoi(argv[++i]);
  }
  if (links < 2 || links % 2 != 0 || reps < 1) {
    std::fprintf(stderr, "mlaspec_micro_chain: --links must be even and >= 2, --reps >= 1\n");
    return 2;
  }
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::mt19937 rng(11);
  // Weights near ±1/sqrt(2048) so a GEMV keeps the row's scale; the row starts near ±1.
  const size_t nw = static_cast<size_t>(kMatrices) * kWidth * kWidth;
  std::vector<uint16_t> wh(nw);
  std::uniform_real_distribution<float> uw(-0.04f, 0.04f), ux(-1.0f, 1.0f);
  for (auto& v : wh) v = static_cast<uint16_t>(__builtin_bit_cast(uint32_t, uw(rng)) >> 16);
  std::vector<float> x0(kWidth);
  for (auto& v : x0) v = ux(rng);
  Buffers b;
  CHECK(cudaMalloc(&b.w, nw * 2));
  CHECK(cudaMemcpy(b.w, wh.data(), nw * 2, cudaMemcpyHostToDevice));
  for (auto& r : b.row) CHECK(cudaMalloc(&r, kWidth * sizeof(float)));

  std::printf("| link | µs per link, plain order | µs per link, PDL | chain checked |\n");
  std::printf("|---|---|---|---|\n");
  int failures = 0;
  for (Link l :
       {Link::kEmpty, Link::kRow, Link::kRowSpread, Link::kGemv, Link::kGemvRow, Link::kGemvNorm}) {
    double us[2] = {0, 0};
    bool ok = true;
    // The host check is slow for GEMVs (a 2048 x 2048 double GEMV a link): a short chain.
    const bool slow = l == Link::kGemv || l == Link::kGemvRow || l == Link::kGemvNorm;
    const int check_links = slow ? 4 : links;
    const std::vector<double> want = host_chain(l, check_links, x0, wh);
    for (int pdl = 0; pdl < 2; ++pdl) {
      for (int pass = 0; pass < 2; ++pass) {
        const int n = pass == 0 ? check_links : links;
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        for (int i = 0; i < n; ++i) enqueue(l, i, b, pdl != 0, s);
        CHECK(cudaStreamEndCapture(s, &g));
        CHECK(cudaGraphInstantiate(&ge, g, 0));
        if (pass == 0) {  // the check: poisoned output row, fresh input, one replay
          CHECK(cudaMemsetAsync(b.row[1], 0xff, kWidth * sizeof(float), s));
          CHECK(cudaMemcpyAsync(b.row[0], x0.data(), kWidth * sizeof(float), cudaMemcpyHostToDevice,
                                s));
          CHECK(cudaGraphLaunch(ge, s));
          CHECK(cudaStreamSynchronize(s));
          std::vector<float> got(kWidth);
          CHECK(
              cudaMemcpy(got.data(), b.row[n % 2], kWidth * sizeof(float), cudaMemcpyDeviceToHost));
          const int count = l == Link::kEmpty ? 1 : kWidth;
          for (int k = 0; k < count; ++k) {
            const double tol = 1e-4 * (1.0 + std::fabs(want[k])) * (l == Link::kEmpty ? 0 : 1) +
                               (l == Link::kEmpty ? 1e-3 : 0);
            if (!(std::fabs(got[k] - want[k]) <= tol)) {
              if (ok) {
                std::fprintf(stderr, "%s%s: value %d is %g, want %g\n", name(l),
                             pdl ? " (PDL)" : "", k, got[k], want[k]);
              }
              ok = false;
            }
          }
        } else {
          CHECK(cudaMemcpyAsync(b.row[0], x0.data(), kWidth * sizeof(float), cudaMemcpyHostToDevice,
                                s));
          CHECK(cudaGraphLaunch(ge, s));  // warm
          std::vector<float> ms(static_cast<size_t>(reps));
          for (int r = 0; r < reps; ++r) {
            ms[static_cast<size_t>(r)] =
                stream_ms(s, 1, [&](int) { CHECK(cudaGraphLaunch(ge, s)); });
          }
          std::sort(ms.begin(), ms.end());
          us[pdl] = 1e3 * ms[ms.size() / 2] / n;
        }
        CHECK(cudaGraphExecDestroy(ge));
        CHECK(cudaGraphDestroy(g));
      }
    }
    failures += ok ? 0 : 1;
    std::printf("| %s | %.2f | %.2f | %s |\n", name(l), us[0], us[1], ok ? "yes" : "NO");
  }
  // The bandwidth references: a device-to-device copy between the two halves of the weights'
  // pool (67 MB each way), and a read of the whole pool (134 MB) by a plain streaming kernel, as
  // GB/s of bytes read.
  {
    const size_t half = nw;            // bytes in half the pool (nw values of 2 bytes)
    auto time_ms = [&](auto&& body) {  // ms per call, after one untimed
      body(0);
      return static_cast<double>(stream_ms(s, reps, body)) / reps;
    };
    char* base = reinterpret_cast<char*>(b.w);
    const double copy_ms = time_ms([&](int r) {
      CHECK(cudaMemcpyAsync(base + (r % 2) * half, base + ((r + 1) % 2) * half, half,
                            cudaMemcpyDeviceToDevice, s));
    });
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    uint32_t* sink;
    CHECK(cudaMalloc(&sink, static_cast<size_t>(sms) * 8 * sizeof(uint32_t)));
    const double read_ms = time_ms([&](int) {
      read_stream<<<sms * 8, 256, 0, s>>>(reinterpret_cast<const uint4*>(b.w),
                                          static_cast<int64_t>(2 * half / 16), sink);
    });
    CHECK(cudaGetLastError());
    CHECK(cudaFree(sink));
    const double matrix = kWidth * kWidth * 2.0;
    std::printf("\n| reference | GB/s read | one [2048 x 2048] bf16 matrix at that rate, µs |\n");
    std::printf("|---|---|---|\n");
    std::printf("| copy, 67 MB | %.0f | %.2f |\n", half / copy_ms / 1e6,
                matrix / (half / copy_ms / 1e6) / 1e3);
    std::printf("| read, 134 MB | %.0f | %.2f |\n", 2 * half / read_ms / 1e6,
                matrix / (2 * half / read_ms / 1e6) / 1e3);
  }
  CHECK(cudaFree(b.w));
  for (auto& r : b.row) CHECK(cudaFree(r));
  return failures == 0 ? 0 : 1;
}
