// The split combine (src/attention/cuda/combine.cu) on its own: on random partials with empty and
// single non-empty rows, every choice of warps per task gives the same bits, trailing empty
// partials change no bit, every output element is written, and the result is the CPU merge's
// within float reassociation.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/cuda/launch.h"
#include "gpu/gpu_test_util.h"
#include "mlaspec/attention/verify.h"
#include "mlaspec/core/dtype.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::attn {
namespace {

// Partials of one problem: request b has splits[b] partials of `rows` rows, slot-major as the
// verify kernel writes them (slot part_begin[b] + s, row r at (slot * rows + r)).
struct Partials {
  int batch = 0, q_len = 0, heads = 0, rows = 0;
  std::vector<int> splits;
  std::vector<float> o, lse;  // [slots * rows * 512], [slots * rows]
  std::vector<int> part_begin;
};

// Row kinds by r % 5: 0 all splits empty, 1 only split 0 non-empty (it must come back exactly),
// 2 only the last split non-empty, 3 and 4 random with about a quarter of the splits empty.
Partials make_partials(int batch, int q_len, int heads, const std::vector<int>& splits,
                       uint32_t seed) {
  Partials p;
  p.batch = batch;
  p.q_len = q_len;
  p.heads = heads;
  p.rows = q_len * heads;
  p.splits = splits;
  int slots = 0;
  for (int b = 0; b < batch; ++b) {
    p.part_begin.push_back(slots);
    slots += splits[b];
  }
  p.part_begin.push_back(slots);
  p.o.assign(static_cast<size_t>(slots) * p.rows * 512, 0.f);
  p.lse.assign(static_cast<size_t>(slots) * p.rows, -INFINITY);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::uniform_real_distribution<float> uni(-6.f, 6.f);
  for (int b = 0; b < batch; ++b) {
    const int n = splits[b];
    for (int r = 0; r < p.rows; ++r) {
      for (int s = 0; s < n; ++s) {
        const int kind = r % 5;
        bool full = kind >= 3 ? (rng() % 4 != 0) : false;
        if (kind == 1) full = s == 0;
        if (kind == 2) full = s == n - 1;
        if (!full) continue;
        const size_t row = static_cast<size_t>(p.part_begin[b] + s) * p.rows + r;
        p.lse[row] = uni(rng);
        for (int c = 0; c < 512; ++c) p.o[row * 512 + c] = normal(rng);
      }
    }
  }
  return p;
}

struct Merged {
  std::vector<uint16_t> out;  // [B, q_len, H, 512] bf16
  std::vector<float> lse;     // [B, q_len, H]
};

// Parameters of a combine of `p`'s shape into bf16 out / f32 lse laid out [B, q_len, H(, 512)],
// every request merged (single-split requests copied); the plan is left to the caller.
cuda::CombineParams output_params(const Partials& p, const Buffer& o, const Buffer& l, Buffer& out,
                                  Buffer& lse) {
  cuda::CombineParams c = {};
  c.o_part = static_cast<const float*>(o.data());
  c.lse_part = static_cast<const float*>(l.data());
  c.out = out.data();
  c.lse = static_cast<float*>(lse.data());
  c.out_stride[0] = static_cast<int64_t>(p.rows) * 512;
  c.out_stride[1] = static_cast<int64_t>(p.heads) * 512;
  c.out_stride[2] = 512;
  c.lse_stride[0] = p.rows;
  c.lse_stride[1] = p.heads;
  c.lse_stride[2] = 1;
  c.batch = p.batch;
  c.q_len = p.q_len;
  c.num_heads = p.heads;
  c.rows = p.rows;
  c.write_all = 1;
  return c;
}

// Runs the combine and fetches its output. Poison first: 0xff bytes are NaN in bf16 and f32; no
// merged value is NaN (all-empty rows give 0 and -inf), so any NaN left is an element the kernel
// did not write.
template <typename SetPlan>
Merged run_combine_into_output(const Partials& p, const Buffer& o, const Buffer& l,
                               SetPlan&& set_plan) {
  const size_t rows = static_cast<size_t>(p.batch) * p.rows;
  Buffer out(rows * 512 * 2, Device::kCUDA), lse(rows * 4, Device::kCUDA);
  throw_if_error(out.fill_bytes(0xff));
  throw_if_error(lse.fill_bytes(0xff));
  cuda::CombineParams c = output_params(p, o, l, out, lse);
  set_plan(c);
  EXPECT_EQ(cuda::run_combine(c, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {testing::download<uint16_t>(out), testing::download<float>(lse)};
}

// block_splits > 1: deterministic mode's merge tree, its blocks folded by the combine.
Merged run_gpu(const Partials& p, int warps_per_task, int block_splits = 1) {
  const Buffer o = testing::upload(p.o), l = testing::upload(p.lse);
  return run_combine_into_output(p, o, l, [&](cuda::CombineParams& c) {
    c.warps_per_task = warps_per_task;
    int splits = 0;
    for (int b = 0; b <= p.batch; ++b) {
      c.plan.split_begin[b] = p.part_begin[b];
      c.plan.part_begin[b] = p.part_begin[b];
      if (b < p.batch) splits = std::max(splits, p.splits[b]);
    }
    c.plan.total_splits = p.part_begin[p.batch];
    c.plan.total_part_slots = p.part_begin[p.batch];
    c.plan.max_splits = splits;
    c.plan.block_splits = block_splits;
  });
}

// The same merge with the blocks folded first, as the 64-row kernel does when it folds them: one
// combine folds every block alone into an f32 partial (a block as a request of its own: one merge
// item, which comes back exactly), a second merges those block partials (blocks_folded).
Merged run_gpu_prefolded(const Partials& p) {
  const int K = kDeterministicBlockChunks;
  const Buffer o = testing::upload(p.o), l = testing::upload(p.lse);
  std::vector<int> block_begin = {0};  // blocks of request b: block_begin[b] ..
  for (int b = 0; b < p.batch; ++b) {
    block_begin.push_back(block_begin.back() + (p.splits[b] + K - 1) / K);
  }
  const int blocks = block_begin.back();
  EXPECT_LE(blocks, cuda::CommonTraits::kMaxBatch);
  Buffer bo(static_cast<size_t>(blocks) * p.rows * 512 * 4, Device::kCUDA);
  Buffer bl(static_cast<size_t>(blocks) * p.rows * 4, Device::kCUDA);
  throw_if_error(bo.fill_bytes(0xff));
  throw_if_error(bl.fill_bytes(0xff));
  cuda::CombineParams f = {};
  f.o_part = static_cast<const float*>(o.data());
  f.lse_part = static_cast<const float*>(l.data());
  f.o_f32 = static_cast<float*>(bo.data());
  f.lse_f32 = static_cast<float*>(bl.data());
  f.batch = blocks;
  f.q_len = p.q_len;
  f.num_heads = p.heads;
  f.rows = p.rows;
  f.write_all = 1;
  int j = 0;
  for (int b = 0; b < p.batch; ++b) {
    for (int s0 = 0; s0 < p.splits[b]; s0 += K, ++j) {
      f.plan.split_begin[j] = p.part_begin[b] + s0;
      f.plan.part_begin[j] = p.part_begin[b] + s0;
      f.plan.split_begin[j + 1] = p.part_begin[b] + std::min(s0 + K, p.splits[b]);
    }
  }
  f.plan.part_begin[blocks] = f.plan.split_begin[blocks];
  f.plan.total_splits = f.plan.total_part_slots = f.plan.split_begin[blocks];
  f.plan.max_splits = K;
  f.plan.block_splits = K;
  EXPECT_EQ(cuda::run_combine(f, nullptr), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return run_combine_into_output(p, bo, bl, [&](cuda::CombineParams& c) {
    int splits = 0;
    for (int b = 0; b <= p.batch; ++b) {
      c.plan.split_begin[b] = p.part_begin[b];
      c.plan.part_begin[b] = block_begin[b];
      if (b < p.batch) splits = std::max(splits, p.splits[b]);
    }
    c.plan.total_splits = p.part_begin[p.batch];
    c.plan.total_part_slots = blocks;
    c.plan.max_splits = splits;
    c.plan.block_splits = K;
    c.plan.blocks_folded = 1;
  });
}

// The same partials with `extra` empty partials appended to every request.
Partials with_trailing_empties(const Partials& p, int extra) {
  std::vector<int> splits = p.splits;
  for (int& n : splits) n += extra;
  Partials q = make_partials(p.batch, p.q_len, p.heads, splits, 0);
  std::fill(q.o.begin(), q.o.end(), 0.f);
  std::fill(q.lse.begin(), q.lse.end(), -INFINITY);
  for (int b = 0; b < p.batch; ++b) {
    for (int s = 0; s < p.splits[b]; ++s) {
      const size_t src = static_cast<size_t>(p.part_begin[b] + s) * p.rows;
      const size_t dst = static_cast<size_t>(q.part_begin[b] + s) * q.rows;
      std::copy_n(p.lse.begin() + src, p.rows, q.lse.begin() + dst);
      std::copy_n(p.o.begin() + src * 512, static_cast<size_t>(p.rows) * 512,
                  q.o.begin() + dst * 512);
    }
  }
  return q;
}

bool same_bits(const Merged& a, const Merged& b) {
  return a.out == b.out &&
         std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * sizeof(float)) == 0;
}

// Checks `m` against the CPU merge of the same partials (reassociation only: the CPU sums in
// split order, the GPU in its fixed tree; block_splits > 1: blocks folded first, fold_partials)
// and the exact cases; returns the first problem found.
std::string check_against_cpu(const Partials& p, const Merged& m, int block_splits = 1) {
  for (int b = 0; b < p.batch; ++b) {
    const int n = p.splits[b];
    std::vector<TensorView> ov, lv;
    for (int s = 0; s < n; ++s) {
      const size_t row0 = static_cast<size_t>(p.part_begin[b] + s) * p.rows;
      ov.emplace_back(const_cast<float*>(p.o.data() + row0 * 512), DType::kF32,
                      std::initializer_list<int64_t>{1, p.q_len, p.heads, 512});
      lv.emplace_back(const_cast<float*>(p.lse.data() + row0), DType::kF32,
                      std::initializer_list<int64_t>{1, p.q_len, p.heads});
    }
    const int blocks = (n + block_splits - 1) / block_splits;
    std::vector<float> fo, fl;
    if (block_splits > 1) {
      fo.resize(static_cast<size_t>(blocks) * p.rows * 512);
      fl.resize(static_cast<size_t>(blocks) * p.rows);
      std::vector<TensorView> bo, bl;
      for (int j = 0; j < blocks; ++j) {
        bo.emplace_back(fo.data() + static_cast<size_t>(j) * p.rows * 512, DType::kF32,
                        std::initializer_list<int64_t>{1, p.q_len, p.heads, 512});
        bl.emplace_back(fl.data() + static_cast<size_t>(j) * p.rows, DType::kF32,
                        std::initializer_list<int64_t>{1, p.q_len, p.heads});
        const int first = j * block_splits, count = std::min(block_splits, n - first);
        throw_if_error(fold_partials(std::span<const TensorView>(ov).subspan(first, count),
                                     std::span<const TensorView>(lv).subspan(first, count),
                                     bo.back(), bl.back()));
      }
      ov = bo;
      lv = bl;
    }
    std::vector<uint16_t> out(static_cast<size_t>(p.rows) * 512);
    std::vector<float> lse(p.rows);
    throw_if_error(merge_partials(ov, lv,
                                  TensorView(out.data(), DType::kBF16, {1, p.q_len, p.heads, 512}),
                                  TensorView(lse.data(), DType::kF32, {1, p.q_len, p.heads})));
    for (int r = 0; r < p.rows; ++r) {
      const size_t grow = static_cast<size_t>(b) * p.rows + r;
      const std::string at = "request " + std::to_string(b) + " (" + std::to_string(n) +
                             " splits) row " + std::to_string(r);
      const float gl = m.lse[grow], cl = lse[r];
      if (std::isnan(gl)) return at + ": lse not written";
      if (std::isinf(cl) ? gl != cl : std::fabs(gl - cl) > 1e-5f * std::max(1.f, std::fabs(cl))) {
        return at + ": lse " + std::to_string(gl) + " vs CPU " + std::to_string(cl);
      }
      // A row with one non-empty partial comes back exactly (bf16 of the f32 partial).
      int nonempty = 0, only = -1;
      for (int s = 0; s < n; ++s) {
        if (!std::isinf(p.lse[static_cast<size_t>(p.part_begin[b] + s) * p.rows + r])) {
          ++nonempty;
          only = s;
        }
      }
      for (int c = 0; c < 512; ++c) {
        const float g = bf16_bits_to_float(m.out[grow * 512 + c]);
        const float e = bf16_bits_to_float(out[static_cast<size_t>(r) * 512 + c]);
        if (std::isnan(g)) return at + " col " + std::to_string(c) + ": not written";
        if (nonempty == 1) {
          const size_t src = (static_cast<size_t>(p.part_begin[b] + only) * p.rows + r) * 512 + c;
          if (m.out[grow * 512 + c] != float_to_bf16_bits(p.o[src])) {
            return at + " col " + std::to_string(c) + ": single partial not returned exactly";
          }
        } else if (std::fabs(g - e) > 1e-2f * std::fabs(e) + 1e-5f) {
          return at + " col " + std::to_string(c) + ": " + std::to_string(g) + " vs CPU " +
                 std::to_string(e);
        }
      }
    }
  }
  return "";
}

TEST(CudaCombine, EveryMappingGivesTheSameBits) {
  MLASPEC_SKIP_WITHOUT_GPU();
  struct Case {
    int batch, q_len, heads;
    std::vector<int> splits;
  };
  // Split counts around every batch edge (8 per round, 16 per warp batch) and the kernel choices
  // (one split, at most 8 per request, many tasks vs few).
  const std::vector<Case> cases = {
      {1, 1, 16, {2}},
      {1, 1, 16, {128}},
      {1, 8, 16, {64}},
      {1, 1, 8, {1}},
      {3, 1, 16, {1, 5, 8}},
      {2, 2, 12, {9, 17}},
      {4, 1, 16, {16, 15, 33, 7}},
      {1, 3, 10, {300}},
      {64, 1, 16, {2, 3}},
      {8, 8, 16, {8, 8, 8, 8, 8, 8, 8, 8}},
      {2, 1, 128, {1030, 3}},
      {5, 4, 16, {24, 25, 40, 41, 2}},
  };
  uint32_t seed = 1;
  for (const Case& cs : cases) {
    std::vector<int> splits = cs.splits;
    while (static_cast<int>(splits.size()) < cs.batch) splits.push_back(cs.splits.back());
    const Partials p = make_partials(cs.batch, cs.q_len, cs.heads, splits, seed++);
    std::string name = "B=" + std::to_string(cs.batch) + " q=" + std::to_string(cs.q_len) +
                       " H=" + std::to_string(cs.heads) + " splits=";
    for (int n : splits) name += std::to_string(n) + ",";
    // One merge level, and deterministic mode's two (blocks folded here, or before).
    for (int block : {1, kDeterministicBlockChunks}) {
      const std::string tree = " blocks of " + std::to_string(block);
      const Merged picked = run_gpu(p, 0, block);
      EXPECT_EQ(check_against_cpu(p, picked, block), "") << name << tree;
      for (int wpt : {1, 2, 4, 8}) {
        EXPECT_TRUE(same_bits(run_gpu(p, wpt, block), picked))
            << name << tree << " warps per task " << wpt;
      }
      for (int extra : {1, 7, 24}) {
        EXPECT_TRUE(same_bits(run_gpu(with_trailing_empties(p, extra), 0, block), picked))
            << name << tree << " + " << extra << " trailing empty partials";
      }
      if (block > 1) {
        EXPECT_TRUE(same_bits(run_gpu_prefolded(p), picked)) << name << " blocks folded first";
      }
    }
  }
}

TEST(CudaCombine, RejectsABadWarpCount) {
  MLASPEC_SKIP_WITHOUT_GPU();
  cuda::CombineParams c = {};
  c.batch = 1;
  c.rows = 1;
  c.warps_per_task = 3;
  EXPECT_EQ(cuda::run_combine(c, nullptr), cudaErrorInvalidValue);
  c.warps_per_task = 0;
  c.plan.block_splits = 4;  // the kernels fold blocks of kDeterministicBlockChunks only
  EXPECT_EQ(cuda::run_combine(c, nullptr), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace mlaspec::attn
