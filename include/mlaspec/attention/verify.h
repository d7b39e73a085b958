// The MLA verify-attention op: the public contract (docs/architecture.md, docs/attention.md).
//
// For a batch of B requests with the same q_len:
//   q            [B, q_len, H, 576] bf16, last dim contiguous (row r = i*H + h of a request is
//                query token i, head h; the request's q is viewed as [q_len*H, 576] without copy)
//   kv.pages     [num_pages, page_size, 576] bf16 or fp8_e4m3, contiguous; value = stored *
//                kv.kv_scale for fp8 (kv_scale must be 1 for bf16). K = all 576, V = first 512.
//                Or [num_pages, page_size, 656] fp8_tile: per-tile-scaled rows (core/fp8_tile.h:
//                512 e4m3 with one f32 scale per 128, 64 bf16 rope); kv_scale must be 1.
//   block_table  [B, max_pages] int32; block_table[b][j] holds tokens [j*page_size,
//   (j+1)*page_size) seq_lens     [B] int32, q_len <= seq_lens[b]; seq_len counts the KV already
//   written for the
//                new tokens.
//   sm_scale     scale applied to q.k before the softmax
// Mask: query token i sees key positions [0, seq_len - q_len + i] (bottom-right causal; no mask
// when q_len = 1).
//
// Ragged batches (requests with different q_len in one call, e.g. a drafter that chooses each
// request's verify width): give q_indptr [B+1] int32 with q_indptr[0] = 0 and q_indptr[b+1] >
// q_indptr[b]; request b's query tokens are rows [q_indptr[b], q_indptr[b+1]) of
//   q [T, H, 576], out [T, H, 512], lse [T, H]      (T = q_indptr[B])
// and its q_len is q_indptr[b+1] - q_indptr[b] (<= seq_lens[b]); the mask is the same rule per
// request. A backend serves ragged calls only if its caps say so (BackendCaps::ragged); the guard
// refuses them elsewhere with the reason, and the uniform form stays the kernels' fast path.
// Outputs: out [B, q_len, H, 512] bf16; lse [B, q_len, H] f32 = natural log of the softmax
// denominator of the scaled scores: lse = log(sum_j exp(sm_scale * q.k_j)).
//
// Validation happens at the API edge: on any error nothing is written to out or lse.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::attn {

inline constexpr int kHeadDimQK = 576;  // latent (512) + rope (64)
inline constexpr int kHeadDimV = 512;
inline constexpr int kRopeDim = 64;

struct KvCacheView {
  TensorView pages;       // [num_pages, page_size, kv_row_width(dtype)]
  float kv_scale = 1.0f;  // fp8_e4m3 dequantization scale for this layer (1 for the others)
};

// The last dimension of kv.pages for a KV dtype: 576 values, or 656 bytes for fp8_tile.
constexpr int64_t kv_row_width(DType t) {
  return t == DType::kFP8Tile ? 656 : kHeadDimQK;
}
// Bytes of one token's row: 1152 (bf16), 576 (fp8_e4m3), 656 (fp8_tile).
constexpr int64_t kv_row_bytes(DType t) {
  return kv_row_width(t) * dtype_size(t);
}

// A KV dtype's short name, as the command line (`--kv`, `kv=`), shape strings and profiles write
// it: "bf16", "fp8" (fp8_e4m3), "fp8tile" (fp8_tile); dtype_name for any other dtype.
constexpr std::string_view kv_dtype_label(DType t) {
  return t == DType::kFP8E4M3 ? "fp8" : t == DType::kFP8Tile ? "fp8tile" : dtype_name(t);
}

struct VerifyArgs {
  TensorView q;
  KvCacheView kv;
  TensorView block_table;
  TensorView seq_lens;
  // Host copies of block_table / seq_lens. CUDA backends need them: validation (page ids in range,
  // table long enough) and split planning run on the host, so a call never reads device metadata
  // back. Leave empty when block_table / seq_lens are host tensors already.
  TensorView block_table_host;
  TensorView seq_lens_host;
  float sm_scale = 0.0f;
  TensorView out;
  TensorView lse;
  // Ragged batches only (see above): [B+1] int32, and its host copy when it lives on the device.
  TensorView q_indptr;
  TensorView q_indptr_host;

  bool ragged() const { return !q_indptr.empty(); }
};

struct VerifyOptions {
  // Deterministic mode: split boundaries at fixed absolute KV positions and a fixed combine order,
  // so a request's result does not depend on its batchmates or on q_len (docs/architecture.md,
  // "Equalities the tests enforce").
  bool deterministic = false;
  // Splits per request; 0 lets the backend choose (adaptive in default mode). Ignored by
  // backends without split-KV (the CPU reference). Must be 0 in deterministic mode.
  int num_splits = 0;
  // Opt-in fp8 tensor-core math for fp8_e4m3 KV (Q and P rounded to e4m3; its error bound:
  // reference.h fp8_math_row_bound; never the default). Only a backend whose caps offer it serves
  // such a call (cpu_reference, cuda_fold, cuda_rowwise); a backend without it refuses it with the
  // reason, so none computes exact math in its place without saying so.
  bool fp8_math = false;
  // cudaStream_t for CUDA backends (nullptr = default stream).
  void* stream = nullptr;
};

// Deterministic mode's split chunk, in KV tokens: 1024 per started group of 64 query heads (1024
// for H <= 64, 2048 for H = 128). It depends on the model's H only, never on the batch, q_len or
// seq_len, so every call of one model (verify and decode alike) splits at the same absolute KV
// positions; scaling it with H keeps a decode call's CTA count (KV chunks x 64-head tiles) and the
// partials per key the same for every H. One chunk for every H cannot serve both: at H = 16 a
// decode call needs 1024 to fill the GPU (2048 was 39% slower), while at H = 128 2048 made every
// deterministic row 11-15% faster.
constexpr int deterministic_chunk_tokens(int num_heads) {
  return 1024 * (((num_heads > 0 ? num_heads : 1) + 63) / 64);
}

// Deterministic mode's merge tree: a request's chunk partials are folded in chunk order within
// blocks of this many consecutive chunks (block j = chunks [8j, 8j + 8)), and the blocks' results
// are then combined as splits are. Fixed, like the chunk, so every call of one model merges a row
// in the same order; it lets a kernel that computes a whole block fold it as it goes and write one
// partial instead of eight (fewer partials written and read back by the combine).
inline constexpr int kDeterministicBlockChunks = 8;

// What a backend is asked to serve: everything the guard and the cost model decide on.
struct VerifyShape {
  int batch = 1;
  int q_len = 1;
  int num_heads = 16;
  int page_size = 64;
  DType kv_dtype = DType::kBF16;
  int64_t max_seq_len = 0;  // longest seq_len in the batch
  int64_t total_kv = 0;     // sum of seq_lens (KV tokens read once)
  bool deterministic = false;
  bool fp8_math = false;  // VerifyOptions::fp8_math
  bool ragged = false;    // per-request q_len (q_indptr); q_len is then the longest
  int64_t total_q = 0;    // query tokens in the call (B * q_len when uniform)
  // "B=1,H=16,q=8,S=131072,kv=fp8,page=64[,det][,fp8math][,ragged]"
  std::string to_string() const;
};

// Checks everything in §3.1 that does not depend on a backend: dtypes, ranks, shapes, strides,
// devices (q/kv/out/lse/block_table/seq_lens on `device`), seq_len >= q_len, seq_len fits the
// block table, every referenced page id in [0, num_pages), sm_scale finite and > 0, kv_scale finite
// and > 0 (and 1 for bf16). Reads metadata from the host copies when given.
Status validate_verify_args(const VerifyArgs& args, Device device);
// The same checks without out/lse (for partial computations that write elsewhere).
Status validate_verify_inputs(const VerifyArgs& args, Device device);
// A ragged call's q_indptr read on the host ([B+1] int32, from 0 to `rows` = T, each request
// >= 1 query token): the check validate_verify_inputs makes, for code that gets q_indptr without
// a whole call (DCP's merges).
Status validate_q_indptr(const TensorView& q_indptr_host, int64_t rows);

// Ragged calls on a kernel that takes one q_len per call: splits a validated ragged call into its
// runs (maximal ranges of consecutive requests with the same q_len) and calls `uniform` once per
// run, in request order, with a uniform call that views the run's rows of q / out / lse and its
// rows of block_table / seq_lens (and their host copies): nothing is copied, and every row of the
// ragged call is in exactly one run. A request's rows are computed by a call of its own q_len, so
// whatever the kernel guarantees for a uniform batch (batch-invariance in deterministic mode, fold
// == rowwise) holds per request. Calls = runs: a caller that orders requests by width makes them
// few. The first error stops the loop (validate the whole call first so none can happen midway).
Status for_each_uniform_run(const VerifyArgs& ragged,
                            const std::function<Status(const VerifyArgs& uniform)>& uniform);

// Query-token rows of a validated call: where request b's tokens start (q_indptr[b], or b * q_len)
// and its q_len. Reads q_indptr on the host.
struct QueryRows {
  explicit QueryRows(const VerifyArgs& args);
  int64_t batch = 0;
  int64_t total = 0;                // T
  const int32_t* indptr = nullptr;  // ragged: [B+1] on the host; else null
  int64_t indptr_stride = 1;
  int64_t uniform_q_len = 0;
  int64_t begin(int64_t b) const { return indptr ? indptr[b * indptr_stride] : b * uniform_q_len; }
  int64_t q_len(int64_t b) const {
    return indptr ? indptr[(b + 1) * indptr_stride] - indptr[b * indptr_stride] : uniform_q_len;
  }
};

// The shape of a validated call made with `options` (reads seq_lens on the host; takes
// deterministic from the options, so no backend can plan a deterministic call as a default one).
VerifyShape shape_of(const VerifyArgs& args, const VerifyOptions& options);

// ---- Split-KV building blocks (public, tested) -------------------------------------------------
//
// A partial result covers key positions [kv_begin, kv_end) intersected with each row's visible
// range: o_part [B, q_len, H, 512] f32 is the normalised output over that range and lse_part
// [B, q_len, H] f32 its log-sum-exp. A row with no visible key in the range has lse = -inf and
// o = 0 (an empty partial, neutral for the merge).
//
// merge: lse = log(sum_s exp(lse_s)); out = sum_s exp(lse_s - lse) * o_s, summed in the order
// given. Exact for a single partial; all-empty rows give out = 0, lse = -inf.
Status merge_partials(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                      TensorView out, TensorView lse);

// fold: level 1 of deterministic mode's merge tree (kDeterministicBlockChunks): the partials of
// one block folded in the order given into one f32 partial, from the empty state (o = 0, lse =
// -inf). An empty partial is skipped; otherwise lse' = max(lse, lse_s) + log1p(exp(-|lse -
// lse_s|)) and o' = exp(lse_s - lse') o_s + exp(lse - lse') o (the first non-empty partial is
// taken as it is). The CUDA kernels compute the same steps with their own exp and log1p.
Status fold_partials(std::span<const TensorView> o_parts, std::span<const TensorView> lse_parts,
                     TensorView out, TensorView lse);

}  // namespace mlaspec::attn
