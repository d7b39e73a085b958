// The CUDA backends' host-side split planner (src/attention/cuda/plan.h): plain C++, tested on
// the CPU. The adaptive chunk is chosen by simulating how split items pack onto the GPU's
// concurrent slots; the workspace bound of prepare() must hold for every plan it can make.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "attention/cuda/plan.h"

namespace mlaspec::attn::cuda {
namespace {

SplitPlan plan_for(const std::vector<int32_t>& seq_lens, int concurrent, bool deterministic = false,
                   int num_heads = 16) {
  VerifyOptions o;
  o.deterministic = deterministic;
  SplitPlan p;
  const Status st = make_split_plan(seq_lens, num_heads, o, concurrent, &p);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return p;
}

// The fold geometry on H200-like co-resident cluster counts (132 CTAs, 66 clusters of 2, and 40 of
// 3 here: GPC packing decides, and a measured A/B of clusters of 3 implies fewer than 44): clusters
// of 2 unless another size runs strictly more splits at once.
TEST(SplitPlan, FoldGeometryPrefersPairsUnlessAnotherSizeRunsMoreSplits) {
  auto geo = [&](int rows, int max_cluster = 3, const std::vector<int>& active = {0, 132, 66, 40}) {
    const FoldGeometry g = fold_geometry(rows, max_cluster, 2, active);
    EXPECT_GE(g.groups * g.cluster, g.tiles) << rows;
    EXPECT_LT((g.groups - 1) * g.cluster, g.tiles) << rows;  // no whole cluster without rows
    return std::vector<int>{g.tiles, g.groups, g.cluster, g.concurrent};
  };
  EXPECT_EQ(geo(16), (std::vector<int>{1, 1, 1, 132}));  // decode at H = 16
  EXPECT_EQ(geo(64), (std::vector<int>{1, 1, 1, 132}));
  EXPECT_EQ(geo(128), (std::vector<int>{2, 1, 2, 66}));   // ties with 1 CTA each: the pair
  EXPECT_EQ(geo(192), (std::vector<int>{3, 3, 1, 44}));   // 44 > 40 clusters of 3 > 33 of 2 x 2
  EXPECT_EQ(geo(256), (std::vector<int>{4, 2, 2, 33}));   // ties with 1: the pair
  EXPECT_EQ(geo(320), (std::vector<int>{5, 5, 1, 26}));   // 26 > 22 (pairs and triples)
  EXPECT_EQ(geo(384), (std::vector<int>{6, 3, 2, 22}));   // all 22: the pair
  EXPECT_EQ(geo(448), (std::vector<int>{7, 7, 1, 18}));   // 18 > 16 > 13
  EXPECT_EQ(geo(1024), (std::vector<int>{16, 8, 2, 8}));  // H = 128, q_len 8
  // Where clusters of 3 pack as well as single CTAs, the larger wins the tie: one cluster of 3.
  EXPECT_EQ(geo(192, 3, {0, 132, 66, 44}), (std::vector<int>{3, 1, 3, 44}));
  // fp8 (max cluster 1) and a build capped at 2 never take another size than allowed.
  EXPECT_EQ(geo(1024, 1), (std::vector<int>{16, 16, 1, 8}));
  EXPECT_EQ(geo(320, 1), (std::vector<int>{5, 5, 1, 26}));
  EXPECT_EQ(geo(192, 2, {0, 132, 66}), (std::vector<int>{3, 3, 1, 44}));
  // A device that runs fewer single CTAs than pairs allow keeps the pairs.
  EXPECT_EQ(geo(320, 3, {0, 100, 66, 40}), (std::vector<int>{5, 3, 2, 22}));
}

TEST(SplitPlan, MakespanIsListSchedulingInLaunchOrder) {
  // Two slots, items of 3, 3 and 1 tiles (+2 overhead each): 5 | 5, then 3 after the first.
  const std::vector<int64_t> tiles = {6, 1};
  EXPECT_EQ(split_makespan_tiles(tiles, 3, 2), 8);
  EXPECT_EQ(split_makespan_tiles(tiles, 3, 3), 5);
  // One slot: everything in sequence.
  EXPECT_EQ(split_makespan_tiles(tiles, 3, 1), 5 + 5 + 3);
  // An empty request still costs one item.
  EXPECT_EQ(split_makespan_tiles(std::vector<int64_t>{0}, 4, 1), 2);
}

TEST(SplitPlan, AdaptiveChunkFillsWholeWaves) {
  // PERF.md row 4: 8 x 64k tokens on 66 two-CTA cluster slots. The old rule (125 tiles) made 72
  // items; 128 tiles make 64, one wave.
  EXPECT_EQ(adaptive_chunk_tiles(std::vector<int64_t>(8, 1024), 66), 128);
  const SplitPlan p4 = plan_for(std::vector<int32_t>(8, 65536), 66);
  EXPECT_EQ(p4.chunk, 128 * kKvTile);
  EXPECT_EQ(p4.total_splits, 64);
  // Row 6: 64 x 8k tokens on 132 slots: 2 splits each (128 items), not 3 (192).
  EXPECT_EQ(plan_for(std::vector<int32_t>(64, 8192), 132).total_splits, 128);
  // Row 5: 16 x 32k on 66 slots: 4 splits each.
  EXPECT_EQ(plan_for(std::vector<int32_t>(16, 32768), 66).total_splits, 64);
  // One long request keeps about one split per slot (rows 0-2).
  EXPECT_EQ(plan_for({131072}, 132).total_splits, 128);
  EXPECT_EQ(plan_for({131072}, 66).total_splits, 64);
  EXPECT_EQ(plan_for({1048576}, 66).total_splits, 66);
  // Never below the minimum chunk.
  EXPECT_EQ(plan_for({4096}, 66).chunk, kMinAdaptiveChunk);
}

TEST(SplitPlan, DeterministicChunkIgnoresTheMachine) {
  for (int concurrent : {1, 8, 66, 132}) {
    const SplitPlan p = plan_for({5000, 131072, 64}, concurrent, /*deterministic=*/true);
    EXPECT_EQ(p.chunk, 1024);
    EXPECT_EQ(p.total_splits, 5 + 128 + 1);
  }
}

// 1024 tokens per started group of 64 heads: a decode call keeps S / 1024 CTAs (chunks x 64-head
// tiles) whatever H, and the chunk is a function of H alone.
TEST(SplitPlan, DeterministicChunkScalesWithHeadGroupsOnly) {
  EXPECT_EQ(deterministic_chunk_tokens(8), 1024);
  EXPECT_EQ(deterministic_chunk_tokens(16), 1024);
  EXPECT_EQ(deterministic_chunk_tokens(64), 1024);
  EXPECT_EQ(deterministic_chunk_tokens(65), 2048);
  EXPECT_EQ(deterministic_chunk_tokens(128), 2048);
  for (int concurrent : {1, 66, 132}) {
    const SplitPlan p = plan_for({5000, 131072, 64}, concurrent, /*deterministic=*/true, 128);
    EXPECT_EQ(p.chunk, 2048);
    EXPECT_EQ(p.total_splits, 3 + 64 + 1);
  }
}

// Every plan starts with one split per group; set_split_groups cuts each request's splits into
// runs of group_size (the last one shorter) and numbers the groups globally.
TEST(SplitPlan, SplitGroupsArePerRequestRunsOfGroupSize) {
  SplitPlan p = plan_for({5000, 131072, 64}, 66, /*deterministic=*/true);
  EXPECT_EQ(p.group_size, 1);
  EXPECT_EQ(p.total_groups, p.total_splits);
  for (int b = 0; b <= 3; ++b) EXPECT_EQ(p.group_begin[b], p.split_begin[b]);
  set_split_groups(&p, 3, 8);  // splits per request: 5, 128, 1
  EXPECT_EQ(p.group_size, 8);
  EXPECT_EQ(p.group_begin[0], 0);
  EXPECT_EQ(p.group_begin[1], 1);
  EXPECT_EQ(p.group_begin[2], 1 + 16);
  EXPECT_EQ(p.group_begin[3], 1 + 16 + 1);
  EXPECT_EQ(p.total_groups, 18);
  set_split_groups(&p, 3, 1);
  EXPECT_EQ(p.group_size, 1);
  EXPECT_EQ(p.total_groups, p.total_splits);
}

// Deterministic plans merge in blocks of kDeterministicBlockChunks splits. Groups of whole blocks
// (8, 16) fold them in the kernel: a request of several splits gets a slot per block; any other
// group size leaves the fold to the combine, with a slot per split. Single-split requests need
// none either way, and default-mode plans have no blocks.
TEST(SplitPlan, GroupsOfWholeBlocksFoldThemWithASlotPerBlock) {
  SplitPlan p = plan_for({5000, 131072, 64, 9000}, 66, /*deterministic=*/true);  // 5, 128, 1, 9
  EXPECT_EQ(p.block_splits, kDeterministicBlockChunks);
  EXPECT_EQ(p.blocks_folded, 0);
  EXPECT_EQ(p.total_part_slots, 5 + 128 + 9);
  EXPECT_EQ(merge_items(p, 128), 16);
  EXPECT_EQ(merge_items(p, 9), 2);
  for (int g : {8, 16}) {
    set_split_groups(&p, 4, g);
    EXPECT_EQ(p.blocks_folded, 1) << g;
    const int expect[5] = {0, 1, 1 + 16, 1 + 16, 1 + 16 + 2};
    for (int b = 0; b <= 4; ++b) EXPECT_EQ(p.part_begin[b], expect[b]) << g << " " << b;
    EXPECT_EQ(p.total_part_slots, 19) << g;
  }
  for (int g : {1, 3, 12}) {
    set_split_groups(&p, 4, g);
    EXPECT_EQ(p.blocks_folded, 0) << g;
    const int expect[5] = {0, 5, 5 + 128, 5 + 128, 5 + 128 + 9};
    for (int b = 0; b <= 4; ++b) EXPECT_EQ(p.part_begin[b], expect[b]) << g << " " << b;
    EXPECT_EQ(p.total_part_slots, 142) << g;
  }
  // DCP ranks (partials_only, laid out by hand in the backend) write every split as a partial,
  // even a request's only one: cpr slots per request.
  for (int cpr : {4, 1}) {
    SplitPlan r;
    r.partials_only = 1;
    for (int b = 0; b <= 3; ++b) r.split_begin[b] = cpr * b;
    set_split_groups(&r, 3, 1);
    for (int b = 0; b <= 3; ++b) EXPECT_EQ(r.part_begin[b], cpr * b) << cpr << " " << b;
    EXPECT_EQ(r.total_part_slots, 3 * cpr);
    EXPECT_EQ(r.blocks_folded, 0);
  }
  SplitPlan d = plan_for({5000, 131072}, 66);
  set_split_groups(&d, 2, 8);
  EXPECT_EQ(d.block_splits, 1);
  EXPECT_EQ(d.blocks_folded, 0);
  EXPECT_EQ(merge_items(d, 7), 7);
}

// The group size only decides time (any gives bitwise the same result): one wave of groups where
// the splits alone would take several, and one split per CTA where they already fit one wave.
TEST(SplitPlan, DeterministicGroupSizeFillsOneWaveWithTheFewestPrologues) {
  // PERF.md row 4 (B=8, S=64k, H=16): 64 splits per request on 66 fold slots -> 8 x 8 groups.
  SplitPlan p = plan_for(std::vector<int32_t>(8, 65536), 66, /*deterministic=*/true);
  EXPECT_EQ(deterministic_group_size(p, 8, 66, 16), 8);
  // Row 1 (B=1, S=128k, H=16): 128 splits on 66 slots -> 64 groups of 2.
  p = plan_for({131072}, 66, /*deterministic=*/true);
  EXPECT_EQ(deterministic_group_size(p, 1, 66, 16), 2);
  // Row 7 (B=1, S=128k, H=128, 2048-token chunks): 64 splits already fit 66 slots.
  p = plan_for({131072}, 66, /*deterministic=*/true, 128);
  EXPECT_EQ(deterministic_group_size(p, 1, 66, 16), 1);
  // Row 8 rowwise/fold at H=128, q_len 8: 8 concurrent split groups -> 8 groups of 8.
  EXPECT_EQ(deterministic_group_size(p, 1, 8, 16), 8);
  // Capped, and never below 1.
  EXPECT_EQ(deterministic_group_size(p, 1, 1, 4), 4);
  EXPECT_EQ(deterministic_group_size(p, 1, 1000, 16), 1);
  // A tie between a group size that folds whole blocks and longer ones that do not (8 splits:
  // groups of 8..12 all take one wave of one group): the folding one wins.
  p = plan_for({8192}, 66, /*deterministic=*/true);
  EXPECT_EQ(deterministic_group_size(p, 1, 1, 12), 8);
  EXPECT_EQ(deterministic_group_size(p, 1, 1, 16), 16);
}

// prepare() reserves partial_bytes_bound(max_shape); run() inside a graph capture may not grow
// the workspace, so every plan within the shape must fit.
TEST(SplitPlan, WorkspaceBoundHoldsForEveryAdaptiveAndDeterministicPlan) {
  std::mt19937 rng(7);
  constexpr int kSms = 132;
  for (int trial = 0; trial < 3000; ++trial) {
    const int batch = 1 + static_cast<int>(rng() % (trial % 3 == 0 ? 300 : 20));
    const int q_len = 1 + static_cast<int>(rng() % 16);
    const int heads = std::vector<int>{8, 16, 32, 64, 128}[rng() % 5];
    const int64_t max_len = 1 + static_cast<int64_t>(rng() % (trial % 4 == 0 ? 2000000 : 40000));
    std::vector<int32_t> lens(batch);
    for (int32_t& l : lens) l = 1 + static_cast<int32_t>(rng() % max_len);
    const int rows = q_len * heads;
    const int fold_tiles = (rows + 63) / 64;
    // The backend's concurrency: co-resident clusters / cluster groups, at most the SMs / tiles.
    const int concurrent = std::max(1, static_cast<int>(rng() % (kSms / fold_tiles + 1)) + 1);
    const bool det = trial % 5 == 0;
    const SplitPlan p = plan_for(lens, concurrent, det, heads);
    VerifyShape shape;
    shape.batch = batch;
    shape.q_len = q_len;
    shape.num_heads = heads;
    shape.deterministic = det;
    shape.max_seq_len = *std::max_element(lens.begin(), lens.end());
    ASSERT_LE(partial_bytes(p, rows), partial_bytes_bound(shape, kSms))
        << "trial " << trial << " batch " << batch << " rows " << rows << " concurrent "
        << concurrent;
  }
}

// The bound of a deterministic max shape also covers calls with fewer heads: H = 64 splits every
// 1024 tokens where H = 100 splits every 2048, with 64 of its 100 rows.
TEST(SplitPlan, DeterministicWorkspaceBoundCoversSmallerHeadCounts) {
  VerifyShape max_shape;
  max_shape.batch = 2;
  max_shape.q_len = 4;
  max_shape.num_heads = 100;
  max_shape.max_seq_len = 1 << 20;
  max_shape.deterministic = true;
  const std::vector<int32_t> lens(2, 1 << 20);
  for (int heads : {8, 16, 64, 65, 100}) {
    const SplitPlan p = plan_for(lens, 66, /*deterministic=*/true, heads);
    EXPECT_LE(partial_bytes(p, 4 * heads), partial_bytes_bound(max_shape, 132)) << "H=" << heads;
  }
}

}  // namespace
}  // namespace mlaspec::attn::cuda
