// Writing new KV rows into a pool: scatter bf16 rows to token slots, converting to the pool dtype.
//
// Conversion of one bf16 value x into a pool of dtype D with the layer's scale s:
//   bf16 pool:  the bits are copied unchanged (s is 1; NaN payloads, infinities, -0 kept).
//   fp8 pool:   NaN x -> 0x7f / 0xff by x's sign bit (decided on the bits, before dividing);
//               otherwise code = float_to_fp8e4m3_bits(float(x) / s): IEEE fp32 division
//               (correctly rounded on CPU and GPU), then round-to-nearest-even to e4m3 with
//               saturation. Hence:
//                 |x / s| > 448, and +-inf   ->  +-448 (codes 0x7e / 0xfe); no infinities in e4m3
//                 NaN                        ->  NaN with x's sign (0x7f / 0xff)
//                 tiny values                ->  e4m3 subnormals (2^-9 steps), or +-0 (sign kept)
//               Reading back gives code * s.
//   fp8_tile pool: per row, one scale per 128 latent values and the rope kept in bf16: the rules
//               are in core/fp8_tile.h (encode_fp8_tile_row); the CUDA writer calls the same
//               functions per value (a warp per 128-value block), so its bytes are the host's.
// The CPU and CUDA writers call the same MLASPEC_HD function (encode_kv_value below), so they
// produce identical bytes for every input.
#pragma once

#include <cstdint>

#include "mlaspec/core/dtype.h"
#include "mlaspec/core/macros.h"
#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"
#include "mlaspec/kvcache/pool.h"

namespace mlaspec::kv {

// fp8 code of one bf16 value for a layer with scale `scale` (see above).
MLASPEC_HD_INLINE uint8_t encode_fp8_kv_value(uint16_t bf16_bits, float scale) {
  // NaN is decided before the division: IEEE leaves the sign of a NaN result open, and x86 keeps
  // the operand's NaN while the GPU returns its canonical positive NaN. Testing the bits keeps
  // the input's sign on both.
  if ((bf16_bits & 0x7fffu) > 0x7f80u) {
    return static_cast<uint8_t>(((bf16_bits >> 8) & 0x80u) | 0x7fu);
  }
  return float_to_fp8e4m3_bits(bf16_bits_to_float(bf16_bits) / scale);
}

struct WriteOptions {
  // Host copy of `slots` when `slots` lives on the device: lets write_rows validate every slot
  // (and return kOutOfRange) before launching. Without it, the CUDA writer skips out-of-range
  // slots silently (it never writes outside the pool).
  TensorView slots_host;
  void* stream = nullptr;  // cudaStream_t for CUDA pools; the call does not synchronize
};

// Writes rows[i] to token slot slots[i] of layer `layer`:
//   slots  int32 [n] on the pool's device; slot = page_id * page_size + offset. A negative slot
//          skips its row (padding rows of a fixed-size batch).
//   rows   bf16 [n, row_elems] on the pool's device, last dim contiguous (any row stride).
// Host pools are written on the calling thread, CUDA pools by a kernel on options.stream.
// Validation (layer, dtypes, shapes, devices, and host-visible slots in [-1.., num_slots)) runs
// first; on error nothing is written. Two rows for the same slot: unspecified which one wins.
Status write_rows(KvPool& pool, int layer, TensorView slots, TensorView rows,
                  const WriteOptions& options = {});

}  // namespace mlaspec::kv
