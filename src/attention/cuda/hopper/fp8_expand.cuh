// The fp8 kernels' f16 operands: Q scaled per row by a power of two into f16's range, and the
// e4m3 KV codes expanded exactly to f16 in shared memory (the 64-row kernel's expand_tile; the
// narrow kernel's expanding warpgroups use expand_chunks directly).
#pragma once

#include <cstdint>

#include "../ptx.cuh"
#include "../traits.h"
#include "utils.cuh"

namespace mlaspec::attn::cuda {

namespace sm90 {

// fp8 kernels: Q enters the f16 MMAs as q * s per row, s = 2^(14 - e) for the row's largest
// magnitude amax in [2^e, 2^(e+1)), so that every q * s lies below 2^15 (no overflow of f16's
// 65504) and a bf16 q is exact in f16 down to 2^-31 of amax (smaller components round to f16's
// subnormals, at most 2^-25 absolute in the scaled row); the scores are multiplied back by 1 / s,
// a power of two too. s = 1 for a row of zeros (padding) or a non-finite amax (NaN or inf stays
// what it is). Clamped to 2^+-126, normal floats both ways.
__device__ __forceinline__ float q_row_scale(float amax) {
  const int e = static_cast<int>((__float_as_uint(amax) >> 23) & 0xffu) - 127;
  if (amax == 0.f || e == 128) return 1.f;
  const int k = max(-126, min(126, 14 - e));
  return __uint_as_float(static_cast<uint32_t>(127 + k) << 23);
}
// Eight bf16 (one 16-byte chunk) -> their magnitudes' maximum, and -> eight f16 of q * s.
__device__ __forceinline__ float bf16x8_amax(const uint4& v) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  float a = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    a = fmaxf(a, fabsf(__uint_as_float(w[i] << 16)));
    a = fmaxf(a, fabsf(__uint_as_float(w[i] & 0xffff0000u)));
  }
  return a;
}
__device__ __forceinline__ uint4 bf16x8_to_f16x8_scaled(const uint4& v, float s) {
  const uint32_t w[4] = {v.x, v.y, v.z, v.w};
  uint32_t o[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    o[i] =
        ptx::pack_f16x2(__uint_as_float(w[i] << 16) * s, __uint_as_float(w[i] & 0xffff0000u) * s);
  }
  return make_uint4(o[0], o[1], o[2], o[3]);
}

// fp8 kernels: one Q row (bf16 at `src`, or zeros where src is null: a row past the tile) into
// the swizzled Q operand sQ (column blocks BLOCK_BYTES apart) as f16 scaled by the row's
// q_row_scale, by kParts adjacent lanes of one warp, lane `part` taking 16-byte chunks part,
// part + kParts, ...; returns 1 / the scale (every lane of the row).
template <int kParts, int BLOCK_BYTES>
__device__ __forceinline__ float load_q_row_f16(const uint16_t* src, uint8_t* sQ, int row,
                                                int part) {
  constexpr int kChunks = CommonTraits::kHeadDimQK / 8 / kParts;
  static_assert(kChunks * kParts * 8 == CommonTraits::kHeadDimQK && (kParts & (kParts - 1)) == 0);
  uint4 v[kChunks];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    v[k] = src != nullptr ? __ldg(reinterpret_cast<const uint4*>(src) + part + kParts * k)
                          : make_uint4(0, 0, 0, 0);
  }
  float amax = 0.f;
#pragma unroll
  for (int k = 0; k < kChunks; ++k) amax = fmaxf(amax, bf16x8_amax(v[k]));
#pragma unroll
  for (int o = 1; o < kParts; o <<= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  const float qs = q_row_scale(amax);
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int col = part + kParts * k;
    *reinterpret_cast<uint4*>(sQ + (col >> 3) * BLOCK_BYTES + sw128(row, col & 7)) =
        bf16x8_to_f16x8_scaled(v[k], qs);
  }
  return 1.f / qs;
}

// Expands a thread's NC chunks of 16 fp8 codes (exactly, to f16: the fp8 kernels' MMA type) and
// hands chunk k's 16 values to store(k, o). kHighOperand: ptx::fp8x16_to_f16x16's form.
template <bool kHighOperand, int NC, typename Store>
__device__ __forceinline__ void expand_chunks(const uint4 (&v)[NC], Store&& store) {
#pragma unroll
  for (int k = 0; k < NC; ++k) {
    uint32_t o[8];
    ptx::fp8x16_to_f16x16<kHighOperand>(v[k], o);
    store(k, o);
  }
}

// fp8_tile: a thread's 16 e4m3 codes of one 128-value block -> sixteen bf16 of float(code) *
// scale, in o[0..7] as fp8x16_to_f16x16 orders them (o[j] = values 2j, 2j + 1, low half first):
// each code exactly to f16 and f32, one IEEE f32 multiply (no flush of subnormals), rounded to the
// nearest bf16. That is the CPU reference's value (fp8_tile_row_value) wherever it is a bf16:
// code x 2^e has at most 4 significant bits, the lowest at or above 2^(e-9), so every power-of-two
// scale from 2^-124 up (every block the pool writers give an amax above ~2^-117) is exact, up to
// the writer's largest scale 2^120 with its saturated codes (240 x 2^120 is a bf16). Smaller
// scales lose only bits below bf16's subnormal step 2^-133; a scale that is not a power of two
// (a pool not written by mlaspec) rounds the value to bf16 (2^-9 relative). NaN codes or scales
// give NaN, as in the reference; keys that must not count pass scale 0 with zero codes.
template <bool kHighOperand>
__device__ __forceinline__ void fp8x16_to_bf16x16_scaled(const uint4& chunk, float scale,
                                                         uint32_t (&o)[8]) {
  ptx::fp8x16_to_f16x16<kHighOperand>(chunk, o);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    float lo, hi;
    ptx::unpack_f16x2(o[j], lo, hi);
    o[j] = ptx::pack_bf16x2(__fmul_rn(lo, scale), __fmul_rn(hi, scale));
  }
}

// fp8: where raw V block j (j < 8, dense [64 keys x 64 codes]) of a tile lands
// in its stage: the V-left half, blocks 4..7 first, then 0..3. The f16 blocks 0, 1 then overwrite
// only raw 4..7 and the f16 blocks 2, 3 only raw 0..3 (sm90::expand_tile).
template <typename KT>
__device__ __forceinline__ uint32_t raw_v_off(int j) {
  return static_cast<uint32_t>((j + KT::V_HALF) % (2 * KT::V_HALF)) * KT::COPY_BLOCK_BYTES;
}

// fp8: expands a tile's raw codes into the stage's swizzled f16 tile (exact; kv_scale is folded
// into the score and output scales; fp8_tile: into bf16 of code x its block's scale), run by the
// NUM_DEQUANT_THREADS threads of the producer warpgroup, publishing each block to the consumers
// (full[blk]) as soon as it is written. Keys valid..63 are written as zeros (never copied, or past
// seq_len in the last page; 0 * NaN would be NaN in P V; fp8_tile: scale 0 too, as the bytes may
// be NaN); kMasked = false for a whole tile, which loads without the per-key mask.
// The raw codes land in the V-left half (raw_v_off) and the slot `aux` (fp8: the raw rope codes;
// fp8_tile: the scales, 16 bytes per key) once WG0 of every CTA has freed the V-left half, about
// one product before WG1 frees the V-right + rope half, so the V-left half is expanded before
// that: each thread first holds its share of raw V 4..7 in registers, then (a named barrier `bar`
// between every thread's reads and the writes over them) expands raw 0, 1 into f16 blocks 0, 1
// (over raw 4..7) and raw 2, 3 into blocks 2, 3 (over raw 0..3). The V-right + rope half is
// written from the held registers and the rope slot once empty_r says this CTA's WG1 is done with
// the stage's previous tile there (empty_l: and WG0, whose P V-left read the P over the rope
// block; complete already, as the raw codes landed). fp8_tile's rope is no expansion: at that
// point issue_rope() (the caller's) copies it by TMA straight into the rope block, completing
// full[8] itself; keys past valid keep whatever the block held (their scores are masked; only V,
// blocks 0..7, meets P's zeros).
template <typename KT, bool kMasked, typename IssueRope>
__device__ __forceinline__ void expand_tile(uint32_t stage, uint32_t aux, int valid, int dtid,
                                            uint64_t* full, uint64_t* raw, uint64_t* empty_l,
                                            uint64_t* empty_r, uint32_t phase, uint32_t bar,
                                            IssueRope&& issue_rope) {
  constexpr int PB = KT::BLOCK_N * 4 / KT::NUM_DEQUANT_THREADS;  // 16-code chunks per thread
  static_assert(PB * KT::NUM_DEQUANT_THREADS == KT::BLOCK_N * 4);
  // Chunk k of a block (k < PB) is 16-code chunk c = dtid + k * NUM_DEQUANT_THREADS: key c / 4,
  // codes 16 (c % 4)...
  auto load = [&](uint4(&v)[PB], uint32_t raw_block) {
#pragma unroll
    for (int k = 0; k < PB; ++k) {
      const int c = dtid + k * KT::NUM_DEQUANT_THREADS;
      v[k] = !kMasked || (c >> 2) < valid ? ptx::ld_shared_v4(raw_block + c * 16)
                                          : make_uint4(0, 0, 0, 0);
    }
  };
  auto expand_store = [&](const uint4(&v)[PB], int blk) {
    const uint32_t out = stage + blk * KT::BLOCK_BYTES;
    auto store = [&](int k, const uint32_t(&o)[8]) {
      // 16 codes = f16 chunks 2q, 2q + 1 of the key's 128-byte row in the block.
      const int c = dtid + k * KT::NUM_DEQUANT_THREADS;
      const int key = c >> 2, q = c & 3;
      ptx::st_shared_v4(out + sw128(key, 2 * q), o[0], o[1], o[2], o[3]);
      ptx::st_shared_v4(out + sw128(key, 2 * q + 1), o[4], o[5], o[6], o[7]);
    };
    if constexpr (KT::kTile) {
#pragma unroll
      for (int k = 0; k < PB; ++k) {
        const int key = (dtid + k * KT::NUM_DEQUANT_THREADS) >> 2;
        // Column block blk holds latent values 64 blk..: scale blk / 2 of the key's row.
        float scale = ptx::ld_shared_f32(aux + key * KT::SCALE_BOX_ROW_BYTES + (blk >> 1) * 4);
        if (kMasked && key >= valid) scale = 0.f;
        uint32_t o[8];
        fp8x16_to_bf16x16_scaled<true>(v[k], scale, o);
        store(k, o);
      }
    } else {
      expand_chunks<true>(v, store);
    }
  };
  // Generic-proxy writes that wgmma (async proxy) reads next, then the blocks are the consumers'.
  auto publish = [&](int blk0, int blk1) {
    ptx::fence_proxy_async_smem();
#pragma unroll
    for (int blk = blk0; blk < blk1; ++blk) ptx::mbar_arrive(&full[blk]);
  };
  constexpr int VH = KT::V_HALF;
  uint4 held[VH][PB];  // raw V VH..2VH-1
  uint4 v[2][PB];
  ptx::mbar_wait(&raw[0], phase);
#pragma unroll
  for (int j = 0; j < VH; ++j) load(held[j], stage + raw_v_off<KT>(VH + j));
#pragma unroll
  for (int j = 0; j < 2; ++j) load(v[j], stage + raw_v_off<KT>(j));
  ptx::named_bar_sync(bar, KT::NUM_DEQUANT_THREADS);
#pragma unroll
  for (int j = 0; j < 2; ++j) expand_store(v[j], j);
  publish(0, 2);
  ptx::mbar_wait(&raw[1], phase);
#pragma unroll
  for (int j = 0; j < 2; ++j) load(v[j], stage + raw_v_off<KT>(2 + j));
  ptx::named_bar_sync(bar, KT::NUM_DEQUANT_THREADS);
#pragma unroll
  for (int j = 0; j < 2; ++j) expand_store(v[j], 2 + j);
  publish(2, VH);
  ptx::mbar_wait(empty_r, phase ^ 1);
  ptx::mbar_wait(empty_l, phase ^ 1);
  if constexpr (KT::kTile) issue_rope();
#pragma unroll
  for (int j = 0; j < VH; ++j) expand_store(held[j], VH + j);
  publish(VH, 2 * VH);
  if constexpr (!KT::kTile) {
    load(v[0], aux);
    expand_store(v[0], 2 * VH);
    publish(2 * VH, 2 * VH + 1);
  }
}

}  // namespace sm90

}  // namespace mlaspec::attn::cuda
