// mlaspec_micro_swpv: a microbenchmark of one consumer design the verify kernel could have had,
// kept so the measurement behind docs/perf/knowledge.md (the KV supply bound: the S / PV consumer)
// can be run again. Not used by the engine or the tests.
//
// Warp specialisation by operation instead of by tile: one warpgroup computes S = Q K^T, the
// softmax and P, two warpgroups run P V into 64 x 256 accumulators each. It runs on resident
// shared memory with no copies (the consumers fed for free): 132 CTAs, one per SM, each looping
// over --tiles 64-key tiles of random bf16 in two 72 KiB stages, 64 query rows per CTA.
//   WG0 (S): Q columns 0..319 in registers (wgmma RS, 20 k16 steps), 320..575 from shared memory
//            (SS, 16 steps); online softmax in the log2 domain (the max moves only by > 8, as the
//            verify kernel's RESCALE_SLACK); P (bf16, 128B-swizzled) and the rows' scales to one
//            of two P buffers; mbarrier handoff.
//   WG1, WG2 (PV): O[64 x 256] += P V (m64n256k16 SS), rescaled when a row's max moved.
// Modes, S per 32-key half-tile (m64n32k16, 16 accumulator floats; the form whose KV lifetime
// fits beside Q in 227 KiB):
//   0 PV warpgroups alone (no handoff)      1 S warpgroup alone (S, wait, softmax, P)
//   2 all three                             3 all three, S pairs (S(h0), S(h1) issued together;
//   4 S warpgroup alone, S pairs               softmax(h0) under S(h1)'s MMAs)
//   5 S MMAs alone (pairs, no softmax): the S chain's floor
// Modes 6-9, S per whole 64-key tile (m64n64k16, 32 accumulator floats; registers moved to the S
// warpgroup with setmaxnreg 184 / 160 / 160):
//   6 S MMAs alone (two tiles in flight)    7 all three (S, wait, softmax per tile)
//   8 all three, S pairs over two tiles (S(t), S(t + 1) issued; softmax(t) under S(t + 1))
//   9 as 7, with each P V step as two m64n128k16 (two column blocks each, any distance apart)
// Modes 10-15: mode 9's consumers fed from HBM by a producer warpgroup (fed_kernel: 512 threads,
// clusters of 2 sharing each tile by multicast, setmaxnreg 32 / 160 / 160 / 160):
//   10 ring of 2.5 tiles (10 V pair slots)  11 ring of 2 tiles (8 pair slots)
//   12, 13 as 10, 11 with the SUPPLY bits 1 + 2 + 4 (see fed_kernel)
//   14 as 10 with bits 1 + 2                15 as 10 with bit 1
// Output: per mode, µs and SM cycles (clock64) per 64-key tile; cycles are the unit to compare
// across runs, since the SM clock drops under the power cap. A timing model, not a kernel: the
// inputs are random or constant bf16, nothing is written back, and no result is checked against
// the CPU reference. Its operand layouts and descriptors are the verify kernel's (checked there),
// except the m64n128 P V steps, which use the m64n256 ones' convention on two blocks.
// Build: with MLASPEC_CUDA=ON (target mlaspec_micro_swpv); needs an sm_90a GPU to run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "mlaspec/bench/cuda_timer.h"
#include "mlaspec/core/status.h"
#include "ptx.cuh"

namespace ptx = mlaspec::dev::ptx;
namespace bench = mlaspec::bench;
using mlaspec::internal_error;
using mlaspec::Result;
using mlaspec::Status;

namespace {

constexpr int kBlockBytes = 64 * 128;  // a column block: 64 rows (keys) x 64 bf16
constexpr int kQRegSteps = 20;         // Q columns 0..319 in registers
constexpr int kQSmemBlocks = 4;        // Q columns 320..575: 4 blocks in shared memory
constexpr int kStageBytes = 9 * kBlockBytes;
// Layout (bytes from a 1024-aligned base).
constexpr int kOffQ = 0;
constexpr int kOffKV = kOffQ + kQSmemBlocks * kBlockBytes;  // 2 stages
constexpr int kOffP = kOffKV + 2 * kStageBytes;             // 2 P buffers [64 x 64] bf16
constexpr int kOffScale = kOffP + 2 * kBlockBytes;          // [2 buf][2 half][64] f32
constexpr int kOffBar = kOffScale + 2 * 2 * 64 * 4;         // p_full[2][2], p_empty[2]
constexpr int kSmemBytes = kOffBar + 64 + 1024;

// SM cycles; the memory clobber keeps the read where it is written, against the barriers.
__device__ __forceinline__ long long cycles_now() {
  long long c;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(c)::"memory");
  return c;
}

__device__ __forceinline__ uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}
// A bf16 pair with values in about [-1, 1).
__device__ __forceinline__ uint32_t rand_bf16x2(uint32_t seed) {
  const uint32_t h = hash32(seed);
  const float a = static_cast<float>(h & 0xffff) / 32768.f - 1.f;
  const float b = static_cast<float>(h >> 16) / 32768.f - 1.f;
  return ptx::pack_bf16x2(a, b);
}

// D(64x32) {+}= A(64x16, registers) * B(16x32, smem, K-major).
__device__ __forceinline__ void wgmma_m64n32k16_rs(float (&d)[16], const uint32_t (&a)[4],
                                                   uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %21, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, "
      "%9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
// D(64x32) += A(64x16, smem, K-major) * B(16x32, smem, K-major).
__device__ __forceinline__ void wgmma_m64n32k16_ss(float (&d)[16], uint64_t desc_a,
                                                   uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, "
      "%9, %10, %11, %12, %13, %14, %15}, %16, %17, 1, 1, 1, 0, 0;"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15])
      : "l"(desc_a), "l"(desc_b));
}

// D(64x64) {+}= A(64x16, registers) * B(16x64, smem, K-major).
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[32], const uint32_t (&a)[4],
                                                   uint64_t desc_b, int scale_d) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %37, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, "
      "%9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "
      "%27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}

// D(64x128, f32) += A(64x16, smem, K-major) * B(16x128, smem, MN-major): V as two column blocks
// at any distance (LBO), which a block-granular KV ring needs (m64n256 needs four blocks evenly
// spaced).
__device__ __forceinline__ void wgmma_m64n128k16_ss_tb(float* d_, uint64_t desc_a,
                                                       uint64_t desc_b) {
  float(&d)[64] = *reinterpret_cast<float(*)[64]>(d_);
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, "
      "%9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, "
      "%27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, "
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, "
      "%63}, %64, %65, 1, 1, 1, 0, 1;"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63])
      : "l"(desc_a), "l"(desc_b));
}

// S for half h of the tile in stage sK: 36 wgmmas, one commit group.
template <int NA>  // accumulator floats: 16 = m64n32 (a half-tile), 32 = m64n64 (a tile)
__device__ __forceinline__ void issue_s(float (&s)[NA], const uint32_t (&qr)[kQRegSteps][4],
                                        uint32_t sQ, uint32_t sK, int h) {
  const uint64_t desc_k = ptx::gmma_desc_sw128(sK + h * 32 * 128, 16, 1024);
  const uint64_t desc_q = ptx::gmma_desc_sw128(sQ, 16, 1024);
  ptx::wgmma_fence();
#pragma unroll
  for (int i = 0; i < kQRegSteps; ++i) {
    const int blk = i / 4, kk = i % 4;
    const uint64_t off = (blk * kBlockBytes + kk * 32) >> 4;
    if constexpr (NA == 16) {
      wgmma_m64n32k16_rs(s, qr[i], desc_k + off, i != 0);
    } else {
      wgmma_m64n64k16_rs(s, qr[i], desc_k + off, i != 0);
    }
  }
#pragma unroll
  for (int i = 0; i < kQSmemBlocks * 4; ++i) {
    const int blk = i / 4, kk = i % 4;
    const uint64_t off_q = (blk * kBlockBytes + kk * 32) >> 4;
    const uint64_t off_k = ((blk + 5) * kBlockBytes + kk * 32) >> 4;
    if constexpr (NA == 16) {
      wgmma_m64n32k16_ss(s, desc_q + off_q, desc_k + off_k);
    } else {
      ptx::wgmma_m64n64k16_ss(s, desc_q + off_q, desc_k + off_k, 1);
    }
  }
  ptx::wgmma_commit();
}

// Softmax of one half (this thread: rows g, g + 8 of its warp's 16; keys 8j + 2t + {0,1}), P to
// the buffer's half h, the rows' scales to sc (written by t == 0).
template <int NA>
__device__ __forceinline__ void softmax_store(float (&s)[NA], float (&m)[2], float (&l)[2],
                                              uint32_t sP, float* sc, int h, int row0, int t) {
  constexpr float kScaleLog2 = 0.0601f;  // 1/sqrt(576) * log2(e)
  float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int e = 0; e < NA; ++e) {
    s[e] *= kScaleLog2;
    mx[(e >> 1) & 1] = fmaxf(mx[(e >> 1) & 1], s[e]);
  }
  float scale[2];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 1));
    mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 2));
    const float m_new = mx[k] > m[k] + 8.f ? mx[k] : m[k];
    scale[k] = m_new == m[k] ? 1.f : ptx::ex2(m[k] - m_new);
    m[k] = m_new;
    float sum = 0.f;
#pragma unroll
    for (int j = 0; j < NA / 4; ++j) {
      s[4 * j + 2 * k] = ptx::ex2(s[4 * j + 2 * k] - m_new);
      s[4 * j + 2 * k + 1] = ptx::ex2(s[4 * j + 2 * k + 1] - m_new);
      sum += s[4 * j + 2 * k] + s[4 * j + 2 * k + 1];
    }
    l[k] = l[k] * scale[k] + sum;
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const int r = row0 + 8 * k;
#pragma unroll
    for (int j = 0; j < NA / 4; ++j) {
      const int chunk = ((NA / 4) * h + j) ^ (r & 7);
      const uint32_t v = ptx::pack_bf16x2(s[4 * j + 2 * k], s[4 * j + 2 * k + 1]);
      asm volatile("st.shared.b32 [%0], %1;" ::"r"(sP + r * 128 + chunk * 16 + 4 * t), "r"(v)
                   : "memory");
    }
    if (t == 0) sc[r] = scale[k];
  }
}

// P and its scales, written by this thread's generic-proxy stores, to the PV warpgroups' wgmmas
// (async proxy): the fence orders the stores before the arrival that publishes them.
__device__ __forceinline__ void hand_over(uint64_t* p_full) {
  ptx::fence_proxy_async_smem();
  ptx::mbar_arrive(p_full);
}

// S for two operand sets (two halves of a tile, or two tiles), issued as two commit groups; the
// first one's softmax runs under the second one's MMAs. kChainOnly: the MMAs alone (modes 5, 6).
// Before each softmax, wait for its P buffer where empty[i] is given; after it, hand P over
// where kHandoff.
template <int NA, bool kChainOnly, bool kHandoff>
__device__ __forceinline__ void s_pair(const uint32_t (&qr)[kQRegSteps][4], uint32_t sQ,
                                       const uint32_t (&sK)[2], const int (&h)[2],
                                       const uint32_t (&sP)[2], float* const (&sc)[2],
                                       uint64_t* const (&full)[2], uint64_t* const (&empty)[2],
                                       uint32_t empty_parity, float (&m)[2], float (&l)[2],
                                       int row0, int t, float& result) {
  float s0[NA], s1[NA];
  issue_s(s0, qr, sQ, sK[0], h[0]);
  issue_s(s1, qr, sQ, sK[1], h[1]);
  if constexpr (kChainOnly) {
    ptx::wgmma_wait<0>();
    result += s0[0] + s1[NA - 1];
    return;
  }
  ptx::wgmma_wait<1>();
  if (empty[0] != nullptr) ptx::mbar_wait(empty[0], empty_parity);
  softmax_store(s0, m, l, sP[0], sc[0], h[0], row0, t);
  if (kHandoff) hand_over(full[0]);
  ptx::wgmma_wait<0>();
  if (empty[1] != nullptr) ptx::mbar_wait(empty[1], empty_parity);
  softmax_store(s1, m, l, sP[1], sc[1], h[1], row0, t);
  if (kHandoff) hand_over(full[1]);
}

template <int MODE>
__global__ void __launch_bounds__(384, 1) swpv_kernel(int tiles, float* out, long long* cycles) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem =
      reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023});
  const uint32_t base = ptx::smem_addr(smem);
  const int tid = threadIdx.x, wg = tid / 128, lt = tid % 128, warp = lt / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4, row0 = warp * 16 + g;
  float* scales = reinterpret_cast<float*>(smem + kOffScale);
  uint64_t* p_full = reinterpret_cast<uint64_t*>(smem + kOffBar);  // [buf * 2 + half]
  uint64_t* p_empty = p_full + 4;                                  // [buf]

  // Random bf16 everywhere the MMAs read (power as on real data), scales 1.
  for (int i = tid; i < kOffScale / 4; i += blockDim.x) {
    reinterpret_cast<uint32_t*>(smem)[i] = rand_bf16x2(blockIdx.x * 1000003u + i);
  }
  for (int i = tid; i < 256; i += blockDim.x) scales[i] = 1.f;
  if (tid == 0) {
    for (int i = 0; i < 4; ++i) ptx::mbar_init(&p_full[i], 128);
    for (int i = 0; i < 2; ++i) ptx::mbar_init(&p_empty[i], 256);
    ptx::fence_mbar_init();
  }
  ptx::fence_proxy_async_smem();
  __syncthreads();
  // main() checks tiles >= 2 and even. Without this promise ptxas reports C7514 (wgmmas
  // serialized) for modes 0, 2, 3 and 7: it cannot rule out an empty tile loop.
  __builtin_assume(tiles >= 2);
  const long long c0 = cycles_now();

  constexpr bool kS = MODE != 0, kPV = MODE == 0 || MODE == 2 || MODE == 3 || MODE >= 7;
  constexpr bool kPvPairs = MODE == 9;  // P V as two m64n128 per k16 step
  constexpr bool kHandoff = kS && kPV, kPairs = MODE >= 3;
  constexpr bool kFull = MODE >= 6;  // S per 64-key tile (m64n64) instead of per half
  constexpr int kHalves = kFull ? 1 : 2;
  float result = 0.f;

  // Full-tile modes: registers moved to the S warpgroup (184 + 2 x 160 = 504 per thread slot x 128
  // threads <= 64k); a kernel with a producer would have 24 + 184 + 2 x 152.
  if constexpr (kFull) {
    if (wg == 0) {
      ptx::setmaxnreg_inc<184>();
    } else {
      ptx::setmaxnreg_dec<160>();
    }
  }
  if (wg == 0 && kS) {
    uint32_t qr[kQRegSteps][4];
#pragma unroll
    for (int i = 0; i < kQRegSteps; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r) qr[i][r] = rand_bf16x2(tid * 977u + i * 4 + r);
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    const uint32_t sQ = base + kOffQ;
    if constexpr (kFull) {
      for (int tile = 0; tile < tiles; tile += 2) {  // tile (stage 0, buffer 0), tile + 1 (1, 1)
        // Opaque per iteration (as rotating stages are): ptxas would otherwise hoist all 72
        // descriptors out of the loop and spill them.
        uint32_t sK0, sQv;
        asm volatile("mov.u32 %0, %1;" : "=r"(sK0) : "r"(base + kOffKV));
        asm volatile("mov.u32 %0, %1;" : "=r"(sQv) : "r"(sQ));
        const uint32_t sK1 = sK0 + kStageBytes;
        const uint32_t sP0 = base + kOffP, sP1 = base + kOffP + kBlockBytes;
        const uint32_t par = ((tile >> 1) & 1) ^ 1;
        if constexpr (MODE == 7 || MODE == 9) {
          float s0[32];
#pragma unroll
          for (int b = 0; b < 2; ++b) {
            issue_s(s0, qr, sQv, b ? sK1 : sK0, 0);
            ptx::wgmma_wait<0>();
            ptx::mbar_wait(&p_empty[b], par);
            softmax_store(s0, m, l, b ? sP1 : sP0, scales + (b * 2) * 64, 0, row0, t);
            hand_over(&p_full[b * 2]);
          }
        } else {
          s_pair<32, MODE == 6, true>(qr, sQv, {sK0, sK1}, {0, 0}, {sP0, sP1},
                                      {scales, scales + 2 * 64}, {&p_full[0], &p_full[2]},
                                      {&p_empty[0], &p_empty[1]}, par, m, l, row0, t, result);
        }
      }
    }
    for (int tile = 0; tile < (kFull ? 0 : tiles); ++tile) {
      const int buf = tile & 1;
      const uint32_t sK = base + kOffKV + (tile & 1) * kStageBytes;
      const uint32_t sP = base + kOffP + buf * kBlockBytes;
      if (kHandoff) ptx::mbar_wait(&p_empty[buf], ((tile >> 1) & 1) ^ 1);
      if constexpr (!kPairs) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          float s[16];
          issue_s(s, qr, sQ, sK, h);
          ptx::wgmma_wait<0>();
          softmax_store(s, m, l, sP, scales + (buf * 2 + h) * 64, h, row0, t);
          if (kHandoff) hand_over(&p_full[buf * 2 + h]);
        }
      } else {
        s_pair<16, MODE == 5, kHandoff>(qr, sQ, {sK, sK}, {0, 1}, {sP, sP},
                                        {scales + (buf * 2) * 64, scales + (buf * 2 + 1) * 64},
                                        {&p_full[buf * 2], &p_full[buf * 2 + 1]},
                                        {nullptr, nullptr}, 0, m, l, row0, t, result);
      }
    }
    result += l[0] + l[1];
  } else if (wg >= 1 && kPV) {
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.f;
    const int col_blk0 = (wg - 1) * 4;  // this WG's 256 V columns: blocks 0-3 or 4-7
    for (int tile = 0; tile < tiles; ++tile) {
      const int buf = tile & 1;
      const uint32_t sV = base + kOffKV + (tile & 1) * kStageBytes + col_blk0 * kBlockBytes;
      const uint32_t sP = base + kOffP + buf * kBlockBytes;
      const uint64_t desc_p = ptx::gmma_desc_sw128(sP, 16, 1024);
      const uint64_t desc_v = ptx::gmma_desc_sw128(sV, kBlockBytes, 1024);
#pragma unroll
      for (int h = 0; h < kHalves; ++h) {
        if (kHandoff) ptx::mbar_wait(&p_full[buf * 2 + h], (tile >> 1) & 1);
        const float* sc = scales + (buf * 2 + h) * 64;
        const float sc0 = sc[row0], sc1 = sc[row0 + 8];
        ptx::wgmma_wait<0>();
        // The previous tile's P buffer is free once its last PV (issued at h = 1) completed.
        if (kHandoff && h == 0 && tile > 0) ptx::mbar_arrive(&p_empty[buf ^ 1]);
        if (__any_sync(0xffffffffu, sc0 != 1.f || sc1 != 1.f)) {
#pragma unroll
          for (int i = 0; i < 128; ++i) acc[i] *= (i & 2) ? sc1 : sc0;
        }
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = (4 / kHalves) * h; kk < (4 / kHalves) * (h + 1); ++kk) {
          const uint64_t a = desc_p + ((kk * 32) >> 4), b = desc_v + ((kk * 16 * 128) >> 4);
          if constexpr (kPvPairs) {
            wgmma_m64n128k16_ss_tb(acc, a, b);
            wgmma_m64n128k16_ss_tb(acc + 64, a, b + ((2 * kBlockBytes) >> 4));
          } else {
            ptx::wgmma_m64n256k16_ss_tb(acc, a, b, 1);
          }
        }
        ptx::wgmma_commit();
      }
    }
    ptx::wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 128; ++i) result += acc[i];
  }
  // Each warpgroup's first thread takes its own span and the CTA's is the longest (cycles zeroed
  // before each launch). Thread 0 alone, after a CTA barrier, read 0 cycles in mode 0, where its
  // warpgroup idles.
  if (lt == 0) {
    atomicMax(reinterpret_cast<unsigned long long*>(&cycles[blockIdx.x]),
              static_cast<unsigned long long>(cycles_now() - c0));
  }
  if (result == 12345.678f) out[blockIdx.x * blockDim.x + tid] = result;  // keeps the work live
}

// ---- modes 10 and 11: mode 9's consumers fed by a producer from HBM ---------------------------
// 2-CTA clusters (the 64-row kernel's for 128 query rows) share each tile: the two producers
// multicast alternate copies into both CTAs. Per tile (72 KiB contiguous in global memory): four
// V pairs (column blocks 2p, 2p + 1; 16 KiB) into a ring of PAIR_SLOTS pair slots, and the rope
// block into one of two rope slots. A slot is free again once both CTAs' S warps (all of a tile's
// blocks) and the PV warps of the warpgroup that reads it (pairs 0-1 or 2-3) have released it:
// 16 arrivals, the S warps arriving twice on rope slots.
template <int PAIR_SLOTS>
struct FedLayout {
  static constexpr int kPairBytes = 2 * kBlockBytes;
  static constexpr int kOffQ = 0;
  static constexpr int kOffPairs = kOffQ + kQSmemBlocks * kBlockBytes;
  static constexpr int kOffRope = kOffPairs + PAIR_SLOTS * kPairBytes;
  static constexpr int kOffP = kOffRope + 2 * kBlockBytes;
  static constexpr int kOffScale = kOffP + 2 * kBlockBytes;
  static constexpr int kOffBar = kOffScale + 2 * 64 * 4;
  // full per half pair slot, empty per pair slot, full/empty per rope slot, P full/empty
  static constexpr int kBars = 3 * PAIR_SLOTS + 4 + 4;
  static constexpr int kSmemBytes = kOffBar + kBars * 8 + 1024;
  static_assert(kSmemBytes <= 232448, "more than a CTA's 227 KiB of shared memory");
};
constexpr long long kTileBytes = 9LL * kBlockBytes;

template <bool kPolicy>
__device__ __forceinline__ void bulk_load_multicast(uint32_t dst, const void* src, uint32_t bytes,
                                                    uint32_t bar, uint64_t policy) {
  if constexpr (kPolicy) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        ".L2::cache_hint [%0], [%1], %2, [%3], %4, %5;" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar), "h"(static_cast<uint16_t>(3)), "l"(policy)
        : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1], %2, [%3], %4;" ::"r"(dst),
        "l"(src), "r"(bytes), "r"(bar), "h"(static_cast<uint16_t>(3))
        : "memory");
  }
}

// One arrival from this warp on `bar` in both CTAs of the pair, after its wgmma reads completed.
__device__ __forceinline__ void release_both(uint64_t* bar, int lane) {
  __syncwarp();
  if (lane == 0) {
    ptx::mbar_arrive_cluster<false>(bar, 0);
    ptx::mbar_arrive_cluster<false>(bar, 1);
  }
}

// Both CTAs' threads, at each role's end: no CTA leaves while its peer may still copy into it or
// arrive on its barriers. Not .aligned: the roles reach it from different instructions.
__device__ __forceinline__ void cluster_sync_unaligned() {
  asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// SUPPLY bits: 1 = L2 evict_first on the copies (as the verify kernel's); 2 = one copy and one
// full barrier per column block (8 KiB) instead of per pair, so S starts on a pair's first block;
// 4 = each P V warpgroup commits its two pairs as two groups and frees the first pair while the
// second one's MMAs run (the first 4 k16 steps on pair 0, then 4 on pair 1).
template <int PAIR_SLOTS, int SUPPLY>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(512, 1)
    fed_kernel(int tiles, const uint8_t* __restrict__ kv, float* out, long long* cycles) {
  using L = FedLayout<PAIR_SLOTS>;
  constexpr bool kPolicy = SUPPLY & 1, kBlockCopies = SUPPLY & 2, kPairRelease = SUPPLY & 4;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024u - (ptx::smem_addr(smem_raw) & 1023u)) & 1023u);
  const uint32_t base = ptx::smem_addr(smem);
  const int warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x / 32), 0);
  const int tid = threadIdx.x, wg = warp / 4, lt = tid % 128, lane = tid % 32;
  const int g = lane / 4, t = lane % 4, row0 = (warp % 4) * 16 + g;
  float* scales = reinterpret_cast<float*>(smem + L::kOffScale);
  uint64_t* half_full = reinterpret_cast<uint64_t*>(smem + L::kOffBar);  // [slot * 2 + half]
  uint64_t* pair_empty = half_full + 2 * PAIR_SLOTS;
  uint64_t* rope_full = pair_empty + PAIR_SLOTS;
  uint64_t* rope_empty = rope_full + 2;
  uint64_t* p_full = rope_empty + 2;  // [buf]
  uint64_t* p_empty = p_full + 2;     // [buf]
  const uint32_t rank = ptx::cluster_ctarank();
  const uint8_t* gkv = kv + static_cast<long long>(blockIdx.x / 2) * tiles * kTileBytes;

  for (int i = tid; i < L::kOffPairs / 4; i += blockDim.x) {  // Q's shared-memory columns
    reinterpret_cast<uint32_t*>(smem)[i] = rand_bf16x2(blockIdx.x * 1000003u + i);
  }
  for (int i = tid; i < 128; i += blockDim.x) scales[i] = 1.f;
  if (tid == 0) {
    for (int i = 0; i < PAIR_SLOTS; ++i) {
      ptx::mbar_init(&half_full[2 * i], 1);
      ptx::mbar_init(&half_full[2 * i + 1], 1);
      ptx::mbar_init(&pair_empty[i], 16);
    }
    for (int i = 0; i < 2; ++i) {
      ptx::mbar_init(&rope_full[i], 1);
      ptx::mbar_init(&rope_empty[i], 16);
      ptx::mbar_init(&p_full[i], 128);
      ptx::mbar_init(&p_empty[i], 256);
    }
    ptx::fence_mbar_init();
  }
  ptx::fence_proxy_async_smem();
  ptx::cluster_sync();
  __builtin_assume(tiles >= 2);  // as in swpv_kernel (C7514 otherwise)
  const long long c0 = cycles_now();
  auto pair_addr = [&](int slot) { return base + L::kOffPairs + slot * L::kPairBytes; };
  auto rope_addr = [&](int slot) { return base + L::kOffRope + slot * kBlockBytes; };

  if (wg == 3) {  // ------------------------------------------------------------------ producer
    ptx::setmaxnreg_dec<32>();
    if (lt == 0) {
      const uint64_t policy = ptx::l2_policy_evict_first();
      for (int tile = 0; tile < tiles; ++tile) {
        const uint8_t* src = gkv + tile * kTileBytes;
#pragma unroll 1
        for (int p = 0; p < 5; ++p) {  // pairs 0-3, then the rope block
          if (p == 4) {
            const int slot = tile % 2;
            ptx::mbar_wait(&rope_empty[slot], ((tile / 2) & 1) ^ 1);
            ptx::mbar_arrive_expect_tx(&rope_full[slot], kBlockBytes);
            if ((tile & 1) == static_cast<int>(rank)) {
              bulk_load_multicast<kPolicy>(rope_addr(slot), src + 8 * kBlockBytes, kBlockBytes,
                                           ptx::smem_addr(&rope_full[slot]), policy);
            }
            continue;
          }
          const int n = 4 * tile + p;  // pair slot uses so far
          const int slot = n % PAIR_SLOTS;
          ptx::mbar_wait(&pair_empty[slot], ((n / PAIR_SLOTS) & 1) ^ 1);
          if constexpr (kBlockCopies) {
            for (int h = 0; h < 2; ++h) {
              uint64_t* full = &half_full[2 * slot + h];
              ptx::mbar_arrive_expect_tx(full, kBlockBytes);
              if (h == static_cast<int>(rank)) {
                bulk_load_multicast<kPolicy>(pair_addr(slot) + h * kBlockBytes,
                                             src + (2 * p + h) * kBlockBytes, kBlockBytes,
                                             ptx::smem_addr(full), policy);
              }
            }
          } else {
            uint64_t* full = &half_full[2 * slot];
            ptx::mbar_arrive_expect_tx(full, L::kPairBytes);
            if ((n & 1) == static_cast<int>(rank)) {
              bulk_load_multicast<kPolicy>(pair_addr(slot), src + p * L::kPairBytes, L::kPairBytes,
                                           ptx::smem_addr(full), policy);
            }
          }
        }
      }
    }
  } else if (wg == 0) {  // ------------------------------------------------------ S warpgroup
    ptx::setmaxnreg_inc<160>();
    uint32_t qr[kQRegSteps][4];
#pragma unroll
    for (int i = 0; i < kQRegSteps; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r) qr[i][r] = rand_bf16x2(tid * 977u + i * 4 + r);
    float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};
    const uint64_t desc_q = ptx::gmma_desc_sw128(base + L::kOffQ, 16, 1024);
    for (int tile = 0; tile < tiles; ++tile) {
      float sacc[32];
#pragma unroll
      for (int blk = 0; blk < 9; ++blk) {
        uint32_t addr;
        if (blk < 8) {
          const int n = 4 * tile + blk / 2;
          ptx::mbar_wait(&half_full[2 * (n % PAIR_SLOTS) + (kBlockCopies ? blk & 1 : 0)],
                         (n / PAIR_SLOTS) & 1);
          addr = pair_addr(n % PAIR_SLOTS) + (blk & 1) * kBlockBytes;
        } else {
          ptx::mbar_wait(&rope_full[tile % 2], (tile / 2) & 1);
          addr = rope_addr(tile % 2);
        }
        const uint64_t desc_k = ptx::gmma_desc_sw128(addr, 16, 1024);
        ptx::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          if (blk < 5) {
            wgmma_m64n64k16_rs(sacc, qr[blk * 4 + kk], desc_k + ((kk * 32) >> 4), (blk | kk) != 0);
          } else {
            ptx::wgmma_m64n64k16_ss(sacc, desc_q + (((blk - 5) * kBlockBytes + kk * 32) >> 4),
                                    desc_k + ((kk * 32) >> 4), 1);
          }
        }
      }
      ptx::wgmma_commit();
      ptx::wgmma_wait<0>();
#pragma unroll 1
      for (int p = 0; p < 4; ++p) release_both(&pair_empty[(4 * tile + p) % PAIR_SLOTS], lane);
      release_both(&rope_empty[tile % 2], lane);
      release_both(&rope_empty[tile % 2], lane);
      const int buf = tile & 1;
      ptx::mbar_wait(&p_empty[buf], ((tile >> 1) & 1) ^ 1);
      softmax_store(sacc, m, l, base + L::kOffP + buf * kBlockBytes, scales + buf * 64, 0, row0, t);
      hand_over(&p_full[buf]);
    }
    if (l[0] + l[1] == 12345.678f) out[blockIdx.x * blockDim.x + tid] = l[0];
  } else {  // ----------------------------------------------------------- PV warpgroups 1, 2
    ptx::setmaxnreg_inc<160>();
    // Two arrays, one per pair (columns 0-127 and 128-255): with one array of 128 ptxas serialized
    // the pair-release variant's wgmmas (C7514).
    float acc0[64], acc1[64];
#pragma unroll
    for (int i = 0; i < 64; ++i) acc0[i] = acc1[i] = 0.f;
    const int pair0 = (wg - 1) * 2;  // this warpgroup's V pairs: 0-1 or 2-3
    for (int tile = 0; tile < tiles; ++tile) {
      const int buf = tile & 1;
      ptx::mbar_wait(&p_full[buf], (tile >> 1) & 1);
      const float sc0 = scales[buf * 64 + row0], sc1 = scales[buf * 64 + row0 + 8];
      const bool rescale = __any_sync(0xffffffffu, sc0 != 1.f || sc1 != 1.f);
      const uint64_t desc_p = ptx::gmma_desc_sw128(base + L::kOffP + buf * kBlockBytes, 16, 1024);
      // S waited for these pairs' copies before it handed P over.
      uint64_t desc_v[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        desc_v[h] =
            ptx::gmma_desc_sw128(pair_addr((4 * tile + pair0 + h) % PAIR_SLOTS), kBlockBytes, 1024);
      }
      ptx::wgmma_wait<0>();
      if (tile > 0) {  // the previous tile's P V has completed: its pairs and P buffer are free
        for (int h = kPairRelease ? 1 : 0; h < 2; ++h) {  // pair release: the first one already is
          release_both(&pair_empty[(4 * (tile - 1) + pair0 + h) % PAIR_SLOTS], lane);
        }
        ptx::mbar_arrive(&p_empty[buf ^ 1]);
      }
      if (rescale) {
#pragma unroll
        for (int i = 0; i < 64; ++i) {
          acc0[i] *= (i & 2) ? sc1 : sc0;
          acc1[i] *= (i & 2) ? sc1 : sc0;
        }
      }
      ptx::wgmma_fence();
#pragma unroll
      for (int h = 0; h < (kPairRelease ? 2 : 1); ++h) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          const uint64_t a = desc_p + ((kk * 32) >> 4), step = (kk * 16 * 128) >> 4;
          if (!kPairRelease || h == 0) wgmma_m64n128k16_ss_tb(acc0, a, desc_v[0] + step);
          if (!kPairRelease || h == 1) wgmma_m64n128k16_ss_tb(acc1, a, desc_v[1] + step);
        }
        ptx::wgmma_commit();
      }
      if constexpr (kPairRelease) {
        // The first pair is free once its group completes, while the second pair's MMAs run. No
        // accumulator is read here: with reads after a partial wait and a group carried over the
        // loop's back edge, ptxas serialized the wgmmas (C7514).
        ptx::wgmma_wait<1>();
        release_both(&pair_empty[(4 * tile + pair0) % PAIR_SLOTS], lane);
      }
    }
    ptx::wgmma_wait<0>();
    float r = 0.f;
#pragma unroll
    for (int i = 0; i < 64; ++i) r += acc0[i] + acc1[i];
    if (r == 12345.678f) out[blockIdx.x * blockDim.x + tid] = r;
  }
  if (lt == 0) {
    atomicMax(reinterpret_cast<unsigned long long*>(&cycles[blockIdx.x]),
              static_cast<unsigned long long>(cycles_now() - c0));
  }
  cluster_sync_unaligned();
}

#define SWPV_CHECK(call)                                                                     \
  do {                                                                                       \
    const cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) {                                                               \
      std::fprintf(stderr, "mlaspec_micro_swpv: %s: %s\n", #call, cudaGetErrorString(err_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

struct Timing {
  double us_median = 0, us_min = 0, cycles = 0, mhz = 0;
};

// Times launch(stream) with the benchmark harness's protocol (bench::time_graph_replays: one eager
// call, a CUDA graph, one warm-up replay, then `reps` timed replays): µs per tile from the
// replays, cycles per tile from the CTAs' clock64 spans (mean over `ctas` CTAs, last replay).
template <typename Launch>
Timing time_launches(int ctas, int tiles, int reps, long long* cycles, Launch launch) {
  auto enqueue = [&](void* stream_ptr) -> Status {
    auto stream = static_cast<cudaStream_t>(stream_ptr);
    cudaError_t err = cudaMemsetAsync(cycles, 0, ctas * sizeof(long long), stream);
    if (err == cudaSuccess) {
      launch(stream);
      err = cudaGetLastError();
    }
    if (err != cudaSuccess)
      return internal_error(std::string("launch: ") + cudaGetErrorString(err));
    return Status::Ok();
  };
  Result<std::vector<double>> us = bench::time_graph_replays(enqueue, 1, 1, reps);
  if (!us.ok()) {
    std::fprintf(stderr, "mlaspec_micro_swpv: %s\n", us.status().to_string().c_str());
    std::exit(1);
  }
  std::vector<double> t = std::move(us).value();
  std::vector<long long> cyc(ctas);
  SWPV_CHECK(cudaMemcpy(cyc.data(), cycles, ctas * sizeof(long long), cudaMemcpyDeviceToHost));
  double mean_cycles = 0;
  for (long long c : cyc) mean_cycles += static_cast<double>(c) / ctas;
  Timing r;
  r.cycles = mean_cycles / tiles;
  r.mhz = mean_cycles / t.back();
  std::sort(t.begin(), t.end());
  r.us_median = t[t.size() / 2] / tiles;
  r.us_min = t.front() / tiles;
  return r;
}

// Modes 0-9: one CTA of 384 threads per SM.
template <int MODE>
Timing time_mode(int sms, int tiles, int reps, float* out, long long* cycles) {
  auto kernel = swpv_kernel<MODE>;
  SWPV_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  return time_launches(sms, tiles, reps, cycles, [&](cudaStream_t st) {
    kernel<<<sms, 384, kSmemBytes, st>>>(tiles, out, cycles);
  });
}

// Modes 10-15: clusters of 2 CTAs of 512 threads, one CTA per SM, over a KV of tiles x 72 KiB per
// cluster.
template <int PAIR_SLOTS, int SUPPLY>
Timing time_fed(int sms, int tiles, int reps, const uint8_t* kv, float* out, long long* cycles) {
  auto kernel = fed_kernel<PAIR_SLOTS, SUPPLY>;
  constexpr int kSmem = FedLayout<PAIR_SLOTS>::kSmemBytes;
  SWPV_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
  const int ctas = sms / 2 * 2;
  return time_launches(ctas, tiles, reps, cycles, [&](cudaStream_t st) {
    kernel<<<ctas, 512, kSmem, st>>>(tiles, kv, out, cycles);
  });
}

constexpr const char* kModeNames[] = {"PV alone",
                                      "S alone (n32)",
                                      "all three (n32)",
                                      "all three, S pairs (n32)",
                                      "S pairs alone (n32)",
                                      "S MMAs alone (n32)",
                                      "S MMAs alone (n64)",
                                      "all three (n64)",
                                      "all three, S pairs (n64)",
                                      "all three (n64), PV as 2 x n128",
                                      "9 fed from HBM, ring of 2.5 tiles",
                                      "9 fed from HBM, ring of 2 tiles",
                                      "10 + evict_first, block copies, pair release",
                                      "11 + evict_first, block copies, pair release",
                                      "10 + evict_first, block copies",
                                      "10 + evict_first"};

void usage() {
  std::printf(
      "usage: mlaspec_micro_swpv [--tiles N] [--reps N] [--rounds N]\n"
      "  Times the S / PV consumer design, modes 0-15 (see the source's header): 0-9 on\n"
      "  resident shared memory (no copies), 10-15 fed from HBM. Prints microseconds and SM\n"
      "  cycles per 64-key tile. Needs an sm_90 GPU.\n"
      "  --tiles N   64-key tiles per CTA, even, 2..65536 (default 2048)\n"
      "  --reps N    timed CUDA-graph replays per mode (after an eager call and one warm-up\n"
      "              replay, as the harness times), 1..100 (default 5)\n"
      "  --rounds N  passes over all modes, 1..10 (default 2)\n");
}

// Parses "--name value" into *v within [lo, hi]; false (with a message) on a bad value.
bool parse_int(const char* name, const char* text, int lo, int hi, int* v) {
  char* end = nullptr;
  const long x = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || x < lo || x > hi) {
    std::fprintf(stderr, "mlaspec_micro_swpv: %s %s is not an integer in [%d, %d]\n", name, text,
                 lo, hi);
    return false;
  }
  *v = static_cast<int>(x);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int tiles = 2048, reps = 5, rounds = 2;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      usage();
      return 0;
    }
    int* target = !std::strcmp(argv[i], "--tiles")    ? &tiles
                  : !std::strcmp(argv[i], "--reps")   ? &reps
                  : !std::strcmp(argv[i], "--rounds") ? &rounds
                                                      : nullptr;
    if (target == nullptr || i + 1 >= argc) {
      std::fprintf(stderr, "mlaspec_micro_swpv: %s %s\n", argv[i],
                   target == nullptr ? "is not an option (see --help)" : "needs a value");
      return 2;
    }
    const int hi = target == &tiles ? 65536 : target == &reps ? 100 : 10;
    if (!parse_int(argv[i], argv[i + 1], target == &tiles ? 2 : 1, hi, target)) return 2;
    ++i;
  }
  if (tiles % 2 != 0) {
    std::fprintf(stderr, "mlaspec_micro_swpv: --tiles %d must be even (modes 6-8 take pairs)\n",
                 tiles);
    return 2;
  }
  int dev = 0, major = 0, minor = 0, sms = 0;
  SWPV_CHECK(cudaGetDevice(&dev));
  SWPV_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  SWPV_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (major != 9 || minor != 0) {
    std::fprintf(stderr, "mlaspec_micro_swpv: needs an sm_90 GPU (this one is sm_%d%d)\n", major,
                 minor);
    return 1;
  }
  SWPV_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  float* out = nullptr;
  long long* cycles = nullptr;
  uint8_t* kv = nullptr;
  const size_t kv_bytes = static_cast<size_t>(sms / 2) * tiles * kTileBytes;
  size_t free_bytes = 0, total_bytes = 0;
  SWPV_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (kv_bytes > free_bytes / 10 * 9) {
    std::fprintf(stderr,
                 "mlaspec_micro_swpv: --tiles %d needs %.1f GB of KV for modes 10-15, more than "
                 "90%% of the GPU's %.1f GB free; at most --tiles %zu\n",
                 tiles, kv_bytes / 1e9, free_bytes / 1e9,
                 static_cast<size_t>(free_bytes / 10 * 9 / ((sms / 2) * kTileBytes) / 2 * 2));
    return 2;
  }
  SWPV_CHECK(cudaMalloc(&out, sms * 512 * sizeof(float)));
  SWPV_CHECK(cudaMalloc(&cycles, sms * sizeof(long long)));
  SWPV_CHECK(cudaMalloc(&kv, kv_bytes));
  SWPV_CHECK(cudaMemset(kv, 0x3c, kv_bytes));  // every bf16 0.0115
  std::printf(
      "%d CTAs, %d tiles each; modes 0-9: 384 threads, %d bytes of shared memory; modes 10-15: "
      "512 threads in clusters of 2, %d bytes (10 pair slots) or %d (8), %.1f GB of KV; %d "
      "reps\n\n",
      sms, tiles, kSmemBytes, FedLayout<10>::kSmemBytes, FedLayout<8>::kSmemBytes, kv_bytes / 1e9,
      reps);
  std::printf("| round | mode | what | us/tile median | us/tile min | cycles/tile | MHz |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int round = 1; round <= rounds; ++round) {
    const Timing t[] = {time_mode<0>(sms, tiles, reps, out, cycles),
                        time_mode<1>(sms, tiles, reps, out, cycles),
                        time_mode<2>(sms, tiles, reps, out, cycles),
                        time_mode<3>(sms, tiles, reps, out, cycles),
                        time_mode<4>(sms, tiles, reps, out, cycles),
                        time_mode<5>(sms, tiles, reps, out, cycles),
                        time_mode<6>(sms, tiles, reps, out, cycles),
                        time_mode<7>(sms, tiles, reps, out, cycles),
                        time_mode<8>(sms, tiles, reps, out, cycles),
                        time_mode<9>(sms, tiles, reps, out, cycles),
                        time_fed<10, 0>(sms, tiles, reps, kv, out, cycles),
                        time_fed<8, 0>(sms, tiles, reps, kv, out, cycles),
                        time_fed<10, 7>(sms, tiles, reps, kv, out, cycles),
                        time_fed<8, 7>(sms, tiles, reps, kv, out, cycles),
                        time_fed<10, 3>(sms, tiles, reps, kv, out, cycles),
                        time_fed<10, 1>(sms, tiles, reps, kv, out, cycles)};
    for (int m = 0; m < 16; ++m) {
      std::printf("| %d | %d | %s | %.3f | %.3f | %.0f | %.0f |\n", round, m, kModeNames[m],
                  t[m].us_median, t[m].us_min, t[m].cycles, t[m].mhz);
    }
  }
  SWPV_CHECK(cudaFree(out));
  SWPV_CHECK(cudaFree(cycles));
  SWPV_CHECK(cudaFree(kv));
  return 0;
}
