// Ragged verify on the CUDA backends (requests with different q_len in one call: one uniform
// launch per run of equal q_len, attention/verify.h for_each_uniform_run), over a sweep (H 16 ..
// 128, pages 16, 32 and 64, bf16, fp8 and fp8_tile, q_len 1 mixed with 32, seq_len == q_len, ragged
// contexts), fresh random inputs (the seed is printed) and poisoned outputs:
//   - cuda_fold and cuda_rowwise within the uniform sweep's bounds of the CPU reference's ragged
//     result, every element written;
//   - fold == rowwise bitwise in default and deterministic mode;
//   - deterministic mode: each request's rows equal the same request run alone (B = 1, its own
//     q_len) bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/verify_problem.h"
#include "gpu_test_util.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn {
namespace {

using mlaspec::testing::make_problem;
using mlaspec::testing::Problem;
using mlaspec::testing::ProblemSpec;

struct Out {
  std::vector<uint16_t> out;
  std::vector<float> lse;
};

// A ragged problem on the host and the device: q [T, H, 576], q_indptr, the Problem's KV and
// tables.
struct RaggedProblem {
  Problem p;
  std::vector<int32_t> q_lens, indptr;
  std::vector<uint16_t> q;
  int64_t T = 0, H = 0;
  Buffer dq, dkv, dbt, dsl, dip;

  RaggedProblem(const ProblemSpec& spec, std::vector<int32_t> lens, uint64_t seed)
      : p(make_problem(spec)), q_lens(std::move(lens)) {
    H = spec.num_heads;
    indptr.push_back(0);
    for (int32_t n : q_lens) indptr.push_back(indptr.back() + n);
    T = indptr.back();
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    q.resize(static_cast<size_t>(T * H * kHeadDimQK));
    for (auto& v : q) v = float_to_bf16_bits(normal(rng));
    dq = testing::upload(q);
    dkv = testing::upload(p.kv);
    dbt = testing::upload(p.block_table);
    dsl = testing::upload(p.seq_lens);
    dip = testing::upload(indptr);
  }
  VerifyArgs host_args(Out& o) {
    o.out.assign(static_cast<size_t>(T * H * kHeadDimV), 0xffff);
    o.lse.assign(static_cast<size_t>(T * H), std::nanf(""));
    VerifyArgs a = p.host_args({}, {});
    a.q = TensorView(q.data(), DType::kBF16, {T, H, kHeadDimQK});
    a.q_indptr = TensorView(indptr.data(), DType::kI32, {static_cast<int64_t>(indptr.size())});
    a.out = TensorView(o.out.data(), DType::kBF16, {T, H, kHeadDimV});
    a.lse = TensorView(o.lse.data(), DType::kF32, {T, H});
    return a;
  }
  // Runs `backend` on the device copies, the whole ragged call, or request `only` alone as a
  // uniform B = 1 call (views of the same buffers); outputs poisoned (0xff) first.
  Out run(Backend& backend, const VerifyOptions& o, int64_t only = -1) {
    const ProblemSpec& s = p.spec;
    const int64_t rows = only < 0 ? T : q_lens[static_cast<size_t>(only)];
    const int64_t r0 = only < 0 ? 0 : indptr[static_cast<size_t>(only)];
    const int64_t b0 = only < 0 ? 0 : only, B = only < 0 ? s.batch : 1;
    Buffer dout(static_cast<size_t>(rows * H * kHeadDimV) * 2, Device::kCUDA);
    Buffer dlse(static_cast<size_t>(rows * H) * 4, Device::kCUDA);
    throw_if_error(dout.fill_bytes(0xff));
    throw_if_error(dlse.fill_bytes(0xff));
    VerifyArgs a = p.host_args({}, {});
    a.block_table_host =
        TensorView(p.block_table.data() + b0 * p.max_pages, DType::kI32, {B, p.max_pages});
    a.seq_lens_host = TensorView(p.seq_lens.data() + b0, DType::kI32, {B});
    a.kv.pages = TensorView(dkv.data(), s.kv_dtype,
                            {p.num_pages, s.page_size, kv_row_width(s.kv_dtype)}, Device::kCUDA);
    a.block_table = TensorView(static_cast<int32_t*>(dbt.data()) + b0 * p.max_pages, DType::kI32,
                               {B, p.max_pages}, Device::kCUDA);
    a.seq_lens =
        TensorView(static_cast<int32_t*>(dsl.data()) + b0, DType::kI32, {B}, Device::kCUDA);
    uint16_t* q0 = static_cast<uint16_t*>(dq.data()) + r0 * H * kHeadDimQK;
    if (only < 0) {
      const int64_t n = static_cast<int64_t>(indptr.size());
      a.q = TensorView(q0, DType::kBF16, {T, H, kHeadDimQK}, Device::kCUDA);
      a.q_indptr = TensorView(dip.data(), DType::kI32, {n}, Device::kCUDA);
      a.q_indptr_host = TensorView(indptr.data(), DType::kI32, {n});
      a.out = TensorView(dout.data(), DType::kBF16, {T, H, kHeadDimV}, Device::kCUDA);
      a.lse = TensorView(dlse.data(), DType::kF32, {T, H}, Device::kCUDA);
    } else {
      a.q = TensorView(q0, DType::kBF16, {1, rows, H, kHeadDimQK}, Device::kCUDA);
      a.out = TensorView(dout.data(), DType::kBF16, {1, rows, H, kHeadDimV}, Device::kCUDA);
      a.lse = TensorView(dlse.data(), DType::kF32, {1, rows, H}, Device::kCUDA);
    }
    const Status st = backend.run(a, o);
    EXPECT_TRUE(st.ok()) << st.to_string();
    Out r;
    r.out = testing::download<uint16_t>(dout);
    r.lse = testing::download<float>(dlse);
    return r;
  }
};

// Every element written and within the uniform sweep's bounds (verify_cuda_test.cc).
void expect_close(const Out& got, const Out& ref, const std::string& what) {
  double max_ref = 0, max_err = 0, lse_err = 0;
  for (size_t k = 0; k < ref.out.size(); ++k) {
    const double g = bf16_bits_to_float(got.out[k]), r = bf16_bits_to_float(ref.out[k]);
    ASSERT_FALSE(std::isnan(g)) << what << ": out[" << k << "] unwritten";
    max_ref = std::max(max_ref, std::fabs(r));
    max_err = std::max(max_err, std::fabs(g - r));
  }
  for (size_t k = 0; k < ref.lse.size(); ++k) {
    ASSERT_TRUE(std::isfinite(got.lse[k])) << what << ": lse[" << k << "] unwritten";
    lse_err = std::max(lse_err, std::fabs(static_cast<double>(got.lse[k]) - ref.lse[k]));
  }
  EXPECT_LE(max_err / std::max(max_ref, 1e-30), 1e-2) << what;
  EXPECT_LE(lse_err, 1e-3) << what;
}

void expect_bitwise(const Out& a, const Out& b, const std::string& what) {
  EXPECT_EQ(0, std::memcmp(a.out.data(), b.out.data(), a.out.size() * 2)) << what << " out";
  EXPECT_EQ(0, std::memcmp(a.lse.data(), b.lse.data(), a.lse.size() * 4)) << what << " lse";
}

struct Sweep {
  int H, page;
  DType kv;
  std::vector<int32_t> q_lens;
};

TEST(CudaRaggedVerify, MatchesReferenceFoldEqualsRowwiseEachRequestEqualsAlone) {
  MLASPEC_SKIP_WITHOUT_GPU();
  const uint32_t seed = std::random_device{}();
  std::printf("[ragged cuda] seed %u\n", seed);
  std::mt19937_64 rng(seed);
  const std::vector<Sweep> sweep = {
      {16, 64, DType::kBF16, {1, 32, 5, 5, 1}},    {16, 16, DType::kFP8E4M3, {8, 3, 32}},
      {64, 64, DType::kBF16, {2, 2, 7}},           {128, 16, DType::kFP8E4M3, {1, 32}},
      {128, 64, DType::kBF16, {4, 1, 4, 1, 4}},    {32, 32, DType::kBF16, {32, 32, 1}},
      {16, 32, DType::kFP8Tile, {1, 32, 5, 5, 1}}, {8, 16, DType::kFP8Tile, {9, 1, 31}},
      {128, 64, DType::kFP8Tile, {2, 17, 1}},
  };
  std::unique_ptr<Backend> fold = make_cuda_fold_backend().value();
  std::unique_ptr<Backend> rowwise = make_cuda_rowwise_backend().value();
  for (const Sweep& c : sweep) {
    ProblemSpec spec;
    spec.num_heads = c.H;
    spec.page_size = c.page;
    spec.kv_dtype = c.kv;
    spec.kv_scale = c.kv == DType::kFP8E4M3 ? 0.25f : 1.0f;
    spec.batch = static_cast<int>(c.q_lens.size());
    spec.seed = rng();
    for (size_t b = 0; b < c.q_lens.size(); ++b) {
      // seq_len == q_len for request 0; contexts up to ~5k elsewhere (several split chunks).
      spec.seq_lens.push_back(c.q_lens[b] + (b == 0 ? 0 : static_cast<int32_t>(rng() % 5000)));
    }
    RaggedProblem r(spec, c.q_lens, rng());
    const std::string what = spec.to_string() + " H=" + std::to_string(c.H);
    Out ref;
    ASSERT_TRUE(cpu_verify(r.host_args(ref)).ok()) << what;
    for (const bool det : {false, true}) {
      VerifyOptions o;
      o.deterministic = det;
      const std::string w = what + (det ? " det" : " default");
      const Out f = r.run(*fold, o);
      const Out rw = r.run(*rowwise, o);
      expect_close(f, ref, w + " fold");
      expect_close(rw, ref, w + " rowwise");
      expect_bitwise(f, rw, w + " fold vs rowwise");
      if (!det) continue;
      // Each request alone (B = 1, its own q_len): the same bits as its rows of the batch.
      for (size_t b = 0; b < c.q_lens.size(); ++b) {
        const Out one = r.run(*fold, o, static_cast<int64_t>(b));
        const size_t r0 = static_cast<size_t>(r.indptr[b]), n = one.lse.size();
        EXPECT_EQ(
            0, std::memcmp(one.out.data(), f.out.data() + r0 * kHeadDimV * r.H, one.out.size() * 2))
            << w << " request " << b << " (q_len " << c.q_lens[b] << ") alone, out";
        EXPECT_EQ(0, std::memcmp(one.lse.data(), f.lse.data() + r0 * r.H, n * 4))
            << w << " request " << b << " alone, lse";
      }
    }
  }
}

}  // namespace
}  // namespace mlaspec::attn
