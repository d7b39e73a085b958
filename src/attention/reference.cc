// The CPU reference for verify attention, written for clarity: one task per (request, query
// token, head); scores in a vector, then max, exp, sum and the weighted V sum, all in `Acc`
// precision (float for the reference, double for the oracle). The KV is read through the block
// table exactly as the kernels read it.
//
// cpu_verify (the cpu_reference backend, which the CPU model runtime calls) computes the same
// float arithmetic folded: a request's KV rows are widened to float once per call, its rows are
// taken 16 at a time and each KV row serves all 16, and the dot products run SIMD across rows (one
// lane per row, each lane summing over d in order) and 4 keys at once. Every row's operations and
// their order are row_attention<float>'s, so its output is bitwise the per-row helper's
// (CpuReference.FoldedCallEqualsRowHelperBitwise) and a row's result never depends on q_len: a
// decode step and a verify block give the same bits. The file is built with -ffp-contract=off so
// no compiler fuses a multiply and an add in one path and not in the other.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "mlaspec/attention/reference.h"
#include "mlaspec/core/fp8_tile.h"
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

// Reads rows of the paged KV as float: bf16 exactly, fp8_e4m3 as code * the layer's scale,
// fp8_tile as code * its block's scale and its bf16 rope (core/fp8_tile.h).
struct KvReader {
  const uint8_t* base;
  DType dtype;
  int64_t page_size;
  float scale;
  const int32_t* table_row;  // this request's block_table row

  // Copies the 576 values of key position `pos` into `dst` as float (scales applied).
  void row(int64_t pos, float* dst) const {
    const int64_t page = table_row[pos / page_size];
    const int64_t slot = page * page_size + pos % page_size;
    if (dtype == DType::kFP8Tile) {
      // fp8_tile_row_value's arithmetic (code * its block's scale; rope bf16), the scales loaded
      // once per row.
      const uint8_t* src = base + slot * kFp8TileRowBytes;
      const auto& lut = fp8_table();
      for (int k = 0; k < kFp8TileBlocks; ++k) {
        const float s = fp8_tile_row_scale(src, k);
        for (int d = k * kFp8TileBlock; d < (k + 1) * kFp8TileBlock; ++d) dst[d] = lut[src[d]] * s;
      }
      for (int d = kFp8TileLatent; d < kHeadDimQK; ++d) dst[d] = fp8_tile_row_value(src, d);
      return;
    }
    const int64_t elem = slot * kHeadDimQK;
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

// The folded path of cpu_verify. Rows r = i * H + h of one request, kRowTile per task.
constexpr int kRowTile = 16;
constexpr int kKeyTile = 4;

// 16 floats as one value (GCC/Clang vector extension): lanewise IEEE multiply and add.
typedef float RowLanes __attribute__((vector_size(kRowTile * sizeof(float))));

// acc[kk] lane r = sum over d in order of q[r][d] * k[kk][d] for kKeyTile keys and kRowTile rows.
// qT is [576][kRowTile] (row r of the tile in lane r), k is kKeyTile rows of 576 floats.
inline void qk_tile(const float* qT, const float* k, RowLanes (&acc)[kKeyTile]) {
  for (RowLanes& a : acc) a = RowLanes{};
  for (int d = 0; d < kHeadDimQK; ++d) {
    RowLanes qd;
    std::memcpy(&qd, qT + d * kRowTile, sizeof qd);
    for (int kk = 0; kk < kKeyTile; ++kk) acc[kk] += qd * k[kk * kHeadDimQK + d];
  }
}

// n zeroed floats at a 64-byte boundary inside `storage` (a 16-lane load that straddles two cache
// lines costs about twice one that does not).
float* zeroed_aligned(std::vector<float>& storage, int64_t n) {
  constexpr int64_t kAlign = 64 / sizeof(float);
  storage.assign(static_cast<size_t>(n + kAlign), 0.0f);
  float* p = storage.data();
  return p + (kAlign - reinterpret_cast<uintptr_t>(p) / sizeof(float) % kAlign) % kAlign;
}

// One tile of rows [r0, r0 + n) of request b (n <= kRowTile). Built for several x86 ISAs (GCC
// picks one at load time); every lane does the same IEEE operations in any of them.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
// Rows [r0, r0 + n) of request b (row r = i * H + h of its q_len tokens, which start at the
// call's token `first`). `keys` holds its key rows [0, seq_len) widened to float, zero rows up to
// a whole key tile after them.
void fold_tile(const VerifyArgs& a, int64_t b, int64_t first, int64_t q_len, int64_t r0, int64_t n,
               const float* keys) {
  const int64_t H = num_heads(a);
  const int64_t seq_len = seq_len_of(a, b);
  const auto ref = [&](int64_t t) {
    const int64_t i = (r0 + t) / H;
    return RowRef{b, i, first + i, (r0 + t) % H};
  };
  // Bottom-right causal mask: token i sees [0, seq_len - q_len + i].
  int64_t end[kRowTile] = {};
  int64_t end_max = 0;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t i = (r0 + t) / H;
    end[t] = std::max<int64_t>(0, seq_len - q_len + i + 1);
    end_max = std::max(end_max, end[t]);
  }
  // The tile's q transposed (lane = row; missing rows 0).
  thread_local std::vector<float> qT_storage, scores, o;
  float* qT = zeroed_aligned(qT_storage, kHeadDimQK * kRowTile);
  for (int64_t t = 0; t < n; ++t) {
    const auto* q = a.q.data_as<const uint16_t>() + offset(a.q, a.ragged(), ref(t));
    for (int d = 0; d < kHeadDimQK; ++d) qT[d * kRowTile + t] = bf16_bits_to_float(q[d]);
  }
  const int64_t keys_padded = (end_max + kKeyTile - 1) / kKeyTile * kKeyTile;

  // Scores and each row's max, as row_attention computes them.
  scores.resize(static_cast<size_t>(kRowTile * keys_padded));
  float max_score[kRowTile];
  for (float& m : max_score) m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < keys_padded; j += kKeyTile) {
    RowLanes acc[kKeyTile];
    qk_tile(qT, keys + j * kHeadDimQK, acc);
    for (int kk = 0; kk < kKeyTile; ++kk) {
      for (int64_t t = 0; t < n; ++t) {
        if (j + kk >= end[t]) continue;
        const float s = acc[kk][t] * a.sm_scale;
        scores[static_cast<size_t>(t * keys_padded + j + kk)] = s;
        max_score[t] = std::max(max_score[t], s);
      }
    }
  }
  // exp, sum and the weighted V sum, key by key in order; a row's output is loaded and stored
  // once per 4 keys (its element still adds p_j * v_j for j = 0, 1, 2, ... one at a time).
  o.assign(static_cast<size_t>(kRowTile * kHeadDimV), 0.0f);
  float sum[kRowTile] = {};
  for (int64_t j = 0; j < end_max; j += kKeyTile) {
    // V = the first 512 values of each row.
    const float* __restrict v0 = keys + j * kHeadDimQK;
    const float* __restrict v1 = v0 + kHeadDimQK;
    const float* __restrict v2 = v1 + kHeadDimQK;
    const float* __restrict v3 = v2 + kHeadDimQK;
    for (int64_t t = 0; t < n; ++t) {
      const int64_t m = std::min<int64_t>(kKeyTile, end[t] - j);
      if (m <= 0) continue;
      float p[kKeyTile] = {};
      for (int64_t kk = 0; kk < m; ++kk) {
        p[kk] = std::exp(scores[static_cast<size_t>(t * keys_padded + j + kk)] - max_score[t]);
        sum[t] += p[kk];
      }
      float* __restrict ot = o.data() + t * kHeadDimV;
      if (m == kKeyTile) {
        for (int d = 0; d < kHeadDimV; ++d) {
          float acc = ot[d];
          acc += p[0] * v0[d];
          acc += p[1] * v1[d];
          acc += p[2] * v2[d];
          acc += p[3] * v3[d];
          ot[d] = acc;
        }
      } else {
        for (int64_t kk = 0; kk < m; ++kk) {
          const float* vk = v0 + kk * kHeadDimQK;
          for (int d = 0; d < kHeadDimV; ++d) ot[d] += p[kk] * vk[d];
        }
      }
    }
  }
  for (int64_t t = 0; t < n; ++t) {
    float* ot = o.data() + t * kHeadDimV;
    float lse = -std::numeric_limits<float>::infinity();
    if (end[t] > 0) {
      for (int d = 0; d < kHeadDimV; ++d) ot[d] /= sum[t];
      lse = max_score[t] + std::log(sum[t]);
    }
    auto* out = a.out.data_as<uint16_t>() + offset(a.out, a.ragged(), ref(t));
    for (int d = 0; d < kHeadDimV; ++d) out[d] = float_to_bf16_bits(ot[d]);
    a.lse.data_as<float>()[offset(a.lse, a.ragged(), ref(t))] = lse;
  }
}

}  // namespace

Status cpu_verify(const VerifyArgs& a) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_args(a, Device::kCPU));
  const QueryRows rows(a);
  const int64_t H = num_heads(a);
  // Per request: its KV rows widened to float once, then every tile of its rows over them.
  thread_local std::vector<float> keys_storage;
  for (int64_t b = 0; b < rows.batch; ++b) {
    const int64_t seq_len = seq_len_of(a, b), q_len = rows.q_len(b);
    const KvReader reader = reader_for(a, b);
    const int64_t keys_padded = (seq_len + kKeyTile - 1) / kKeyTile * kKeyTile;
    float* keys = zeroed_aligned(keys_storage, keys_padded * kHeadDimQK);
    for (int64_t j = 0; j < seq_len; ++j) reader.row(j, keys + j * kHeadDimQK);
    const int64_t request_rows = q_len * H;
    const int64_t tiles = (request_rows + kRowTile - 1) / kRowTile;
    parallel_for(0, tiles, [&](int64_t tile) {
      const int64_t r0 = tile * kRowTile;
      fold_tile(a, b, rows.begin(b), q_len, r0, std::min<int64_t>(kRowTile, request_rows - r0),
                keys);
    });
  }
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
