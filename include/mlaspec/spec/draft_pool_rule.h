// The draft pool's dtype rule: the one place it is decided. It is the speculative layer's policy;
// the kvcache layer only creates pools of the dtype it is given.
//
// The drafter's KV pool takes the target's KV dtype, unless the drafter's attention backend cannot
// read it (BackendCaps::kv_dtypes); then it takes the drafter's compute dtype (bf16). An explicit
// override wins if the draft backend can read it, and is an error otherwise. Every decision is
// logged (log_info) with its reason.
//
// Why one place: engines that let each component pick have crashed on fp8 targets (the draft
// attention could not read fp8 K) or silently converted the whole fp8 cache to bf16 every step.
#pragma once

#include <optional>
#include <string>

#include "mlaspec/attention/backend.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/core/status.h"

namespace mlaspec::spec {

struct DTypeDecision {
  DType dtype = DType::kBF16;
  std::string reason;  // "target KV dtype fp8_e4m3; draft backend cpu_reference reads it"
};

// target_kv_dtype and draft_compute_dtype must be KV dtypes (bf16, fp8_e4m3 or fp8_tile).
// Errors: kInvalidArgument for a non-KV dtype (target, compute or override); kUnsupported when the
// override, or both the target dtype and the compute dtype, are unreadable by the draft backend.
Result<DTypeDecision> choose_draft_kv_dtype(DType target_kv_dtype,
                                            const attn::BackendCaps& draft_backend_caps,
                                            std::optional<DType> override_dtype = std::nullopt,
                                            DType draft_compute_dtype = DType::kBF16);

}  // namespace mlaspec::spec
