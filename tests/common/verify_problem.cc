#include "common/verify_problem.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>

#include "mlaspec/core/fp8_tile.h"

namespace mlaspec::testing {
namespace {
constexpr uint16_t kBf16QuietNaN = 0x7fc0;
constexpr uint8_t kFp8E4M3NaN = 0x7f;  // S.1111.111
}  // namespace

std::string ProblemSpec::to_string() const {
  std::ostringstream os;
  os << "B=" << batch << ",H=" << num_heads << ",q=" << q_len << ",page=" << page_size
     << ",kv=" << dtype_name(kv_dtype);
  if (kv_dtype == DType::kFP8E4M3) os << ",scale=" << kv_scale;
  os << ",S=[";
  for (size_t i = 0; i < seq_lens.size(); ++i) os << (i ? "," : "") << seq_lens[i];
  if (seq_lens.empty()) os << default_seq_len << "x" << batch;
  os << "],seed=" << seed;
  return os.str();
}

Problem make_problem(const ProblemSpec& spec_in) {
  Problem p;
  p.spec = spec_in;
  ProblemSpec& spec = p.spec;
  if (spec.seq_lens.empty())
    spec.seq_lens.assign(spec.batch, static_cast<int32_t>(spec.default_seq_len));
  p.seq_lens = spec.seq_lens;
  std::mt19937_64 rng(spec.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);

  int64_t total_pages = 0;
  for (int b = 0; b < spec.batch; ++b) {
    const int pages = static_cast<int>((p.seq_lens[b] + spec.page_size - 1) / spec.page_size);
    p.max_pages = std::max(p.max_pages, pages);
    total_pages += pages;
  }
  p.max_pages = std::max(p.max_pages, 1);
  p.num_pages = static_cast<int>(total_pages) + spec.extra_pages;

  std::vector<int32_t> perm(p.num_pages);
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng);
  p.block_table.assign(static_cast<size_t>(spec.batch) * p.max_pages, -1);
  size_t next = 0;
  for (int b = 0; b < spec.batch; ++b) {
    const int pages = static_cast<int>((p.seq_lens[b] + spec.page_size - 1) / spec.page_size);
    for (int j = 0; j < pages; ++j)
      p.block_table[static_cast<size_t>(b) * p.max_pages + j] = perm[next++];
  }

  const size_t q_elems =
      static_cast<size_t>(spec.batch) * spec.q_len * spec.num_heads * attn::kHeadDimQK;
  p.q.resize(q_elems);
  for (auto& v : p.q) v = float_to_bf16_bits(normal(rng) * spec.q_std);

  const size_t kv_elems = static_cast<size_t>(p.num_pages) * spec.page_size * attn::kHeadDimQK;
  if (spec.kv_dtype == DType::kBF16) {
    p.kv.resize(kv_elems * 2);
    auto* dst = reinterpret_cast<uint16_t*>(p.kv.data());
    for (size_t i = 0; i < kv_elems; ++i) dst[i] = float_to_bf16_bits(normal(rng));
  } else if (spec.kv_dtype == DType::kFP8Tile) {
    // bf16 rows whose 128-value blocks have magnitudes 2^-3 .. 2^3 (so every row has its own
    // scales), quantized by the pool writer's encoder.
    const size_t rows = kv_elems / attn::kHeadDimQK;
    p.kv.resize(rows * kFp8TileRowBytes);
    std::uniform_int_distribution<int> mag(-3, 3);
    std::vector<uint16_t> row(attn::kHeadDimQK);
    for (size_t r = 0; r < rows; ++r) {
      for (int k = 0; k < kFp8TileBlocks; ++k) {
        const float m = std::ldexp(1.0f, mag(rng));
        for (int i = 0; i < kFp8TileBlock; ++i) {
          row[k * kFp8TileBlock + i] = float_to_bf16_bits(normal(rng) * m);
        }
      }
      for (int i = kFp8TileLatent; i < attn::kHeadDimQK; ++i) {
        row[i] = float_to_bf16_bits(normal(rng));
      }
      encode_fp8_tile_row(row.data(), p.kv.data() + r * kFp8TileRowBytes);
    }
  } else {
    p.kv.resize(kv_elems);
    for (size_t i = 0; i < kv_elems; ++i)
      p.kv[i] = float_to_fp8e4m3_bits(normal(rng) / spec.kv_scale);
  }
  // Rows of a request's last page past its seq_len hold NaN: a kernel that lets one reach its
  // output (e.g. 0 * NaN in P V for a key it did not zero) fails every comparison.
  const size_t row_bytes = static_cast<size_t>(attn::kv_row_bytes(spec.kv_dtype));
  for (int b = 0; b < spec.batch; ++b) {
    const int32_t len = p.seq_lens[b];
    if (len % spec.page_size == 0) continue;
    const int32_t page = p.block_table[static_cast<size_t>(b) * p.max_pages + len / spec.page_size];
    for (int r = len % spec.page_size; r < spec.page_size; ++r) {
      uint8_t* row = p.kv.data() + (static_cast<size_t>(page) * spec.page_size + r) * row_bytes;
      if (spec.kv_dtype == DType::kBF16) {
        auto* e = reinterpret_cast<uint16_t*>(row);
        std::fill(e, e + attn::kHeadDimQK, kBf16QuietNaN);
      } else if (spec.kv_dtype == DType::kFP8Tile) {
        std::fill(row, row + row_bytes, uint8_t{0xff});  // NaN codes, NaN scales, NaN rope
      } else {
        std::fill(row, row + attn::kHeadDimQK, kFp8E4M3NaN);
      }
    }
  }
  p.sm_scale = 1.0f / std::sqrt(static_cast<float>(attn::kHeadDimQK));
  return p;
}

attn::VerifyArgs Problem::host_args(TensorView out, TensorView lse) {
  attn::VerifyArgs a;
  a.q = TensorView(q.data(), DType::kBF16,
                   {spec.batch, spec.q_len, spec.num_heads, attn::kHeadDimQK});
  a.kv.pages = TensorView(kv.data(), spec.kv_dtype,
                          {num_pages, spec.page_size, attn::kv_row_width(spec.kv_dtype)});
  a.kv.kv_scale = spec.kv_dtype == DType::kFP8E4M3 ? spec.kv_scale : 1.0f;
  a.block_table = TensorView(block_table.data(), DType::kI32, {spec.batch, max_pages});
  a.seq_lens = TensorView(seq_lens.data(), DType::kI32, {spec.batch});
  a.sm_scale = sm_scale;
  a.out = out;
  a.lse = lse;
  return a;
}

int64_t Problem::out_elems() const {
  return static_cast<int64_t>(spec.batch) * spec.q_len * spec.num_heads * attn::kHeadDimV;
}
int64_t Problem::lse_elems() const {
  return static_cast<int64_t>(spec.batch) * spec.q_len * spec.num_heads;
}

RaggedQ make_ragged_q(const ProblemSpec& spec, std::vector<int32_t> q_lens, uint64_t seed) {
  RaggedQ r;
  r.q_lens = std::move(q_lens);
  r.indptr.push_back(0);
  for (const int32_t n : r.q_lens) r.indptr.push_back(r.indptr.back() + n);
  r.T = r.indptr.back();
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  r.q.resize(static_cast<size_t>(r.T * spec.num_heads * attn::kHeadDimQK));
  for (auto& v : r.q) v = float_to_bf16_bits(normal(rng) * spec.q_std);
  return r;
}

}  // namespace mlaspec::testing
