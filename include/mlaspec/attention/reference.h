// CPU reference computations for verify attention (host tensors only).
#pragma once

#include <cstdint>
#include <vector>

#include "mlaspec/attention/verify.h"

namespace mlaspec::attn {

// Full verify attention on the CPU: fp32 accumulation, multi-threaded over (request, token,
// head). Validates first; on error writes nothing.
Status cpu_verify(const VerifyArgs& args);

// Partial over absolute key positions [kv_begin, kv_end) (see verify.h). o_part/lse_part are f32
// host tensors shaped like out/lse.
Status cpu_verify_partial(const VerifyArgs& args, int64_t kv_begin, int64_t kv_end,
                          TensorView o_part, TensorView lse_part);

// Every function here takes ragged calls too (verify.h): shapes below are then [T, ...] instead of
// [B, q_len, ...].

// One row (request b, query token i, head h) of the full call, in the reference's fp32
// arithmetic: writes o[512] (before bf16 rounding) and returns the row's lse. For spot checks of
// large problems. `args` must be valid (validate_verify_inputs) and on the host.
float cpu_verify_row(const VerifyArgs& args, int64_t b, int64_t i, int64_t h, float* o);

// fp8 math (VerifyOptions::fp8_math; fp8_e4m3 KV only): the arithmetic of an fp8 tensor-core
// kernel, on the CPU, one query row (token, head) at a time:
//   Q    s_q = max_d |q_d| / 448 (1 for a zero row); q8_d = e4m3(q_d / s_q), round to nearest
//        even (fp8 KV's own rounding, float_to_fp8e4m3_bits)
//   S_j  = (sum_d q8_d * code_jd) * (s_q * kv_scale * sm_scale); the products are exact in f32,
//        the sum runs in d order
//   p_j  = exp(S_j - max S) in f32; lse = max S + log(sum_j p_j)
//   P·V  p8_j = e4m3(p_j * 448) (kFp8MathPScale); out_d = (sum_j p8_j * code_jd) * kv_scale /
//        sum_j p8_j, sums in j order (weights that sum to 1: out stays in the hull of V)
// Its error against the exact attention of the same KV: fp8_math_row_bound. Validates first; on
// error writes nothing.
inline constexpr float kFp8MathPScale = 448.0f;
Status cpu_verify_fp8_math(const VerifyArgs& args);

// The error fp8 math may have on one row (request b, query token i, head h) against the exact
// attention of the same q and KV (the fp64 oracle), from the row's own data. With E the largest
// score error that rounding Q to e4m3 can cause (sum_d |q_d - s_q q8_d| |k_jd| * sm_scale, plus
// the f32 sum's rounding), the exact softmax weights move by a factor within e^(+-2E), and
// rounding P to e4m3 (relative 2^-4; absolute 2^-10 / 448 below e4m3's normals) moves the
// normalized weights by at most 2 (2^-4 + n 2^-10 / 448) / (1 - 2^-4 - n 2^-10 / 448) in sum
// (the largest p is 1). So:
//   |lse - exact| <= lse_bound = E + 1e-6 (1 + |exact|)
//   |out_d - exact_d| <= out_bound = max_jd |v_jd| * (e^(2E) - 1 + that sum + n 2^-23 + 2^-8)
// (the last two: the f32 P·V sum and out's bf16 rounding). `args` must be valid and on the host.
//
// `sums` says how the implementation sums its products. kF32: in f32 (the CPU reference). The
// CUDA backends (kHopperTensorCores) run the same roundings of Q and P, but sum on Hopper's e4m3
// tensor cores, whose accumulator keeps about 13 fraction bits of the running sum (truncated; the
// model used here: one k32 instruction returns C + sum of its 32 products within 2^-12 (|C| + sum
// of their magnitudes), a factor 2 over the truncation for the addends' alignment), and they apply
// the online softmax per 64-key tile and merge splits. Hence, with A = 2^-12:
//   - S sums 18 instructions (576 / 32) in the accumulator: E gains sm_scale x 18 A x the row's
//     sum_d |s_q q8_d| |k_jd| (the same magnitude gamma multiplies);
//   - P V is summed from zero over each tile's 64 keys (two instructions) and added in f32, so
//     the weights' products lose at most 2 A of their magnitude: out gains max|V| x 2^-11;
//   - P is rounded against the running max, which the kernels keep exact (P <= 1): a key's weight
//     keeps its relative 2^-4 and its absolute 2^-10 / 448 is relative to a max no larger than the
//     row's, and each split normalises by its own rounded sum, so the P term above holds per split
//     and, by the convexity of the merge, for the row; the merge's f32 steps (exp, log, weighted
//     sums of normalised partials) add ~1e-6 of the lse, hence lse slack 2e-6 (1 + |exact|).
// These are stated bounds, checked by the GPU tests (tests/gpu/fp8_math_cuda_test.cc).
enum class Fp8MathSums { kF32, kHopperTensorCores };
struct Fp8MathRowBound {
  double lse_bound = 0;
  double out_bound = 0;
};
Fp8MathRowBound fp8_math_row_bound(const VerifyArgs& args, int64_t b, int64_t i, int64_t h,
                                   double exact_lse, Fp8MathSums sums = Fp8MathSums::kF32);

// fp64 oracle for tests: out and lse as doubles, [B, q_len, H, 512] and [B, q_len, H] row-major
// ([T, H, 512] and [T, H] for a ragged call).
struct OracleResult {
  std::vector<double> out;
  std::vector<double> lse;
};
Result<OracleResult> oracle_verify(const VerifyArgs& args);

}  // namespace mlaspec::attn
