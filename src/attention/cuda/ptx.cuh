// Small, named wrappers around the Hopper PTX the verify kernels use: mbarriers, bulk copies
// (cp.async.bulk and TMA tensor copies cp.async.bulk.tensor, optionally multicast to a thread-
// block cluster), cluster barriers, setmaxnreg, wgmma (sm_90a) and, for the mma.sync reference
// kernel, ldmatrix and mma.sync m16n8k16. Each wrapper is one instruction (or a retry loop around
// one), so the kernel reads as the protocol it implements.
#pragma once

#include <cstdint>

namespace mlaspec::attn::cuda::ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- cluster identity ------------------------------------------------------------------------

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}

// ---- mbarrier ----------------------------------------------------------------------------------

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}

// Makes the inits visible to the async proxy (bulk copies complete on these barriers) and to the
// other CTAs of the cluster (they arrive remotely) before anyone uses them.
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also announces `bytes` of bulk-copy traffic the phase must wait for.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// Arrive on the barrier at the same shared-memory offset in cluster CTA `cta_rank`; the own CTA
// takes the plain shared::cta form. kRelease: the arrive releases this thread's (and, after
// __syncwarp, its warp's) earlier reads of the stage before the producer's next copy overwrites it.
// Relaxed: for a consumer whose reads of the stage were wgmma operand reads that wgmma.wait_group
// has already completed; nothing is left to order, and the release (a memory barrier at cluster
// scope) would cost every arrival.
template <bool kRelease>
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta_rank) {
  if (cta_rank == cluster_ctarank()) {
    if constexpr (kRelease) {
      asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar))
                   : "memory");
    } else {
      asm volatile("mbarrier.arrive.relaxed.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar))
                   : "memory");
    }
    return;
  }
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(smem_addr(bar)), "r"(cta_rank));
  if constexpr (kRelease) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                 : "memory");
  } else {
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote)
                 : "memory");
  }
}

// One arrival on a barrier of this CTA, releasing this thread's earlier memory accesses to the
// threads that complete a wait on the phase.
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(ok)
      : "r"(smem_addr(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}

// Waits until the phase with the given parity has completed. A fresh barrier is in phase 0, so
// waiting for parity 1 returns at once: producers start their empty-slot waits with parity 1.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

// ---- async proxy --------------------------------------------------------------------------------

// Generic-proxy shared-memory writes that a later TMA copy (async proxy) overwrites, or that
// wgmma (async proxy) reads, must be ordered by this fence in the writing thread; so must
// generic-proxy reads of memory that a later copy overwrites, in the reading thread, before the
// arrival that frees it (an mbarrier arrival does not wait for the thread's loads to complete).
// In SASS: MEMBAR.ALL.CTA (waits for the thread's outstanding memory operations), then
// FENCE.VIEW.ASYNC.S.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- cluster ------------------------------------------------------------------------------------

// Full cluster barrier (all threads of all CTAs). Also a CTA-wide barrier.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

// Named barrier over `threads` threads (a multiple of 32) of this CTA.
__device__ __forceinline__ void named_bar_sync(uint32_t id, uint32_t threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// The same without `.aligned`: for a barrier generation whose waiting warps reach it from different
// instructions (bar.sync promises one instruction per generation; compute-sanitizer synccheck
// reports a divergent barrier otherwise).
__device__ __forceinline__ void named_bar_sync_unaligned(uint32_t id, uint32_t threads) {
  asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Arrival on named barrier `id` (counted towards `threads`) without waiting for it.
__device__ __forceinline__ void named_bar_arrive(uint32_t id, uint32_t threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// ---- registers ----------------------------------------------------------------------------------

// Per-warpgroup register re-balancing (sm_90a). Needs a register cap at kernel entry
// (__launch_bounds__(threads, 1)) and all warps of the warpgroup executing it.
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// ---- tensor cores -------------------------------------------------------------------------------

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// D = A(16x16 bf16, row) * B(16x8 bf16, col) + D, fp32 accumulate. Each output element is its own
// dot product: a row's result never depends on the other rows of the fragment, which is what
// makes fold == rowwise bitwise.
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                               uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// ---- wgmma (sm_90a) -----------------------------------------------------------------------------

// Shared-memory matrix descriptor for a 128B-swizzled operand: start address, leading / stride
// byte offsets (>> 4), layout type 1 = 128B swizzle. Atoms (8 rows x 128 B) must sit at
// 1024-byte aligned addresses (base offset 0); start may step by 32 B inside a row for k16 steps.
__device__ __forceinline__ uint64_t gmma_desc_sw128(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
  uint64_t d = (saddr & 0x3FFFFu) >> 4;
  d |= static_cast<uint64_t>((lbo >> 4) & 0x3FFFu) << 16;
  d |= static_cast<uint64_t>((sbo >> 4) & 0x3FFFu) << 32;
  d |= uint64_t{1} << 62;
  return d;
}

// Orders register writes of the accumulators (rescaling) before the next wgmma reads them.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// The element type of a wgmma's A and B operands. bf16 for bf16 KV; f16 for fp8 KV, whose e4m3
// codes expand exactly to f16 with one cvt per two codes (every e4m3 value is an f16). The
// accumulator is f32 either way.
enum class MmaType { kBf16, kF16 };

// One wgmma instruction string per operand type (asm needs a literal), with the same operands.
#define MLASPEC_WGMMA(TYPE_, SHAPE_, ...)           \
  if constexpr (TYPE_ == MmaType::kF16) {           \
    asm volatile(SHAPE_(".f16.f16") __VA_ARGS__);   \
  } else {                                          \
    asm volatile(SHAPE_(".bf16.bf16") __VA_ARGS__); \
  }

// D(64x16, f32) {+}= A(64x16, smem; K-major, or MN-major with TNSP_A = 1) * B(16x16, smem,
// K-major). The narrow kernel's swapped products (keys or V columns as M, query rows as N).
// Element (m, n) is the same dot product, in the same k order, as element (n, m) of the
// unswapped wgmma: operand roles do not change how the tensor cores sum (tests/gpu checks it
// bitwise against the 64-row kernel).
#define MLASPEC_M64N16K16(T_)                        \
  "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %10, 0;\n\t" \
  "wgmma.mma_async.sync.aligned.m64n16k16.f32" T_    \
  " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, "      \
  "p, 1, 1, %11, 0;\n\t}"
template <int TNSP_A, MmaType T = MmaType::kBf16>
__device__ __forceinline__ void wgmma_m64n16k16_ss(float (&d)[8], uint64_t desc_a, uint64_t desc_b,
                                                   int scale_d) {
  MLASPEC_WGMMA(T, MLASPEC_M64N16K16,
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                  "+f"(d[6]), "+f"(d[7])
                : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(TNSP_A))
}
#undef MLASPEC_M64N16K16

// D(64x64, f32) {+}= A(64x16, smem, K-major) * B(16x64, smem, K-major).
// scale_d = 0 overwrites D. Row r of D depends only on row r of A: the bitwise contract.
#define MLASPEC_M64N64K16(T_)                                                                    \
  "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %34, 0;\n\t"                                             \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32" T_                                                \
  " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;\n\t}"
template <MmaType T = MmaType::kBf16>
__device__ __forceinline__ void wgmma_m64n64k16_ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b,
                                                   int scale_d) {
  MLASPEC_WGMMA(T, MLASPEC_M64N64K16,
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                  "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                  "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
                  "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
                  "+f"(d[30]), "+f"(d[31])
                : "l"(desc_a), "l"(desc_b), "r"(scale_d))
}
#undef MLASPEC_M64N64K16

// D(64x256, f32) {+}= A(64x16, smem, K-major) * B(16x256, smem, MN-major).
// scale_d = 0 overwrites D. Row r of D depends only on row r of A: the bitwise contract.
#define MLASPEC_M64N256K16(T_)                                                                     \
  "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %130, 0;\n\t"                                              \
  "wgmma.mma_async.sync.aligned.m64n256k16.f32" T_                                                 \
  " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, "   \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, "     \
  "%38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, "     \
  "%56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, "     \
  "%74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, "     \
  "%92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, " \
  "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, "     \
  "%124, %125, %126, %127}, %128, %129, p, 1, 1, 0, 1;\n\t}"
template <MmaType T = MmaType::kBf16>
__device__ __forceinline__ void wgmma_m64n256k16_ss_tb(float (&d)[128], uint64_t desc_a,
                                                       uint64_t desc_b, int scale_d) {
  MLASPEC_WGMMA(
      T, MLASPEC_M64N256K16,
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
        "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
        "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
        "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
        "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
        "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
        "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
        "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
        "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
        "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
        "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(scale_d))
}
#undef MLASPEC_M64N256K16
#undef MLASPEC_WGMMA

// ---- wgmma on e4m3 operands (fp8 math) ---------------------------------------------------------
// 8-bit wgmma reads both operands K-major (no transpose for 8-bit types) and sums 32 products per
// instruction into f32 accumulators. Hopper's fp8 accumulation keeps about 13 fraction bits of the
// running sum (truncated), not f32's 23: the fp8-math kernel accumulates a few instructions from
// zero and adds those sums in f32 itself (hopper/fp8_math.cuh).

// Shared-memory descriptor for a 64B-swizzled K-major operand (layout type 2): rows of 64 bytes,
// 16-byte chunk c of row r stored at chunk c ^ ((r >> 1) & 3); 8-row groups SBO bytes apart.
// Atoms (8 rows x 64 B) sit at 512-byte aligned addresses; start may step by 32 B inside a row for
// the second k32 step.
__device__ __forceinline__ uint64_t gmma_desc_sw64(uint32_t saddr, uint32_t sbo) {
  uint64_t d = (saddr & 0x3FFFFu) >> 4;
  d |= uint64_t{1} << 16;  // LBO: unused for swizzled K-major operands
  d |= static_cast<uint64_t>((sbo >> 4) & 0x3FFFu) << 32;
  d |= uint64_t{2} << 62;
  return d;
}

// D(64x64, f32) {+}= A(64x32 e4m3, smem, K-major) * B(32x64 e4m3, smem, K-major). Q K^T in fp8
// math. scale_d = 0 overwrites D; row r of D depends only on row r of A.
#define MLASPEC_M64N64K32_E4M3_SS                                                                \
  "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %34, 0;\n\t"                                             \
  "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"                                         \
  " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, " \
  "%20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n\t}"
__device__ __forceinline__ void wgmma_m64n64k32_e4m3_ss(float (&d)[32], uint64_t desc_a,
                                                        uint64_t desc_b, int scale_d) {
  asm volatile(MLASPEC_M64N64K32_E4M3_SS
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
                 "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]),
                 "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
                 "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),
                 "+f"(d[31])
               : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
#undef MLASPEC_M64N64K32_E4M3_SS

// D(64x32, f32) {+}= A(64x32 e4m3, registers) * B(32x32 e4m3, smem, K-major). P V in fp8 math.
// A's fragment (CUTLASS's ALayout_64x32): in warp w, lane 4g + t, a[0] holds row 16w + g, k
// 4t..4t+3 (low byte first), a[1] row + 8, a[2] k + 16, a[3] both.
#define MLASPEC_M64N32K32_E4M3_RS                                            \
  "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %21, 0;\n\t"                         \
  "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3"                     \
  " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}," \
  " {%16, %17, %18, %19}, %20, p, 1, 1;\n\t}"
__device__ __forceinline__ void wgmma_m64n32k32_e4m3_rs(float (&d)[16], const uint32_t (&a)[4],
                                                        uint64_t desc_b, int scale_d) {
  asm volatile(MLASPEC_M64N32K32_E4M3_RS
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
                 "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]),
                 "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
}
#undef MLASPEC_M64N32K32_E4M3_RS

// ---- TMA tensor copies --------------------------------------------------------------------------

// An L2 policy for the KV copies: evict_first. Each KV line is read by the CTAs of one split (a
// cluster multicasts it; rowwise tiles of a split run together), so it is not wanted once they
// have it, while Q, block tables and partials are: keeping them in L2 measured faster.
__device__ __forceinline__ uint64_t l2_policy_evict_first() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// An L2 policy for data every CTA of a call reads (Q): evict_last.
__device__ __forceinline__ uint64_t l2_policy_evict_last() {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// `bytes` contiguous bytes (a multiple of 16, both addresses 16-byte aligned) from global memory
// into this CTA's shared memory (1-D bulk copy); bytes complete on `bar`; L2 policy `policy`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar,
                                          uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}

// 2D box (c0 = column, c1 = row) of the tensor map at `tmap` (a __grid_constant__ parameter) into
// this CTA's shared memory, swizzled as the map says; bytes complete on `bar`; L2 policy `policy`.
__device__ __forceinline__ void tma_load_2d(void* dst, const void* tmap, int c0, int c1,
                                            uint64_t* bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_addr(dst)),
      "l"(tmap), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "l"(policy)
      : "memory");
}

// The same box into every CTA of `cta_mask` (same shared-memory offset, each CTA's own barrier).
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const void* tmap, int c0, int c1,
                                                      uint64_t* bar, uint16_t cta_mask,
                                                      uint64_t policy) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::"
      "cluster.L2::cache_hint [%0], [%1, {%2, %3}], [%4], %5, %6;" ::"r"(smem_addr(dst)),
      "l"(tmap), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask), "l"(policy)
      : "memory");
}

// ---- math --------------------------------------------------------------------------------------

// 2^x, one MUFU op; ex2(-inf) = +0 exactly, which masked scores rely on.
__device__ __forceinline__ float ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// log2(x), one MUFU op (approximate, deterministic: the same bits wherever it runs).
__device__ __forceinline__ float lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// Sixteen fp8 e4m3 codes (byte k = code k) -> sixteen f16 in o[0..7] (o[j] = codes 2j, 2j+1, low
// half first), exactly for every code, NaN included: every e4m3 value is an f16. One cvt per two
// codes: the fp8 kernels' expansion (their MMAs are f16).
// kHighOperand: each word's halves go in as the b16 halves of one register, so ptxas reads the
// high codes with the cvt's .H1 operand selector instead of shifting them down first (a shift per
// cvt pair: measured 1-1.5% faster in the 64-row kernel, ~1.7% slower in the narrow kernel).
template <bool kHighOperand>
__device__ __forceinline__ void fp8x16_to_f16x16(const uint4& chunk, uint32_t (&o)[8]) {
  const uint32_t w[4] = {chunk.x, chunk.y, chunk.z, chunk.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (kHighOperand) {
      asm("{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\t"
          "cvt.rn.f16x2.e4m3x2 %0, lo;\n\tcvt.rn.f16x2.e4m3x2 %1, hi;\n\t}"
          : "=r"(o[2 * i]), "=r"(o[2 * i + 1])
          : "r"(w[i]));
    } else {
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;"
          : "=r"(o[2 * i])
          : "h"(static_cast<uint16_t>(w[i] & 0xffffu)));
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;"
          : "=r"(o[2 * i + 1])
          : "h"(static_cast<uint16_t>(w[i] >> 16)));
    }
  }
}

// Two f32 -> two e4m3 codes (round to nearest even; beyond +-448, inf included, saturates to
// +-448; NaN stays NaN: float_to_fp8e4m3_bits's rules), lo in the low byte.
__device__ __forceinline__ uint16_t pack_e4m3x2(float lo, float hi) {
  uint16_t r;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));
  return r;
}

// Two e4m3 codes (low byte first) -> two f16 (exact, NaN included), low half first.
__device__ __forceinline__ uint32_t e4m3x2_to_f16x2(uint16_t codes) {
  uint32_t r;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"(codes));
  return r;
}

// An f16x2 word -> its two halves as f32 (exact; NaN stays NaN), low half first.
__device__ __forceinline__ void unpack_f16x2(uint32_t v, float& lo, float& hi) {
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\t"
      "cvt.f32.f16 %1, h;\n\t}"
      : "=f"(lo), "=f"(hi)
      : "r"(v));
}

// 8-byte shared-memory load by 32-bit shared address (volatile, as ld_shared_v4).
__device__ __forceinline__ uint2 ld_shared_v2(uint32_t addr) {
  uint2 v;
  asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(addr) : "memory");
  return v;
}

// 4-byte shared-memory load by 32-bit shared address (volatile, as ld_shared_v4).
__device__ __forceinline__ float ld_shared_f32(uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

// 16-byte shared-memory accesses by 32-bit shared address (generic pointers cost a 64-bit address
// computation per access). Volatile with a memory clobber: never moved across barrier waits.
__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c,
                                             uint32_t d) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c),
               "r"(d)
               : "memory");
}

}  // namespace mlaspec::attn::cuda::ptx
