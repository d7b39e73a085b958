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

// fp64 oracle for tests: out and lse as doubles, [B, q_len, H, 512] and [B, q_len, H] row-major
// ([T, H, 512] and [T, H] for a ragged call).
struct OracleResult {
  std::vector<double> out;
  std::vector<double> lse;
};
Result<OracleResult> oracle_verify(const VerifyArgs& args);

}  // namespace mlaspec::attn
