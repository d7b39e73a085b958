// What the CPU reference backend serves. It has no kernel traits: its loops take any shape, so
// its limits are the API's own (sizes that keep int64 offsets and host memory sane).
#pragma once

#include "mlaspec/attention/backend.h"

namespace mlaspec::attn {

inline constexpr BackendCaps kCpuReferenceCaps = [] {
  BackendCaps c;
  c.name = "cpu_reference";
  c.device = Device::kCPU;
  c.min_q_len = 1;
  c.max_q_len = 1024;
  c.min_heads = 1;
  c.max_heads = 1024;
  c.max_batch = 4096;
  c.max_seq_len = int64_t{1} << 31;
  c.kv_dtypes = dtype_bit(DType::kBF16) | dtype_bit(DType::kFP8E4M3) | dtype_bit(DType::kFP8Tile);
  c.page_size_mask = 0;    // any page size
  c.deterministic = true;  // one fixed summation order, independent of batchmates and threads
  c.split_kv = false;
  c.ragged = true;    // its loops go row by row, whatever each request's q_len
  c.fp8_math = true;  // cpu_verify_fp8_math: e4m3 Q and P, the fp8 tensor-core arithmetic
  return c;
}();

}  // namespace mlaspec::attn
