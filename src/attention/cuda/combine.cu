// Split-KV combine for every request with more than one split.
//
// lse = m + log(sum_s exp(lse_s - m)), out = sum_s exp(lse_s - lse) * o_s, both reduced in a
// fixed order (strided per thread, then a fixed tree): the fixed combine order of deterministic
// mode. Empty partials (lse = -inf, o = 0) add exactly 0, and a row with a single non-empty partial
// gets that partial back exactly (weight exactly 1): so a verify row that spans more chunks than
// the equivalent decode call, or that the decode call writes without a combine, still matches it
// bitwise.
#include <cuda_runtime.h>

#include <cstdint>

#include "launch.h"
#include "ptx.cuh"

namespace mlaspec::attn::cuda {

namespace {

// One block per (row, 128-column slice): 8 warps = 8 split groups, lanes = 4 columns each. The
// weights and the per-group partial sums are reduced in a fixed order, so the result depends only
// on the partials, and extra empty partials (weight exactly 0) change nothing.
constexpr int kGroups = 8;
constexpr int kThreads = kGroups * 32;
constexpr int kColsPerBlock = 128;

// exp(d) with exp(0) == 1 guaranteed, the property the bitwise guarantees above rest on.
__device__ __forceinline__ float exp_exact_at_zero(float d) {
  return d == 0.f ? 1.f : expf(d);
}

__global__ void __launch_bounds__(kThreads)
    combine_kernel(const __grid_constant__ CombineParams p) {
  __shared__ float s_red[kGroups];
  __shared__ float4 s_acc[kGroups][32];
  const int tid = threadIdx.x, lane = tid % 32, grp = tid / 32;
  const int64_t grow = blockIdx.x;
  const int b = static_cast<int>(grow / p.rows);
  const int r = static_cast<int>(grow % p.rows);
  const int n = p.plan.split_begin[b + 1] - p.plan.split_begin[b];
  if (n <= 1 && !p.write_all) return;  // written directly by the main kernel
  const float* lse_part = p.lse_part + static_cast<int64_t>(p.plan.part_begin[b]) * p.rows + r;
  const float* o_part = p.o_part + (static_cast<int64_t>(p.plan.part_begin[b]) * p.rows + r) * 512 +
                        blockIdx.y * kColsPerBlock + lane * 4;
  const int64_t split_stride = static_cast<int64_t>(p.rows);
  // Slot of global split s relative to the request's first: s itself on one GPU; with DCP ranks'
  // blocks side by side, rank s % world's block at local split s / world.
  const int world = p.world > 1 ? p.world : 1;
  auto slot = [&](int s) -> int64_t {
    return world == 1 ? s : (s % world) * p.rank_slots + s / world;
  };

  // ---- lse = m + log(sum exp(lse_s - m)) ----
  float m = -INFINITY;
  for (int s = tid; s < n; s += kThreads) m = fmaxf(m, lse_part[slot(s) * split_stride]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (lane == 0) s_red[grp] = m;
  __syncthreads();
  m = s_red[0];
  for (int k = 1; k < kGroups; ++k) m = fmaxf(m, s_red[k]);
  __syncthreads();
  float lse = -INFINITY;
  if (m != -INFINITY) {
    float sum = 0.f;
    for (int s = tid; s < n; s += kThreads)
      sum += exp_exact_at_zero(lse_part[slot(s) * split_stride] - m);
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) s_red[grp] = sum;
    __syncthreads();
    sum = s_red[0];
    for (int k = 1; k < kGroups; ++k) sum += s_red[k];
    lse = sum == 1.f ? m : m + logf(sum);
  }

  // ---- out = sum_s exp(lse_s - lse) * o_s: group g takes s = g, g + 8, ... ----
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  if (m != -INFINITY) {
#pragma unroll 4
    for (int s = grp; s < n; s += kGroups) {
      const float w = exp_exact_at_zero(lse_part[slot(s) * split_stride] - lse);
      const float4 v =
          __ldg(reinterpret_cast<const float4*>(o_part + slot(s) * split_stride * 512));
      acc.x = fmaf(w, v.x, acc.x);
      acc.y = fmaf(w, v.y, acc.y);
      acc.z = fmaf(w, v.z, acc.z);
      acc.w = fmaf(w, v.w, acc.w);
    }
  }
  s_acc[grp][lane] = acc;
  __syncthreads();
  if (grp != 0) return;
  for (int k = 1; k < kGroups; ++k) {
    const float4 v = s_acc[k][lane];
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  }
  if (p.o_f32 != nullptr) {
    *reinterpret_cast<float4*>(p.o_f32 + grow * 512 + blockIdx.y * kColsPerBlock + lane * 4) = acc;
    if (blockIdx.y == 0 && lane == 0) p.lse_f32[grow] = lse;
    return;
  }
  const int i = r / p.num_heads, h = r % p.num_heads;
  auto* out = static_cast<uint16_t*>(p.out) + b * p.out_stride[0] + i * p.out_stride[1] +
              h * p.out_stride[2] + blockIdx.y * kColsPerBlock + lane * 4;
  *reinterpret_cast<uint2*>(out) =
      make_uint2(ptx::pack_bf16x2(acc.x, acc.y), ptx::pack_bf16x2(acc.z, acc.w));
  if (blockIdx.y == 0 && lane == 0) {
    p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = lse;
  }
}

}  // namespace

cudaError_t run_combine(const CombineParams& params, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(params.batch) * params.rows;
  const dim3 grid(static_cast<unsigned>(rows), 512 / kColsPerBlock, 1);
  combine_kernel<<<grid, kThreads, 0, stream>>>(params);
  return cudaGetLastError();
}

}  // namespace mlaspec::attn::cuda
