// The CUDA runtime's kernels: gathers, norms, RoPE, the SwiGLU activation, the MoE combine and the
// row-invariant GEMM. Plain, one-pass kernels (no tensor cores, no fusion across layers): the
// GEMMs of the default mode go to cuBLAS (runtime.cc). No --use_fast_math: expf, cosf and sinf are
// the accurate ones, so the CPU and CUDA runtimes differ by rounding only.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <climits>
#include <string>
#include <type_traits>
#include <utility>

#include "kernels.h"

namespace mlaspec::model::gpu {

Status launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    return internal_error(std::string(what) + " launch failed: " + cudaGetErrorString(err));
  }
  return Status::Ok();
}

namespace {
thread_local bool t_dependent_launch = true;  // set_dependent_launch; launch() reads it
}  // namespace

void set_dependent_launch(bool on) {
  t_dependent_launch = on;
}

namespace {

using bf16 = __nv_bfloat16;

cudaStream_t as_stream(void* s) {
  return static_cast<cudaStream_t>(s);
}

__device__ __forceinline__ float bits_to_float(uint16_t b) {
  return __uint_as_float(static_cast<uint32_t>(b) << 16);
}
__device__ __forceinline__ uint16_t float_to_bits(float f) {
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
}

unsigned blocks_for(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

// Programmatic dependent launch (sm_90). Every kernel of this file is launched through launch(),
// which lets it start while the kernel before it on the stream still runs (the launch attribute
// programmaticStreamSerialization), and begins with inputs_ready(): it first lets the kernel after
// it launch (griddepcontrol.launch_dependents), then waits until the grids it depends on have
// completed and their writes are visible (griddepcontrol.wait). Nothing before that wait may read
// or write what another kernel writes or reads; the one exception is the weights, constants of
// the model, which a GEMV sends towards L2 first (prefetch_l2). So the next kernel's blocks are
// resident, their weights on the way, when this one ends: the launch gap and the GEMV's first
// DRAM latency overlap the kernel before it. The same work in the same order: the same bits.
// MLASPEC_CUDA_PDL=off (set_dependent_launch(false)): plain stream order.

__device__ __forceinline__ void inputs_ready() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// `bytes` from p towards L2 (cp.async.bulk.prefetch: a hint, no result); skipped where p is not
// 16-byte aligned or bytes not a multiple of 16.
__device__ __forceinline__ void prefetch_l2(const void* p, int64_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if ((reinterpret_cast<uintptr_t>(p) & 15u) == 0 && bytes > 0 && bytes % 16 == 0 &&
      bytes <= INT_MAX) {
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p),
                 "r"(static_cast<uint32_t>(bytes))
                 : "memory");
  }
#endif
}

// kernel<<<grid, block, 0, s>>>(args...) with the programmatic-launch attribute as the thread's
// switch says. A launch error is left for launched() (cudaGetLastError) to report.
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, void* s, Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = t_dependent_launch ? 1 : 0;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = 0;
  cfg.stream = as_stream(s);
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  (void)cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}

__global__ void embed_kernel(const uint16_t* table, const int32_t* tokens, int64_t hidden,
                             float* x) {
  inputs_ready();
  const int64_t t = blockIdx.x;
  const uint16_t* row = table + int64_t{tokens[t]} * hidden;
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x)
    x[t * hidden + i] = bits_to_float(row[i]);
}

// f32 or bf16 (uint16_t) values as f32.
__device__ __forceinline__ float as_f32(float v) {
  return v;
}
__device__ __forceinline__ float as_f32(uint16_t v) {
  return bits_to_float(v);
}

// What an RMSNorm adds to x's row before it normalizes: a row of d (none when d is null), or
// token t's MoE combine (CombineAddend). begin_row(t) once per row, before the row's elements.
struct RowAddend {
  const float* d;
  int64_t dim;
  __device__ bool on() const { return d != nullptr; }
  __device__ void begin_row(int64_t) {}
  __device__ float operator()(int64_t t, int64_t i) const { return d[t * dim + i]; }
};

// Token t's MoE output at column i: its k expert rows ys[pos[t * k + e]] weighted by w[t * k + e]
// in e order, then + shared (cpu::moe_combine's order). moe_combine_kernel and the norm that
// takes the combine as its residual (add_rms_norm_combine) share it, so their bits agree. The
// token's k rows and weights are read once (begin_row, registers), and an element's k expert
// values are loaded before its sum starts, so they are in flight together: the loop used to read
// pos and w again for every element (the stores between may alias them) and wait on each load in
// turn (a single block per token, 21.6 µs a call at V2-Lite's decode: knowledge.md).
constexpr int kCombineMaxK = 16;
template <typename Y>
struct CombineAddend {
  const Y* ys;
  const int32_t* pos;
  const float* w;
  int k;
  const float* shared;
  int64_t hidden;
  int32_t rows[kCombineMaxK] = {};
  float weight[kCombineMaxK] = {};
  __device__ bool on() const { return true; }
  __device__ void begin_row(int64_t t) {
#pragma unroll
    for (int e = 0; e < kCombineMaxK; ++e) {
      if (e < k) {
        rows[e] = pos[t * k + e];
        weight[e] = w[t * k + e];
      }
    }
  }
  __device__ float operator()(int64_t t, int64_t i) const {
    float v[kCombineMaxK];
#pragma unroll
    for (int e = 0; e < kCombineMaxK; ++e) {
      if (e < k) v[e] = as_f32(ys[int64_t{rows[e]} * hidden + i]);
    }
    float acc = 0.0f;
#pragma unroll
    for (int e = 0; e < kCombineMaxK; ++e) {
      if (e < k) acc += v[e] * weight[e];
    }
    if (shared != nullptr) acc += shared[t * hidden + i];
    return acc;
  }
};

constexpr int kNormThreads = 256;

// One row's RMSNorm by the block (kNormThreads threads): with an addend (add_rms_norm,
// add_rms_norm_combine) x's row first gets the addend's row added, written back, by the thread
// that reads it again below; then the mean of squares in double, and w * (x * inv) to yf and / or
// yb (either may be null; yf may alias xr).
template <typename Addend>
__device__ __forceinline__ void norm_row(float* xr, int64_t t, int64_t dim, Addend add,
                                         const float* w, float eps, float* yf, uint16_t* yb) {
  __shared__ double partial[kNormThreads];
  if (add.on()) {
    add.begin_row(t);
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) xr[i] += add(t, i);
  }
  double sum = 0.0;
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) sum += static_cast<double>(xr[i]) * xr[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kNormThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  const float inv = static_cast<float>(
      1.0 / sqrt(partial[0] / static_cast<double>(dim) + static_cast<double>(eps)));
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = w[i] * (xr[i] * inv);
    if (yb != nullptr) yb[i] = float_to_bits(v);
    if (yf != nullptr) yf[i] = v;
  }
}

template <typename Addend>
__global__ void rms_norm_kernel(float* x, int64_t ldx, int64_t dim, Addend add, const float* w,
                                float eps, float* y_f32, int64_t ldy, uint16_t* y_bf16,
                                int64_t ldyb) {
  inputs_ready();
  const int64_t t = blockIdx.x;
  norm_row(x + t * ldx, t, dim, add, w, eps, y_f32 != nullptr ? y_f32 + t * ldy : nullptr,
           y_bf16 != nullptr ? y_bf16 + t * ldyb : nullptr);
}

__global__ void add_kernel(float* x, const float* d, int64_t n) {
  inputs_ready();
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) x[i] += d[i];
}

// cpu::Rope::apply's arithmetic for pair i of `dim` values at `position`.
__device__ __forceinline__ void rope_pair(const float* in, int i, int64_t position,
                                          const RopeArgs& r, float* lo, float* hi) {
  const int half = r.dim / 2;
  const float angle = static_cast<float>(position) * r.inv_freq[i];
  const float c = cosf(angle) * r.attention_factor, s = sinf(angle) * r.attention_factor;
  const float a = r.interleave ? in[2 * i] : in[i];
  const float b = r.interleave ? in[2 * i + 1] : in[i + half];
  *lo = a * c - b * s;
  *hi = b * c + a * s;
}

// A KV row's rope part: bf16 of RoPE at `position` over `in`'s rope.dim values, by the block.
__device__ __forceinline__ void rope_rows_tail(const float* in, int64_t position,
                                               const RopeArgs& rope, uint16_t* out) {
  const int half = rope.dim / 2;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    float lo, hi;
    rope_pair(in, i, position, rope, &lo, &hi);
    out[i] = float_to_bits(lo);
    out[i + half] = float_to_bits(hi);
  }
}

__global__ void kv_rows_kernel(const float* ckv, int64_t latent, const int32_t* positions,
                               RopeArgs rope, uint16_t* rows) {
  inputs_ready();
  const int64_t t = blockIdx.x;
  const int64_t row = latent + rope.dim;
  const float* in = ckv + t * row;
  uint16_t* out = rows + t * row;
  for (int64_t i = threadIdx.x; i < latent; i += blockDim.x) out[i] = float_to_bits(in[i]);
  rope_rows_tail(in + latent, positions[t], rope, out + latent);
}

// rms_norm of each row's latent part (f32 in place is not kept: the bf16 goes straight to the
// row) and kv_rows_kernel's RoPE of its rope part, one block per token (kNormThreads threads).
__global__ void __launch_bounds__(kNormThreads)
    kv_norm_rows_kernel(const float* ckv, int64_t latent, const float* w, float eps,
                        const int32_t* positions, RopeArgs rope, uint16_t* rows) {
  inputs_ready();
  const int64_t t = blockIdx.x;
  const int64_t row = latent + rope.dim;
  // norm_row writes through xr only with an addend: the row stays as the GEMM left it.
  float* in = const_cast<float*>(ckv) + t * row;
  uint16_t* out = rows + t * row;
  norm_row(in, t, latent, RowAddend{nullptr, 0}, w, eps, nullptr, out);
  rope_rows_tail(in + latent, positions[t], rope, out + latent);
}

// One block per (t, h).
__global__ void split_q_kernel(const float* q, int64_t H, int64_t nope, int64_t latent,
                               const int32_t* positions, RopeArgs rope, uint16_t* q_nope,
                               uint16_t* q_att) {
  inputs_ready();
  const int64_t th = blockIdx.x;
  const int64_t t = th / H;
  const int64_t qk = nope + rope.dim;
  const float* in = q + th * qk;
  for (int64_t i = threadIdx.x; i < nope; i += blockDim.x)
    q_nope[th * nope + i] = float_to_bits(in[i]);
  uint16_t* out = q_att + th * (latent + rope.dim) + latent;
  const int half = rope.dim / 2;
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    float lo, hi;
    rope_pair(in + nope, i, positions[t], rope, &lo, &hi);
    out[i] = float_to_bits(lo);
    out[i + half] = float_to_bits(hi);
  }
}

// SiLU(g) * u in f32 (cpu::silu_mul's expression): silu_mul_kernel and the fused expert GEMV
// share it, so their bits agree.
__device__ __forceinline__ float swiglu(float g, float u) {
  return g / (1.0f + expf(-g)) * u;
}

template <typename In>
__global__ void silu_mul_kernel(const In* gu, int64_t T, int64_t inter, uint16_t* act) {
  inputs_ready();
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i >= T * inter) return;
  const int64_t t = i / inter, c = i % inter;
  act[i] =
      float_to_bits(swiglu(as_f32(gu[t * 2 * inter + c]), as_f32(gu[t * 2 * inter + inter + c])));
}

__global__ void gather_rows_kernel(const uint16_t* src, const int32_t* idx, int64_t cols,
                                   uint16_t* dst) {
  inputs_ready();
  const int64_t r = blockIdx.x;
  const uint16_t* s = src + int64_t{idx[r]} * cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) dst[r * cols + i] = s[i];
}

template <typename Y>
__global__ void moe_combine_kernel(const Y* ys, const int32_t* pos, const float* w, int k,
                                   const float* shared, int64_t hidden, float* out) {
  inputs_ready();
  const int64_t t = blockIdx.x;
  CombineAddend<Y> c{ys, pos, w, k, shared, hidden};
  c.begin_row(t);
  for (int64_t i = threadIdx.x; i < hidden; i += blockDim.x) out[t * hidden + i] = c(t, i);
}

// cpu::top_k's order: larger first, equal values by lower index.
__device__ __forceinline__ bool better(float av, int ai, float bv, int bi) {
  return av > bv || (av == bv && ai < bi);
}

// The warp's best (value, index) under better(); every lane gets it.
__device__ __forceinline__ void warp_best(float* v, int* i) {
#pragma unroll
  for (int m = 16; m >= 1; m /= 2) {
    const float ov = __shfl_xor_sync(0xffffffffu, *v, m);
    const int oi = __shfl_xor_sync(0xffffffffu, *i, m);
    if (better(ov, oi, *v, *i)) {
      *v = ov;
      *i = oi;
    }
  }
}

// The best not-taken entry of values[0, n) under better(), over the warp (n > 0 entries not
// taken). An entry no lane holds is (-inf, INT_MAX), which loses to every real entry, -inf
// ones included (equal value, lower index).
__device__ __forceinline__ int warp_pick(const float* values, const bool* taken, int n) {
  const int lane = threadIdx.x % 32;
  float bv = -INFINITY;
  int bi = INT_MAX;
  for (int e = lane; e < n; e += 32) {
    if (!taken[e] && better(values[e], e, bv, bi)) {
      bv = values[e];
      bi = e;
    }
  }
  warp_best(&bv, &bi);
  return bi;
}

// A routing warp's shared scratch.
struct RouteScratch {
  float score[kRouteMaxExperts], choice[kRouteMaxExperts];
  bool taken[kRouteMaxExperts];
  float group_score[kRouteMaxGroups];
  bool group_taken[kRouteMaxGroups], keep[kRouteMaxGroups];
  int picked[32];
};

// Token t's experts and weights by one warp (cpu::route_token).
__device__ __forceinline__ void route_token(const float* logits, const RouteArgs& a, int64_t t,
                                            RouteScratch& sc, int32_t* chosen, float* weights) {
  float* score = sc.score;
  float* choice = sc.choice;
  bool* taken = sc.taken;
  float* group_score = sc.group_score;
  bool* group_taken = sc.group_taken;
  bool* keep = sc.keep;
  int* picked = sc.picked;
  const int lane = threadIdx.x % 32;
  const float* l = logits + t * a.E;
  const int E = a.E;
  const bool sigmoid = a.kind == RouterKind::kSigmoidNoauxTc;
  if (sigmoid) {
    for (int e = lane; e < E; e += 32) {
      const float s = 1.0f / (1.0f + expf(-l[e]));
      score[e] = s;
      choice[e] = s + a.bias[e];
    }
  } else {
    float mx = -INFINITY;
    for (int e = lane; e < E; e += 32) mx = fmaxf(mx, l[e]);
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, m));
    float sum = 0.0f;
    for (int e = lane; e < E; e += 32) {
      score[e] = expf(l[e] - mx);
      sum += score[e];
    }
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
    for (int e = lane; e < E; e += 32) {
      score[e] /= sum;
      choice[e] = score[e];
    }
  }
  for (int e = lane; e < E; e += 32) taken[e] = false;
  __syncwarp();
  const bool grouped = a.kind != RouterKind::kSoftmaxGreedy && a.topk_group < a.n_group;
  if (grouped) {
    const int per_group = E / a.n_group;
    for (int g = lane; g < a.n_group; g += 32) {
      const float* c = choice + g * per_group;
      int b0 = 0;
      for (int e = 1; e < per_group; ++e) {
        if (better(c[e], e, c[b0], b0)) b0 = e;
      }
      if (sigmoid) {  // the sum of the group's top-2
        int b1 = b0 == 0 ? 1 : 0;
        for (int e = 0; e < per_group; ++e) {
          if (e != b0 && better(c[e], e, c[b1], b1)) b1 = e;
        }
        group_score[g] = c[b0] + c[b1];
      } else {  // its max
        group_score[g] = c[b0];
      }
      group_taken[g] = false;
      keep[g] = false;
    }
    __syncwarp();
    for (int r = 0; r < a.topk_group; ++r) {
      const int g = warp_pick(group_score, group_taken, a.n_group);
      if (lane == 0) {
        group_taken[g] = true;
        keep[g] = true;
      }
      __syncwarp();
    }
    const float masked = sigmoid ? -INFINITY : 0.0f;
    for (int e = lane; e < E; e += 32) {
      if (!keep[e / per_group]) choice[e] = masked;
    }
    __syncwarp();
  }
  for (int i = 0; i < a.k; ++i) {
    const int e = warp_pick(choice, taken, E);
    if (lane == 0) {
      taken[e] = true;
      picked[i] = e;
    }
    __syncwarp();
  }
  if (lane == 0) {
    int32_t* ids = chosen + t * a.k;
    float* w = weights + t * a.k;
    if (sigmoid) {
      float sum = 0.0f;
      for (int i = 0; i < a.k; ++i) {
        w[i] = score[picked[i]];
        sum += w[i];
      }
      for (int i = 0; i < a.k; ++i) {
        float v = w[i];
        if (a.norm_topk_prob) v /= sum + 1e-20f;
        w[i] = v * a.routed_scaling_factor;
        ids[i] = picked[i];
      }
    } else {
      for (int i = 0; i < a.k; ++i) {
        w[i] = choice[picked[i]] * a.routed_scaling_factor;
        ids[i] = picked[i];
      }
    }
  }
}

// One warp per token.
__global__ void __launch_bounds__(32)
    route_kernel(const float* logits, RouteArgs a, int32_t* chosen, float* weights) {
  inputs_ready();
  __shared__ RouteScratch sc;
  route_token(logits, a, blockIdx.x, sc, chosen, weights);
}

constexpr int kPlanThreads = 256;
constexpr int kPlanMaxK = 16;

// One block (plan_moe_groups). Rows are numbered expert by expert and, within an expert, in
// token order. Counts by shared-memory atomics; then the tokens go in chunks of kPlanThreads, a
// thread per token: each thread marks its token's bit in the bitmap of each of its experts, and a
// token's row within its expert is the expert's running count plus the marked tokens before it in
// the chunk (popcounts). Each thread reads its token's k ids once: the first version scanned all
// T * k ids per expert, 0.6 ms per call at 1024 tokens (a DeepSeek-V2-Lite prefill chunk).
constexpr int kPlanWords = kPlanThreads / 32;  // bitmap words per expert
__device__ __forceinline__ void plan_block(const int32_t* chosen, const float* weights, int64_t T,
                                           int k, int E, int32_t* rows, int32_t* expert_begin,
                                           int32_t* combine_row, float* combine_weight,
                                           int32_t* row_of, int32_t* touched, int slots) {
  __shared__ int32_t begin[kRouteMaxExperts + 1];
  __shared__ int32_t running[kRouteMaxExperts];
  __shared__ uint32_t marks[kRouteMaxExperts][kPlanWords];
  const int64_t n = T * k;
  for (int e = threadIdx.x; e < E; e += blockDim.x) {
    begin[e + 1] = 0;
    running[e] = 0;
    for (int w = 0; w < kPlanWords; ++w) marks[e][w] = 0u;
  }
  __syncthreads();
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) atomicAdd(&begin[chosen[j] + 1], 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    begin[0] = 0;
    int u = 0;
    for (int e = 0; e < E; ++e) {
      if (touched != nullptr && begin[e + 1] > 0 && u < slots) touched[u++] = e;
      begin[e + 1] += begin[e];
    }
    for (; touched != nullptr && u < slots; ++u) touched[u] = -1;
  }
  __syncthreads();
  for (int e = threadIdx.x; e <= E; e += blockDim.x) expert_begin[e] = begin[e];
  const int word = threadIdx.x / 32;
  const uint32_t below = (1u << (threadIdx.x % 32)) - 1u;  // this thread's earlier lanes
  for (int64_t c = 0; c < T; c += kPlanThreads) {
    const int64_t t = c + threadIdx.x;
    int ids[kPlanMaxK];
    if (t < T) {
      for (int i = 0; i < k; ++i) {
        ids[i] = chosen[t * k + i];
        atomicOr(&marks[ids[i]][word], 1u << (threadIdx.x % 32));
      }
    }
    __syncthreads();
    if (t < T) {
      for (int i = 0; i < k; ++i) {
        const int e = ids[i];
        int before = __popc(marks[e][word] & below);
        for (int w = 0; w < word; ++w) before += __popc(marks[e][w]);
        const int32_t r = begin[e] + running[e] + before;
        row_of[t * k + i] = r;
        rows[r] = static_cast<int32_t>(t);
      }
    }
    __syncthreads();  // every rank of the chunk is read before the counts move on
    for (int e = threadIdx.x; e < E; e += blockDim.x) {
      int add = 0;
      for (int w = 0; w < kPlanWords; ++w) {
        add += __popc(marks[e][w]);
        marks[e][w] = 0u;
      }
      running[e] += add;
    }
    __syncthreads();
  }
  // row_of (global) was written by other threads of the block: visible after the barrier above.
  for (int64_t t = threadIdx.x; t < T; t += blockDim.x) {
    int order[kPlanMaxK];
    for (int i = 0; i < k; ++i) {  // insertion sort by expert id (distinct per token)
      int j = i;
      while (j > 0 && chosen[t * k + order[j - 1]] > chosen[t * k + i]) {
        order[j] = order[j - 1];
        --j;
      }
      order[j] = i;
    }
    for (int r = 0; r < k; ++r) {
      combine_row[t * k + r] = row_of[t * k + order[r]];
      combine_weight[t * k + r] = weights[t * k + order[r]];
    }
  }
}

__global__ void __launch_bounds__(kPlanThreads)
    plan_moe_kernel(const int32_t* chosen, const float* weights, int64_t T, int k, int E,
                    int32_t* rows, int32_t* expert_begin, int32_t* combine_row,
                    float* combine_weight, int32_t* row_of, int32_t* touched, int slots) {
  inputs_ready();
  plan_block(chosen, weights, T, k, E, rows, expert_begin, combine_row, combine_weight, row_of,
             touched, slots);
}

// Routing and its plan in one block, for passes of up to kRoutePlanMaxTokens tokens (decode,
// short verify): kRoutePlanWarps warps route the tokens (route_token, a warp each in turn), the
// block waits, then plans them (plan_block): route_kernel's and plan_moe_kernel's results, one
// launch instead of two.
constexpr int kRoutePlanWarps = 4;
__global__ void __launch_bounds__(kPlanThreads)
    route_plan_kernel(const float* logits, RouteArgs a, int64_t T, int32_t* chosen, float* weights,
                      MoePlanOut o, int slots) {
  inputs_ready();
  __shared__ RouteScratch sc[kRoutePlanWarps];
  const int warp = threadIdx.x / 32;
  if (warp < kRoutePlanWarps) {
    for (int64_t t = warp; t < T; t += kRoutePlanWarps) {
      route_token(logits, a, t, sc[warp], chosen, weights);
    }
  }
  __syncthreads();  // the chosen experts and weights (global) are the block's from here
  plan_block(chosen, weights, T, a.k, a.E, o.rows, o.expert_begin, o.combine_row, o.combine_weight,
             o.row_of, o.touched, slots);
}

template <typename T>
__device__ __forceinline__ float load(const T* p, int64_t i);
template <>
__device__ __forceinline__ float load<uint16_t>(const uint16_t* p, int64_t i) {
  return bits_to_float(p[i]);
}
template <>
__device__ __forceinline__ float load<float>(const float* p, int64_t i) {
  return p[i];
}
template <typename T>
__device__ __forceinline__ void store(T* p, int64_t i, float v);
template <>
__device__ __forceinline__ void store<uint16_t>(uint16_t* p, int64_t i, float v) {
  p[i] = float_to_bits(v);
}
template <>
__device__ __forceinline__ void store<float>(float* p, int64_t i, float v) {
  p[i] = v;
}

// One warp per output column j and up to kRows rows of x (the weight row is read once for them).
// Each (t, j) has its own accumulator; its order of operations depends on K only.
constexpr int kWarps = 8;
constexpr int kRows = 8;
// A lane's unit of work: 8 consecutive values of the row (one 16-byte load of bf16 weights).
constexpr int kChunk = 8;

__device__ __forceinline__ bool aligned16(const void* p) {
  return (reinterpret_cast<uintptr_t>(p) & 15u) == 0;
}

// v[0..7] = p[0..7] as f32: one 16-byte load (bf16) or two (f32) when `vec`, else 8 scalar loads.
// The values, and so every sum over them, are the same either way.
__device__ __forceinline__ void load8(const uint16_t* p, bool vec, float (&v)[kChunk]) {
  if (vec) {
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    v[0] = __uint_as_float(u.x << 16), v[1] = __uint_as_float(u.x & 0xffff0000u);
    v[2] = __uint_as_float(u.y << 16), v[3] = __uint_as_float(u.y & 0xffff0000u);
    v[4] = __uint_as_float(u.z << 16), v[5] = __uint_as_float(u.z & 0xffff0000u);
    v[6] = __uint_as_float(u.w << 16), v[7] = __uint_as_float(u.w & 0xffff0000u);
  } else {
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = bits_to_float(p[i]);
  }
}
__device__ __forceinline__ void load8(const float* p, bool vec, float (&v)[kChunk]) {
  if (vec) {
    const float4 a = *reinterpret_cast<const float4*>(p);
    const float4 b = *reinterpret_cast<const float4*>(p + 4);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
    v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  } else {
#pragma unroll
    for (int i = 0; i < kChunk; ++i) v[i] = p[i];
  }
}

// One warp's share of the row-invariant GEMM: output column j (weight row w, K values) for rows
// t0 .. t0 + rows - 1 of x (row stride ldx) into y (row stride ldy). The order of operations of
// each (t, j), which depends on K only: lane l owns the 8-value chunks c = l, l + 32, l + 64, ...
// (values 8c .. 8c + 7, the last chunk possibly short) and sums their products with FMAs in
// increasing k; then the 32 lanes fold as a butterfly. Loads are 16-byte vectors where the
// pointers and strides allow (never changing the arithmetic), so the weights stream at close to
// the memory bandwidth instead of 2-byte loads per lane.
template <typename TX, typename TW, typename TY>
__device__ __forceinline__ void ri_column(const TX* x, int64_t ldx, const TW* w, TY* y, int64_t ldy,
                                          int64_t j, int64_t t0, int rows, int64_t K) {
  const int lane = threadIdx.x % 32;
  float acc[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) acc[r] = 0.0f;
  const TX* xr = x + t0 * ldx;
  const bool wvec = aligned16(w);
  const bool xvec = aligned16(xr) && (ldx * static_cast<int64_t>(sizeof(TX))) % 16 == 0;
  const int64_t full = K / kChunk;
#pragma unroll 2
  for (int64_t c = lane; c < full; c += 32) {
    float wv[kChunk];
    load8(w + c * kChunk, wvec, wv);
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r < rows) {
        float xv[kChunk];
        load8(xr + r * ldx + c * kChunk, xvec, xv);
#pragma unroll
        for (int i = 0; i < kChunk; ++i) acc[r] = fmaf(xv[i], wv[i], acc[r]);
      }
    }
  }
  if (full * kChunk < K && lane == full % 32) {  // the short last chunk, after the lane's others
    for (int64_t k = full * kChunk; k < K; ++k) {
      const float wv = load(w, k);
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        if (r < rows) acc[r] = fmaf(load(xr, r * ldx + k), wv, acc[r]);
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
#pragma unroll
    for (int m = 16; m >= 1; m /= 2) acc[r] += __shfl_xor_sync(0xffffffffu, acc[r], m);
  }
  if (lane == 0) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      if (r < rows) store(y, (t0 + r) * ldy + j, acc[r]);
    }
  }
}

// One warp per output column j and up to kRows rows of x (the weight row is read once for them).
template <typename TX, typename TW, typename TY>
__global__ void __launch_bounds__(kWarps * 32)
    gemm_ri_kernel(const TX* x, int64_t ldx, int64_t sx, const TW* w, int64_t ldw, int64_t sw,
                   TY* y, int64_t ldy, int64_t sy, int64_t T, int64_t N, int64_t K) {
  inputs_ready();
  const int64_t j = int64_t{blockIdx.x} * kWarps + threadIdx.x / 32;
  const int64_t t0 = int64_t{blockIdx.y} * kRows;
  if (j >= N) return;
  const int64_t b = blockIdx.z;
  const int rows = static_cast<int>(T - t0 < kRows ? T - t0 : kRows);
  ri_column(x + b * sx, ldx, w + b * sw + j * ldw, y + b * sy, ldy, j, t0, rows, K);
}

// The grouped form: blockIdx.z is a slot of the touched-expert list; its expert's rows are
// [begin[e], begin[e + 1]) of x and y, its weights ws[e]. A warp walks its expert's rows kRows at
// a time (the weight row, 2 * K bytes, comes from L1 / L2 after the first tile), so the grid does
// not grow with the pass's rows: at 128 rows most slots' experts have a few rows, and a grid of
// ceil(T / kRows) row tiles per slot would be mostly empty blocks.
template <typename TY>
__global__ void __launch_bounds__(kWarps * 32)
    gemm_grouped_ri_kernel(const uint16_t* x, int64_t ldx, const uint16_t* const* ws,
                           const int32_t* begin, const int32_t* touched, TY* y, int64_t ldy,
                           int64_t N, int64_t K) {
  inputs_ready();
  const int e = touched[blockIdx.z];
  if (e < 0) return;
  const int64_t b = begin[e], n = begin[e + 1] - b;
  const int64_t j = int64_t{blockIdx.x} * kWarps + threadIdx.x / 32;
  if (j >= N) return;
  for (int64_t t0 = 0; t0 < n; t0 += kRows) {
    const int rows = static_cast<int>(n - t0 < kRows ? n - t0 : kRows);
    ri_column(x + b * ldx, ldx, ws[e] + j * K, y + b * ldy, ldy, j, t0, rows, K);
  }
}

// The grouped expert GEMM on tensor cores. A block of kTcWarps warps owns kTcCols = 16 * kTcWarps
// output columns of one touched expert (blockIdx.z a slot of the touched list, blockIdx.x a
// column tile) and walks the expert's rows 16 at a time: the 16 x kTcK slice of x for the row
// tile goes to shared memory (rows past the expert's end as zeros), each warp multiplies it by
// its 16 columns' weights (w [N, K] row-major read as the col-major K x N operand, straight from
// global memory: each weight is read once per row tile) with one 16x16x16 MMA per k step, k in
// increasing order, and the f32 tile goes through shared memory to the expert's valid rows of y.
constexpr int kTcWarps = 4;
constexpr int kTcCols = 16 * kTcWarps;
constexpr int kTcK = 256;  // k values of x staged per step

template <typename TY>
__global__ void __launch_bounds__(kTcWarps * 32)
    gemm_grouped_tc_kernel(const uint16_t* x, const uint16_t* const* ws, const int32_t* begin,
                           const int32_t* touched, TY* y, int64_t N, int64_t K) {
  inputs_ready();
  namespace wmma = nvcuda::wmma;
  __shared__ __align__(32) __nv_bfloat16 xs[16 * kTcK];
  __shared__ __align__(32) float out[kTcWarps][16 * 16];
  const int e = touched[blockIdx.z];
  if (e < 0) return;
  const int64_t b = begin[e], n = begin[e + 1] - b;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int64_t j0 = int64_t{blockIdx.x} * kTcCols + warp * 16;
  const auto* w = reinterpret_cast<const __nv_bfloat16*>(ws[e]) + j0 * K;
  for (int64_t t0 = 0; t0 < n; t0 += 16) {
    const int rows = static_cast<int>(n - t0 < 16 ? n - t0 : 16);
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int64_t k0 = 0; k0 < K; k0 += kTcK) {
      const int kw = static_cast<int>(K - k0 < kTcK ? K - k0 : kTcK);  // a multiple of 16
      __syncthreads();  // the previous step's reads of xs are done
      // 16 rows x kw values, 8 values (16 bytes) per thread and step; zeros past the expert.
      for (int i = threadIdx.x; i < 16 * (kw / 8); i += kTcWarps * 32) {
        const int r = i / (kw / 8), c = (i % (kw / 8)) * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (r < rows) v = *reinterpret_cast<const uint4*>(x + (b + t0 + r) * K + k0 + c);
        *reinterpret_cast<uint4*>(xs + r * kTcK + c) = v;
      }
      __syncthreads();
      for (int kk = 0; kk < kw; kk += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, xs + kk, kTcK);
        wmma::load_matrix_sync(fb, w + k0 + kk, static_cast<unsigned>(K));
        wmma::mma_sync(acc, fa, fb, acc);
      }
    }
    wmma::store_matrix_sync(out[warp], acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = lane; i < rows * 16; i += 32) {
      const int r = i / 16, c = i % 16;
      store(y, (b + t0 + r) * N + j0 + c, out[warp][r * 16 + c]);
    }
    __syncwarp();
  }
}

// The GEMV (a row or a few per weight matrix: the grouped experts of short passes, and
// gemm_row_invariant's bf16 calls of up to kGemvMaxRows rows): a warp per COLS columns, the rows R
// at a time (R = 1, 2 or 4, by the call's most rows: fewer accumulators at decode). Lane l owns
// the 8-value chunks l, l + 32, ... of K (K % 8 == 0): per chunk it loads the COLS weight rows' 16
// bytes (independent loads, in flight together, kUnroll chunks at once) and each row's x chunk (L1
// / L2 after the first column tile), then the 32 lanes fold each (row, column) sum by a butterfly:
// ri_column's order whatever R, COLS and the unrolling, so every form gives the same bits.
// Measured at one row on an H100 (dev/micro/gemv.cu, docs/perf/knowledge.md): the experts' 6 x
// [2816 x 2048] at 2.69 TB/s in 4-column warps (a copy of the same bytes: 2.80), while single
// matrices such as o_proj [2048 x 2048] want more, narrower warps (1 column, 8 chunks in flight:
// 6.0 µs against 8.0 in 4-column warps and 11.9 for cuBLAS).
constexpr int kGemvWarps = 8;    // the grouped form's warps per block
constexpr int kGemvCols = 4;     // the grouped form's columns per warp
constexpr int kGemvMaxRows = 4;  // R's largest value

// Where a GEMV's operand rows are: x row i at p + i * ld (StridedRows), or at p + idx[i] * ld
// (IndexedRows: the routed rows of a MoE layer read in place from the token rows, no gather).
struct StridedRows {
  const uint16_t* p;
  int64_t ld;
  __device__ const uint16_t* operator()(int64_t i) const { return p + i * ld; }
};
struct IndexedRows {
  const uint16_t* p;
  const int32_t* idx;
  int64_t ld;
  __device__ const uint16_t* operator()(int64_t i) const { return p + int64_t{idx[i]} * ld; }
};

// A warp's COLS weight rows: consecutive ones from w (`cols` of them real), or (PairedCols, the
// SwiGLU form) the first COLS / 2 from w and the second COLS / 2 from w + half * ld: gate column
// j beside up column j of a gate_up matrix ([gate; up], half = inter), `cols` real in each half.
template <int COLS>
struct ConsecutiveCols {
  const uint16_t* w;
  int64_t ld;
  int cols;
  __device__ const uint16_t* operator()(int c) const { return w + c * ld; }
  __device__ bool real(int c) const { return c < cols; }
};
template <int COLS>
struct PairedCols {
  const uint16_t* w;
  int64_t ld, half;
  int cols;
  __device__ const uint16_t* operator()(int c) const {
    return c < COLS / 2 ? w + c * ld : w + (half + c - COLS / 2) * ld;
  }
  __device__ bool real(int c) const { return c % (COLS / 2) < cols; }
};

// One warp's sums of x rows [0, n) (xrow) against COLS weight rows (wcol), R rows at a time:
// `epilogue(t0, rows, acc)` gets each group's sums, every lane holding every one.
template <int R, int COLS, typename XRows, typename WCols, typename Epilogue>
__device__ __forceinline__ void gemv_sums(XRows xrow, WCols wcol, int64_t n, int64_t K,
                                          Epilogue&& epilogue) {
  const int lane = threadIdx.x % 32;
  const int64_t chunks = K / kChunk;
  // Chunks in flight per lane (each COLS weight loads): more where a warp has fewer columns.
  constexpr int kUnroll = COLS == 1 ? 8 : (R == 1 ? 4 : 2);
  for (int64_t t0 = 0; t0 < n; t0 += R) {
    const int rows = static_cast<int>(n - t0 < R ? n - t0 : R);
    const uint16_t* xr[R];
#pragma unroll
    for (int r = 0; r < R; ++r) xr[r] = xrow(t0 + (r < rows ? r : 0));
    float acc[R][COLS];
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int c = 0; c < COLS; ++c) acc[r][c] = 0.0f;
    }
#pragma unroll kUnroll
    for (int64_t ch = lane; ch < chunks; ch += 32) {
      float wv[COLS][kChunk];
#pragma unroll
      for (int c = 0; c < COLS; ++c) {
        if (wcol.real(c)) {
          load8(wcol(c) + ch * kChunk, true, wv[c]);
        } else {
#pragma unroll
          for (int i = 0; i < kChunk; ++i) wv[c][i] = 0.0f;
        }
      }
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r < rows) {
          float xv[kChunk];
          load8(xr[r] + ch * kChunk, true, xv);
#pragma unroll
          for (int c = 0; c < COLS; ++c) {
#pragma unroll
            for (int i = 0; i < kChunk; ++i) acc[r][c] = fmaf(xv[i], wv[c][i], acc[r][c]);
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int c = 0; c < COLS; ++c) {
#pragma unroll
        for (int m = 16; m >= 1; m /= 2) {
          acc[r][c] += __shfl_xor_sync(0xffffffffu, acc[r][c], m);
        }
      }
    }
    epilogue(t0, rows, acc);
  }
}

// One warp's COLS columns (`cols` of them real): weight rows w + c * ldw, x rows x + t * ldx,
// outputs y[t * ldy + c], for rows t < n. Lane (r * COLS + c) % 32 stores (r, c).
template <int R, int COLS, typename TY>
__device__ __forceinline__ void gemv_columns(const uint16_t* x, int64_t ldx, const uint16_t* w,
                                             int64_t ldw, TY* y, int64_t ldy, int64_t n, int cols,
                                             int64_t K) {
  const int lane = threadIdx.x % 32;
  gemv_sums<R, COLS>(StridedRows{x, ldx}, ConsecutiveCols<COLS>{w, ldw, cols}, n, K,
                     [&](int64_t t0, int rows, const float(&acc)[R][COLS]) {
#pragma unroll
                       for (int r = 0; r < R; ++r) {
#pragma unroll
                         for (int c = 0; c < COLS; ++c) {
                           if (lane == (r * COLS + c) % 32 && r < rows && c < cols) {
                             store(y, (t0 + r) * ldy + c, acc[r][c]);
                           }
                         }
                       }
                     });
}

// The grouped form: blockIdx.z a slot of the touched-expert list (x and y rows [begin[e],
// begin[e + 1]), weights ws[e]).
template <typename TY, int R>
__global__ void __launch_bounds__(kGemvWarps * 32)
    gemm_grouped_gemv_kernel(const uint16_t* x, const uint16_t* const* ws, const int32_t* begin,
                             const int32_t* touched, TY* y, int64_t N, int64_t K) {
  inputs_ready();
  const int e = touched[blockIdx.z];
  if (e < 0) return;
  const int64_t b = begin[e], n = begin[e + 1] - b;
  const int64_t j0 = (int64_t{blockIdx.x} * kGemvWarps + threadIdx.x / 32) * kGemvCols;
  if (j0 >= N) return;
  const int cols = static_cast<int>(N - j0 < kGemvCols ? N - j0 : kGemvCols);
  gemv_columns<R, kGemvCols>(x + b * K, K, ws[e] + j0 * K, K, y + b * N + j0, N, n, cols, K);
}

// The experts' gate_up GEMV with the gather before it and the SwiGLU after it: routed row i reads
// token row x[row_token[i]] in place, a warp owns gate columns j0, j0 + 1 and the matching up
// columns inter + j0, inter + j0 + 1 (gemm_grouped_gemv's sums, bit for bit), and writes
// act[i, j] = bf16(swiglu(gate, up)), silu_mul's value of those sums.
constexpr int kSwigluCols = 4;  // two gate and two up columns a warp

template <int R>
__global__ void __launch_bounds__(kGemvWarps * 32)
    grouped_gemv_swiglu_kernel(const uint16_t* x, const int32_t* row_token,
                               const uint16_t* const* ws, const int32_t* begin,
                               const int32_t* touched, uint16_t* act, int64_t inter, int64_t K) {
  inputs_ready();
  constexpr int kHalf = kSwigluCols / 2;
  const int e = touched[blockIdx.z];
  if (e < 0) return;
  const int64_t b = begin[e], n = begin[e + 1] - b;
  const int64_t j0 = (int64_t{blockIdx.x} * kGemvWarps + threadIdx.x / 32) * kHalf;
  if (j0 >= inter) return;
  const int cols = static_cast<int>(inter - j0 < kHalf ? inter - j0 : kHalf);
  const int lane = threadIdx.x % 32;
  uint16_t* out = act + b * inter + j0;
  gemv_sums<R, kSwigluCols>(
      IndexedRows{x, row_token + b, K}, PairedCols<kSwigluCols>{ws[e] + j0 * K, K, inter, cols}, n,
      K, [&](int64_t t0, int rows, const float(&acc)[R][kSwigluCols]) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
#pragma unroll
          for (int c = 0; c < kHalf; ++c) {
            if (lane == (r * kHalf + c) % 32 && r < rows && c < cols) {
              out[(t0 + r) * inter + c] = float_to_bits(swiglu(acc[r][c], acc[r][c + kHalf]));
            }
          }
        }
      });
}

// The strided-batched form of gemm_row_invariant (blockIdx.z the batch index): a warp per
// column, kGemvPlainWarps warps per block.
constexpr int kGemvPlainWarps = 4;

template <typename TY, int R>
__global__ void __launch_bounds__(kGemvPlainWarps * 32)
    gemv_kernel(const uint16_t* x, int64_t ldx, int64_t sx, const uint16_t* w, int64_t ldw,
                int64_t sw, TY* y, int64_t ldy, int64_t sy, int64_t T, int64_t N, int64_t K) {
  const int64_t j = int64_t{blockIdx.x} * kGemvPlainWarps + threadIdx.x / 32;
  const int64_t z = blockIdx.z;
  if (j < N && threadIdx.x % 32 == 0) prefetch_l2(w + z * sw + j * ldw, K * 2);
  inputs_ready();
  if (j >= N) return;
  gemv_columns<R, 1>(x + z * sx, ldx, w + z * sw + j * ldw, ldw, y + z * sy + j, ldy, T, 1, K);
}

// R for a call whose weight matrices get at most `rows` rows each.
template <typename F>
void with_gemv_rows(int64_t rows, F&& f) {
  if (rows <= 1) {
    f(std::integral_constant<int, 1>{});
  } else if (rows == 2) {
    f(std::integral_constant<int, 2>{});
  } else {
    f(std::integral_constant<int, kGemvMaxRows>{});
  }
}

template <typename TY>
Status launch_gemv(const RowInvariantGemm& g, cudaStream_t s) {
  const dim3 grid(blocks_for(g.N, kGemvPlainWarps), 1, static_cast<unsigned>(g.batch));
  with_gemv_rows(g.T, [&](auto r) {
    launch(gemv_kernel<TY, decltype(r)::value>, grid, kGemvPlainWarps * 32, s,
           static_cast<const uint16_t*>(g.x), g.ldx, g.stride_x, static_cast<const uint16_t*>(g.w),
           g.ldw, g.stride_w, static_cast<TY*>(g.y), g.ldy, g.stride_y, g.T, g.N, g.K);
  });
  return launched("gemm_row_invariant (gemv)");
}

template <typename TX, typename TW, typename TY>
Status launch_ri(const RowInvariantGemm& g, cudaStream_t s) {
  const dim3 grid(blocks_for(g.N, kWarps), blocks_for(g.T, kRows), static_cast<unsigned>(g.batch));
  launch(gemm_ri_kernel<TX, TW, TY>, grid, kWarps * 32, s, static_cast<const TX*>(g.x), g.ldx,
         g.stride_x, static_cast<const TW*>(g.w), g.ldw, g.stride_w, static_cast<TY*>(g.y), g.ldy,
         g.stride_y, g.T, g.N, g.K);
  return launched("gemm_row_invariant");
}

__global__ void rope_rows_kernel(float* x, int64_t heads, const int32_t* positions, RopeArgs rope) {
  inputs_ready();
  const int64_t rh = blockIdx.x;  // row * heads + head
  float* v = x + rh * rope.dim;
  const int half = rope.dim / 2;
  const int64_t position = positions[rh / heads];
  // Every pair reads its two inputs before any thread writes (pairs are disjoint).
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    float lo, hi;
    rope_pair(v, i, position, rope, &lo, &hi);
    v[i] = lo;
    v[i + half] = hi;
  }
}

__global__ void to_bf16_kernel(const float* x, int64_t n, uint16_t* y) {
  inputs_ready();
  const int64_t i = int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < n) y[i] = float_to_bits(x[i]);
}

__global__ void write_gqa_rows_kernel(const float* k, const float* v, int64_t width,
                                      const int32_t* slots, uint16_t* pool) {
  inputs_ready();
  const int64_t t = blockIdx.x;
  uint16_t* row = pool + int64_t{slots[t]} * 2 * width;
  for (int64_t i = threadIdx.x; i < width; i += blockDim.x) {
    row[i] = float_to_bits(k[t * width + i]);
    row[width + i] = float_to_bits(v[t * width + i]);
  }
}

constexpr int kAttnThreads = 128;
constexpr int kAttnMaxDim = 512;

// One block per (head, block row, request).
__global__ void __launch_bounds__(kAttnThreads) dflash_attention_kernel(DFlashAttentionArgs a) {
  inputs_ready();
  __shared__ float q[kAttnMaxDim];
  __shared__ double red[kAttnThreads];
  const int h = blockIdx.x, i = blockIdx.y, b = blockIdx.z;
  const int d = a.dim, g = h / (a.heads / a.kv_heads);
  const int64_t kvw = int64_t{a.kv_heads} * d;
  const int64_t row = int64_t{b} * a.block + i;
  const int64_t C = a.ctx_rows[b], S = C + a.block, first = a.ctx_first[b];
  const int32_t* table = a.pages + a.page_offset[b];
  const float* qr = a.q + (row * a.heads + h) * d;
  for (int e = threadIdx.x; e < d; e += blockDim.x) q[e] = qr[e];
  __syncthreads();

  float* p = a.scores + (row * a.heads + h) * a.max_keys;
  // Key j's row: a context row of the pool (bf16) or the block's own (f32).
  float mx = -INFINITY;
  for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
    float s = 0.0f;
    if (j < C) {
      const int64_t pos = first + j;
      const int64_t slot = int64_t{table[pos / a.page_size]} * a.page_size + pos % a.page_size;
      const uint16_t* kr = a.pool + slot * 2 * kvw + int64_t{g} * d;
      for (int e = 0; e < d; ++e) s += q[e] * bits_to_float(kr[e]);
    } else {
      const float* kr = a.k_block + (int64_t{b} * a.block + (j - C)) * kvw + int64_t{g} * d;
      for (int e = 0; e < d; ++e) s += q[e] * kr[e];
    }
    s *= a.scale;
    p[j] = s;
    mx = fmaxf(mx, s);
  }
  red[threadIdx.x] = mx;
  __syncthreads();
  for (int w = kAttnThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] = fmax(red[threadIdx.x], red[threadIdx.x + w]);
    __syncthreads();
  }
  const float m = static_cast<float>(red[0]);
  __syncthreads();
  double sum = 0.0;
  for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
    const float e = expf(p[j] - m);
    p[j] = e;
    sum += e;
  }
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int w = kAttnThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  const float inv = static_cast<float>(1.0 / red[0]);
  // Output element e: the value sum in key order (p[] was written by other threads: synced above).
  uint16_t* out = a.out + (row * a.heads + h) * d;
  for (int e = threadIdx.x; e < d; e += blockDim.x) {
    float acc = 0.0f;
    for (int64_t j = 0; j < C; ++j) {
      const int64_t pos = first + j;
      const int64_t slot = int64_t{table[pos / a.page_size]} * a.page_size + pos % a.page_size;
      acc += p[j] * bits_to_float(a.pool[slot * 2 * kvw + kvw + int64_t{g} * d + e]);
    }
    for (int64_t j = 0; j < a.block; ++j) {
      acc += p[C + j] * a.v_block[(int64_t{b} * a.block + j) * kvw + int64_t{g} * d + e];
    }
    out[e] = float_to_bits(acc * inv);
  }
}

}  // namespace

Status embed(const uint16_t* table, const int32_t* tokens, int64_t T, int64_t hidden, float* x,
             void* stream) {
  if (T == 0) return Status::Ok();
  launch(embed_kernel, static_cast<unsigned>(T), 256, stream, table, tokens, hidden, x);
  return launched("embed");
}

Status rms_norm(const float* x, int64_t ldx, int64_t T, int64_t dim, const float* w, float eps,
                float* y_f32, int64_t ldy, uint16_t* y_bf16, int64_t ldyb, void* stream) {
  if (T == 0) return Status::Ok();
  // x is only read without a residual (the kernel's pointer is non-const for add_rms_norm).
  launch(rms_norm_kernel<RowAddend>, static_cast<unsigned>(T), kNormThreads, stream,
         const_cast<float*>(x), ldx, dim, RowAddend{nullptr, dim}, w, eps, y_f32, ldy, y_bf16,
         ldyb);
  return launched("rms_norm");
}

Status add_rms_norm(float* x, const float* d, int64_t T, int64_t dim, const float* w, float eps,
                    float* y_f32, int64_t ldy, uint16_t* y_bf16, int64_t ldyb, void* stream) {
  if (T == 0) return Status::Ok();
  launch(rms_norm_kernel<RowAddend>, static_cast<unsigned>(T), kNormThreads, stream, x, dim, dim,
         RowAddend{d, dim}, w, eps, y_f32, ldy, y_bf16, ldyb);
  return launched("add_rms_norm");
}
namespace {
Status check_combine_k(int k, const char* what) {
  if (k < 1 || k > kCombineMaxK) {
    return invalid_argument(std::string(what) + ": k " + std::to_string(k) + " outside [1, " +
                            std::to_string(kCombineMaxK) + "]");
  }
  return Status::Ok();
}
}  // namespace

Status add_rms_norm_combine(float* x, const MoeCombineArgs& c, int64_t T, int64_t dim,
                            const float* w, float eps, float* y_f32, int64_t ldy, uint16_t* y_bf16,
                            int64_t ldyb, void* stream) {
  MLASPEC_RETURN_IF_ERROR(check_combine_k(c.k, "add_rms_norm_combine"));
  if (T == 0) return Status::Ok();
  const dim3 grid(static_cast<unsigned>(T));
  if (c.ys_bf16) {
    launch(
        rms_norm_kernel<CombineAddend<uint16_t>>, grid, kNormThreads, stream, x, dim, dim,
        CombineAddend<uint16_t>{static_cast<const uint16_t*>(c.ys), c.pos, c.w, c.k, c.shared, dim},
        w, eps, y_f32, ldy, y_bf16, ldyb);
  } else {
    launch(rms_norm_kernel<CombineAddend<float>>, grid, kNormThreads, stream, x, dim, dim,
           CombineAddend<float>{static_cast<const float*>(c.ys), c.pos, c.w, c.k, c.shared, dim}, w,
           eps, y_f32, ldy, y_bf16, ldyb);
  }
  return launched("add_rms_norm_combine");
}

Status add_inplace(float* x, const float* d, int64_t n, void* stream) {
  if (n == 0) return Status::Ok();
  launch(add_kernel, blocks_for(n, 256), 256, stream, x, d, n);
  return launched("add");
}

Status kv_norm_rows(const float* ckv, int64_t T, int64_t latent, const float* w, float eps,
                    const int32_t* positions, const RopeArgs& rope, uint16_t* rows, void* stream) {
  if (T == 0) return Status::Ok();
  launch(kv_norm_rows_kernel, static_cast<unsigned>(T), kNormThreads, stream, ckv, latent, w, eps,
         positions, rope, rows);
  return launched("kv_norm_rows");
}

Status kv_rows(const float* ckv, int64_t T, int64_t latent, const int32_t* positions,
               const RopeArgs& rope, uint16_t* rows, void* stream) {
  if (T == 0) return Status::Ok();
  launch(kv_rows_kernel, static_cast<unsigned>(T), 256, stream, ckv, latent, positions, rope, rows);
  return launched("kv_rows");
}

Status split_q(const float* q, int64_t T, int64_t H, int64_t nope, int64_t latent,
               const int32_t* positions, const RopeArgs& rope, uint16_t* q_nope, uint16_t* q_att,
               void* stream) {
  if (T == 0) return Status::Ok();
  launch(split_q_kernel, static_cast<unsigned>(T * H), 128, stream, q, H, nope, latent, positions,
         rope, q_nope, q_att);
  return launched("split_q");
}

Status silu_mul(const float* gu, int64_t T, int64_t inter, uint16_t* act, void* stream) {
  if (T == 0) return Status::Ok();
  launch(silu_mul_kernel<float>, blocks_for(T * inter, 256), 256, stream, gu, T, inter, act);
  return launched("silu_mul");
}

Status silu_mul(const uint16_t* gu, int64_t T, int64_t inter, uint16_t* act, void* stream) {
  if (T == 0) return Status::Ok();
  launch(silu_mul_kernel<uint16_t>, blocks_for(T * inter, 256), 256, stream, gu, T, inter, act);
  return launched("silu_mul (bf16)");
}

// One block per row: each thread scans its strided values in increasing index (strict > keeps
// the lowest index of equal values), then the block keeps the larger value, the lower index on
// ties. A NaN or +inf anywhere, or no finite value, makes the row -1 (model::check_logits).
constexpr int kArgmaxThreads = 256;
__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_rows_kernel(const float* logits, int64_t vocab, int32_t* out) {
  inputs_ready();
  const float* row = logits + int64_t{blockIdx.x} * vocab;
  float best = -INFINITY;
  int32_t best_i = INT32_MAX;
  int bad = 0, finite = 0;
  for (int64_t i = threadIdx.x; i < vocab; i += kArgmaxThreads) {
    const float v = row[i];
    bad |= isnan(v) || v == INFINITY;
    finite |= v != -INFINITY;
    if (v > best) best = v, best_i = static_cast<int32_t>(i);
  }
  const auto better = [](float v, int32_t i, float bv, int32_t bi) {
    return v > bv || (v == bv && i < bi);
  };
  for (int m = 16; m >= 1; m /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, best, m);
    const int32_t i = __shfl_xor_sync(0xffffffffu, best_i, m);
    if (better(v, i, best, best_i)) best = v, best_i = i;
  }
  bad = __syncthreads_or(bad);
  finite = __syncthreads_or(finite);
  __shared__ float vs[kArgmaxThreads / 32];
  __shared__ int32_t is[kArgmaxThreads / 32];
  const int warp = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0) vs[warp] = best, is[warp] = best_i;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kArgmaxThreads / 32; ++w) {
      if (better(vs[w], is[w], best, best_i)) best = vs[w], best_i = is[w];
    }
    out[blockIdx.x] = bad || !finite ? -1 : best_i;
  }
}

Status argmax_rows(const float* logits, int64_t rows, int64_t vocab, int32_t* out, void* stream) {
  if (rows == 0) return Status::Ok();
  if (vocab <= 0 || rows > 0x7fffffff) {
    return invalid_argument("argmax_rows: " + std::to_string(rows) + " rows of vocab " +
                            std::to_string(vocab));
  }
  launch(argmax_rows_kernel, static_cast<unsigned>(rows), kArgmaxThreads, stream, logits, vocab,
         out);
  return launched("argmax_rows");
}

Status gather_rows(const uint16_t* src, const int32_t* idx, int64_t n, int64_t cols, uint16_t* dst,
                   void* stream) {
  if (n == 0) return Status::Ok();
  launch(gather_rows_kernel, static_cast<unsigned>(n), 256, stream, src, idx, cols, dst);
  return launched("gather_rows");
}

Status moe_combine(const float* ys, const int32_t* pos, const float* w, int k, const float* shared,
                   int64_t T, int64_t hidden, float* out, void* stream) {
  MLASPEC_RETURN_IF_ERROR(check_combine_k(k, "moe_combine"));
  if (T == 0) return Status::Ok();
  launch(moe_combine_kernel<float>, static_cast<unsigned>(T), 256, stream, ys, pos, w, k, shared,
         hidden, out);
  return launched("moe_combine");
}

Status moe_combine(const uint16_t* ys, const int32_t* pos, const float* w, int k,
                   const float* shared, int64_t T, int64_t hidden, float* out, void* stream) {
  MLASPEC_RETURN_IF_ERROR(check_combine_k(k, "moe_combine (bf16)"));
  if (T == 0) return Status::Ok();
  launch(moe_combine_kernel<uint16_t>, static_cast<unsigned>(T), 256, stream, ys, pos, w, k, shared,
         hidden, out);
  return launched("moe_combine (bf16)");
}

namespace {
Status check_route(const RouteArgs& a) {
  if (a.E < 1 || a.E > kRouteMaxExperts || a.k < 1 || a.k > a.E || a.k > 32 || a.n_group < 1 ||
      a.n_group > kRouteMaxGroups || a.E % a.n_group != 0 || a.topk_group < 1 ||
      (a.kind == RouterKind::kSigmoidNoauxTc && (a.bias == nullptr || a.E / a.n_group < 2))) {
    return invalid_argument("route: E " + std::to_string(a.E) + ", k " + std::to_string(a.k) +
                            ", n_group " + std::to_string(a.n_group) + " outside the kernel's " +
                            "limits (E <= " + std::to_string(kRouteMaxExperts) +
                            ", k <= 32, n_group <= " + std::to_string(kRouteMaxGroups) +
                            " dividing E; noaux_tc: a bias and >= 2 experts per group)");
  }
  return Status::Ok();
}

Status check_plan(int k, int E) {
  if (E < 1 || E > kRouteMaxExperts || k < 1 || k > kPlanMaxK) {
    return invalid_argument("plan_moe: E " + std::to_string(E) + " or k " + std::to_string(k) +
                            " outside [1, " + std::to_string(kRouteMaxExperts) + "] / [1, " +
                            std::to_string(kPlanMaxK) + "]");
  }
  return Status::Ok();
}
}  // namespace

Status route(const float* logits, int64_t T, const RouteArgs& a, int32_t* chosen, float* weights,
             void* stream) {
  MLASPEC_RETURN_IF_ERROR(check_route(a));
  if (T == 0) return Status::Ok();
  launch(route_kernel, static_cast<unsigned>(T), 32, stream, logits, a, chosen, weights);
  return launched("route");
}

Status plan_moe(const int32_t* chosen, const float* weights, int64_t T, int k, int E, int32_t* rows,
                int32_t* expert_begin, int32_t* combine_row, float* combine_weight, int32_t* row_of,
                int32_t* touched, void* stream) {
  MLASPEC_RETURN_IF_ERROR(check_plan(k, E));
  launch(plan_moe_kernel, 1, kPlanThreads, stream, chosen, weights, T, k, E, rows, expert_begin,
         combine_row, combine_weight, row_of, touched, static_cast<int>(touched_slots(T, k, E)));
  return launched("plan_moe");
}

Status route_and_plan(const float* logits, int64_t T, const RouteArgs& a, int32_t* chosen,
                      float* weights, const MoePlanOut& o, void* stream) {
  MLASPEC_RETURN_IF_ERROR(check_route(a));
  MLASPEC_RETURN_IF_ERROR(check_plan(a.k, a.E));
  if (T > kRoutePlanMaxTokens) {
    MLASPEC_RETURN_IF_ERROR(route(logits, T, a, chosen, weights, stream));
    return plan_moe(chosen, weights, T, a.k, a.E, o.rows, o.expert_begin, o.combine_row,
                    o.combine_weight, o.row_of, o.touched, stream);
  }
  launch(route_plan_kernel, 1, kPlanThreads, stream, logits, a, T, chosen, weights, o,
         static_cast<int>(touched_slots(T, a.k, a.E)));
  return launched("route_plan");
}

// The grouped expert GEMMs' shared launch: the grid's expert slots (touched_slots; 0 = nothing to
// do), refused past the grid's 65535, and `go(grid_z, y)` with y typed by g.y_type.
template <typename Go>
Status launch_grouped(const GroupedGemm& g, const char* name, Go&& go) {
  const int64_t slots = touched_slots(g.max_rows, g.k, g.experts);
  if (g.max_rows == 0 || g.N == 0 || slots == 0) return Status::Ok();
  if (slots > 65535) {
    return invalid_argument(std::string(name) + ": " + std::to_string(slots) +
                            " expert slots exceed the grid's 65535");
  }
  const auto z = static_cast<unsigned>(slots);
  if (g.y_type == GemmType::kF32) {
    go(z, static_cast<float*>(g.y));
  } else {
    go(z, static_cast<uint16_t*>(g.y));
  }
  return launched(name);
}

Status gemm_grouped_row_invariant(const GroupedGemm& g, void* stream) {
  return launch_grouped(g, "gemm_grouped_row_invariant", [&](unsigned z, auto* y) {
    using TY = std::remove_pointer_t<decltype(y)>;
    launch(gemm_grouped_ri_kernel<TY>, dim3(blocks_for(g.N, kWarps), 1, z), kWarps * 32, stream,
           g.x, g.K, g.w, g.begin, g.touched, y, g.N, g.N, g.K);
  });
}

bool grouped_gemv_fits(int64_t N, int64_t K) {
  return N > 0 && K > 0 && K % kChunk == 0;
}

Status gemm_grouped_gemv(const GroupedGemm& g, void* stream) {
  if (!grouped_gemv_fits(g.N, g.K)) {
    return invalid_argument("gemm_grouped_gemv: K " + std::to_string(g.K) +
                            " must be a positive multiple of " + std::to_string(kChunk));
  }
  return launch_grouped(g, "gemm_grouped_gemv", [&](unsigned z, auto* y) {
    using TY = std::remove_pointer_t<decltype(y)>;
    with_gemv_rows(g.max_rows, [&](auto r) {
      launch(gemm_grouped_gemv_kernel<TY, decltype(r)::value>,
             dim3(blocks_for(g.N, kGemvWarps * kGemvCols), 1, z), kGemvWarps * 32, stream, g.x, g.w,
             g.begin, g.touched, y, g.N, g.K);
    });
  });
}

Status gemm_grouped_gemv_swiglu(const GroupedGemm& g, const int32_t* row_token, void* stream) {
  if (g.N % 2 != 0 || !grouped_gemv_fits(g.N, g.K)) {
    return invalid_argument("gemm_grouped_gemv_swiglu: N " + std::to_string(g.N) +
                            " must be even (gate and up halves) and K " + std::to_string(g.K) +
                            " a positive multiple of " + std::to_string(kChunk));
  }
  if (g.y_type != GemmType::kBF16) {
    return invalid_argument("gemm_grouped_gemv_swiglu: writes bf16 activations (y_type kBF16)");
  }
  const int64_t inter = g.N / 2;
  return launch_grouped(g, "gemm_grouped_gemv_swiglu", [&](unsigned z, auto*) {
    with_gemv_rows(g.max_rows, [&](auto r) {
      launch(grouped_gemv_swiglu_kernel<decltype(r)::value>,
             dim3(blocks_for(inter, kGemvWarps * kSwigluCols / 2), 1, z), kGemvWarps * 32, stream,
             g.x, row_token, g.w, g.begin, g.touched, static_cast<uint16_t*>(g.y), inter, g.K);
    });
  });
}

bool grouped_tc_fits(int64_t N, int64_t K) {
  return N > 0 && K > 0 && N % kTcCols == 0 && K % 16 == 0;
}

Status gemm_grouped_tc(const GroupedGemm& g, void* stream) {
  if (!grouped_tc_fits(g.N, g.K)) {
    return invalid_argument("gemm_grouped_tc: N " + std::to_string(g.N) + " and K " +
                            std::to_string(g.K) + " must be multiples of " +
                            std::to_string(kTcCols) + " and 16");
  }
  return launch_grouped(g, "gemm_grouped_tc", [&](unsigned z, auto* y) {
    using TY = std::remove_pointer_t<decltype(y)>;
    launch(gemm_grouped_tc_kernel<TY>, dim3(static_cast<unsigned>(g.N / kTcCols), 1, z),
           kTcWarps * 32, stream, g.x, g.w, g.begin, g.touched, y, g.N, g.K);
  });
}

bool gemv_serves(const RowInvariantGemm& g) {
  const auto a16 = [](const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; };
  return g.x_type == GemmType::kBF16 && g.w_type == GemmType::kBF16 && g.T <= kGemvMaxRows &&
         g.K % kChunk == 0 && a16(g.x) && a16(g.w) && g.ldx % kChunk == 0 && g.ldw % kChunk == 0 &&
         g.stride_x % kChunk == 0 && g.stride_w % kChunk == 0;
}

Status gemm_row_invariant(const RowInvariantGemm& g, void* stream) {
  if (g.T == 0 || g.N == 0) return Status::Ok();
  if (g.T > int64_t{65535} * kRows || g.batch > 65535) {
    return invalid_argument("gemm_row_invariant: T " + std::to_string(g.T) + " exceeds " +
                            std::to_string(int64_t{65535} * kRows) + " or batch " +
                            std::to_string(g.batch) + " exceeds 65535");
  }
  const cudaStream_t s = as_stream(stream);
  using B = uint16_t;
  if (g.x_type == GemmType::kF32 && g.w_type == GemmType::kF32 && g.y_type == GemmType::kF32) {
    return launch_ri<float, float, float>(g, s);
  }
  if (g.x_type == GemmType::kBF16 && g.w_type == GemmType::kBF16) {
    if (gemv_serves(g)) {
      return g.y_type == GemmType::kF32 ? launch_gemv<float>(g, s) : launch_gemv<B>(g, s);
    }
    return g.y_type == GemmType::kF32 ? launch_ri<B, B, float>(g, s) : launch_ri<B, B, B>(g, s);
  }
  return invalid_argument("gemm_row_invariant: unsupported type combination");
}

Status rope_rows(float* x, int64_t rows, int64_t heads, const int32_t* positions,
                 const RopeArgs& rope, void* stream) {
  if (rows == 0 || heads == 0) return Status::Ok();
  launch(rope_rows_kernel, static_cast<unsigned>(rows * heads), 64, stream, x, heads, positions,
         rope);
  return launched("rope_rows");
}

Status to_bf16(const float* x, int64_t n, uint16_t* y, void* stream) {
  if (n == 0) return Status::Ok();
  launch(to_bf16_kernel, blocks_for(n, 256), 256, stream, x, n, y);
  return launched("to_bf16");
}

Status write_gqa_rows(const float* k, const float* v, int64_t T, int64_t width,
                      const int32_t* slots, uint16_t* pool, void* stream) {
  if (T == 0) return Status::Ok();
  launch(write_gqa_rows_kernel, static_cast<unsigned>(T), 256, stream, k, v, width, slots, pool);
  return launched("write_gqa_rows");
}

Status dflash_attention(const DFlashAttentionArgs& a, void* stream) {
  if (a.batch == 0) return Status::Ok();
  if (a.dim > kAttnMaxDim || a.kv_heads <= 0 || a.heads % a.kv_heads != 0 || a.block > 65535 ||
      a.batch > 65535) {
    return invalid_argument("dflash_attention: head_dim " + std::to_string(a.dim) + " (max " +
                            std::to_string(kAttnMaxDim) + "), heads " + std::to_string(a.heads) +
                            " / kv_heads " + std::to_string(a.kv_heads) + ", block " +
                            std::to_string(a.block) + ", batch " + std::to_string(a.batch) +
                            " are not served");
  }
  const dim3 grid(static_cast<unsigned>(a.heads), static_cast<unsigned>(a.block),
                  static_cast<unsigned>(a.batch));
  launch(dflash_attention_kernel, grid, kAttnThreads, stream, a);
  return launched("dflash_attention");
}

}  // namespace mlaspec::model::gpu
