// The CUDA runtime's kernels (kernels.cu), callable from plain C++ (runtime.cc). bf16 tensors are
// passed as uint16_t bits; every call is asynchronous on `stream` and returns the launch error.
#pragma once

#include <cstdint>

#include "mlaspec/core/status.h"
#include "mlaspec/model/config.h"

namespace mlaspec::model::gpu {

// The launch error of the kernel just launched (cudaGetLastError), as "<what> launch failed: ...".
Status launched(const char* what);

// Whether this thread's launches of the kernels below may start before the kernel ahead of them on
// the stream ends (programmatic dependent launch: kernels.cu); on unless set off. Each CUDA
// runtime sets it at the start of its passes (MLASPEC_CUDA_PDL); the results are the same bits.
void set_dependent_launch(bool on);

// x[t, :] = f32(table[tokens[t], :]) for t < T.
Status embed(const uint16_t* table, const int32_t* tokens, int64_t T, int64_t hidden, float* x,
             void* stream);

// RMSNorm of T rows of `dim` values (row strides ldx / ldy): y = w * (x / sqrt(mean(x^2) + eps)),
// the mean of squares summed in double as the CPU runtime does. Writes y_f32 and/or y_bf16
// (either may be null; y_f32 may alias x).
Status rms_norm(const float* x, int64_t ldx, int64_t T, int64_t dim, const float* w, float eps,
                float* y_f32, int64_t ldy, uint16_t* y_bf16, int64_t ldyb, void* stream);

// x[i] += d[i] for i < n.
Status add_inplace(float* x, const float* d, int64_t n, void* stream);

// The residual add and the RMSNorm after it in one launch: x[t, :] += d[t, :] (written back to x),
// then rms_norm of the sums. Bitwise add_inplace followed by rms_norm (the same f32 add, the same
// reduction). x and d are T rows of `dim` values (stride dim); outputs as rms_norm's.
Status add_rms_norm(float* x, const float* d, int64_t T, int64_t dim, const float* w, float eps,
                    float* y_f32, int64_t ldy, uint16_t* y_bf16, int64_t ldyb, void* stream);

// A MoE layer's combine (moe_combine's arguments) taken by the RMSNorm after it.
struct MoeCombineArgs {
  const void* ys = nullptr;  // the routed rows' outputs [T * k, hidden]: f32, or bf16 if ys_bf16
  bool ys_bf16 = false;
  const int32_t* pos = nullptr;
  const float* w = nullptr;
  int k = 0;
  const float* shared = nullptr;  // [T, hidden] or null
};
// moe_combine and add_rms_norm in one launch: x[t, :] += the combine of token t (written back to
// x), then rms_norm of the sums; bitwise moe_combine into d followed by add_rms_norm(x, d) (the
// same combine sums in the same order, the same add, the same reduction). hidden = dim.
Status add_rms_norm_combine(float* x, const MoeCombineArgs& c, int64_t T, int64_t dim,
                            const float* w, float eps, float* y_f32, int64_t ldy, uint16_t* y_bf16,
                            int64_t ldyb, void* stream);

// RoPE parameters (cpu::Rope's inv_freq on the device, and its config).
struct RopeArgs {
  const float* inv_freq = nullptr;  // [dim / 2]
  int dim = 64;
  float attention_factor = 1.0f;
  bool interleave = false;
};

// KV rows: rows[t] = bf16([ckv[t, 0:latent] | rope(ckv[t, latent:latent + dim], positions[t])]),
// row length latent + dim, ckv row stride latent + dim; positions on the device.
Status kv_rows(const float* ckv, int64_t T, int64_t latent, const int32_t* positions,
               const RopeArgs& rope, uint16_t* rows, void* stream);

// rms_norm of ckv's latent part (weights w, eps; ckv not written) then kv_rows, in one launch: the
// same bits as rms_norm(ckv, ..., y_f32 = ckv) followed by kv_rows (the KV rows of a layer:
// kv_a_layernorm(c) | rope(k_pe)).
Status kv_norm_rows(const float* ckv, int64_t T, int64_t latent, const float* w, float eps,
                    const int32_t* positions, const RopeArgs& rope, uint16_t* rows, void* stream);

// From q [T, H, nope + dim] f32: q_nope [T, H, nope] bf16 and the rope part of the attention's q
// rows, q_att[t, h, latent:latent + dim] = bf16(rope(q_pe, positions[t])) (q_att row length
// latent + dim; the latent part is the W_UK GEMM's; positions on the device).
Status split_q(const float* q, int64_t T, int64_t H, int64_t nope, int64_t latent,
               const int32_t* positions, const RopeArgs& rope, uint16_t* q_nope, uint16_t* q_att,
               void* stream);

// act[t, i] = bf16(silu(gu[t, i]) * gu[t, inter + i]) (gu = [gate | up] per row).
Status silu_mul(const float* gu, int64_t T, int64_t inter, uint16_t* act, void* stream);
// The same from bf16 gate / up values (the long passes' grouped cuBLAS GEMMs write bf16).
Status silu_mul(const uint16_t* gu, int64_t T, int64_t inter, uint16_t* act, void* stream);

// out[r] = model::argmax of f32 row r of `vocab` values (the lowest index of the largest), or -1
// for a row model::check_logits refuses (a NaN or +inf, or no finite value); r < rows.
Status argmax_rows(const float* logits, int64_t rows, int64_t vocab, int32_t* out, void* stream);

// dst[r, :] = src[idx[r], :] for r < n (bf16 rows of `cols`).
Status gather_rows(const uint16_t* src, const int32_t* idx, int64_t n, int64_t cols, uint16_t* dst,
                   void* stream);

// out[t, :] = sum_{i < k} w[t * k + i] * ys[pos[t * k + i], :] in i order, then + shared[t, :]
// when shared is not null (the CPU runtime's order: experts ascending, then the shared experts).
// 1 <= k <= 16 (a token's rows are held in registers), refused otherwise.
Status moe_combine(const float* ys, const int32_t* pos, const float* w, int k, const float* shared,
                   int64_t T, int64_t hidden, float* out, void* stream);
// The same from bf16 expert outputs (the long passes' grouped cuBLAS GEMMs).
Status moe_combine(const uint16_t* ys, const int32_t* pos, const float* w, int k,
                   const float* shared, int64_t T, int64_t hidden, float* out, void* stream);

// MoE routing on the device, cpu::route_token's rule for each of T tokens (one warp per token):
// scores (sigmoid, or softmax over the E logits), for kSigmoidNoauxTc + bias[e] to choose, the
// group stage (kSigmoidNoauxTc: group score = sum of its top-2 choices; kSoftmaxGroupLimited-
// Greedy: its max; the topk_group best groups kept, the others' choices masked to -inf / 0;
// skipped when topk_group >= n_group, where it keeps every group), then the top k choices, larger
// first and equal ones by lower index, as cpu::top_k. weights[t * k + i] = the chosen expert's
// score (normalised over the k when norm_topk_prob, sigmoid only) * routed_scaling_factor, in the
// CPU's order of operations. E <= kRouteMaxExperts, n_group <= kRouteMaxGroups, E % n_group == 0,
// k <= E.
inline constexpr int kRouteMaxExperts = 512;
inline constexpr int kRouteMaxGroups = 32;
struct RouteArgs {
  RouterKind kind = RouterKind::kSigmoidNoauxTc;
  int E = 0, k = 0, n_group = 1, topk_group = 1;
  bool norm_topk_prob = false;
  float routed_scaling_factor = 1.0f;
  const float* bias = nullptr;  // [E] e_score_correction_bias (kSigmoidNoauxTc)
};
Status route(const float* logits, int64_t T, const RouteArgs& a, int32_t* chosen, float* weights,
             void* stream);

// plan_moe_groups (../gpu_plan.h) on the device, one block: from chosen / weights [T, k] writes
// rows [T * k] (each expert's tokens, experts ascending, tokens in order), expert_begin [E + 1]
// (int32), combine_row / combine_weight [T * k] (a token's rows in ascending expert order),
// row_of [T * k] (scratch: the row of each (t, i)) and, when not null, touched
// [touched_slots(T, k, E)]: the experts with rows, ascending, then -1. E <= kRouteMaxExperts,
// k <= 16, a token's k experts distinct (as route gives them).
inline int64_t touched_slots(int64_t T, int k, int E) {
  return T * k < E ? T * k : E;
}
Status plan_moe(const int32_t* chosen, const float* weights, int64_t T, int k, int E, int32_t* rows,
                int32_t* expert_begin, int32_t* combine_row, float* combine_weight, int32_t* row_of,
                int32_t* touched, void* stream);

// route then plan_moe, the same results, in one launch for passes of up to kRoutePlanMaxTokens
// tokens (a block routes its few tokens, then plans them); two launches above that. Refuses what
// either refuses.
inline constexpr int64_t kRoutePlanMaxTokens = 16;
struct MoePlanOut {
  int32_t* rows = nullptr;
  int32_t* expert_begin = nullptr;
  int32_t* combine_row = nullptr;
  float* combine_weight = nullptr;
  int32_t* row_of = nullptr;
  int32_t* touched = nullptr;  // may be null (no touched list)
};
Status route_and_plan(const float* logits, int64_t T, const RouteArgs& a, int32_t* chosen,
                      float* weights, const MoePlanOut& o, void* stream);

// The row-invariant GEMM (ForwardOptions::deterministic): for b < batch, t < T, j < N
//   y[b * stride_y + t * ldy + j] = sum_k x[b * stride_x + t * ldx + k] * w[b * stride_w + j * ldw
//   + k]
// with f32 accumulation in one fixed order per element (lane l of a warp sums the 8-value chunks
// c = l, l + 32, ... of k, values 8c .. 8c + 7, in increasing k; the 32 lanes then fold as a
// butterfly), which depends on K only, never on T. 16-byte loads where alignment allows.
enum class GemmType : uint8_t { kBF16, kF32 };
struct RowInvariantGemm {
  const void* x = nullptr;
  GemmType x_type = GemmType::kBF16;
  int64_t ldx = 0, stride_x = 0;
  const void* w = nullptr;
  GemmType w_type = GemmType::kBF16;
  int64_t ldw = 0, stride_w = 0;
  void* y = nullptr;
  GemmType y_type = GemmType::kF32;
  int64_t ldy = 0, stride_y = 0;
  int64_t T = 0, N = 0, K = 0;
  int batch = 1;
};
Status gemm_row_invariant(const RowInvariantGemm& g, void* stream);

// Whether gemm_row_invariant runs `g` as a GEMV (a warp per output column, several 16-byte weight
// loads in flight per lane; the same bits as its other kernel): bf16 x and w, T <= 4 rows,
// K % 8 == 0, x and w 16-byte aligned and every stride a multiple of 8 values. At one row it beat
// cuBLAS on every DeepSeek-V2-Lite projection measured (1.06-1.44x on an H100), so default mode
// sends one-row calls to it too (at 2 and 4 rows cuBLAS won on some shapes).
bool gemv_serves(const RowInvariantGemm& g);

// ---- The DFlash drafter's forward (dflash_runtime.cc) ----

// In place over x [rows, heads, dim]: row r's heads rotated at positions[r] (cpu::Rope::apply's
// arithmetic; rope.dim == dim).
Status rope_rows(float* x, int64_t rows, int64_t heads, const int32_t* positions,
                 const RopeArgs& rope, void* stream);

// y[i] = bf16(x[i]) for i < n.
Status to_bf16(const float* x, int64_t n, uint16_t* y, void* stream);

// GQA pool rows: pool[slots[t] * 2 * width + i] = bf16(k[t, i]) and
// pool[slots[t] * 2 * width + width + i] = bf16(v[t, i]) for i < width (one layer's rows
// [K | V], kv::KvLayout::gqa).
Status write_gqa_rows(const float* k, const float* v, int64_t T, int64_t width,
                      const int32_t* slots, uint16_t* pool, void* stream);

// The DFlash block's attention (model/dflash.h: non-causal inside the block): for request b,
// block row i and head h, the keys are the request's C_b context rows of the pool (positions
// ctx_first[b] .. ctx_first[b] + C_b - 1, through its page table) and then the block's own Q rows;
// out[(b * Q + i), h * dim : (h + 1) * dim] = bf16(softmax(q · k * scale) · v). Scores are f32 dot
// products in d order, the softmax's sum in double, the value sum per output element in key order
// (the CPU runtime's orders).
struct DFlashAttentionArgs {
  const float* q = nullptr;              // [B * Q, heads, dim]
  const float* k_block = nullptr;        // [B * Q, kv_heads * dim]
  const float* v_block = nullptr;        // [B * Q, kv_heads * dim]
  const uint16_t* pool = nullptr;        // this layer's rows [slot, 2 * kv_heads * dim] (bf16)
  const int32_t* pages = nullptr;        // the requests' page tables, concatenated
  const int32_t* page_offset = nullptr;  // [B]: where request b's table starts in `pages`
  const int32_t* ctx_first = nullptr;    // [B]
  const int32_t* ctx_rows = nullptr;     // [B]: C_b
  int batch = 0, block = 0, heads = 0, kv_heads = 0, dim = 0, page_size = 0;
  int64_t max_keys = 0;  // max_b C_b + block: the scores scratch's row length
  float scale = 1.0f;
  float* scores = nullptr;  // scratch [B * Q * heads, max_keys]
  uint16_t* out = nullptr;  // [B * Q, heads * dim] bf16
};
Status dflash_attention(const DFlashAttentionArgs& a, void* stream);

// The row-invariant GEMM over the routed experts of a MoE layer, with no host round trip: for
// every expert e of the touched list (plan_moe) and its rows r in [begin[e], begin[e + 1]),
//   y[r, j] = sum_k x[r, k] * w[e][j, k]      (x bf16 [rows, K], w[e] bf16 [N, K], y [rows, N])
// each element in gemm_row_invariant's order (lane l sums its 8-value chunks, then a butterfly),
// so the result is bitwise that of gemm_row_invariant per expert (a warp walks its expert's rows
// kRows at a time; the grid does not depend on them). max_rows bounds any expert's
// rows (the tokens T: an expert serves a token once); the grid has touched_slots(max_rows, k,
// experts) slots.
struct GroupedGemm {
  const uint16_t* x = nullptr;
  const uint16_t* const* w = nullptr;  // device array [experts] of device pointers
  const int32_t* begin = nullptr;      // [experts + 1]
  const int32_t* touched = nullptr;    // [touched_slots(max_rows, k, experts)]
  void* y = nullptr;
  GemmType y_type = GemmType::kF32;
  int64_t max_rows = 0, N = 0, K = 0;
  int k = 1, experts = 0;
};
Status gemm_grouped_row_invariant(const GroupedGemm& g, void* stream);

// The same grouped expert GEMM on tensor cores (bf16 MMA, f32 accumulation; default mode): each
// row's sums depend on that row and the weights only (a 16-row MMA tile never mixes rows, and the
// k order is fixed), so a token's result does not depend on its batchmates, but the order differs
// from gemm_grouped_row_invariant's, so deterministic mode keeps that one. Needs N % 64 == 0 and
// K % 16 == 0 (grouped_tc_fits); expert weights 32-byte aligned.
bool grouped_tc_fits(int64_t N, int64_t K);
Status gemm_grouped_tc(const GroupedGemm& g, void* stream);

// The same grouped expert GEMM for passes where each expert has a row or a few (decode, short
// verify blocks; deterministic mode at every size): a memory-bound GEMV. A warp owns 4 output
// columns of one touched expert and walks the expert's rows 1, 2 or 4 at a time (by max_rows),
// each lane streaming 16-byte chunks of the 4 weight rows (several loads in flight per lane, where
// the row-invariant kernel's warp per column has one) and folding its sums by a butterfly. Each
// sum is formed in gemm_row_invariant's order (lane l's 8-value chunks l, l + 32, ... by FMAs in
// increasing k, then the same butterfly), so the results are bitwise the grouped row-invariant
// kernel's; it only reads more columns per warp. Needs K % 8 == 0 (grouped_gemv_fits); x rows and
// expert weights 16-byte aligned.
bool grouped_gemv_fits(int64_t N, int64_t K);
Status gemm_grouped_gemv(const GroupedGemm& g, void* stream);

// The experts' gate_up pass of a MoE layer in one launch: gather_rows, gemm_grouped_gemv into f32
// and silu_mul, bit for bit, without the gathered rows or the f32 gate_up in memory. g.x is the
// token rows [T, K] (not the gathered ones): routed row i reads token row row_token[i] (plan_moe's
// `rows`); g.N = 2 * inter (gate_up: gate rows, then up rows); g.y the bf16 activations [rows,
// inter] (y_type kBF16). Needs N even and grouped_gemv_fits(N, K).
Status gemm_grouped_gemv_swiglu(const GroupedGemm& g, const int32_t* row_token, void* stream);

}  // namespace mlaspec::model::gpu
