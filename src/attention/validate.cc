// The API-edge checks of the verify-attention contract (docs/architecture.md, docs/attention.md),
// shared by every backend.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "mlaspec/attention/verify.h"

namespace mlaspec::attn {
namespace {

std::string str(int64_t v) {
  return std::to_string(v);
}

// Returns the metadata view to read on the host: the host copy when given, else the tensor itself
// when it lives on the host.
Status host_metadata(const TensorView& tensor, const TensorView& host_copy, const char* name,
                     const char* host_name, TensorView* out) {
  if (!host_copy.empty()) {
    if (host_copy.device() != Device::kCPU) {
      return invalid_argument(std::string(host_name) + " must be in host memory, got " +
                              host_copy.describe());
    }
    if (host_copy.dtype() != tensor.dtype() || host_copy.ndim() != tensor.ndim()) {
      return invalid_argument(std::string(host_name) + " " + host_copy.describe() +
                              " does not match " + name + " " + tensor.describe());
    }
    for (int d = 0; d < tensor.ndim(); ++d) {
      if (host_copy.size(d) != tensor.size(d)) {
        return invalid_argument(std::string(host_name) + " " + host_copy.describe() +
                                " does not match " + name + " " + tensor.describe());
      }
    }
    *out = host_copy;
    return Status::Ok();
  }
  if (tensor.device() != Device::kCPU) {
    return invalid_argument(std::string(name) + " is in device memory: pass its host copy in " +
                            host_name + " (validation and planning read it on the host)");
  }
  *out = tensor;
  return Status::Ok();
}

}  // namespace

std::string VerifyShape::to_string() const {
  std::ostringstream os;
  os << "B=" << batch << ",H=" << num_heads << ",q=" << q_len << ",S=" << max_seq_len
     << ",kv=" << kv_dtype_label(kv_dtype) << ",page=" << page_size;
  if (deterministic) os << ",det";
  if (fp8_math) os << ",fp8math";
  if (ragged) os << ",ragged";
  return os.str();
}

Status validate_verify_args(const VerifyArgs& a, Device device) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(a, device));
  if (a.ragged()) {
    const int64_t T = a.q.size(0), H = a.q.size(1);
    MLASPEC_RETURN_IF_ERROR(a.out.expect("out", DType::kBF16, {T, H, kHeadDimV}, device));
    return a.lse.expect("lse", DType::kF32, {T, H}, device);
  }
  const int64_t B = a.q.size(0), q_len = a.q.size(1), H = a.q.size(2);
  MLASPEC_RETURN_IF_ERROR(a.out.expect("out", DType::kBF16, {B, q_len, H, kHeadDimV}, device));
  MLASPEC_RETURN_IF_ERROR(a.lse.expect("lse", DType::kF32, {B, q_len, H}, device));
  return Status::Ok();
}

Status validate_q_indptr(const TensorView& ip, int64_t rows) {
  MLASPEC_RETURN_IF_ERROR(ip.expect("q_indptr", DType::kI32, {-1}, Device::kCPU));
  const int64_t B = ip.size(0) - 1;
  if (B < 1) {
    return invalid_argument("q_indptr has " + str(ip.size(0)) +
                            " entries; a batch of B requests needs B + 1 >= 2");
  }
  const int32_t* p = ip.data_as<const int32_t>();
  const int64_t st = ip.stride(0);
  if (p[0] != 0) return invalid_argument("q_indptr[0] = " + str(p[0]) + ", expected 0");
  for (int64_t b = 0; b < B; ++b) {
    if (int64_t{p[(b + 1) * st]} - p[b * st] < 1) {
      return invalid_argument("q_indptr[" + str(b + 1) + "] = " + str(p[(b + 1) * st]) +
                              " is not above q_indptr[" + str(b) + "] = " + str(p[b * st]) +
                              " (every request brings >= 1 query token)");
    }
  }
  if (p[B * st] != rows) {
    return invalid_argument("q_indptr[" + str(B) + "] = " + str(p[B * st]) +
                            " does not match q's " + str(rows) + " rows");
  }
  return Status::Ok();
}

namespace {

// q of a ragged call: [T, H, 576] contiguous, q_indptr [B+1] from 0 to T, strictly increasing.
// Sets B and the longest q_len.
Status validate_ragged_q(const VerifyArgs& a, Device device, int64_t* B, int64_t* max_q_len) {
  MLASPEC_RETURN_IF_ERROR(a.q.expect("q", DType::kBF16, {-1, -1, kHeadDimQK}, device));
  const int64_t T = a.q.size(0), H = a.q.size(1);
  if (T < 1) return invalid_argument("ragged q has " + str(T) + " rows, below the minimum 1");
  if (H < 1) return invalid_argument("num_heads " + str(H) + " is below the minimum 1");
  if (a.q.stride(1) != kHeadDimQK || a.q.stride(0) != H * kHeadDimQK) {
    return invalid_argument("ragged q strides [" + str(a.q.stride(0)) + ", " + str(a.q.stride(1)) +
                            ", 1] are not contiguous; expected [" + str(H * kHeadDimQK) + ", " +
                            str(kHeadDimQK) + ", 1]");
  }
  MLASPEC_RETURN_IF_ERROR(a.q_indptr.expect("q_indptr", DType::kI32, {-1}, device));
  TensorView ip;
  MLASPEC_RETURN_IF_ERROR(
      host_metadata(a.q_indptr, a.q_indptr_host, "q_indptr", "q_indptr_host", &ip));
  MLASPEC_RETURN_IF_ERROR(validate_q_indptr(ip, T));
  *B = ip.size(0) - 1;
  *max_q_len = 0;
  for (int64_t b = 0; b < *B; ++b) {
    *max_q_len = std::max<int64_t>(*max_q_len, ip.data_as<const int32_t>()[(b + 1) * ip.stride(0)] -
                                                   ip.data_as<const int32_t>()[b * ip.stride(0)]);
  }
  return Status::Ok();
}

}  // namespace

Status validate_verify_inputs(const VerifyArgs& a, Device device) {
  int64_t B = 0, q_len = 0;
  if (a.ragged()) {
    MLASPEC_RETURN_IF_ERROR(validate_ragged_q(a, device, &B, &q_len));
  } else {
    // q: [B, q_len, H, 576] bf16 with the [q_len, H, 576] part contiguous, so a request's rows
    // are the [q_len*H, 576] matrix the kernels tile.
    MLASPEC_RETURN_IF_ERROR(a.q.expect("q", DType::kBF16, {-1, -1, -1, kHeadDimQK}, device));
    B = a.q.size(0);
    q_len = a.q.size(1);
    const int64_t H = a.q.size(2);
    if (B < 1) return invalid_argument("batch size " + str(B) + " is below the minimum 1");
    if (q_len < 1) return invalid_argument("q_len " + str(q_len) + " is below the minimum 1");
    if (H < 1) return invalid_argument("num_heads " + str(H) + " is below the minimum 1");
    if (a.q.stride(2) != kHeadDimQK || a.q.stride(1) != H * kHeadDimQK ||
        a.q.stride(0) < q_len * H * kHeadDimQK) {
      return invalid_argument("q strides [" + str(a.q.stride(0)) + ", " + str(a.q.stride(1)) +
                              ", " + str(a.q.stride(2)) + ", 1] are not contiguous within a " +
                              "request; expected [>=" + str(q_len * H * kHeadDimQK) + ", " +
                              str(H * kHeadDimQK) + ", " + str(kHeadDimQK) + ", 1]");
    }
  }
  const QueryRows rows(a);

  // KV pool.
  const TensorView& kv = a.kv.pages;
  if (kv.empty()) return invalid_argument("kv.pages is missing (empty view)");
  if (kv.dtype() != DType::kBF16 && kv.dtype() != DType::kFP8E4M3 &&
      kv.dtype() != DType::kFP8Tile) {
    return invalid_argument("kv.pages has dtype " + std::string(dtype_name(kv.dtype())) +
                            ", expected bf16, fp8_e4m3 or fp8_tile");
  }
  // fp8_tile rows are 656 bytes (core/fp8_tile.h); the others 576 values.
  MLASPEC_RETURN_IF_ERROR(
      kv.expect("kv.pages", kv.dtype(), {-1, -1, kv_row_width(kv.dtype())}, device));
  if (!kv.is_contiguous())
    return invalid_argument("kv.pages " + kv.describe() + " is not contiguous");
  const int64_t num_pages = kv.size(0), page_size = kv.size(1);
  if (num_pages < 1) return invalid_argument("kv.pages has no pages");
  if (page_size < 1) return invalid_argument("page_size " + str(page_size) + " is below 1");
  if (!std::isfinite(a.kv.kv_scale) || a.kv.kv_scale <= 0.0f) {
    return invalid_argument("kv_scale " + std::to_string(a.kv.kv_scale) +
                            " must be finite and > 0");
  }
  if (kv.dtype() == DType::kBF16 && a.kv.kv_scale != 1.0f) {
    return invalid_argument("kv_scale " + std::to_string(a.kv.kv_scale) +
                            " given for a bf16 pool; bf16 KV is unscaled (kv_scale must be 1)");
  }
  if (kv.dtype() == DType::kFP8Tile && a.kv.kv_scale != 1.0f) {
    return invalid_argument("kv_scale " + std::to_string(a.kv.kv_scale) +
                            " given for an fp8_tile pool; its scales are in the rows (kv_scale "
                            "must be 1)");
  }
  if (!std::isfinite(a.sm_scale) || a.sm_scale <= 0.0f) {
    return invalid_argument("sm_scale " + std::to_string(a.sm_scale) + " must be finite and > 0");
  }

  // Metadata.
  MLASPEC_RETURN_IF_ERROR(a.block_table.expect("block_table", DType::kI32, {B, -1}, device));
  MLASPEC_RETURN_IF_ERROR(a.seq_lens.expect("seq_lens", DType::kI32, {B}, device));
  TensorView bt, sl;
  MLASPEC_RETURN_IF_ERROR(
      host_metadata(a.block_table, a.block_table_host, "block_table", "block_table_host", &bt));
  MLASPEC_RETURN_IF_ERROR(
      host_metadata(a.seq_lens, a.seq_lens_host, "seq_lens", "seq_lens_host", &sl));
  const int64_t max_pages = bt.size(1);

  const int32_t* lens = sl.data_as<const int32_t>();
  const int32_t* table = bt.data_as<const int32_t>();
  const int64_t lens_stride = sl.stride(0);
  const int64_t row_stride = bt.stride(0);
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = lens[b * lens_stride];
    if (len < rows.q_len(b)) {
      return invalid_argument("seq_lens[" + str(b) + "] = " + str(len) + " is below " +
                              (a.ragged() ? "its q_len " : "q_len ") + str(rows.q_len(b)) +
                              " (seq_len counts the KV written for the new tokens)");
    }
    const int64_t pages = (len + page_size - 1) / page_size;
    if (pages > max_pages) {
      return invalid_argument("seq_lens[" + str(b) + "] = " + str(len) + " needs " + str(pages) +
                              " pages of " + str(page_size) + " but block_table has " +
                              str(max_pages) + " columns");
    }
    for (int64_t j = 0; j < pages; ++j) {
      const int64_t page = table[b * row_stride + j];
      if (page < 0 || page >= num_pages) {
        return out_of_range("block_table[" + str(b) + "][" + str(j) + "] = " + str(page) +
                            " is out of range [0, " + str(num_pages) + ") of the KV pool");
      }
    }
  }
  return Status::Ok();
}

QueryRows::QueryRows(const VerifyArgs& a) {
  if (!a.ragged()) {
    batch = a.q.size(0);
    uniform_q_len = a.q.size(1);
    total = batch * uniform_q_len;
    return;
  }
  const TensorView& ip = a.q_indptr_host.empty() ? a.q_indptr : a.q_indptr_host;
  batch = ip.size(0) - 1;
  indptr = ip.data_as<const int32_t>();
  indptr_stride = ip.stride(0);
  total = a.q.size(0);
}

namespace {

char* element(const TensorView& t, int64_t index0) {
  return static_cast<char*>(t.data()) +
         index0 * t.stride(0) * static_cast<int64_t>(dtype_size(t.dtype()));
}

// Rows [r0, r0 + count * q_len) of a ragged [T, H(, D)] tensor as [count, q_len, H(, D)].
TensorView run_rows(const TensorView& t, int64_t r0, int64_t count, int64_t q_len) {
  if (t.empty()) return t;
  if (t.ndim() == 2) {
    return TensorView(element(t, r0), t.dtype(), {count, q_len, t.size(1)},
                      {q_len * t.stride(0), t.stride(0), t.stride(1)}, t.device());
  }
  return TensorView(element(t, r0), t.dtype(), {count, q_len, t.size(1), t.size(2)},
                    {q_len * t.stride(0), t.stride(0), t.stride(1), t.stride(2)}, t.device());
}

// Requests [b0, b0 + count) of a [B] or [B, N] tensor (seq_lens, block_table).
TensorView run_requests(const TensorView& t, int64_t b0, int64_t count) {
  if (t.empty()) return t;
  if (t.ndim() == 1)
    return TensorView(element(t, b0), t.dtype(), {count}, {t.stride(0)}, t.device());
  return TensorView(element(t, b0), t.dtype(), {count, t.size(1)}, {t.stride(0), t.stride(1)},
                    t.device());
}

}  // namespace

Status for_each_uniform_run(const VerifyArgs& a,
                            const std::function<Status(const VerifyArgs& uniform)>& uniform) {
  if (!a.ragged()) return uniform(a);
  const QueryRows rows(a);
  for (int64_t b = 0; b < rows.batch;) {
    const int64_t q_len = rows.q_len(b);
    int64_t end = b + 1;
    while (end < rows.batch && rows.q_len(end) == q_len) ++end;
    const int64_t r0 = rows.begin(b), count = end - b;
    VerifyArgs u = a;
    u.q_indptr = {};
    u.q_indptr_host = {};
    u.q = run_rows(a.q, r0, count, q_len);
    u.out = run_rows(a.out, r0, count, q_len);
    u.lse = run_rows(a.lse, r0, count, q_len);
    u.block_table = run_requests(a.block_table, b, count);
    u.block_table_host = run_requests(a.block_table_host, b, count);
    u.seq_lens = run_requests(a.seq_lens, b, count);
    u.seq_lens_host = run_requests(a.seq_lens_host, b, count);
    MLASPEC_RETURN_IF_ERROR(uniform(u));
    b = end;
  }
  return Status::Ok();
}

VerifyShape shape_of(const VerifyArgs& a, const VerifyOptions& options) {
  VerifyShape s;
  s.deterministic = options.deterministic;
  s.fp8_math = options.fp8_math;
  s.ragged = a.ragged();
  const QueryRows rows(a);
  s.batch = static_cast<int>(rows.batch);
  s.total_q = rows.total;
  if (s.ragged) {
    for (int64_t b = 0; b < rows.batch; ++b) {
      s.q_len = std::max(s.q_len, static_cast<int>(rows.q_len(b)));
    }
  } else {
    s.q_len = static_cast<int>(rows.uniform_q_len);
  }
  s.num_heads = static_cast<int>(a.ragged() ? a.q.size(1) : a.q.size(2));
  s.page_size = static_cast<int>(a.kv.pages.size(1));
  s.kv_dtype = a.kv.pages.dtype();
  const TensorView& sl = a.seq_lens_host.empty() ? a.seq_lens : a.seq_lens_host;
  if (sl.device() == Device::kCPU && !sl.empty()) {
    for (int b = 0; b < s.batch; ++b) {
      const int64_t len = sl.data_as<const int32_t>()[b * sl.stride(0)];
      s.max_seq_len = std::max(s.max_seq_len, len);
      s.total_kv += len;
    }
  }
  return s;
}

}  // namespace mlaspec::attn
