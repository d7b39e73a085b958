// Decode context parallelism (DCP): one request's KV sharded across ranks.
//
// Each request's key positions are cut into chunks of `chunk_tokens` consecutive positions (a
// multiple of the page size); chunk c lives on rank c % world, so every rank holds about 1/world
// of every request's pages. A rank computes one partial (o, lse) per chunk it owns with the
// existing split-KV machinery (absolute positions, so the causal mask is exact on every rank);
// the partials of all ranks are all-gathered and merged in global chunk order, as deterministic
// mode merges (verify.h): blocks of `block_chunks` consecutive chunks are folded (fold_partials),
// then the blocks merged (merge_partials). Because the merge tree depends on chunk positions only,
// the result is bitwise the same for any world size, and equals a one-device run that splits at
// the same chunk boundaries.
//
// Partial layout of one rank: o [B, chunks_per_rank, q_len, H, 512] f32 and lse
// [B, chunks_per_rank, q_len, H] f32, local chunk k = global chunk k * world + rank. Chunks past a
// request's length are empty partials (lse = -inf, o = 0). An all-gather of these buffers
// (ncclAllGather of equal-sized buffers) gives every rank everything the merge needs.
//
// Ragged batches (VerifyArgs::q_indptr, per-request q_len) run as their uniform runs (maximal
// ranges of consecutive requests with one q_len, for_each_uniform_run's): every step of a run is
// the uniform step above on views, so a request's partials and merge are those of a uniform call
// of its own q_len, and the guarantees carry over per request: bitwise the same for any world
// size, and bitwise the deterministic one-device ragged run (which is each request alone). The
// layouts are the uniform ones with each request's own q_len, the requests one after another
// (cpr = chunks_per_rank of the whole batch, T = q_indptr[B]):
//   a rank's partials   o [cpr * T, H, 512], lse [cpr * T, H]: request b's [cpr, q_len_b, H(, 512)]
//                       block from row cpr * q_indptr[b], so run j is a uniform [count_j, cpr,
//                       q_len_j, H(, 512)] buffer (a uniform batch's buffer, byte for byte);
//   gathered partials   o [world * cpr * T, H, 512], lse [world * cpr * T, H]: run after run, each
//                       run's [world, count_j, cpr, q_len_j, H(, 512)] (one in-place all-gather
//                       per run);
//   pre-merged          o [T, H, 512], lse [T, H] (cpr = 1 of the above);
// all contiguous f32. No width is pinned for DCP (sglang's "static ragged verify" must pin one).
// Why runs and not one buffer per query token: the fold and combine kernels address a request's
// chunk partials as blocks of q_len * H rows and the ranks' blocks a whole number of such blocks
// apart, which a rank-major gather of mixed widths breaks; per run, every kernel is the uniform
// one unchanged (no new kernel, the uniform path is literally the same calls). The cost is one
// launch of each kernel per run, as for a one-GPU ragged call, and one all-gather per run; the
// NCCL driver issues a call's all-gathers in one NCCL group (one fused collective launch).
// Callers that order requests by width keep the runs few.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mlaspec/attention/verify.h"

namespace mlaspec::attn::dcp {

struct ShardLayout {
  int world = 1;
  int64_t chunk_tokens = 1024;  // deterministic_chunk_tokens(H) for H <= 64
  // Chunks per block of the merge tree (deterministic mode's kDeterministicBlockChunks; 1: one
  // flat merge). The GPU merge supports 1 and kDeterministicBlockChunks.
  int block_chunks = kDeterministicBlockChunks;

  int owner(int64_t chunk) const { return static_cast<int>(chunk % world); }
  // Chunks of the longest request (max_seq_len) that rank `rank` holds, rounded up over ranks.
  int64_t chunks_per_rank(int64_t max_seq_len) const;
  // The same for a batch: the longest of host seq_lens [B] (int32), which sizes every rank's
  // partial buffers [B, chunks_per_rank, ...].
  int64_t chunks_per_rank(const TensorView& seq_lens_host) const;
  // world >= 1, chunk_tokens a positive multiple of page_size, block_chunks >= 1.
  Status validate(int page_size) const;
};

// A rank's share of a paged KV pool: only the pages of the chunks it owns, renumbered densely,
// and a block table of the global width whose owned entries point into the local pool. Entries of
// chunks held elsewhere point to local page 0 and are never read by rank_partials.
struct RankShard {
  int rank = 0;
  int num_pages = 0;                 // pages in the local pool (>= 1)
  std::vector<uint8_t> kv;           // [num_pages, page_size, kv_row_width] in the pool's dtype
  std::vector<int32_t> block_table;  // [B, max_pages]
};

// Builds rank `rank`'s shard from a global host problem (what a loader would place on each GPU).
// Uniform or ragged: the shard depends on seq_lens and pages only.
Result<RankShard> make_rank_shard(const VerifyArgs& global, const ShardLayout& layout, int rank);

// Computes rank `rank`'s per-chunk partials on the CPU (the reference for the GPU path).
// `local` holds the rank's shard (kv.pages, block_table) and the global q, seq_lens, sm_scale,
// and q_indptr when ragged (partials [cpr * T, H(, 512)] then).
Status rank_partials_cpu(const VerifyArgs& local, const ShardLayout& layout, int rank,
                         TensorView o_parts, TensorView lse_parts);

// Merges all ranks' partials (indexed by rank) in global chunk order, by layout.block_chunks'
// tree, into out (bf16) and lse. Ragged: give the call's q_indptr (host); partials [cpr * T, H(,
// 512)], out [T, H, 512], lse [T, H]. Checked before anything is written.
Status merge_rank_partials(std::span<const TensorView> o_parts,
                           std::span<const TensorView> lse_parts, const ShardLayout& layout,
                           TensorView out, TensorView lse, const TensorView& q_indptr = {});

// Pre-merged mode (dcp_nccl.h's DcpMerge::kPremerge): a rank first merges its own chunks'
// partials, o_parts [B, cpr, q_len, H, 512] / lse_parts [B, cpr, q_len, H], into one partial per
// row, o_red [B, 1, q_len, H, 512] / lse_red [B, 1, q_len, H] (f32), so the all-gather carries one
// partial per rank instead of one per chunk; merge_rank_partials of the reduced sets (cpr = 1)
// then gives the result. Same attention, different merge tree: equal to the chunk-order merge up
// to fp32 reassociation, not bitwise.
// Ragged: q_indptr (host) given, o_parts [cpr * T, H, 512] -> o_red [T, H, 512] (lse alike).
Status premerge_rank_partials(const TensorView& o_parts, const TensorView& lse_parts,
                              TensorView o_red, TensorView lse_red,
                              const TensorView& q_indptr = {});

// ---- GPU path (CUDA builds; without CUDA these return kUnsupported) -------------------------
//
// rank_partials_cuda: rank `rank`'s per-chunk partials with the fold kernel. `local` is the rank's
// shard on the device (kv.pages, block_table; q and seq_lens are global) with block_table_host and
// seq_lens_host; o_parts [B, cpr, q_len, H, 512] and lse_parts [B, cpr, q_len, H] are contiguous
// f32 device tensors. chunk_tokens must also be a multiple of the kernel's 64-token KV tile.
// With chunk_tokens = deterministic_chunk_tokens(H) (verify.h; deterministic mode's chunk) the
// merged result is bitwise the deterministic one-GPU result. Ragged (local.q_indptr and its host
// copy): o_parts [cpr * T, H, 512], lse_parts [cpr * T, H]; one fold launch per uniform run.
Status rank_partials_cuda(const VerifyArgs& local, const ShardLayout& layout, int rank,
                          TensorView o_parts, TensorView lse_parts, void* stream = nullptr);

// merge_gathered_cuda: the merge on the GPU of every rank's partials laid out one rank's block
// after another, as ncclAllGather leaves them: o_gathered [world, B, cpr, q_len, H, 512],
// lse_gathered [world, B, cpr, q_len, H] (device, contiguous); out bf16 / lse f32 on the device.
// Combines in global chunk order with the one-GPU combine's arithmetic and layout.block_chunks'
// tree (1 or kDeterministicBlockChunks). Ragged (q_indptr_host given): the gathered layout of the
// file comment, [world * cpr * T, H(, 512)], out [T, H, 512], lse [T, H]; one launch per run.
Status merge_gathered_cuda(TensorView o_gathered, TensorView lse_gathered,
                           const ShardLayout& layout, TensorView out, TensorView lse,
                           void* stream = nullptr, const TensorView& q_indptr_host = {});

// premerge_rank_partials_cuda: premerge_rank_partials on the device (the combine kernel's
// arithmetic, writing the merged partial in f32); all four tensors contiguous f32 on the device.
// Ragged (q_indptr_host given): [cpr * T, H(, 512)] -> [T, H(, 512)].
Status premerge_rank_partials_cuda(TensorView o_parts, TensorView lse_parts, TensorView o_red,
                                   TensorView lse_red, void* stream = nullptr,
                                   const TensorView& q_indptr_host = {});

}  // namespace mlaspec::attn::dcp
