// Split-KV combine for every request with more than one split.
//
// lse = m + log(sum_s exp(lse_s - m)), out = sum_s exp(lse_s - lse) * o_s, both reduced in a
// fixed order that depends on split positions only (never on the split count or on how the work
// is spread over threads): the fixed combine order of deterministic mode.
//  - the denominator: 256 strided sums (sum k + 256 j, j ascending, for k = 0..255), a butterfly
//    (xor 16, 8, 4, 2, 1) over each 32 consecutive k, then the 8 results in order;
//  - the output: 8 group sums (group g: splits g, g + 8, g + 16, ... in order, fused
//    multiply-adds), then the 8 groups in order.
// Empty partials (lse = -inf, o = 0) add exactly 0, and a row with a single non-empty partial gets
// that partial back exactly (weight exactly 1): so a verify row that spans more chunks than the
// equivalent decode call, or that the decode call writes without a combine, still matches it
// bitwise.
//
// What is merged are the plan's merge items (SplitPlan, "merge tree"): the splits' partials, or
// with blocks of several splits (deterministic mode) the blocks' folded partials. The main kernel
// may have folded them (blocks_folded: one slot per block, read like a split's); otherwise this
// kernel folds each block from its splits' partials as it sums the blocks (kFold, det_fold.cuh:
// the kernel's arithmetic, so both give the same bits).
//
// Work: a task is one (row, 128-column slice); lanes hold 4 columns each. A task runs on kWpt
// warps of one block (1, 2, 4 or 8), warp `sub` taking groups sub, sub + kWpt, ...; every warp
// loads its partials before the lse reductions, which do not need them, so a task costs about one
// memory latency. The lse: with one warp per task each warp computes it for itself (a block holds
// two rows); otherwise a block's tasks are slices of one row and its 256 threads share it. The
// host picks kWpt to fill the GPU in one wave: many tasks with few splits (batched decode) get a
// warp each, few tasks with many splits (long context at B = 1) several. The order above, hence
// every bit of the result, is the same for every kWpt.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "det_fold.cuh"
#include "launch.h"
#include "mlaspec/attention/verify.h"
#include "ptx.cuh"

namespace mlaspec::attn::cuda {

namespace {

constexpr int kGroups = 8;        // output group sums (splits s = g mod 8)
constexpr int kLseThreads = 256;  // strided denominator sums
constexpr int kWarps = 8;         // warps per block
constexpr int kThreads = kWarps * 32;
constexpr int kSlices = 4;  // 128-column slices of the 512 output columns
constexpr int kColsPerSlice = 128;

// exp(d) with exp(0) == 1 guaranteed, the property the bitwise guarantees above rest on.
__device__ __forceinline__ float exp_exact_at_zero(float d) {
  return d == 0.f ? 1.f : expf(d);
}

__device__ __forceinline__ void add4(float4& a, const float4& b) {
  a.x += b.x;
  a.y += b.y;
  a.z += b.z;
  a.w += b.w;
}

// kRanks: partials gathered from several DCP ranks (p.world > 1); the one-GPU kernel addresses
// split s directly, without the division of the rank layout. kWpt: warps per task. kRounds:
// rounds of 8 merge items whose partials a warp loads at once (kRounds * 8 / kWpt float4
// registers). kSingle: every request has at most 8 * kRounds merge items (one batch; the host
// guarantees it). kFold: the items are blocks of kDeterministicBlockChunks splits that this kernel
// folds as it sums them (kRounds 1, not kSingle: a block is 8 loads and 8 steps).
// Blocks of 256 threads per SM on one GPU: 4 for kSingle (64 registers), 3 for the 8-deep
// multi-warp kernels (80), 2 for the others (128).
template <bool kRanks, int kWpt, int kRounds, bool kSingle>
constexpr int combine_min_blocks() {
  if (kRanks) return 2;
  if (kSingle) return 4;
  return kWpt > 1 && kRounds * kGroups / kWpt <= 8 ? 3 : 2;
}

template <bool kRanks, int kWpt, int kRounds, bool kSingle, bool kFold>
__global__ void __launch_bounds__(kThreads, combine_min_blocks<kRanks, kWpt, kRounds, kSingle>())
    combine_kernel(const __grid_constant__ CombineParams p) {
  static_assert(!kFold || (kRounds == 1 && !kSingle), "a folded item is 8 loads");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // A kernel launched after this one as its programmatic dependent (the CUDA model runtime's,
  // MLASPEC_CUDA_PDL) may start its blocks now: it waits for this grid's end before it reads.
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  constexpr int kGpw = kGroups / kWpt;  // groups per warp
  constexpr int kTasksPerBlock = kWarps / kWpt;
  static_assert(kWpt == 1 || kSlices % kTasksPerBlock == 0, "a block's tasks share one row");
  __shared__ float4 s_acc[kWpt > 1 ? kWarps : 1][kGpw][32];
  __shared__ float s_red[kWarps];  // kWpt > 1: the block's lse reductions
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int sub = warp % kWpt;
  const int64_t task = static_cast<int64_t>(blockIdx.x) * kTasksPerBlock + warp / kWpt;
  const int64_t grow = task / kSlices;
  const int slice = static_cast<int>(task % kSlices);
  const int64_t total_rows = static_cast<int64_t>(p.batch) * p.rows;
  // n: the request's merge items (splits, or blocks), n_splits its splits.
  int b = 0, r = 0, n = 0, n_splits = 0;
  if (grow < total_rows) {
    b = static_cast<int>(grow / p.rows);
    r = static_cast<int>(grow % p.rows);
    n_splits = p.plan.split_begin[b + 1] - p.plan.split_begin[b];
    n = merge_items(p.plan, n_splits);
  }
  // Inactive: past the last task, or a request the main kernel wrote directly (combine_needed).
  // Such warps still reach the block barrier below.
  const bool active = grow < total_rows && (p.write_all || combine_needed(p.plan, b));
  const float* lse_part = p.lse_part + static_cast<int64_t>(p.plan.part_begin[b]) * p.rows + r;
  const float* o_part = p.o_part + (static_cast<int64_t>(p.plan.part_begin[b]) * p.rows + r) * 512 +
                        slice * kColsPerSlice + lane * 4;
  const int64_t split_stride = static_cast<int64_t>(p.rows);
  // Slot of global split s relative to the request's first: s itself on one GPU; with DCP ranks'
  // blocks side by side, rank s % world's block at local split s / world.
  auto slot = [&](int s) -> int64_t {
    if constexpr (kRanks) {
      return static_cast<int64_t>(s % p.world) * p.rank_slots + s / p.world;
    } else {
      return s;
    }
  };
  auto split_lse = [&](int s) { return lse_part[slot(s) * split_stride]; };
  auto split_o = [&](int s) {
    return __ldg(reinterpret_cast<const float4*>(o_part + slot(s) * split_stride * 512));
  };
  // kFold: block j folded from its splits' partials in split order (det_fold.cuh), all loads
  // first; kWithO false: its lse alone (o stays 0).
  struct Folded {
    float4 o;
    float lse;
  };
  auto fold_block = [&](int j, auto with_o) -> Folded {
    constexpr bool kWithO = decltype(with_o)::value;
    constexpr int K = kDeterministicBlockChunks;
    float ls_k[K];
    float4 o_k[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int s = j * K + k;
      ls_k[k] = -INFINITY;
      o_k[k] = make_float4(0.f, 0.f, 0.f, 0.f);
      if (s < n_splits) {
        ls_k[k] = split_lse(s);
        if constexpr (kWithO) o_k[k] = split_o(s);
      }
    }
    Folded f{make_float4(0.f, 0.f, 0.f, 0.f), -INFINITY};
#pragma unroll
    for (int k = 0; k < K; ++k) {
      if (ls_k[k] == -INFINITY) continue;  // an empty partial leaves the state as it is
      const FoldWeights w = fold_weights(f.lse, ls_k[k]);
      if constexpr (kWithO) {
        f.o = make_float4(fold_value(w, f.o.x, o_k[k].x), fold_value(w, f.o.y, o_k[k].y),
                          fold_value(w, f.o.z, o_k[k].z), fold_value(w, f.o.w, o_k[k].w));
      }
      f.lse = w.lse;
    }
    return f;
  };
  // Merge item s's lse: a slot's, or a folded block's.
  auto lse_of = [&](int s) {
    if constexpr (kFold) {
      return fold_block(s, std::false_type{}).lse;
    } else {
      return split_lse(s);
    }
  };

  // This warp's splits, round by round: round q holds s = 8q + sub + kWpt i (group slot i).
  float4 v[kRounds][kGpw];
  float ls[kSingle ? 1 : kRounds][kGpw];  // lse of each split (kSingle: shuffled from lanes)
  // f(q, i, s) for each split s < n of rounds q0 .. q0 + kRounds - 1.
  auto for_each_split = [&](int q0, auto&& f) {
#pragma unroll
    for (int q = 0; q < kRounds; ++q) {
#pragma unroll
      for (int i = 0; i < kGpw; ++i) {
        const int s = kGroups * (q0 + q) + sub + kWpt * i;
        if (s < n) f(q, i, s);
      }
    }
  };
  // kFold folds a block where it would load a partial when a warp holds one group (kWpt 8);
  // with more, where it sums it (a fold at both places is two inlined copies of kGpw folds, which
  // the compiler keeps in local memory).
  constexpr bool kFoldEarly = kFold && kGpw == 1;
  auto fold_into = [&](int q, int i, int s) {
    const Folded f = fold_block(s, std::true_type{});  // the block's loads, then its fold
    v[q][i] = f.o;
    ls[q][i] = f.lse;
  };
  auto load_rounds = [&](int q0) {
    if constexpr (kFold && !kFoldEarly) return;
    for_each_split(q0, [&](int q, int i, int s) {
      if constexpr (kFoldEarly) {
        fold_into(q, i, s);
      } else {
        v[q][i] = split_o(s);
        if constexpr (!kSingle) ls[q][i] = lse_of(s);
      }
    });
  };
  float4 acc[kGpw];
#pragma unroll
  for (int i = 0; i < kGpw; ++i) acc[i] = make_float4(0.f, 0.f, 0.f, 0.f);

  if (active) {
    load_rounds(0);  // independent of lse: in flight during the reductions below
    // kSingle: lane s < n holds lse_s (n <= 8), for the weights below.
    const float lse_lane = kSingle && lane < n ? lse_of(lane) : -INFINITY;

    // ---- lse = m + log(sum exp(lse_s - m)) ----
    float m = -INFINITY, lse = -INFINITY;
    // kFold: the lse of the first item a thread reduces (`mine`: lane, or tid), folded once for
    // both passes below (a fold is 8 loads and 8 dependent steps).
    const int mine = kWpt == 1 ? lane : static_cast<int>(threadIdx.x);
    const float mine_lse = kFold && mine < n ? lse_of(mine) : -INFINITY;
    auto reduce_lse = [&](int s) { return kFold && s == mine ? mine_lse : lse_of(s); };
    if constexpr (kWpt == 1) {
      // Each warp for itself (its block holds two rows): the 256 strided sums k = 32 c + lane
      // for c = 0..7, emulated lane by lane; a c with no split (32 c >= n) adds +0 to a positive
      // total, so it is skipped.
      for (int s = lane; s < n; s += 32) m = fmaxf(m, reduce_lse(s));
      for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      if (m != -INFINITY) {
        float sum = 0.f;
        for (int c = 0; c < kLseThreads / 32 && 32 * c < n; ++c) {
          float x = 0.f;
          for (int s = 32 * c + lane; s < n; s += kLseThreads) {
            x += exp_exact_at_zero(reduce_lse(s) - m);
          }
          for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
          sum = c == 0 ? x : sum + x;
        }
        lse = sum == 1.f ? m : m + logf(sum);
      }
    } else {
      // The block's tasks are slices of one row: its 256 threads are the 256 strided sums, each
      // lse_s is loaded once per block (the lse of one row is one value per cache line).
      const int tid = threadIdx.x;
      for (int s = tid; s < n; s += kLseThreads) m = fmaxf(m, reduce_lse(s));
      for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      if (lane == 0) s_red[warp] = m;
      __syncthreads();
      m = s_red[0];
      for (int k = 1; k < kWarps; ++k) m = fmaxf(m, s_red[k]);
      __syncthreads();
      if (m != -INFINITY) {
        float x = 0.f;
        for (int s = tid; s < n; s += kLseThreads) x += exp_exact_at_zero(reduce_lse(s) - m);
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
        if (lane == 0) s_red[warp] = x;
        __syncthreads();
        float sum = s_red[0];
        for (int k = 1; k < kWarps; ++k) sum += s_red[k];
        lse = sum == 1.f ? m : m + logf(sum);
      }
    }

    // ---- group sums: acc[i] += exp(lse_s - lse) * o_s over this warp's splits, in order ----
    if constexpr (kSingle && kWpt == 1) {
      // At most one split per group: group g is fmaf(w, o_g, 0) (or +0 when empty), and the
      // groups are summed in order as they come, so no group sum stays live.
      float4 out4 = make_float4(0.f, 0.f, 0.f, 0.f);
      if (m != -INFINITY) {
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
          float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
          if (g < n) {  // warp-uniform, so the shuffle below has every lane
            const float w = exp_exact_at_zero(__shfl_sync(0xffffffffu, lse_lane, g) - lse);
            a = make_float4(fmaf(w, v[0][g].x, 0.f), fmaf(w, v[0][g].y, 0.f),
                            fmaf(w, v[0][g].z, 0.f), fmaf(w, v[0][g].w, 0.f));
          }
          if (g == 0) {
            out4 = a;
          } else {
            add4(out4, a);
          }
        }
      }
      acc[0] = out4;  // the whole sum, as group 0 (the other groups stay +0 and are not added)
    } else if (m != -INFINITY) {
      for (int q0 = 0;; q0 += kRounds) {
        for_each_split(q0, [&](int q, int i, int s) {
          if constexpr (kFold && !kFoldEarly) fold_into(q, i, s);
          const float w = exp_exact_at_zero(ls[q][i] - lse);
          acc[i].x = fmaf(w, v[q][i].x, acc[i].x);
          acc[i].y = fmaf(w, v[q][i].y, acc[i].y);
          acc[i].z = fmaf(w, v[q][i].z, acc[i].z);
          acc[i].w = fmaf(w, v[q][i].w, acc[i].w);
        });
        if (kSingle || kGroups * (q0 + kRounds) >= n) break;
        load_rounds(q0 + kRounds);
      }
    }
    if (sub == 0 && slice == 0 && lane == 0) {
      // The lse output (one writer per row).
      if (p.o_f32 != nullptr) {
        p.lse_f32[grow] = lse;
      } else {
        const int i = r / p.num_heads, h = r % p.num_heads;
        p.lse[b * p.lse_stride[0] + i * p.lse_stride[1] + h * p.lse_stride[2]] = lse;
      }
    }
  }

  // ---- the 8 group sums in order ----
  float4 out4 = acc[0];
  if constexpr (kSingle && kWpt == 1) {
    // summed above
  } else if constexpr (kWpt == 1) {
#pragma unroll
    for (int g = 1; g < kGroups; ++g) add4(out4, acc[g]);
  } else {
#pragma unroll
    for (int i = 0; i < kGpw; ++i) s_acc[warp][i][lane] = acc[i];
    __syncthreads();
    // The task's first warp adds them: group g lives in warp + g % kWpt, slot g / kWpt (group 0
    // is its own).
    if (sub != 0) return;
#pragma unroll
    for (int g = 1; g < kGroups; ++g) add4(out4, s_acc[warp + g % kWpt][g / kWpt][lane]);
  }
  if (!active) return;
  if (p.o_f32 != nullptr) {
    *reinterpret_cast<float4*>(p.o_f32 + grow * 512 + slice * kColsPerSlice + lane * 4) = out4;
    return;
  }
  const int i = r / p.num_heads, h = r % p.num_heads;
  auto* out = static_cast<uint16_t*>(p.out) + b * p.out_stride[0] + i * p.out_stride[1] +
              h * p.out_stride[2] + slice * kColsPerSlice + lane * 4;
  *reinterpret_cast<uint2*>(out) =
      make_uint2(ptx::pack_bf16x2(out4.x, out4.y), ptx::pack_bf16x2(out4.z, out4.w));
}

template <bool kRanks, int kWpt, int kRounds, bool kSingle, bool kFold = false>
void launch_combine(const CombineParams& p, int64_t tasks, cudaStream_t stream) {
  constexpr int kTasksPerBlock = kWarps / kWpt;
  const auto blocks = static_cast<unsigned>((tasks + kTasksPerBlock - 1) / kTasksPerBlock);
  combine_kernel<kRanks, kWpt, kRounds, kSingle, kFold><<<blocks, kThreads, 0, stream>>>(p);
}

int device_sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 132;  // the H200's; only the choice of kWpt depends on it
  }
  return sms;
}

template <bool kRanks>
void dispatch_combine(const CombineParams& p, int wpt, bool deep, int max_splits, int64_t tasks,
                      cudaStream_t stream) {
  if (p.plan.block_splits > 1 && !p.plan.blocks_folded) {
    // Blocks folded here as they are summed, one round of 8 items at a time.
    switch (wpt) {
      case 1:
        launch_combine<kRanks, 1, 1, false, true>(p, tasks, stream);
        break;
      case 2:
        launch_combine<kRanks, 2, 1, false, true>(p, tasks, stream);
        break;
      case 4:
        launch_combine<kRanks, 4, 1, false, true>(p, tasks, stream);
        break;
      default:
        launch_combine<kRanks, 8, 1, false, true>(p, tasks, stream);
        break;
    }
    return;
  }
  // Splits a warp loads at once (kRounds * 8 / kWpt): 16 where the grid is small enough for 128
  // registers per thread (2 blocks per SM), else 8 (80 registers, 3 blocks per SM); one warp per
  // task with at most 8 splits per request sums as it loads, with no loop.
  switch (wpt) {
    case 1:
      if (max_splits <= kGroups) {
        launch_combine<kRanks, 1, 1, true>(p, tasks, stream);
      } else {
        launch_combine<kRanks, 1, 1, false>(p, tasks, stream);
      }
      break;
    case 2:
      deep ? launch_combine<kRanks, 2, 4, false>(p, tasks, stream)
           : launch_combine<kRanks, 2, 2, false>(p, tasks, stream);
      break;
    case 4:
      deep ? launch_combine<kRanks, 4, 8, false>(p, tasks, stream)
           : launch_combine<kRanks, 4, 4, false>(p, tasks, stream);
      break;
    default:
      deep ? launch_combine<kRanks, 8, 16, false>(p, tasks, stream)
           : launch_combine<kRanks, 8, 8, false>(p, tasks, stream);
      break;
  }
}

}  // namespace

cudaError_t run_combine(const CombineParams& params, cudaStream_t stream) {
  const int64_t tasks = static_cast<int64_t>(params.batch) * params.rows * kSlices;
  static const int sm_count = device_sm_count();
  // The kernels fold blocks of kDeterministicBlockChunks splits only.
  if (params.plan.block_splits < 1 ||
      (params.plan.block_splits > 1 && params.plan.block_splits != kDeterministicBlockChunks)) {
    return cudaErrorInvalidValue;
  }
  // The single-round kernel covers at most 8 merge items per request: it relies on max_splits.
  const int max_splits = merge_items(params.plan, params.plan.max_splits);
  // Warps per task: the most (at most 8, no more than the splits can use) whose grid still fits
  // about 24 warps per SM at once (3 blocks of 8); tests may force it.
  int wpt = params.warps_per_task;
  if (wpt == 0) {
    wpt = 1;
    while (wpt < kGroups && wpt < max_splits && tasks * wpt * 2 <= int64_t{24} * sm_count) {
      wpt *= 2;
    }
  }
  if (wpt != 1 && wpt != 2 && wpt != 4 && wpt != 8) return cudaErrorInvalidValue;
  const bool deep = tasks * wpt <= int64_t{16} * sm_count;
  if (params.world > 1) {
    dispatch_combine<true>(params, wpt, deep, max_splits, tasks, stream);
  } else {
    dispatch_combine<false>(params, wpt, deep, max_splits, tasks, stream);
  }
  return cudaGetLastError();
}

}  // namespace mlaspec::attn::cuda
