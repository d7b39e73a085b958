#include <gtest/gtest.h>

#include "attention/cuda/traits.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/cpu_caps.h"

namespace mlaspec::attn {
namespace {

VerifyShape shape(int q, int h, DType kv = DType::kBF16, int page = 64) {
  VerifyShape s;
  s.q_len = q;
  s.num_heads = h;
  s.kv_dtype = kv;
  s.page_size = page;
  s.max_seq_len = 4096;
  s.total_kv = 4096;
  return s;
}

TEST(Guard, ReasonsNameTheValueAndTheLimit) {
  const BackendCaps& fold = cuda::kFoldCaps;
  EXPECT_TRUE(can_serve(fold, shape(8, 16)).ok());
  EXPECT_EQ(can_serve(fold, shape(33, 16)).message(), "q_len 33 exceeds cuda_fold's max 32");
  EXPECT_EQ(can_serve(fold, shape(8, 4)).message(), "num_heads 4 is below cuda_fold's min 8");
  EXPECT_EQ(can_serve(fold, shape(8, 16, DType::kBF16, 8)).message(),
            "page_size 8 is not supported by cuda_fold (supports 16|32|64)");
  EXPECT_EQ(can_serve(fold, shape(8, 16, DType::kBF16, 48)).code(), StatusCode::kUnsupported);
  VerifyShape big = shape(8, 16);
  big.batch = 513;
  EXPECT_EQ(can_serve(fold, big).message(), "batch 513 exceeds cuda_fold's max 512");
  big = shape(8, 16);
  big.max_seq_len = cuda::CommonTraits::kMaxSeqLen + 1;
  EXPECT_NE(can_serve(fold, big).message().find("seq_len"), std::string::npos);
}

TEST(Guard, CpuReferenceServesAnyPageSizeAndBothDtypes) {
  EXPECT_TRUE(can_serve(kCpuReferenceCaps, shape(3, 1, DType::kFP8E4M3, 1)).ok());
  EXPECT_TRUE(can_serve(kCpuReferenceCaps, shape(16, 128, DType::kBF16, 48)).ok());
  EXPECT_EQ(can_serve(kCpuReferenceCaps, shape(3, 1, DType::kF32, 1)).message(),
            "kv dtype f32 is not readable by cpu_reference (reads bf16|fp8_e4m3|fp8_tile)");
}

// The per-tile-scaled layout: the CPU reference and both CUDA backends read it (their caps list it
// by name, apart from fp8_e4m3), over every shape their caps give; kv_scale must stay 1 (validate).
// A backend whose caps lack it still refuses it with the reason, saying it is not fp8_e4m3.
TEST(Guard, Fp8TileIsServedByTheReferenceAndTheCudaBackends) {
  EXPECT_TRUE(can_serve(kCpuReferenceCaps, shape(3, 128, DType::kFP8Tile, 1)).ok());
  for (const BackendCaps* c : {&cuda::kFoldCaps, &cuda::kRowwiseCaps}) {
    SCOPED_TRACE(std::string(c->name));
    EXPECT_TRUE(can_serve(*c, shape(8, 16, DType::kFP8E4M3)).ok());
    for (int q : {1, 7, 32}) {
      for (int h : {8, 16, 128}) {
        for (int page : {16, 32, 64}) {
          EXPECT_TRUE(can_serve(*c, shape(q, h, DType::kFP8Tile, page)).ok())
              << "q " << q << " H " << h << " page " << page;
        }
      }
    }
    EXPECT_EQ(can_serve(*c, shape(8, 16, DType::kFP8Tile, 8)).code(), StatusCode::kUnsupported);
    EXPECT_NE(describe_caps(*c).find("kv bf16|fp8_e4m3|fp8_tile"), std::string::npos);
  }
  BackendCaps no_tile = cuda::kFoldCaps;
  no_tile.kv_dtypes = dtype_bit(DType::kBF16) | dtype_bit(DType::kFP8E4M3);
  const Status st = can_serve(no_tile, shape(8, 16, DType::kFP8Tile));
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(),
            "kv dtype fp8_tile is not readable by cuda_fold (reads bf16|fp8_e4m3); fp8_tile is the "
            "per-tile-scaled layout (656-byte rows, one f32 scale per 128 latent values), which "
            "cuda_fold has no kernel for: use a bf16 or fp8_e4m3 pool, or the cpu_reference "
            "backend");
  EXPECT_EQ(shape(1, 16, DType::kFP8Tile).to_string(), "B=1,H=16,q=1,S=4096,kv=fp8tile,page=64");
  EXPECT_NE(describe_caps(kCpuReferenceCaps).find("kv bf16|fp8_e4m3|fp8_tile"), std::string::npos);
}

TEST(Guard, DescribeCaps) {
  EXPECT_EQ(describe_caps(cuda::kFoldCaps),
            "device cuda, q_len 1..32, H 8..128, batch <= 512, seq_len <= 16777216, kv "
            "bf16|fp8_e4m3|fp8_tile, page 16|32|64, deterministic yes, fp8-math yes, split-kv yes, "
            "ragged yes");
}

// fp8 math is opt-in and served only where a backend's caps offer it: the CPU reference
// (tests/attention/fp8_math_test.cc) and both CUDA backends (their 64-row kernel's e4m3
// instantiation, tests/gpu/fp8_math_cuda_test.cc), on fp8_e4m3 KV only. A backend without the mode
// must refuse the option by name (one that ignored it would compute exact math while the caller
// believes otherwise), and the option on bf16 or fp8_tile KV is refused as meaningless.
TEST(Guard, Fp8MathIsServedWhereOfferedAndRefusedByName) {
  {
    VerifyShape s = shape(8, 16, DType::kFP8E4M3);
    s.fp8_math = true;
    EXPECT_TRUE(can_serve(kCpuReferenceCaps, s).ok());
  }
  for (const BackendCaps* c : {&cuda::kFoldCaps, &cuda::kRowwiseCaps}) {
    SCOPED_TRACE(std::string(c->name));
    EXPECT_TRUE(c->fp8_math);
    for (int q : {1, 8, 32}) {
      for (int h : {8, 16, 128}) {
        VerifyShape s = shape(q, h, DType::kFP8E4M3);
        s.fp8_math = true;
        EXPECT_TRUE(can_serve(*c, s).ok()) << s.to_string();
        s.deterministic = true;
        EXPECT_TRUE(can_serve(*c, s).ok()) << s.to_string();
      }
    }
    VerifyShape s = shape(8, 16, DType::kFP8E4M3);
    s.fp8_math = true;
    BackendCaps lacks = *c;
    lacks.fp8_math = false;
    const Status st = can_serve(lacks, s);
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_EQ(st.message(), std::string(c->name) +
                                " has no fp8-math mode (fp8 tensor-core math); run without "
                                "fp8_math for exact math on fp8 KV");
    s.kv_dtype = DType::kBF16;
    EXPECT_EQ(can_serve(*c, s).message(), "fp8-math mode is for fp8 KV; kv dtype is bf16");
    s.kv_dtype = DType::kFP8Tile;
    EXPECT_EQ(can_serve(*c, s).message(), "fp8-math mode is for fp8 KV; kv dtype is fp8_tile");
  }
}

}  // namespace
}  // namespace mlaspec::attn
