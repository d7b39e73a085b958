// The CUDA KV writer: scatter bf16 rows into a pool layer, converting with encode_fp8_kv_value —
// the same MLASPEC_HD function the host writer calls, so both produce identical bytes.
//
// One CTA per row (a verify step writes B * q_len rows per layer, a prefill up to a few thousand;
// each row is 576 values for MLA), threads striding over the row. When the row length and every
// address allow it, each thread moves 8 values at a time (16-byte bf16 loads, 8- or 16-byte
// stores); otherwise one value at a time. The division x / scale must stay IEEE (no
// --use_fast_math, no __fdividef): that is what makes CPU and GPU agree bitwise.
//
// fp8_tile pools (core/fp8_tile.h): one CTA per row too, warp k quantizing latent block k (lane
// j takes values 4j .. 4j + 3): the block's amax by a warp max-reduction (exact, so any order
// gives the host's value), its scale and codes through the same MLASPEC_HD functions as
// encode_fp8_tile_row; threads 0..63 copy the rope's bf16 bits.
#include <cuda_runtime.h>

#include <string>

#include "../write_params.h"
#include "mlaspec/core/fp8_tile.h"
#include "mlaspec/kvcache/writer.h"

namespace mlaspec::kv::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kVec = 8;  // values per vector step

template <bool kFp8, bool kVectorized>
__global__ void kv_write_rows_kernel(KvWriteParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // A kernel launched after this one as its programmatic dependent (the CUDA model runtime's,
  // MLASPEC_CUDA_PDL) may start its blocks now: it waits for this grid's end before it reads.
  asm volatile("griddepcontrol.launch_dependents;");
#endif
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

constexpr int kTileThreads = 32 * kFp8TileBlocks;  // a warp per latent block
static_assert(kFp8TileBlock == 32 * 4 && kFp8TileRope <= kTileThreads);

__global__ void kv_write_tile_rows_kernel(KvWriteParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // A kernel launched after this one as its programmatic dependent (the CUDA model runtime's,
  // MLASPEC_CUDA_PDL) may start its blocks now: it waits for this grid's end before it reads.
  asm volatile("griddepcontrol.launch_dependents;");
#endif
  const int64_t i = blockIdx.x;
  const int32_t slot = p.slots[i];
  if (slot < 0 || slot >= p.num_slots) return;
  const uint16_t* gSrc = p.rows + i * p.row_stride;
  uint8_t* gDst = static_cast<uint8_t*>(p.layer_base) + int64_t{slot} * kFp8TileRowBytes;
  const int blk = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int base = blk * kFp8TileBlock + 4 * lane;
  uint16_t x[4];
  float amax = 0.0f;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    x[k] = gSrc[base + k];
    const uint16_t a = x[k] & 0x7fffu;
    if (a < 0x7f80u) amax = fmaxf(amax, bf16_bits_to_float(a));  // finite values only
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float scale = fp8_tile_scale(amax);
  uint32_t codes = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) codes |= uint32_t{encode_fp8_tile_value(x[k], scale)} << (8 * k);
  *reinterpret_cast<uint32_t*>(gDst + base) = codes;  // rows are 16-byte aligned, base % 4 == 0
  if (lane == 0) *reinterpret_cast<float*>(gDst + kFp8TileScaleOffset + 4 * blk) = scale;
  if (threadIdx.x < kFp8TileRope) {
    reinterpret_cast<uint16_t*>(gDst + kFp8TileRopeOffset)[threadIdx.x] =
        gSrc[kFp8TileLatent + threadIdx.x];
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
  if (p.fp8_tile) {
    if (p.row_elems != kFp8TileRowValues) {
      return invalid_argument("write_rows: fp8_tile rows hold " +
                              std::to_string(kFp8TileRowValues) + " values, not " +
                              std::to_string(p.row_elems));
    }
    kv_write_tile_rows_kernel<<<grid, kTileThreads, 0, s>>>(p);
  } else if (p.fp8) {
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
