// The CUDA KV writer: scatter bf16 rows into a pool layer, converting with encode_fp8_kv_value —
// the same MLASPEC_HD function the host writer calls, so both produce identical bytes.
//
// One CTA per row (a verify step writes B * q_len rows per layer, a prefill up to a few thousand;
// each row is 576 values for MLA), threads striding over the row. When the row length and every
// address allow it, each thread moves 8 values at a time (16-byte bf16 loads, 8- or 16-byte
// stores); otherwise one value at a time. The division x / scale must stay IEEE (no
// --use_fast_math, no __fdividef): that is what makes CPU and GPU agree bitwise.
#include <cuda_runtime.h>

#include <string>

#include "../write_params.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kVec = 8;  // values per vector step

template <bool kFp8, bool kVectorized>
__global__ void kv_write_rows_kernel(KvWriteParams p) {
  const int64_t i = blockIdx.x;
  const int32_t slot = p.slots[i];
  // Out-of-range slots are skipped: the host validates them when it can see them; here we only
  // guarantee that nothing outside the pool is touched.
  if (slot < 0 || slot >= p.num_slots) return;
  const uint16_t* gSrc = p.rows + i * p.row_stride;
  const int64_t dst_row = int64_t{slot} * p.row_elems;

  if constexpr (kVectorized) {
    const int64_t vecs = p.row_elems / kVec;
    for (int64_t v = threadIdx.x; v < vecs; v += blockDim.x) {
      const uint4 in = reinterpret_cast<const uint4*>(gSrc)[v];
      if constexpr (kFp8) {
        const uint32_t w[4] = {in.x, in.y, in.z, in.w};
        uint32_t out[2] = {0u, 0u};
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
          const uint16_t b = static_cast<uint16_t>(w[k / 2] >> ((k % 2) * 16));
          out[k / 4] |= uint32_t{encode_fp8_kv_value(b, p.scale)} << ((k % 4) * 8);
        }
        uint8_t* gDst = static_cast<uint8_t*>(p.layer_base) + dst_row;
        reinterpret_cast<uint2*>(gDst)[v] = make_uint2(out[0], out[1]);
      } else {
        uint16_t* gDst = static_cast<uint16_t*>(p.layer_base) + dst_row;
        reinterpret_cast<uint4*>(gDst)[v] = in;
      }
    }
  } else {
    for (int64_t e = threadIdx.x; e < p.row_elems; e += blockDim.x) {
      const uint16_t b = gSrc[e];
      if constexpr (kFp8) {
        static_cast<uint8_t*>(p.layer_base)[dst_row + e] = encode_fp8_kv_value(b, p.scale);
      } else {
        static_cast<uint16_t*>(p.layer_base)[dst_row + e] = b;
      }
    }
  }
}

bool aligned(const void* ptr, int64_t bytes) {
  return reinterpret_cast<uintptr_t>(ptr) % static_cast<uintptr_t>(bytes) == 0;
}

}  // namespace

Status run_kv_write_rows(const KvWriteParams& p, void* stream) {
  if (p.n <= 0) return Status::Ok();
  if (p.n > 0x7fffffff) {
    return invalid_argument("write_rows: " + std::to_string(p.n) + " rows exceed the grid limit");
  }
  // Vector path: every source row starts 16-byte aligned and every destination row 8/16-byte
  // aligned. The pool base is 256-byte aligned (Buffer), so the destination condition reduces to
  // row_elems being a multiple of 8.
  const bool vec = p.row_elems % kVec == 0 && p.row_stride % kVec == 0 && aligned(p.rows, 16) &&
                   aligned(p.layer_base, 16);
  const dim3 grid(static_cast<unsigned>(p.n));
  const dim3 block(kThreads);
  auto s = static_cast<cudaStream_t>(stream);
  if (p.fp8) {
    if (vec)
      kv_write_rows_kernel<true, true><<<grid, block, 0, s>>>(p);
    else
      kv_write_rows_kernel<true, false><<<grid, block, 0, s>>>(p);
  } else {
    if (vec)
      kv_write_rows_kernel<false, true><<<grid, block, 0, s>>>(p);
    else
      kv_write_rows_kernel<false, false><<<grid, block, 0, s>>>(p);
  }
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    return internal_error(std::string("kv_write_rows launch failed: ") + cudaGetErrorString(err));
  }
  return Status::Ok();
}

}  // namespace mlaspec::kv::detail
