#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "mlaspec/bench/harness.h"
#include "mlaspec/bench/random_fill.h"
#include "mlaspec/core/fp8_tile.h"

namespace mlaspec::bench {
namespace {

TEST(Roofline, FloorsMatchPerfMdTable) {
  // PERF.md's floor column (H200 ceilings): rows 0, 1, 2, 6, 9, 11.
  const auto cfgs = standard_configs(DType::kBF16);
  const Roofline h200 = h200_roofline();
  const double expected[12] = {35.9,  48.2, 385.8, 35.9,  192.9, 192.9,
                               143.5, 48.2, 385.8, 385.8, 192.9, 795.7};
  for (int i = 0; i < 12; ++i) {
    EXPECT_NEAR(roofline_floor(cfgs[i], h200).us(), expected[i], 0.1) << "row " << i;
  }
  EXPECT_TRUE(roofline_floor(cfgs[0], h200).memory_bound());
  EXPECT_FALSE(roofline_floor(cfgs[8], h200).memory_bound());
  // fp8 halves the bytes; fp8_tile reads 656 bytes per token (codes, scales, bf16 rope).
  const auto fp8 = standard_configs(DType::kFP8E4M3);
  EXPECT_NEAR(roofline_floor(fp8[0], h200).memory_us, roofline_floor(cfgs[0], h200).memory_us / 2,
              1e-9);
  const auto tile = standard_configs(DType::kFP8Tile);
  EXPECT_EQ(roofline_floor(tile[2], h200).bytes, 1048576.0 * 656);
  EXPECT_EQ(roofline_floor(tile[2], h200).flops, roofline_floor(cfgs[2], h200).flops);
  EXPECT_EQ(tile[2].to_string(), "B=1,H=16,q=8,S=1048576,kv=fp8tile");
}

// What `bench` warns about before a long CPU run: PERF.md's GPU rows take minutes on a CPU even
// at its roofline, the CPU's own small set does not.
TEST(Roofline, MinRunSecondsCountsEveryCall) {
  const Roofline cpu{"cpu (test)", 10e9, 20e9};
  TimeOptions o;
  o.warmup = 3;
  o.reps = 5;
  o.check = true;
  const BenchConfig row1 = standard_configs(DType::kBF16)[1];  // B=1,H=16,q=8,S=131072
  EXPECT_NEAR(min_run_seconds(row1, cpu, o), 9 * roofline_floor(row1, cpu).us() * 1e-6, 1e-9);
  o.check = false;
  EXPECT_NEAR(min_run_seconds(row1, cpu, o), 8 * roofline_floor(row1, cpu).us() * 1e-6, 1e-9);
  double standard = 0;
  for (const BenchConfig& c : standard_configs(DType::kBF16))
    standard += min_run_seconds(c, cpu, o);
  EXPECT_GT(standard, 60.0);
  BenchConfig small;
  small.num_heads = 16;
  small.q_len = 8;
  small.seq_len = 4096;
  EXPECT_LT(min_run_seconds(small, cpu, o), 1.0);
}

TEST(Configs, SweepsAreThePerfMdSweeps) {
  const auto q = qlen_sweep(DType::kBF16);
  ASSERT_EQ(q.size(), 16u);
  EXPECT_EQ(q[15].to_string(), "B=1,H=16,q=16,S=131072,kv=bf16");
  const auto s = seqlen_sweep(DType::kFP8E4M3);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[4].to_string(), "B=1,H=16,q=8,S=1048576,kv=fp8");
  BenchConfig forced = s[4];
  forced.num_splits = 3;  // a forced split count is part of what a row measured
  EXPECT_EQ(forced.to_string(), "B=1,H=16,q=8,S=1048576,kv=fp8,splits=3");
}

TEST(Configs, SelectRowsKeepsTheGivenOrderAndNamesABadRow) {
  const auto all = standard_configs(DType::kBF16);
  // Empty: the whole set.
  Result<std::vector<BenchConfig>> whole = select_rows(all, {}, "standard");
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole.value().size(), all.size());
  // The rows asked for, in that order (PERF.md row numbers for the standard set), repeats kept.
  Result<std::vector<BenchConfig>> some = select_rows(all, {9, 8, 9}, "standard");
  ASSERT_TRUE(some.ok());
  ASSERT_EQ(some.value().size(), 3u);
  EXPECT_EQ(some.value()[0].index, 9);
  EXPECT_EQ(some.value()[1].index, 8);
  EXPECT_EQ(some.value()[2].to_string(), all[9].to_string());
  // Past either end: an error naming the row and the set's range, nothing selected.
  for (int bad : {12, -1}) {
    Result<std::vector<BenchConfig>> r = select_rows(all, {0, bad}, "standard");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("--rows " + std::to_string(bad)), std::string::npos)
        << r.status().message();
    EXPECT_NE(r.status().message().find("rows 0..11"), std::string::npos) << r.status().message();
  }
}

TEST(RandomFill, DeterministicNonZeroAndUnitScale) {
  std::vector<uint16_t> a(100000), b(100000);
  ASSERT_TRUE(fill_random(a.data(), false, DType::kBF16, 100000, 7).ok());
  ASSERT_TRUE(fill_random(b.data(), false, DType::kBF16, 100000, 7).ok());
  EXPECT_EQ(a, b);
  double sum = 0, sq = 0;
  int zeros = 0;
  for (uint16_t v : a) {
    const double f = bf16_bits_to_float(v);
    sum += f;
    sq += f * f;
    zeros += f == 0.0;
  }
  EXPECT_NEAR(sum / a.size(), 0.0, 0.02);
  EXPECT_NEAR(sq / a.size(), 1.0, 0.05);
  EXPECT_LT(zeros, 100);
  ASSERT_TRUE(fill_random(b.data(), false, DType::kBF16, 100000, 8).ok());
  EXPECT_NE(a, b);
}

// The KV fill counts bytes of whole rows; the element fill refuses the row format.
TEST(RandomFill, KvFillTakesWholeRowsOnly) {
  std::vector<uint8_t> buf(3 * 656 + 1);
  const Status partial = fill_random_kv(buf.data(), false, DType::kFP8Tile, 3 * 656 + 1, 1);
  EXPECT_EQ(partial.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(partial.message().find("1969 bytes is not a whole number of fp8_tile KV rows (656 "
                                   "bytes each)"),
            std::string::npos)
      << partial.message();
  EXPECT_EQ(fill_random_kv(buf.data(), false, DType::kBF16, 656, 1).code(),
            StatusCode::kInvalidArgument);  // not a whole 1152-byte bf16 row
  EXPECT_EQ(fill_random_kv(buf.data(), false, DType::kFP8Tile, 656, 1, 1.0f, 0.05f).code(),
            StatusCode::kInvalidArgument);  // fp8_tile rows carry their own scales
  EXPECT_EQ(fill_random_kv(buf.data(), false, DType::kF32, 576 * 4, 1).code(),
            StatusCode::kInvalidArgument);
  const Status rows = fill_random(buf.data(), false, DType::kFP8Tile, 656, 1);
  EXPECT_EQ(rows.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rows.message().find("use fill_random_kv"), std::string::npos) << rows.message();
  EXPECT_TRUE(fill_random_kv(buf.data(), false, DType::kFP8Tile, 3 * 656, 1).ok());
  EXPECT_TRUE(fill_random_kv(buf.data(), false, DType::kFP8Tile, 0, 1).ok());
  // bf16 and fp8_e4m3 pools: exactly the element fill of their rows' values.
  std::vector<uint16_t> a(2 * 576), b(2 * 576);
  ASSERT_TRUE(fill_random_kv(a.data(), false, DType::kBF16, 2 * 1152, 5, 0.5f).ok());
  ASSERT_TRUE(fill_random(b.data(), false, DType::kBF16, 2 * 576, 5, 0.5f).ok());
  EXPECT_EQ(a, b);
  std::vector<uint8_t> c(2 * 576), d(2 * 576);
  ASSERT_TRUE(fill_random_kv(c.data(), false, DType::kFP8E4M3, 2 * 576, 5, 1.0f, 0.05f).ok());
  ASSERT_TRUE(fill_random(d.data(), false, DType::kFP8E4M3, 2 * 576, 5, 1.0f, 0.05f).ok());
  EXPECT_EQ(c, d);
}

// An fp8_tile pool holds the encoding of the bf16 pool of the same seed, row by row: read back
// through the reference's decoder (fp8_tile_row_value) every latent value is within half an e4m3
// step of the bf16 draw (relative 2^-4 for normal codes, 2^-10 of the scale for subnormal ones),
// the rope is the draw itself, and each scale is the ue8m0 scale of its block.
TEST(RandomFill, Fp8TileRowsEncodeTheBf16Draw) {
  for (float stddev : {1.0f, 3e-3f, 1e4f}) {
    constexpr int64_t kRows = 37;
    std::vector<uint8_t> tile(kRows * kFp8TileRowBytes);
    std::vector<uint16_t> bf16(kRows * kFp8TileRowValues);
    ASSERT_TRUE(
        fill_random_kv(tile.data(), false, DType::kFP8Tile, kRows * kFp8TileRowBytes, 9, stddev)
            .ok());
    ASSERT_TRUE(
        fill_random(bf16.data(), false, DType::kBF16, kRows * kFp8TileRowValues, 9, stddev).ok());
    for (int64_t r = 0; r < kRows; ++r) {
      const uint8_t* row = tile.data() + r * kFp8TileRowBytes;
      const uint16_t* x = bf16.data() + r * kFp8TileRowValues;
      // The writer's encoding of the bf16 row, byte for byte.
      uint8_t want[kFp8TileRowBytes];
      encode_fp8_tile_row(x, want);
      ASSERT_EQ(std::memcmp(row, want, kFp8TileRowBytes), 0) << "row " << r;
      for (int k = 0; k < kFp8TileBlocks; ++k) {
        float amax = 0;
        for (int i = 0; i < kFp8TileBlock; ++i) {
          amax = std::max(amax, std::fabs(bf16_bits_to_float(x[k * kFp8TileBlock + i])));
        }
        const float scale = fp8_tile_row_scale(row, k);
        int e = 0;
        EXPECT_EQ(std::frexp(scale, &e), 0.5f) << "scale " << scale << " is a power of two";
        EXPECT_GT(amax / scale, 224.0f) << "row " << r << " block " << k;
        EXPECT_LE(amax / scale, 448.0f) << "row " << r << " block " << k;
      }
      for (int d = 0; d < kFp8TileRowValues; ++d) {
        const float want_v = bf16_bits_to_float(x[d]);
        const float got = fp8_tile_row_value(row, d);
        if (d >= kFp8TileLatent) {
          EXPECT_EQ(got, want_v) << "rope " << d;
          continue;
        }
        const float scale = fp8_tile_row_scale(row, d / kFp8TileBlock);
        const float bound = std::max(std::fabs(want_v) * 0x1p-4f, scale * 0x1p-10f);
        EXPECT_LE(std::fabs(got - want_v), bound) << "row " << r << " value " << d;
      }
    }
  }
}

// time_backend on the CPU reference, checked against it first.
Result<Timing> time_on_reference(const BenchConfig& c, int reps, int warmup) {
  auto backend = attn::make_cpu_reference_backend();
  TimeOptions o;
  o.reps = reps;
  o.warmup = warmup;
  return time_backend(*backend, c, o);
}

// Every KV dtype (fp8_tile: 656-byte rows, kv_scale 1), at two page sizes.
TEST(TimeBackend, CpuReferenceIsCheckedAndTimed) {
  for (DType kv : {DType::kBF16, DType::kFP8E4M3, DType::kFP8Tile}) {
    for (int page : {64, 16}) {
      BenchConfig c;
      c.batch = page == 16 ? 2 : 1;
      c.q_len = 3;
      c.num_heads = 8;
      c.seq_len = 300;
      c.kv_dtype = kv;
      c.page_size = page;
      Result<Timing> t = time_on_reference(c, 3, 1);
      ASSERT_TRUE(t.ok()) << c.to_string() << ": " << t.status().to_string();
      EXPECT_TRUE(t.value().checked);
      // The reference against its own fp32 rows: only the bf16 rounding of out remains (<= 2^-8).
      EXPECT_LT(t.value().max_rel_err, std::ldexp(1.0, -8)) << c.to_string();
      EXPECT_EQ(t.value().reps, 3);
      EXPECT_GT(t.value().median_us, 0.0);
      // Every rep's time, in order, bounded by the extremes.
      ASSERT_EQ(t.value().samples_us.size(), 3u);
      for (double us : t.value().samples_us) {
        EXPECT_GE(us, t.value().min_us);
        EXPECT_LE(us, t.value().max_us);
      }
    }
  }
}

TEST(TimeBackend, UnservableConfigGivesTheGuardsReason) {
  auto backend = attn::make_cpu_reference_backend();
  BenchConfig c;
  c.q_len = 2000;
  Result<Timing> t = time_backend(*backend, c);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "q_len 2000 exceeds cpu_reference's max 1024");
}

// Ragged batches: the row layout [T, H, d] with q_indptr, each sampled row checked against the
// reference row of its own request and position (a wrong row mapping would compare a row with
// another request's and fail the bound), the floor counting T query rows.
TEST(TimeBackend, RaggedBatchIsCheckedAndTimed) {
  for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
    const BenchConfig c = ragged_config(8, {3, 1, 7, 2, 5}, 257, kv);
    EXPECT_EQ(c.batch, 5);
    EXPECT_EQ(c.q_len, 7);
    EXPECT_EQ(c.query_rows(), 18);
    EXPECT_TRUE(c.shape().ragged);
    EXPECT_EQ(c.shape().total_q, 18);
    EXPECT_EQ(c.query_starts(), (std::vector<int32_t>{0, 3, 4, 11, 13, 18}));
    Result<Timing> t = time_on_reference(c, 2, 0);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    EXPECT_TRUE(t.value().checked);
    EXPECT_LT(t.value().max_rel_err, std::ldexp(1.0, -8));
    BenchConfig padded = c;
    padded.q_lens.clear();
    const Roofline roof{"test", 1e12, 1e12};
    EXPECT_NEAR(roofline_floor(padded, roof).flops / roofline_floor(c, roof).flops, 35.0 / 18.0,
                1e-12);
  }
}

TEST(Configs, RaggedSetPairsEachBatchWithItsPadding) {
  const std::vector<BenchConfig> set = ragged_set(DType::kBF16);
  ASSERT_EQ(set.size(), 10u);
  EXPECT_EQ(set[0].to_string(), "B=8,H=16,q=1/2/3/4/5/6/7/8,S=65536,kv=bf16");
  EXPECT_EQ(set[1].to_string(), "B=8,H=16,q=8,S=65536,kv=bf16");
  EXPECT_EQ(set[2].to_string(), "B=8,H=16,q=8/8/8/8/8/8/8/8,S=65536,kv=bf16");
  EXPECT_TRUE(set[2].ragged());
  EXPECT_EQ(set[6].to_string(), "B=4,H=128,q=1/32/4/16,S=16384,kv=bf16");
  EXPECT_EQ(set[7].to_string(), "B=4,H=128,q=32,S=16384,kv=bf16");
  // The 16 random widths in arrival order, then the same widths sorted, then padded.
  std::vector<int> arrival = set[3].q_lens, sorted_w = set[4].q_lens;
  std::sort(arrival.begin(), arrival.end());
  EXPECT_EQ(arrival, sorted_w);
  EXPECT_NE(set[3].q_lens, set[4].q_lens);
  EXPECT_FALSE(set[5].ragged());
  EXPECT_EQ(set[5].q_len, set[4].q_len);
  // Every ragged batch: batch and q_len consistent with its widths, widths in 1..32.
  for (const BenchConfig& c : set) {
    if (!c.ragged()) continue;
    EXPECT_EQ(c.batch, static_cast<int>(c.q_lens.size()));
    EXPECT_EQ(c.q_len, *std::max_element(c.q_lens.begin(), c.q_lens.end()));
    for (int w : c.q_lens) EXPECT_TRUE(w >= 1 && w <= 32) << c.to_string();
  }
  EXPECT_NE(set[8].to_string().find("q=1..16(T="), std::string::npos) << set[8].to_string();
  EXPECT_FALSE(set[9].ragged());
}

}  // namespace
}  // namespace mlaspec::bench
