// Internal: the plain parameter block shared by the CPU writer and the CUDA launcher.
#pragma once

#include <cstdint>

#include "mlaspec/core/status.h"

namespace mlaspec::kv::detail {

struct KvWriteParams {
  const uint16_t* rows = nullptr;  // bf16 bits, row i at rows + i * row_stride
  int64_t row_stride = 0;          // elements
  const int32_t* slots = nullptr;  // [n]; < 0 or >= num_slots: row skipped
  int64_t n = 0;
  void* layer_base = nullptr;  // [num_slots, row_elems] of the pool dtype
  int64_t row_elems = 0;
  int64_t num_slots = 0;
  bool fp8 = false;       // per-layer fp8_e4m3; else bf16 (bit copy) unless fp8_tile
  bool fp8_tile = false;  // 656-byte per-tile-scaled rows (core/fp8_tile.h)
  float scale = 1.0f;     // fp8 only
};

// Host writer (also the reference the CUDA writer is tested against).
void write_rows_host(const KvWriteParams& p);

#if defined(MLASPEC_WITH_CUDA)
// CUDA writer: launches on `stream` (cudaStream_t), returns kInternal on a launch error.
Status run_kv_write_rows(const KvWriteParams& p, void* stream);
#endif

}  // namespace mlaspec::kv::detail
