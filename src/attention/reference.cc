// The CPU reference for verify attention, written for clarity: one task per (request, query
// token, head); scores in a vector, then max, exp, sum and the weighted V sum, all in `Acc`
// precision (float for the reference, double for the oracle). The KV is read through the block
// table exactly as the kernels read it.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "mlaspec/attention/reference.h"
#include "mlaspec/core/parallel.h"

namespace mlaspec::attn {
namespace {

const std::array<float, 256>& fp8_table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (int i = 0; i < 256; ++i) t[i] = fp8e4m3_bits_to_float(static_cast<uint8_t>(i));
    return t;
  }();
  return table;
}

// Reads rows of the paged KV as float.
struct KvReader {
  const uint8_t* base;
  DType dtype;
  int64_t page_size;
  float scale;
  const int32_t* table_row;  // this request's block_table row

  // Copies the 576 values of key position `pos` into `dst` as float (scale applied).
  void row(int64_t pos, float* dst) const {
    const int64_t page = table_row[pos / page_size];
    const int64_t elem = (page * page_size + pos % page_size) * kHeadDimQK;
    if (dtype == DType::kBF16) {
      const auto* src = reinterpret_cast<const uint16_t*>(base) + elem;
      for (int d = 0; d < kHeadDimQK; ++d) dst[d] = bf16_bits_to_float(src[d]);
    } else {
      const uint8_t* src = base + elem;
      const auto& lut = fp8_table();
      for (int d = 0; d < kHeadDimQK; ++d) dst[d] = lut[src[d]] * scale;
    }
  }
};

// One query row of a call: request b, its query token i (row = the token's index among all of the
// call's tokens), head h.
struct RowRef {
  int64_t b, i, row, h;
};

// Element offset of a row's vector in q / out / lse / o_part / lse_part: [B, q_len, H, ...] for a
// uniform call, [T, H, ...] for a ragged one.
int64_t offset(const TensorView& t, bool ragged, const RowRef& r) {
  return ragged ? r.row * t.stride(0) + r.h * t.stride(1)
                : r.b * t.stride(0) + r.i * t.stride(1) + r.h * t.stride(2);
}

KvReader reader_for(const VerifyArgs& a, int64_t b) {
  const TensorView& bt = a.block_table_host.empty() ? a.block_table : a.block_table_host;
  return KvReader{static_cast<const uint8_t*>(a.kv.pages.data()), a.kv.pages.dtype(),
                  a.kv.pages.size(1), a.kv.kv_scale,
                  bt.data_as<const int32_t>() + b * bt.stride(0)};
}

int64_t seq_len_of(const VerifyArgs& a, int64_t b) {
  const TensorView& sl = a.seq_lens_host.empty() ? a.seq_lens : a.seq_lens_host;
  return sl.data_as<const int32_t>()[b * sl.stride(0)];
}

void load_q_row(const VerifyArgs& a, const RowRef& r, float* q_row) {
  const auto* q = a.q.data_as<const uint16_t>() + offset(a.q, a.ragged(), r);
  for (int d = 0; d < kHeadDimQK; ++d) q_row[d] = bf16_bits_to_float(q[d]);
}

int64_t num_heads(const VerifyArgs& a) {
  return a.ragged() ? a.q.size(1) : a.q.size(2);
}

// Calls fn(row_ref, key_begin, key_end, q_row_float, reader) for each row, in parallel.
template <typename Fn>
void for_each_row(const VerifyArgs& a, int64_t kv_begin, int64_t kv_end, Fn&& fn) {
  const QueryRows rows(a);
  const int64_t H = num_heads(a);
  parallel_for(0, rows.total * H, [&](int64_t task) {
    RowRef r{};
    r.h = task % H;
    r.row = task / H;
    if (rows.indptr == nullptr) {
      r.b = r.row / rows.uniform_q_len;
    } else {
      int64_t lo = 0, hi = rows.batch - 1;  // the last b with begin(b) <= row
      while (lo < hi) {
        const int64_t mid = (lo + hi + 1) / 2;
        if (rows.begin(mid) <= r.row)
          lo = mid;
        else
          hi = mid - 1;
      }
      r.b = lo;
    }
    r.i = r.row - rows.begin(r.b);
    // Bottom-right causal mask: token i sees [0, seq_len - q_len + i].
    const int64_t visible_end = seq_len_of(a, r.b) - rows.q_len(r.b) + r.i + 1;
    const int64_t begin = std::max<int64_t>(0, kv_begin);
    const int64_t end = std::min(visible_end, kv_end);
    float q_row[kHeadDimQK];
    load_q_row(a, r, q_row);
    fn(r, begin, end, q_row, reader_for(a, r.b));
  });
}

// Attention of one query row over keys [begin, end): writes o (512) and returns lse.
// Empty range: o = 0, lse = -inf.
template <typename Acc>
Acc row_attention(const float* q_row, const KvReader& reader, int64_t begin, int64_t end,
                  Acc sm_scale, Acc* o) {
  std::fill(o, o + kHeadDimV, Acc(0));
  if (end <= begin) return -std::numeric_limits<Acc>::infinity();
  thread_local std::vector<Acc> scores;
  scores.resize(static_cast<size_t>(end - begin));
  float k[kHeadDimQK];
  Acc max_score = -std::numeric_limits<Acc>::infinity();
  for (int64_t j = begin; j < end; ++j) {
    reader.row(j, k);
    Acc dot = 0;
    for (int d = 0; d < kHeadDimQK; ++d) dot += Acc(q_row[d]) * Acc(k[d]);
    const Acc s = dot * sm_scale;
    scores[j - begin] = s;
    max_score = std::max(max_score, s);
  }
  Acc sum = 0;
  for (int64_t j = begin; j < end; ++j) {
    const Acc p = std::exp(scores[j - begin] - max_score);
    sum += p;
    reader.row(j, k);  // V = the first 512 values of the same row
    for (int d = 0; d < kHeadDimV; ++d) o[d] += p * Acc(k[d]);
  }
  for (int d = 0; d < kHeadDimV; ++d) o[d] /= sum;
  return max_score + std::log(sum);
}

}  // namespace

Status cpu_verify(const VerifyArgs& a) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_args(a, Device::kCPU));
  for_each_row(
      a, 0, std::numeric_limits<int64_t>::max(),
      [&](const RowRef& r, int64_t begin, int64_t end, const float* q_row, const KvReader& reader) {
        float o[kHeadDimV];
        const float lse = row_attention<float>(q_row, reader, begin, end, a.sm_scale, o);
        auto* out = a.out.data_as<uint16_t>() + offset(a.out, a.ragged(), r);
        for (int d = 0; d < kHeadDimV; ++d) out[d] = float_to_bf16_bits(o[d]);
        a.lse.data_as<float>()[offset(a.lse, a.ragged(), r)] = lse;
      });
  return Status::Ok();
}

Status cpu_verify_partial(const VerifyArgs& a, int64_t kv_begin, int64_t kv_end, TensorView o_part,
                          TensorView lse_part) {
  // The full-call outputs are not written: validate the inputs, then the partial outputs.
  MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(a, Device::kCPU));
  const int64_t H = num_heads(a);
  if (a.ragged()) {
    const int64_t T = a.q.size(0);
    MLASPEC_RETURN_IF_ERROR(o_part.expect("o_part", DType::kF32, {T, H, kHeadDimV}, Device::kCPU));
    MLASPEC_RETURN_IF_ERROR(lse_part.expect("lse_part", DType::kF32, {T, H}, Device::kCPU));
  } else {
    const int64_t B = a.q.size(0), q_len = a.q.size(1);
    MLASPEC_RETURN_IF_ERROR(
        o_part.expect("o_part", DType::kF32, {B, q_len, H, kHeadDimV}, Device::kCPU));
    MLASPEC_RETURN_IF_ERROR(lse_part.expect("lse_part", DType::kF32, {B, q_len, H}, Device::kCPU));
  }
  if (kv_begin < 0 || kv_end < kv_begin) {
    return invalid_argument("kv range [" + std::to_string(kv_begin) + ", " +
                            std::to_string(kv_end) +
                            ") is not a valid range (need 0 <= begin <= end)");
  }
  for_each_row(
      a, kv_begin, kv_end,
      [&](const RowRef& r, int64_t begin, int64_t end, const float* q_row, const KvReader& reader) {
        float* o = o_part.data_as<float>() + offset(o_part, a.ragged(), r);
        lse_part.data_as<float>()[offset(lse_part, a.ragged(), r)] =
            row_attention<float>(q_row, reader, begin, end, a.sm_scale, o);
      });
  return Status::Ok();
}

float cpu_verify_row(const VerifyArgs& a, int64_t b, int64_t i, int64_t h, float* o) {
  const QueryRows rows(a);
  const RowRef r{b, i, rows.begin(b) + i, h};
  float q_row[kHeadDimQK];
  load_q_row(a, r, q_row);
  return row_attention<float>(q_row, reader_for(a, b), 0, seq_len_of(a, b) - rows.q_len(b) + i + 1,
                              a.sm_scale, o);
}

Result<OracleResult> oracle_verify(const VerifyArgs& a) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(a, Device::kCPU));
  const int64_t T = QueryRows(a).total, H = num_heads(a);
  OracleResult r;
  r.out.assign(static_cast<size_t>(T * H * kHeadDimV), 0.0);
  r.lse.assign(static_cast<size_t>(T * H), 0.0);
  for_each_row(a, 0, std::numeric_limits<int64_t>::max(),
               [&](const RowRef& ref, int64_t begin, int64_t end, const float* q_row,
                   const KvReader& reader) {
                 const int64_t row = ref.row * H + ref.h;
                 r.lse[row] = row_attention<double>(q_row, reader, begin, end, double(a.sm_scale),
                                                    r.out.data() + row * kHeadDimV);
               });
  return r;
}

}  // namespace mlaspec::attn
