// The capability guard: can a backend serve a shape, and if not, why (docs/architecture.md,
// "Backends, guard, dispatch").
#include <sstream>
#include <string>

#include "mlaspec/attention/backend.h"

namespace mlaspec::attn {
namespace {

std::string page_sizes_string(uint64_t mask) {
  if (mask == 0) return "any";
  std::string s;
  for (int k = 0; k < 63; ++k) {
    if (mask & (uint64_t{1} << k)) s += (s.empty() ? "" : "|") + std::to_string(int64_t{1} << k);
  }
  return s;
}

std::string dtypes_string(uint32_t mask) {
  std::string s;
  for (DType t : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile, DType::kF32, DType::kI32}) {
    if (mask & dtype_bit(t)) s += (s.empty() ? "" : "|") + std::string(dtype_name(t));
  }
  return s.empty() ? "none" : s;
}

bool page_size_allowed(uint64_t mask, int page_size) {
  if (page_size < 1) return false;
  if (mask == 0) return true;
  if ((page_size & (page_size - 1)) != 0) return false;  // only powers of two can be in a mask
  int k = 0;
  while ((1 << k) < page_size) ++k;
  return k < 64 && (mask & (uint64_t{1} << k)) != 0;
}

}  // namespace

Status can_serve(const BackendCaps& c, const VerifyShape& s) {
  const std::string n(c.name);
  auto range = [&](const char* what, int64_t v, int64_t lo, int64_t hi) -> Status {
    if (v < lo) {
      return unsupported(std::string(what) + " " + std::to_string(v) + " is below " + n +
                         "'s min " + std::to_string(lo));
    }
    if (v > hi) {
      return unsupported(std::string(what) + " " + std::to_string(v) + " exceeds " + n + "'s max " +
                         std::to_string(hi));
    }
    return Status::Ok();
  };
  MLASPEC_RETURN_IF_ERROR(range("q_len", s.q_len, c.min_q_len, c.max_q_len));
  MLASPEC_RETURN_IF_ERROR(range("num_heads", s.num_heads, c.min_heads, c.max_heads));
  MLASPEC_RETURN_IF_ERROR(range("batch", s.batch, 1, c.max_batch));
  if (s.max_seq_len > c.max_seq_len) {
    return unsupported("seq_len " + std::to_string(s.max_seq_len) + " exceeds " + n + "'s max " +
                       std::to_string(c.max_seq_len));
  }
  if (!(c.kv_dtypes & dtype_bit(s.kv_dtype))) {
    // The per-tile layout is its own format, not a variant of fp8_e4m3: say so, so nobody reads
    // "reads fp8_e4m3" as "reads any fp8".
    const std::string tile_note =
        s.kv_dtype == DType::kFP8Tile
            ? "; fp8_tile is the per-tile-scaled layout (656-byte rows, one f32 scale per 128 "
              "latent values), which " +
                  n +
                  " has no kernel for: use a bf16 or fp8_e4m3 pool, or the cpu_reference "
                  "backend"
            : std::string();
    return unsupported("kv dtype " + std::string(dtype_name(s.kv_dtype)) + " is not readable by " +
                       n + " (reads " + dtypes_string(c.kv_dtypes) + ")" + tile_note);
  }
  if (!page_size_allowed(c.page_size_mask, s.page_size)) {
    return unsupported("page_size " + std::to_string(s.page_size) + " is not supported by " + n +
                       " (supports " + page_sizes_string(c.page_size_mask) + ")");
  }
  if (s.ragged && !c.ragged) {
    return unsupported(n +
                       " serves one q_len per call; this batch is ragged (per-request q_len up "
                       "to " +
                       std::to_string(s.q_len) + "): split it by q_len or pad it");
  }
  if (s.deterministic && !c.deterministic) {
    return unsupported(n + " has no deterministic mode");
  }
  if (s.fp8_math && s.kv_dtype != DType::kFP8E4M3) {
    return unsupported("fp8-math mode is for fp8 KV; kv dtype is " +
                       std::string(dtype_name(s.kv_dtype)));
  }
  if (s.fp8_math && !c.fp8_math) {
    return unsupported(n +
                       " has no fp8-math mode (fp8 tensor-core math); run without fp8_math for "
                       "exact math on fp8 KV");
  }
  return Status::Ok();
}

std::string describe_caps(const BackendCaps& c) {
  std::ostringstream os;
  os << "device " << device_name(c.device) << ", q_len " << c.min_q_len << ".." << c.max_q_len
     << ", H " << c.min_heads << ".." << c.max_heads << ", batch <= " << c.max_batch
     << ", seq_len <= " << c.max_seq_len << ", kv " << dtypes_string(c.kv_dtypes) << ", page "
     << page_sizes_string(c.page_size_mask) << ", deterministic "
     << (c.deterministic ? "yes" : "no") << ", fp8-math " << (c.fp8_math ? "yes" : "no")
     << ", split-kv " << (c.split_kv ? "yes" : "no") << ", ragged " << (c.ragged ? "yes" : "no");
  return os.str();
}

}  // namespace mlaspec::attn
