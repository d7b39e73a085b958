// Deterministic mode's block fold: level 1 of its fixed merge tree (SplitPlan::block_splits,
// kDeterministicBlockChunks in verify.h). A block's partials (o_s normalised, lse_s) are folded in
// split order into a running (o, lse), starting from the empty state (o = 0, lse = -inf):
//   skip s if lse_s = -inf (an empty partial leaves the state as it is, bitwise);
//   lse' = max(lse, lse_s) + log1p(exp(-|lse - lse_s|))   (lse = -inf: lse' = lse_s)
//   o'   = fma(exp(lse_s - lse'), o_s, exp(lse - lse') * o)   (lse = -inf: fma(1, o_s, 0))
// with exp and log as the MUFU's ex2 / lg2 in the log2 domain (a step is a short dependent
// chain: the combine folds 8 per block, and expf / log1pf made that chain cost decode calls
// 3-8 µs, measured). Both the 64-row kernel (folding as it computes a block's splits) and the
// combine (folding the splits' partials) call these functions with the same operands, so both
// give the same bits: the products and sums are written as intrinsics (never contracted), and the
// MUFU ops are the same instructions wherever they are inlined.
#pragma once

#include <cuda_runtime.h>

#include "ptx.cuh"

namespace mlaspec::attn::cuda {

struct FoldWeights {
  float lse;    // the state's lse after the step
  float w_old;  // weight of the state's o
  float w_new;  // weight of the new partial's o
};

// One step's weights, for a non-empty partial (lse_new finite) and a state of lse `lse_acc`.
__device__ __forceinline__ FoldWeights fold_weights(float lse_acc, float lse_new) {
  if (lse_acc == -INFINITY) return {lse_new, 0.f, 1.f};
  constexpr float kLog2e = 1.4426950408889634f, kLn2 = 0.69314718055994531f;
  const float m = fmaxf(lse_acc, lse_new);
  // log2 of the smaller partial's weight relative to the larger's (<= 0).
  const float d = __fmul_rn(-fabsf(__fsub_rn(lse_acc, lse_new)), kLog2e);
  const float lse = __fadd_rn(m, __fmul_rn(kLn2, ptx::lg2(__fadd_rn(1.f, ptx::ex2(d)))));
  return {lse, ptx::ex2(__fmul_rn(__fsub_rn(lse_acc, lse), kLog2e)),
          ptx::ex2(__fmul_rn(__fsub_rn(lse_new, lse), kLog2e))};
}

// o' for one element: the state's o `acc` and the new partial's `o`.
__device__ __forceinline__ float fold_value(const FoldWeights& w, float acc, float o) {
  return __fmaf_rn(w.w_new, o, __fmul_rn(w.w_old, acc));
}

}  // namespace mlaspec::attn::cuda
