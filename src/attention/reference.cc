// The CPU reference for verify attention, written for clarity: one task per (request, query
// token, head); scores in a vector, then max, exp, sum and the weighted V sum, all in `Acc`
// precision (float for the reference, double for the oracle). The KV is read through the block
// table exactly as the kernels read it.
//
// cpu_verify (the cpu_reference backend, which the CPU model runtime calls) computes the same
// float arithmetic folded: a request's KV rows are widened to float once per call (row-major and
// in transposed blocks of 16 keys), and its rows run in register tiles of 4 rows x 4 vectors: Q·K
// with a vector of 16 keys per load, P·V with a vector of 16 output dims, every element one chain
// in row_attention's order. Every row's operations and
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

#include "mlaspec/attention/cpu_caps.h"
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

  // The pool slot of key position `pos`.
  int64_t slot(int64_t pos) const {
    return int64_t{table_row[pos / page_size]} * page_size + pos % page_size;
  }

  // Copies the 576 values of key position `pos` into `dst` as float (scales applied).
  void row(int64_t pos, float* dst) const {
    const int64_t slot = this->slot(pos);
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

// The folded path of cpu_verify. A request's rows r = i * H + h, kRowsPerTask per parallel task,
// in register tiles of a few rows: Q·K with 16 keys per vector (the keys transposed), P·V with 16
// output dims per vector, each tile RB rows x CB vectors sharing every load. Every element is
// still one chain in row_attention's order (a score sums q[d] * k[d] for d = 0, 1, ...; an output
// adds p_j * v_j for j = 0, 1, ...), only RB * CB chains run side by side.
constexpr int kLanes = 16;
constexpr int kRowsPerTask = 16;

// 16 floats as one value (GCC/Clang vector extension): lanewise IEEE multiply and add.
typedef float Vec __attribute__((vector_size(kLanes * sizeof(float))));

#if defined(__GNUC__) && defined(__x86_64__)
const bool kWideTiles = __builtin_cpu_supports("avx512f");  // 32 vector registers
#else
const bool kWideTiles = false;
#endif

// A request's keys widened to float: row-major rows ([n][576], P·V reads 16 dims of a key) and
// transposed blocks of 16 keys ([n / 16][576][16], Q·K reads dim d of 16 keys). Keys at or past
// seq_len are zero rows (a block's padding). Either the whole request was widened once (all_rows,
// all_blocks: short contexts, shared by the tasks of its rows), or each chunk is widened into the
// caller's scratch when asked for (long contexts: nothing of the context's size is allocated).
struct KeySource {
  KvReader reader;
  int64_t seq_len;
  int64_t padded;  // seq_len rounded up to 16
  const float* all_rows = nullptr;
  const float* all_blocks = nullptr;

  void widen(int64_t j0, int64_t j1, float* dst) const {
    for (int64_t j = j0; j < j1; ++j) {
      float* row = dst + (j - j0) * kHeadDimQK;
      if (j < seq_len) {
        reader.row(j, row);
      } else {
        std::fill(row, row + kHeadDimQK, 0.0f);
      }
    }
  }
};

void transpose_block(const float* src, float* dst);

// Scores s[r][16 c + l] (r < RB, c < CB) of rows q[r] against the keys of blocks [0, CB) at kT.
template <int RB, int CB>
__attribute__((always_inline)) inline void qk_tile(const float* const* q, const float* kT,
                                                   float* const* s) {
  Vec acc[RB][CB] = {};
  for (int d = 0; d < kHeadDimQK; ++d) {
    Vec k[CB];
    for (int c = 0; c < CB; ++c)
      std::memcpy(&k[c], kT + (static_cast<int64_t>(c) * kHeadDimQK + d) * kLanes, sizeof(Vec));
    for (int r = 0; r < RB; ++r) {
      const float qd = q[r][d];
      for (int c = 0; c < CB; ++c) acc[r][c] += k[c] * qd;
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) std::memcpy(s[r] + c * kLanes, &acc[r][c], sizeof(Vec));
}

// o[r][d0 + 16 c + l] += p[r][j] * v_j[...] for keys j in [j0, j1) in order (o holds the sums so
// far); key j's row is keys[(j - key0) * 576 ...].
template <int RB, int CB>
__attribute__((always_inline)) inline void pv_tile(const float* const* p, const float* keys,
                                                   int64_t key0, int64_t j0, int64_t j1, int d0,
                                                   float* const* o) {
  Vec acc[RB][CB];
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) std::memcpy(&acc[r][c], o[r] + d0 + c * kLanes, sizeof(Vec));
  for (int64_t j = j0; j < j1; ++j) {
    Vec v[CB];
    for (int c = 0; c < CB; ++c)
      std::memcpy(&v[c], keys + (j - key0) * kHeadDimQK + d0 + c * kLanes, sizeof(Vec));
    for (int r = 0; r < RB; ++r) {
      const float pj = p[r][j];
      for (int c = 0; c < CB; ++c) acc[r][c] += v[c] * pj;
    }
  }
  for (int r = 0; r < RB; ++r)
    for (int c = 0; c < CB; ++c) std::memcpy(o[r] + d0 + c * kLanes, &acc[r][c], sizeof(Vec));
}

// Keys per chunk of the loops below: a chunk is widened (64 x 2.3 KB, in the layout the pass
// reads) and stays in cache while every row of the task passes over it, so the request's KV rows
// are read once per task and pass, and nothing of a long context's size is allocated.
constexpr int64_t kKeyChunk = 64;

// Rows q[0, n) (float, 576 each) over keys [0, end[r]): writes o[r] (512, normalised) and lse[r].
// s[r] is scratch of keys.padded floats per row. Register tiles of RB rows x CB vectors, then
// single rows; key chunks outermost.
template <int RB, int CB>
__attribute__((always_inline)) inline void attend_rows(const float* const* q, const int64_t* end,
                                                       int64_t n, const KeySource& keys,
                                                       float sm_scale, float* const* s,
                                                       float* const* o, float* lse) {
  static_assert(kKeyChunk % (CB * kLanes) == 0);
  // This thread's chunk buffers: row-major rows, and the same keys in transposed 16-key blocks.
  alignas(64) thread_local float chunk_rows[kKeyChunk * kHeadDimQK];
  alignas(64) thread_local float chunk_blocks[kKeyChunk * kHeadDimQK];
  int64_t end_max = 0;
  for (int64_t r = 0; r < n; ++r) end_max = std::max(end_max, end[r]);
  // Q·K over whole key blocks up to the last key any row sees (scores past a row's end unused).
  const int64_t blocks = (end_max + kLanes - 1) / kLanes;
  for (int64_t c0 = 0; c0 < blocks; c0 += kKeyChunk / kLanes) {
    const int64_t nb = std::min(blocks - c0, kKeyChunk / kLanes);
    const float* kT =
        keys.all_blocks != nullptr ? keys.all_blocks + c0 * kHeadDimQK * kLanes : chunk_blocks;
    if (keys.all_blocks == nullptr) {
      keys.widen(c0 * kLanes, (c0 + nb) * kLanes, chunk_rows);
      for (int64_t i = 0; i < nb; ++i)
        transpose_block(chunk_rows + i * kLanes * kHeadDimQK,
                        chunk_blocks + i * kHeadDimQK * kLanes);
    }
    for (int64_t t = 0; t < n; t += RB) {
      const int64_t rows = std::min<int64_t>(RB, n - t);
      float* sr[RB];
      // Scores of rows [r0, r0 + count) for the chunk's block i (keys 16 (c0 + i) ..).
      auto at = [&](int64_t r0, int64_t count, int64_t i) {
        for (int64_t r = 0; r < count; ++r) sr[r] = s[r0 + r] + (c0 + i) * kLanes;
        return kT + i * kHeadDimQK * kLanes;
      };
      if (rows == RB) {
        int64_t i = 0;
        for (; i + CB <= nb; i += CB) qk_tile<RB, CB>(q + t, at(t, RB, i), sr);
        // A chunk's last blocks: a single block runs only RB chains (~half the speed).
        if constexpr (CB > 2) {
          for (; i + 2 <= nb; i += 2) qk_tile<RB, 2>(q + t, at(t, RB, i), sr);
        }
        for (; i < nb; ++i) qk_tile<RB, 1>(q + t, at(t, RB, i), sr);
      } else {
        for (int64_t r = t; r < t + rows; ++r) {
          int64_t i = 0;
          for (; i + CB <= nb; i += CB) qk_tile<1, CB>(q + r, at(r, 1, i), sr);
          for (; i < nb; ++i) qk_tile<1, 1>(q + r, at(r, 1, i), sr);
        }
      }
    }
  }
  // Scale, max, exp and sum per row in key order, as row_attention does; p overwrites s.
  float max_score[kRowsPerTask], sum[kRowsPerTask];
  for (int64_t r = 0; r < n; ++r) {
    float* sc = s[r];
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < end[r]; ++j) {
      sc[j] = sc[j] * sm_scale;
      m = std::max(m, sc[j]);
    }
    float total = 0;
    for (int64_t j = 0; j < end[r]; ++j) {
      sc[j] = std::exp(sc[j] - m);
      total += sc[j];
    }
    max_score[r] = m;
    sum[r] = total;
    std::fill(o[r], o[r] + kHeadDimV, 0.0f);
  }
  // P·V, key chunks outermost: in a chunk, a tile's rows over the keys all of them see, then each
  // row alone over the rest of its own (later keys, so every output still adds its keys in order).
  const float* const* p = s;
  for (int64_t j0 = 0; j0 < end_max; j0 += kKeyChunk) {
    const int64_t j1 = std::min(end_max, j0 + kKeyChunk);
    const float* kv = chunk_rows;
    if (keys.all_rows != nullptr) {
      kv = keys.all_rows + j0 * kHeadDimQK;
    } else {
      keys.widen(j0, j1, chunk_rows);
    }
    for (int64_t t = 0; t < n; t += RB) {
      const int64_t rows = std::min<int64_t>(RB, n - t);
      int64_t common = j0;  // the tile's keys [j0, common) went through the whole tile
      if (rows == RB) {
        int64_t end_min = end[t];
        for (int r = 1; r < RB; ++r) end_min = std::min(end_min, end[t + r]);
        common = std::clamp(end_min, j0, j1);
        if (common > j0) {
          for (int d0 = 0; d0 < kHeadDimV; d0 += CB * kLanes)
            pv_tile<RB, CB>(p + t, kv, j0, j0, common, d0, o + t);
        }
      }
      for (int64_t r = t; r < t + rows; ++r) {
        const int64_t stop = std::min(j1, end[r]);
        if (stop <= common) continue;
        for (int d0 = 0; d0 < kHeadDimV; d0 += CB * kLanes)
          pv_tile<1, CB>(p + r, kv, j0, common, stop, d0, o + r);
      }
    }
  }
  for (int64_t r = 0; r < n; ++r) {
    if (end[r] <= 0) {
      lse[r] = -std::numeric_limits<float>::infinity();
      continue;
    }
    for (int d = 0; d < kHeadDimV; ++d) o[r][d] /= sum[r];
    lse[r] = max_score[r] + std::log(sum[r]);
  }
}

// Rows [r0, r0 + n) of request b (row r = i * H + h of its q_len tokens, which start at the call's
// token `first`; n <= kRowsPerTask). Built for several x86 ISAs (GCC picks one at load time);
// every lane does the same IEEE operations in any of them.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void fold_task(const VerifyArgs& a, int64_t b, int64_t first, int64_t q_len, int64_t r0, int64_t n,
               const KeySource& keys) {
  const int64_t H = num_heads(a);
  const int64_t seq_len = seq_len_of(a, b);
  const auto ref = [&](int64_t t) {
    const int64_t i = (r0 + t) / H;
    return RowRef{b, i, first + i, (r0 + t) % H};
  };
  thread_local std::vector<float> q_storage, s_storage, o_storage;
  q_storage.resize(static_cast<size_t>(kRowsPerTask * kHeadDimQK));
  s_storage.resize(static_cast<size_t>(kRowsPerTask * keys.padded));
  o_storage.resize(static_cast<size_t>(kRowsPerTask * kHeadDimV));
  const float* q[kRowsPerTask];
  float* s[kRowsPerTask];
  float* o[kRowsPerTask];
  int64_t end[kRowsPerTask];
  float lse[kRowsPerTask];
  for (int64_t t = 0; t < n; ++t) {
    float* qt = q_storage.data() + t * kHeadDimQK;
    const auto* src = a.q.data_as<const uint16_t>() + offset(a.q, a.ragged(), ref(t));
    for (int d = 0; d < kHeadDimQK; ++d) qt[d] = bf16_bits_to_float(src[d]);
    q[t] = qt;
    s[t] = s_storage.data() + t * keys.padded;
    o[t] = o_storage.data() + t * kHeadDimV;
    // Bottom-right causal mask: token i sees [0, seq_len - q_len + i].
    end[t] = std::max<int64_t>(0, seq_len - q_len + (r0 + t) / H + 1);
  }
  if (kWideTiles) {
    attend_rows<4, 4>(q, end, n, keys, a.sm_scale, s, o, lse);
  } else {
    attend_rows<2, 2>(q, end, n, keys, a.sm_scale, s, o, lse);
  }
  for (int64_t t = 0; t < n; ++t) {
    auto* out = a.out.data_as<uint16_t>() + offset(a.out, a.ragged(), ref(t));
    for (int d = 0; d < kHeadDimV; ++d) out[d] = float_to_bf16_bits(o[t][d]);
    a.lse.data_as<float>()[offset(a.lse, a.ragged(), ref(t))] = lse[t];
  }
}

// dst[d][l] = src[l][d] for 16 keys l of 576 values: 16 x 16 squares transposed in registers, four
// rounds that each swap the off-diagonal halves of every 2s x 2s square (s = 8, 4, 2, 1). A value
// is only moved, never changed.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void transpose_block(const float* src, float* dst) {
#if defined(__clang__)
  // Clang (the fuzz build) has no __builtin_shuffle with runtime masks: the plain loop.
  for (int d = 0; d < kHeadDimQK; ++d)
    for (int l = 0; l < kLanes; ++l) dst[d * kLanes + l] = src[l * kHeadDimQK + d];
#else
  typedef int32_t Mask __attribute__((vector_size(kLanes * sizeof(int32_t))));
  // Row i (bit s clear) keeps its lanes without bit s and takes row i | s's lanes j ^ s (lo);
  // row i | s takes row i's lanes j ^ s and keeps its own lanes with bit s (hi).
  Mask lo8, hi8, lo4, hi4, lo2, hi2, lo1, hi1;
  for (int j = 0; j < kLanes; ++j) {
    auto set = [j](int s, Mask& lo, Mask& hi) {
      lo[j] = (j & s) ? kLanes + (j ^ s) : j;
      hi[j] = (j & s) ? kLanes + j : (j ^ s);
    };
    set(8, lo8, hi8);
    set(4, lo4, hi4);
    set(2, lo2, hi2);
    set(1, lo1, hi1);
  }
  for (int d0 = 0; d0 < kHeadDimQK; d0 += kLanes) {
    Vec r[kLanes];
    for (int l = 0; l < kLanes; ++l) std::memcpy(&r[l], src + l * kHeadDimQK + d0, sizeof(Vec));
    auto round = [&](int s, const Mask& lo, const Mask& hi) {
      for (int i = 0; i < kLanes; ++i) {
        if (i & s) continue;
        const Vec a = r[i], b = r[i | s];
        r[i] = __builtin_shuffle(a, b, lo);
        r[i | s] = __builtin_shuffle(a, b, hi);
      }
    };
    round(8, lo8, hi8);
    round(4, lo4, hi4);
    round(2, lo2, hi2);
    round(1, lo1, hi1);
    for (int d = 0; d < kLanes; ++d) std::memcpy(dst + (d0 + d) * kLanes, &r[d], sizeof(Vec));
  }
#endif
}

// fp8 math (cpu_verify_fp8_math, reference.h): the row's Q rounded to e4m3 under its own scale.
// Returns s_q; q8 holds the e4m3 values (codes as floats, unscaled).
float fp8_math_q(const float* q_row, float* q8) {
  float amax = 0.0f;
  for (int d = 0; d < kHeadDimQK; ++d) amax = std::max(amax, std::fabs(q_row[d]));
  const float s = amax > 0.0f ? amax / kFp8E4M3Max : 1.0f;
  for (int d = 0; d < kHeadDimQK; ++d) {
    q8[d] = fp8e4m3_bits_to_float(float_to_fp8e4m3_bits(q_row[d] / s));
  }
  return s;
}

// Key position `pos` of an fp8_e4m3 pool as its e4m3 values, unscaled.
void fp8_code_row(const KvReader& r, int64_t pos, float* dst) {
  const uint8_t* src = r.base + r.slot(pos) * kHeadDimQK;
  const auto& lut = fp8_table();
  for (int d = 0; d < kHeadDimQK; ++d) dst[d] = lut[src[d]];
}

// One row in fp8 math over keys [begin, end): writes o (512, before bf16 rounding) and returns
// lse. Empty range: o = 0, lse = -inf.
float row_attention_fp8_math(const float* q_row, const KvReader& reader, int64_t begin, int64_t end,
                             float sm_scale, float* o) {
  std::fill(o, o + kHeadDimV, 0.0f);
  if (end <= begin) return -std::numeric_limits<float>::infinity();
  float q8[kHeadDimQK], k[kHeadDimQK];
  const float score_scale = fp8_math_q(q_row, q8) * reader.scale * sm_scale;
  thread_local std::vector<float> scores;
  scores.resize(static_cast<size_t>(end - begin));
  float max_score = -std::numeric_limits<float>::infinity();
  for (int64_t j = begin; j < end; ++j) {
    fp8_code_row(reader, j, k);
    float dot = 0.0f;
    for (int d = 0; d < kHeadDimQK; ++d) dot += q8[d] * k[d];
    scores[j - begin] = dot * score_scale;
    max_score = std::max(max_score, scores[j - begin]);
  }
  float sum = 0.0f, sum8 = 0.0f;
  for (int64_t j = begin; j < end; ++j) {
    const float p = std::exp(scores[j - begin] - max_score);
    sum += p;
    const float p8 = fp8e4m3_bits_to_float(float_to_fp8e4m3_bits(p * kFp8MathPScale));
    sum8 += p8;
    fp8_code_row(reader, j, k);
    for (int d = 0; d < kHeadDimV; ++d) o[d] += p8 * k[d];
  }
  for (int d = 0; d < kHeadDimV; ++d) o[d] = o[d] * reader.scale / sum8;
  return max_score + std::log(sum);
}

}  // namespace

// Requests of more than one task whose keys' two widened copies fit the caches (2 x 4.7 MB) are
// widened once and shared by their tasks; the others are widened a chunk at a time in each task.
constexpr int64_t kWholeRequestKeys = 2048;

Status cpu_verify(const VerifyArgs& a) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_args(a, Device::kCPU));
  const QueryRows rows(a);
  const int64_t H = num_heads(a);
  thread_local std::vector<float> rows_storage, blocks_storage;
  for (int64_t b = 0; b < rows.batch; ++b) {
    const int64_t seq_len = seq_len_of(a, b), q_len = rows.q_len(b);
    KeySource keys{reader_for(a, b), seq_len, (seq_len + kLanes - 1) / kLanes * kLanes};
    const int64_t request_rows = q_len * H;
    const int64_t tasks = (request_rows + kRowsPerTask - 1) / kRowsPerTask;
    if (tasks > 1 && keys.padded <= kWholeRequestKeys) {
      // 64-byte aligned (a 16-lane load across two cache lines costs about two).
      auto aligned = [](std::vector<float>& v, int64_t n) {
        v.resize(static_cast<size_t>(n + 16));
        return v.data() + (16 - reinterpret_cast<uintptr_t>(v.data()) / sizeof(float) % 16) % 16;
      };
      float* all_rows = aligned(rows_storage, keys.padded * kHeadDimQK);
      float* all_blocks = aligned(blocks_storage, keys.padded * kHeadDimQK);
      keys.widen(0, keys.padded, all_rows);
      for (int64_t blk = 0; blk < keys.padded / kLanes; ++blk) {
        transpose_block(all_rows + blk * kLanes * kHeadDimQK,
                        all_blocks + blk * kHeadDimQK * kLanes);
      }
      keys.all_rows = all_rows;
      keys.all_blocks = all_blocks;
    }
    parallel_for(0, tasks, request_rows * seq_len * (kHeadDimQK + kHeadDimV), [&](int64_t task) {
      const int64_t r0 = task * kRowsPerTask;
      fold_task(a, b, rows.begin(b), q_len, r0, std::min<int64_t>(kRowsPerTask, request_rows - r0),
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

Status cpu_verify_fp8_math(const VerifyArgs& a) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_args(a, Device::kCPU));
  VerifyOptions fp8_math;
  fp8_math.fp8_math = true;
  MLASPEC_RETURN_IF_ERROR(can_serve(kCpuReferenceCaps, shape_of(a, fp8_math)));  // fp8 KV only
  for_each_row(
      a, 0, std::numeric_limits<int64_t>::max(),
      [&](const RowRef& r, int64_t begin, int64_t end, const float* q_row, const KvReader& reader) {
        float o[kHeadDimV];
        const float lse = row_attention_fp8_math(q_row, reader, begin, end, a.sm_scale, o);
        auto* out = a.out.data_as<uint16_t>() + offset(a.out, a.ragged(), r);
        for (int d = 0; d < kHeadDimV; ++d) out[d] = float_to_bf16_bits(o[d]);
        a.lse.data_as<float>()[offset(a.lse, a.ragged(), r)] = lse;
      });
  return Status::Ok();
}

Fp8MathRowBound fp8_math_row_bound(const VerifyArgs& a, int64_t b, int64_t i, int64_t h,
                                   double exact_lse, Fp8MathSums sums) {
  const QueryRows rows(a);
  const RowRef r{b, i, rows.begin(b) + i, h};
  float q_row[kHeadDimQK], q8[kHeadDimQK], k[kHeadDimQK];
  load_q_row(a, r, q_row);
  const double s_q = fp8_math_q(q_row, q8);
  const KvReader reader = reader_for(a, b);
  const int64_t n = seq_len_of(a, b) - rows.q_len(b) + i + 1;
  const double u = 0x1p-24, sm = a.sm_scale;
  const double gamma = (kHeadDimQK + 4) * u / (1.0 - (kHeadDimQK + 4) * u);
  // Tensor-core sums (reference.h): 18 k32 instructions accumulate S, each within 2^-12 of the
  // magnitudes so far (1 + 2^-10: the partial sums' own errors), and P V loses 2 x 2^-12 of its
  // products' magnitude per tile.
  const bool tc = sums == Fp8MathSums::kHopperTensorCores;
  const double acc_unit = 0x1p-12;
  const double score_acc = tc ? (kHeadDimQK / 32) * acc_unit * (1.0 + 0x1p-10) : 0.0;
  const double pv_acc = tc ? 2.0 * acc_unit : 0.0;
  double e_max = 0.0, v_max = 0.0;
  for (int64_t j = 0; j < n; ++j) {
    reader.row(j, k);
    double err = 0.0, mag = 0.0;
    for (int d = 0; d < kHeadDimQK; ++d) {
      err += std::fabs(double(q_row[d]) - s_q * q8[d]) * std::fabs(k[d]);
      mag += std::fabs(s_q * q8[d]) * std::fabs(k[d]);
    }
    e_max = std::max(e_max, sm * (err + (gamma + score_acc) * mag));
    for (int d = 0; d < kHeadDimV; ++d) v_max = std::max(v_max, double(std::fabs(k[d])));
  }
  const double rel = 0x1p-4 + 0x1p-20, alpha = 0x1p-10 / double(kFp8MathPScale);
  const double nd = double(n), floor = 1.0 - rel - nd * alpha;
  const double p_rounding =
      floor > 0 ? 2.0 * (rel + nd * alpha) / floor : std::numeric_limits<double>::infinity();
  Fp8MathRowBound bound;
  bound.lse_bound = e_max + nd * u + (tc ? 2e-6 : 1e-6) * (1.0 + std::fabs(exact_lse));
  bound.out_bound = v_max * (std::expm1(2.0 * e_max) + p_rounding + nd * 0x1p-22 + 0x1p-8 + pv_acc);
  return bound;
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
