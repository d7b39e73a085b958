#include "mlaspec/spec/draft_pool_rule.h"

#include "mlaspec/core/log.h"

namespace mlaspec::spec {
namespace {

bool is_kv_dtype(DType t) {
  return t == DType::kBF16 || t == DType::kFP8E4M3 || t == DType::kFP8Tile;
}
bool reads(const attn::BackendCaps& caps, DType t) {
  return (caps.kv_dtypes & attn::dtype_bit(t)) != 0;
}

std::string readable_list(const attn::BackendCaps& caps) {
  std::string out;
  for (DType t : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile, DType::kF32, DType::kI32}) {
    if (!reads(caps, t)) continue;
    if (!out.empty()) out += "|";
    out += dtype_name(t);
  }
  return out.empty() ? "no KV dtype" : out;
}

std::string backend_name(const attn::BackendCaps& caps) {
  return caps.name.empty() ? std::string("(unnamed)") : std::string(caps.name);
}

}  // namespace

Result<DTypeDecision> choose_draft_kv_dtype(DType target_kv_dtype, const attn::BackendCaps& caps,
                                            std::optional<DType> override_dtype,
                                            DType draft_compute_dtype) {
  const std::string backend = backend_name(caps);
  if (!is_kv_dtype(target_kv_dtype)) {
    return invalid_argument("draft KV dtype: target KV dtype " +
                            std::string(dtype_name(target_kv_dtype)) +
                            " is not a KV dtype (bf16, fp8_e4m3 or fp8_tile)");
  }
  if (!is_kv_dtype(draft_compute_dtype)) {
    return invalid_argument("draft KV dtype: drafter compute dtype " +
                            std::string(dtype_name(draft_compute_dtype)) +
                            " is not a KV dtype (bf16, fp8_e4m3 or fp8_tile)");
  }
  DTypeDecision d;
  if (override_dtype.has_value()) {
    const DType o = *override_dtype;
    if (!is_kv_dtype(o)) {
      return invalid_argument("draft KV dtype: override " + std::string(dtype_name(o)) +
                              " is not a KV dtype (bf16, fp8_e4m3 or fp8_tile)");
    }
    if (!reads(caps, o)) {
      return unsupported("draft KV dtype: override " + std::string(dtype_name(o)) +
                         " cannot be read by draft backend " + backend + ", which reads " +
                         readable_list(caps));
    }
    d.dtype = o;
    d.reason = "explicit override " + std::string(dtype_name(o)) + " (target KV is " +
               std::string(dtype_name(target_kv_dtype)) + "); draft backend " + backend +
               " reads it";
  } else if (reads(caps, target_kv_dtype)) {
    d.dtype = target_kv_dtype;
    d.reason = "target KV dtype " + std::string(dtype_name(target_kv_dtype)) + "; draft backend " +
               backend + " reads it";
  } else if (reads(caps, draft_compute_dtype)) {
    d.dtype = draft_compute_dtype;
    d.reason = "draft backend " + backend + " cannot read the target KV dtype " +
               std::string(dtype_name(target_kv_dtype)) + " (it reads " + readable_list(caps) +
               "); using the drafter's compute dtype " +
               std::string(dtype_name(draft_compute_dtype));
  } else {
    return unsupported("draft KV dtype: draft backend " + backend + " reads " +
                       readable_list(caps) + ", neither the target KV dtype " +
                       std::string(dtype_name(target_kv_dtype)) + " nor the compute dtype " +
                       std::string(dtype_name(draft_compute_dtype)));
  }
  log_info("draft KV pool dtype " + std::string(dtype_name(d.dtype)) + ": " + d.reason);
  return d;
}

}  // namespace mlaspec::spec
