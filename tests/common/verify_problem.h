// Random verify-attention problems in host memory, shared by CPU and GPU tests and the bench.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/dtype.h"

namespace mlaspec::testing {

struct ProblemSpec {
  int batch = 1;
  int q_len = 1;
  int num_heads = 16;
  int page_size = 64;
  DType kv_dtype = DType::kBF16;
  float kv_scale = 1.0f;          // fp8 only; stored values are value / kv_scale
  std::vector<int32_t> seq_lens;  // size batch; empty -> all = default_seq_len
  int64_t default_seq_len = 256;
  int extra_pages = 3;  // unused pages in the pool (never referenced)
  uint64_t seed = 1;
  float q_std = 1.0f;             // q ~ N(0, q_std), kv ~ N(0, 1)
  std::string to_string() const;  // "B=2,H=16,q=3,page=16,kv=fp8,scale=0.5,S=[..]"
};

// Host storage for one problem. Pages are assigned to requests in a shuffled order (the block
// table is a permutation, not the identity), so indexing bugs do not hide.
struct Problem {
  ProblemSpec spec;
  int max_pages = 0;                 // block-table width
  int num_pages = 0;                 // pool size
  std::vector<uint16_t> q;           // [B, q_len, H, 576] bf16 bits
  std::vector<uint8_t> kv;           // [num_pages, page_size, 576] bf16 / fp8 codes, or 656-byte
                                     // fp8_tile rows
  std::vector<int32_t> block_table;  // [B, max_pages]; unused entries are -1
  std::vector<int32_t> seq_lens;     // [B]
  float sm_scale = 0.0f;

  // Views on the host storage; `out`/`lse` are supplied by the caller.
  attn::VerifyArgs host_args(TensorView out, TensorView lse);
  int64_t out_elems() const;  // B * q_len * H * 512
  int64_t lse_elems() const;  // B * q_len * H
};

Problem make_problem(const ProblemSpec& spec);

// The query side of a ragged call over a Problem's KV (the Problem's own q and q_len unused):
// request b brings q_lens[b] query tokens (<= its seq_len); q [T, H, 576] bf16 bits drawn from
// `seed`, indptr [B+1].
struct RaggedQ {
  std::vector<int32_t> q_lens, indptr;
  std::vector<uint16_t> q;
  int64_t T = 0;
};
RaggedQ make_ragged_q(const ProblemSpec& spec, std::vector<int32_t> q_lens, uint64_t seed);

// The decode-context-parallel tests' shape: B=3, q_len=8, H=16, the given page size and KV dtype
// (fp8 with a non-trivial scale); seq_lens and seed left to the test.
inline ProblemSpec dcp_spec(DType kv, int page_size) {
  ProblemSpec s;
  s.batch = 3;
  s.q_len = 8;
  s.num_heads = 16;
  s.page_size = page_size;
  s.kv_dtype = kv;
  s.kv_scale = kv == DType::kFP8E4M3 ? 0.1f : 1.0f;
  return s;
}

}  // namespace mlaspec::testing
