#include "mlaspec/attention/dcp.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "dcp_runs.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn::dcp {

namespace {

// The merge tree's block size (ShardLayout::block_chunks): validate() and merge_rank_partials,
// which takes a layout without a page size, both need it checked.
Status check_block_chunks(int block_chunks) {
  if (block_chunks >= 1) return Status::Ok();
  return invalid_argument("DCP merge blocks of " + std::to_string(block_chunks) +
                          " chunks: need at least 1");
}

}  // namespace

Result<std::vector<UniformRun>> uniform_runs(const TensorView& q_indptr_host, int64_t rows) {
  MLASPEC_RETURN_IF_ERROR(validate_q_indptr(q_indptr_host, rows));
  const int32_t* p = q_indptr_host.data_as<const int32_t>();
  const int64_t st = q_indptr_host.stride(0), B = q_indptr_host.size(0) - 1;
  auto q_len = [&](int64_t b) { return int64_t{p[(b + 1) * st]} - p[b * st]; };
  std::vector<UniformRun> runs;
  for (int64_t b = 0; b < B;) {
    int64_t end = b + 1;
    while (end < B && q_len(end) == q_len(b)) ++end;
    runs.push_back({b, end - b, p[b * st], q_len(b)});
    b = end;
  }
  return runs;
}

TensorView run_partials(const TensorView& t, const UniformRun& run, int64_t n,
                        std::initializer_list<int64_t> dims) {
  const int64_t offset = n * run.first_row * t.stride(0) * dtype_size(t.dtype());
  return TensorView(static_cast<char*>(t.data()) + offset, t.dtype(), dims, t.device());
}

TensorView run_rows(const TensorView& t, const UniformRun& run) {
  const int64_t offset = run.first_row * t.stride(0) * dtype_size(t.dtype());
  char* p = static_cast<char*>(t.data()) + offset;
  const int64_t Q = run.q_len, s0 = t.stride(0);
  if (t.ndim() == 2) {
    return TensorView(p, t.dtype(), {run.count, Q, t.size(1)}, {Q * s0, s0, t.stride(1)},
                      t.device());
  }
  return TensorView(p, t.dtype(), {run.count, Q, t.size(1), t.size(2)},
                    {Q * s0, s0, t.stride(1), t.stride(2)}, t.device());
}

Status expect_ragged_partials(const TensorView& t, const std::string& name, int64_t rows,
                              int64_t num_heads, bool o, Device device) {
  MLASPEC_RETURN_IF_ERROR(o ? t.expect(name, DType::kF32, {rows, num_heads, kHeadDimV}, device)
                            : t.expect(name, DType::kF32, {rows, num_heads}, device));
  if (!t.is_contiguous()) return invalid_argument(name + " must be contiguous");
  return Status::Ok();
}

Status for_each_run_partials(const VerifyArgs& ragged, int64_t cpr, const TensorView& o_parts,
                             const TensorView& lse_parts, Device device,
                             const RunPartials& uniform) {
  const int64_t T = ragged.q.size(0), H = ragged.q.size(1);
  MLASPEC_RETURN_IF_ERROR(expect_ragged_partials(o_parts, "o_parts", cpr * T, H, true, device));
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(lse_parts, "lse_parts", cpr * T, H, false, device));
  UniformRun run;  // runs come in request order
  return for_each_uniform_run(ragged, [&](const VerifyArgs& u) {
    run.count = u.q.size(0);
    run.q_len = u.q.size(1);
    const Status st =
        uniform(u, run_partials(o_parts, run, cpr, {run.count, cpr, run.q_len, H, kHeadDimV}),
                run_partials(lse_parts, run, cpr, {run.count, cpr, run.q_len, H}));
    run.first_row += run.count * run.q_len;
    return st;
  });
}

int64_t ShardLayout::chunks_per_rank(const TensorView& seq_lens_host) const {
  int64_t longest = 0;
  for (int64_t b = 0; b < seq_lens_host.size(0); ++b) {
    longest = std::max<int64_t>(
        longest, seq_lens_host.data_as<const int32_t>()[b * seq_lens_host.stride(0)]);
  }
  return chunks_per_rank(longest);
}

int64_t ShardLayout::chunks_per_rank(int64_t max_seq_len) const {
  const int64_t chunks = (max_seq_len + chunk_tokens - 1) / chunk_tokens;
  return std::max<int64_t>(1, (chunks + world - 1) / world);
}

Status ShardLayout::validate(int page_size) const {
  if (world < 1) return invalid_argument("DCP world size " + std::to_string(world) + " is below 1");
  if (chunk_tokens < 1 || page_size < 1 || chunk_tokens % page_size != 0) {
    return invalid_argument("DCP chunk of " + std::to_string(chunk_tokens) +
                            " tokens is not a positive multiple of the page size " +
                            std::to_string(page_size) + " (a page must live on one rank)");
  }
  return check_block_chunks(block_chunks);
}

Result<RankShard> make_rank_shard(const VerifyArgs& g, const ShardLayout& layout, int rank) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(g, Device::kCPU));
  const int page_size = static_cast<int>(g.kv.pages.size(1));
  MLASPEC_RETURN_IF_ERROR(layout.validate(page_size));
  if (rank < 0 || rank >= layout.world) {
    return invalid_argument("rank " + std::to_string(rank) + " is outside [0, " +
                            std::to_string(layout.world) + ")");
  }
  const int64_t B = g.block_table.size(0), max_pages = g.block_table.size(1);
  const int64_t pages_per_chunk = layout.chunk_tokens / page_size;
  const int64_t row_bytes = kv_row_bytes(g.kv.pages.dtype());
  const int64_t page_bytes = row_bytes * page_size;
  const auto* src = static_cast<const uint8_t*>(g.kv.pages.data());
  RankShard s;
  s.rank = rank;
  s.block_table.assign(static_cast<size_t>(B * max_pages), 0);
  std::vector<int32_t> owned_global;  // local page id -> global page id
  for (int64_t b = 0; b < B; ++b) {
    const int64_t len = g.seq_lens.data_as<const int32_t>()[b * g.seq_lens.stride(0)];
    const int64_t pages = (len + page_size - 1) / page_size;
    for (int64_t j = 0; j < pages; ++j) {
      if (layout.owner(j / pages_per_chunk) != rank) continue;
      const int32_t global_page =
          g.block_table.data_as<const int32_t>()[b * g.block_table.stride(0) + j];
      s.block_table[b * max_pages + j] = static_cast<int32_t>(owned_global.size());
      owned_global.push_back(global_page);
    }
  }
  s.num_pages = std::max<int>(1, static_cast<int>(owned_global.size()));
  s.kv.assign(static_cast<size_t>(s.num_pages * page_bytes), 0);
  for (size_t p = 0; p < owned_global.size(); ++p) {
    std::memcpy(s.kv.data() + p * page_bytes, src + owned_global[p] * page_bytes, page_bytes);
  }
  return s;
}

namespace {

// A uniform call's (or run's) partials for the chunks of rank `rank`, cpr of them (the whole
// call's count: a run's own longest request may need fewer).
Status uniform_rank_partials(const VerifyArgs& local, const ShardLayout& layout, int rank,
                             int64_t cpr, TensorView o_parts, TensorView lse_parts) {
  const int64_t B = local.q.size(0), Q = local.q.size(1), H = local.q.size(2);
  MLASPEC_RETURN_IF_ERROR(
      o_parts.expect("o_parts", DType::kF32, {B, cpr, Q, H, kHeadDimV}, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(lse_parts.expect("lse_parts", DType::kF32, {B, cpr, Q, H}, Device::kCPU));
  for (int64_t k = 0; k < cpr; ++k) {
    const int64_t c = k * layout.world + rank;
    // The slice of local chunk k: [B, Q, H, 512] with the batch stride of the parts buffer.
    TensorView o(o_parts.data_as<float>() + k * o_parts.stride(1), DType::kF32,
                 {B, Q, H, kHeadDimV},
                 {o_parts.stride(0), o_parts.stride(2), o_parts.stride(3), 1});
    TensorView l(lse_parts.data_as<float>() + k * lse_parts.stride(1), DType::kF32, {B, Q, H},
                 {lse_parts.stride(0), lse_parts.stride(2), lse_parts.stride(3)});
    MLASPEC_RETURN_IF_ERROR(
        cpu_verify_partial(local, c * layout.chunk_tokens, (c + 1) * layout.chunk_tokens, o, l));
  }
  return Status::Ok();
}

}  // namespace

Status rank_partials_cpu(const VerifyArgs& local, const ShardLayout& layout, int rank,
                         TensorView o_parts, TensorView lse_parts) {
  MLASPEC_RETURN_IF_ERROR(validate_verify_inputs(local, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(layout.validate(static_cast<int>(local.kv.pages.size(1))));
  const int64_t cpr = layout.chunks_per_rank(local.seq_lens);
  if (!local.ragged()) {
    return uniform_rank_partials(local, layout, rank, cpr, o_parts, lse_parts);
  }
  return for_each_run_partials(local, cpr, o_parts, lse_parts, Device::kCPU,
                               [&](const VerifyArgs& u, const TensorView& o, const TensorView& l) {
                                 return uniform_rank_partials(u, layout, rank, cpr, o, l);
                               });
}

namespace {

// Local chunk k of a rank's partials: [B, cpr, q_len, H(, 512)] -> the [B, q_len, H(, 512)] view.
TensorView chunk_view(const TensorView& t, int64_t k) {
  if (t.ndim() == 5) {
    return TensorView(t.data_as<float>() + k * t.stride(1), DType::kF32,
                      {t.size(0), t.size(2), t.size(3), t.size(4)},
                      {t.stride(0), t.stride(2), t.stride(3), t.stride(4)});
  }
  return TensorView(t.data_as<float>() + k * t.stride(1), DType::kF32,
                    {t.size(0), t.size(2), t.size(3)}, {t.stride(0), t.stride(2), t.stride(3)});
}

// One partial set per rank.
Status check_world(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                   const ShardLayout& layout) {
  if (static_cast<int>(o_parts.size()) != layout.world ||
      static_cast<int>(lse_parts.size()) != layout.world) {
    return invalid_argument("merge_rank_partials needs one partial set per rank: world " +
                            std::to_string(layout.world) + ", got " +
                            std::to_string(o_parts.size()) + " o and " +
                            std::to_string(lse_parts.size()) + " lse sets");
  }
  return Status::Ok();
}

// merge_rank_partials of a uniform call (or run).
Status uniform_merge(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                     const ShardLayout& layout, TensorView out, TensorView lse) {
  MLASPEC_RETURN_IF_ERROR(check_world(o_parts, lse_parts, layout));
  const TensorView& o0 = o_parts[0];
  if (o0.ndim() != 5)
    return invalid_argument("rank 0's o partials have rank " + std::to_string(o0.ndim()) +
                            ", expected 5");
  const int64_t B = o0.size(0), cpr = o0.size(1), Q = o0.size(2), H = o0.size(3);
  for (int r = 0; r < layout.world; ++r) {
    const std::string n = "rank " + std::to_string(r) + "'s ";
    MLASPEC_RETURN_IF_ERROR(
        o_parts[r].expect(n + "o partials", DType::kF32, {B, cpr, Q, H, kHeadDimV}, Device::kCPU));
    MLASPEC_RETURN_IF_ERROR(
        lse_parts[r].expect(n + "lse partials", DType::kF32, {B, cpr, Q, H}, Device::kCPU));
  }
  MLASPEC_RETURN_IF_ERROR(check_block_chunks(layout.block_chunks));
  // Global chunk order c = k * world + r: the views list the chunks in that order.
  std::vector<TensorView> os, ls;
  for (int64_t k = 0; k < cpr; ++k) {
    for (int r = 0; r < layout.world; ++r) {
      os.push_back(chunk_view(o_parts[r], k));
      ls.push_back(chunk_view(lse_parts[r], k));
    }
  }
  if (layout.block_chunks == 1) return merge_partials(os, ls, out, lse);
  // Each block of block_chunks chunks folded into one f32 partial, then the blocks merged.
  const auto K = static_cast<size_t>(layout.block_chunks);
  const size_t blocks = (os.size() + K - 1) / K;
  std::vector<float> o_blocks(blocks * static_cast<size_t>(B * Q * H * kHeadDimV));
  std::vector<float> l_blocks(blocks * static_cast<size_t>(B * Q * H));
  std::vector<TensorView> ob, lb;
  for (size_t j = 0; j < blocks; ++j) {
    ob.emplace_back(o_blocks.data() + j * B * Q * H * kHeadDimV, DType::kF32,
                    std::initializer_list<int64_t>{B, Q, H, kHeadDimV});
    lb.emplace_back(l_blocks.data() + j * B * Q * H, DType::kF32,
                    std::initializer_list<int64_t>{B, Q, H});
    const size_t first = j * K, count = std::min(K, os.size() - first);
    MLASPEC_RETURN_IF_ERROR(fold_partials(std::span<const TensorView>(os).subspan(first, count),
                                          std::span<const TensorView>(ls).subspan(first, count),
                                          ob.back(), lb.back()));
  }
  return merge_partials(ob, lb, out, lse);
}

// A ragged call's out [T, H, 512] (bf16 or f32) and lse [T, H] f32 on the host: sets T and H.
Status expect_ragged_out(const TensorView& out, const TensorView& lse, int64_t* T, int64_t* H) {
  MLASPEC_RETURN_IF_ERROR(lse.expect("lse", DType::kF32, {-1, -1}, Device::kCPU));
  *T = lse.size(0);
  *H = lse.size(1);
  if (out.dtype() != DType::kF32 && out.dtype() != DType::kBF16) {
    return invalid_argument("out has dtype " + std::string(dtype_name(out.dtype())) +
                            ", expected bf16 or f32");
  }
  return out.expect("out", out.dtype(), {*T, *H, kHeadDimV}, Device::kCPU);
}

// The chunks per rank of a ragged partial buffer of `rows` rows for T query rows.
Result<int64_t> ragged_cpr(const TensorView& o, int64_t T, const char* name) {
  if (o.ndim() != 3 || o.size(0) < T || o.size(0) % T != 0) {
    return invalid_argument(std::string(name) + " " + o.describe() +
                            " is not a ragged partial buffer [chunks_per_rank * " +
                            std::to_string(T) + ", H, 512]");
  }
  return o.size(0) / T;
}

}  // namespace

Status merge_rank_partials(std::span<const TensorView> o_parts,
                           std::span<const TensorView> lse_parts, const ShardLayout& layout,
                           TensorView out, TensorView lse, const TensorView& q_indptr) {
  if (q_indptr.empty()) return uniform_merge(o_parts, lse_parts, layout, out, lse);
  // Everything checked before the first run writes.
  MLASPEC_RETURN_IF_ERROR(check_world(o_parts, lse_parts, layout));
  MLASPEC_RETURN_IF_ERROR(check_block_chunks(layout.block_chunks));
  int64_t T = 0, H = 0;
  MLASPEC_RETURN_IF_ERROR(expect_ragged_out(out, lse, &T, &H));
  Result<std::vector<UniformRun>> runs = uniform_runs(q_indptr, T);
  MLASPEC_RETURN_IF_ERROR(runs.status());
  Result<int64_t> cpr = ragged_cpr(o_parts[0], T, "rank 0's o partials");
  MLASPEC_RETURN_IF_ERROR(cpr.status());
  for (int r = 0; r < layout.world; ++r) {
    const std::string n = "rank " + std::to_string(r) + "'s ";
    MLASPEC_RETURN_IF_ERROR(
        expect_ragged_partials(o_parts[r], n + "o partials", *cpr * T, H, true, Device::kCPU));
    MLASPEC_RETURN_IF_ERROR(
        expect_ragged_partials(lse_parts[r], n + "lse partials", *cpr * T, H, false, Device::kCPU));
  }
  std::vector<TensorView> os(o_parts.size()), ls(lse_parts.size());
  for (const UniformRun& run : runs.value()) {
    for (int r = 0; r < layout.world; ++r) {
      os[r] = run_partials(o_parts[r], run, *cpr, {run.count, *cpr, run.q_len, H, kHeadDimV});
      ls[r] = run_partials(lse_parts[r], run, *cpr, {run.count, *cpr, run.q_len, H});
    }
    MLASPEC_RETURN_IF_ERROR(uniform_merge(os, ls, layout, run_rows(out, run), run_rows(lse, run)));
  }
  return Status::Ok();
}

namespace {

Status uniform_premerge(const TensorView& o_parts, const TensorView& lse_parts, TensorView o_red,
                        TensorView lse_red) {
  if (o_parts.ndim() != 5) {
    return invalid_argument("o partials have rank " + std::to_string(o_parts.ndim()) +
                            ", expected 5 [B, chunks_per_rank, q_len, H, 512]");
  }
  const int64_t B = o_parts.size(0), cpr = o_parts.size(1), Q = o_parts.size(2),
                H = o_parts.size(3);
  MLASPEC_RETURN_IF_ERROR(
      o_parts.expect("o partials", DType::kF32, {B, cpr, Q, H, kHeadDimV}, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(
      lse_parts.expect("lse partials", DType::kF32, {B, cpr, Q, H}, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(
      o_red.expect("merged o", DType::kF32, {B, 1, Q, H, kHeadDimV}, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(lse_red.expect("merged lse", DType::kF32, {B, 1, Q, H}, Device::kCPU));
  // The rank's chunks in local order, merged with merge_partials into f32.
  std::vector<TensorView> os, ls;
  for (int64_t k = 0; k < cpr; ++k) {
    os.push_back(chunk_view(o_parts, k));
    ls.push_back(chunk_view(lse_parts, k));
  }
  return merge_partials(os, ls, chunk_view(o_red, 0), chunk_view(lse_red, 0));
}

}  // namespace

Status premerge_rank_partials(const TensorView& o_parts, const TensorView& lse_parts,
                              TensorView o_red, TensorView lse_red, const TensorView& q_indptr) {
  if (q_indptr.empty()) return uniform_premerge(o_parts, lse_parts, o_red, lse_red);
  MLASPEC_RETURN_IF_ERROR(lse_red.expect("merged lse", DType::kF32, {-1, -1}, Device::kCPU));
  const int64_t T = lse_red.size(0), H = lse_red.size(1);
  Result<std::vector<UniformRun>> runs = uniform_runs(q_indptr, T);
  MLASPEC_RETURN_IF_ERROR(runs.status());
  Result<int64_t> cpr = ragged_cpr(o_parts, T, "o partials");
  MLASPEC_RETURN_IF_ERROR(cpr.status());
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(o_parts, "o partials", *cpr * T, H, true, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(
      expect_ragged_partials(lse_parts, "lse partials", *cpr * T, H, false, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(expect_ragged_partials(o_red, "merged o", T, H, true, Device::kCPU));
  MLASPEC_RETURN_IF_ERROR(expect_ragged_partials(lse_red, "merged lse", T, H, false, Device::kCPU));
  for (const UniformRun& run : runs.value()) {
    MLASPEC_RETURN_IF_ERROR(uniform_premerge(
        run_partials(o_parts, run, *cpr, {run.count, *cpr, run.q_len, H, kHeadDimV}),
        run_partials(lse_parts, run, *cpr, {run.count, *cpr, run.q_len, H}),
        run_partials(o_red, run, 1, {run.count, 1, run.q_len, H, kHeadDimV}),
        run_partials(lse_red, run, 1, {run.count, 1, run.q_len, H})));
  }
  return Status::Ok();
}

}  // namespace mlaspec::attn::dcp
