// Bad inputs at the API edge: each gives a named error and leaves out/lse untouched.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/verify_problem.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn {
namespace {

struct Case {
  std::string name;
  std::function<void(testing::Problem&, VerifyArgs&)> corrupt;
  std::string expected_substring;
  StatusCode code = StatusCode::kInvalidArgument;
};

// Two requests (40 and 21 keys), q_len 4, H = 8, page size 16: the problem every test here starts
// from.
testing::Problem two_requests() {
  testing::ProblemSpec s;
  s.batch = 2;
  s.q_len = 4;
  s.num_heads = 8;
  s.page_size = 16;
  s.seq_lens = {40, 21};
  return testing::make_problem(s);
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, NamedErrorAndNothingWritten) {
  const Case& c = GetParam();
  testing::Problem p = two_requests();
  std::vector<uint16_t> out(static_cast<size_t>(p.out_elems()), 0x1234);
  std::vector<float> lse(static_cast<size_t>(p.lse_elems()), 7.0f);
  VerifyArgs a = p.host_args(TensorView(out.data(), DType::kBF16, {2, 4, 8, kHeadDimV}),
                             TensorView(lse.data(), DType::kF32, {2, 4, 8}));
  ASSERT_TRUE(validate_verify_args(a, Device::kCPU).ok()) << "the unmodified problem is valid";
  c.corrupt(p, a);
  auto backend = make_cpu_reference_backend();
  Status st = backend->run(a, VerifyOptions{});
  ASSERT_FALSE(st.ok()) << c.name;
  EXPECT_EQ(st.code(), c.code) << st.to_string();
  EXPECT_NE(st.message().find(c.expected_substring), std::string::npos)
      << "message: " << st.message() << "\nexpected to contain: " << c.expected_substring;
  for (uint16_t v : out) ASSERT_EQ(v, 0x1234) << c.name << ": out was written";
  for (float v : lse) ASSERT_EQ(v, 7.0f) << c.name << ": lse was written";
}

std::vector<Case> cases() {
  return {
      {"q_dtype",
       [](auto&, VerifyArgs& a) {
         a.q = TensorView(a.q.data(), DType::kF32, {2, 4, 8, kHeadDimQK});
       },
       "q has dtype f32, expected bf16"},
      {"q_head_dim",
       [](auto&, VerifyArgs& a) {
         a.q = TensorView(a.q.data(), DType::kBF16, {2, 4, 8, 512});
       },
       "q dimension 3 is 512, expected 576"},
      {"q_strides",
       [](auto&, VerifyArgs& a) {
         a.q = TensorView(a.q.data(), DType::kBF16, {2, 4, 4, kHeadDimQK},
                          {4 * 8 * kHeadDimQK, 8 * kHeadDimQK, 2 * kHeadDimQK, 1});
       },
       "not contiguous within a request"},
      {"kv_dtype",
       [](auto&, VerifyArgs& a) {
         a.kv.pages = TensorView(a.kv.pages.data(), DType::kF32, {10, 16, kHeadDimQK});
       },
       "kv.pages has dtype f32, expected bf16, fp8_e4m3 or fp8_tile"},
      {"kv_tile_row_width",
       [](auto& p, VerifyArgs& a) {
         a.kv.pages = TensorView(a.kv.pages.data(), DType::kFP8Tile, {p.num_pages, 16, 576});
       },
       "kv.pages dimension 2 is 576, expected 656"},
      {"kv_scale_fp8_tile",
       [](auto& p, VerifyArgs& a) {
         a.kv.pages = TensorView(a.kv.pages.data(), DType::kFP8Tile, {p.num_pages, 16, 656});
         a.kv.kv_scale = 0.5f;
       },
       "given for an fp8_tile pool; its scales are in the rows (kv_scale must be 1)"},
      {"kv_row_width",
       [](auto& p, VerifyArgs& a) {
         a.kv.pages = TensorView(a.kv.pages.data(), DType::kBF16, {p.num_pages, 16, 512});
       },
       "kv.pages dimension 2 is 512, expected 576"},
      {"kv_scale_bf16", [](auto&, VerifyArgs& a) { a.kv.kv_scale = 0.5f; }, "bf16 KV is unscaled"},
      {"kv_scale_nan", [](auto&, VerifyArgs& a) { a.kv.kv_scale = std::nanf(""); },
       "must be finite and > 0"},
      {"sm_scale_zero", [](auto&, VerifyArgs& a) { a.sm_scale = 0.0f; },
       "sm_scale 0.000000 must be finite and > 0"},
      {"seq_len_below_q_len", [](auto& p, VerifyArgs&) { p.seq_lens[1] = 3; },
       "seq_lens[1] = 3 is below q_len 4"},
      {"page_out_of_range",
       [](auto& p, VerifyArgs&) { p.block_table[p.max_pages + 1] = p.num_pages; },
       "block_table[1][1] = ", StatusCode::kOutOfRange},
      {"negative_page", [](auto& p, VerifyArgs&) { p.block_table[2] = -1; },
       "block_table[0][2] = -1 is out of range", StatusCode::kOutOfRange},
      {"table_too_short", [](auto& p, VerifyArgs&) { p.seq_lens[0] = 16 * p.max_pages + 1; },
       "columns"},
      {"seq_lens_shape",
       [](auto& p, VerifyArgs& a) { a.seq_lens = TensorView(p.seq_lens.data(), DType::kI32, {1}); },
       "seq_lens dimension 0 is 1, expected 2"},
      {"block_table_dtype",
       [](auto& p, VerifyArgs& a) {
         a.block_table = TensorView(p.block_table.data(), DType::kF32, {2, p.max_pages});
       },
       "block_table has dtype f32, expected i32"},
      {"out_shape",
       [](auto&, VerifyArgs& a) {
         a.out = TensorView(a.out.data(), DType::kBF16, {2, 4, 8, 576});
       },
       "out dimension 3 is 576, expected 512"},
      {"lse_dtype",
       [](auto&, VerifyArgs& a) {
         a.lse = TensorView(a.lse.data(), DType::kBF16, {2, 4, 8});
       },
       "lse has dtype bf16, expected f32"},
      {"device_tensor_on_cpu_backend",
       [](auto&, VerifyArgs& a) {
         a.kv.pages = TensorView(a.kv.pages.data(), DType::kBF16,
                                 {a.kv.pages.size(0), 16, kHeadDimQK}, Device::kCUDA);
       },
       "kv.pages is on cuda, expected cpu"},
      {"missing_q", [](auto&, VerifyArgs& a) { a.q = TensorView(); }, "q is missing"},
  };
}

INSTANTIATE_TEST_SUITE_P(Verify, BadInput, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(BadInputBackend, QLenBeyondBackendRangeIsUnsupported) {
  // 1025 query tokens exceed the CPU reference's declared max of 1024.
  testing::ProblemSpec s;
  s.q_len = 1025;
  s.num_heads = 1;
  s.seq_lens = {1025};
  testing::Problem p = testing::make_problem(s);
  std::vector<uint16_t> out(static_cast<size_t>(p.out_elems()), 0x1234);
  std::vector<float> lse(static_cast<size_t>(p.lse_elems()), 7.0f);
  VerifyArgs a = p.host_args(TensorView(out.data(), DType::kBF16, {1, 1025, 1, kHeadDimV}),
                             TensorView(lse.data(), DType::kF32, {1, 1025, 1}));
  Status st = make_cpu_reference_backend()->run(a, VerifyOptions{});
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_EQ(st.message(), "q_len 1025 exceeds cpu_reference's max 1024");
  for (uint16_t v : out) ASSERT_EQ(v, 0x1234);
}

TEST(BadInputBackend, SplitsAndFp8MathAreRefusedByTheReference) {
  testing::ProblemSpec s;
  testing::Problem p = testing::make_problem(s);
  std::vector<uint16_t> out(static_cast<size_t>(p.out_elems()));
  std::vector<float> lse(static_cast<size_t>(p.lse_elems()));
  VerifyArgs a = p.host_args(TensorView(out.data(), DType::kBF16, {1, 1, 16, kHeadDimV}),
                             TensorView(lse.data(), DType::kF32, {1, 1, 16}));
  VerifyOptions o;
  o.num_splits = 4;
  EXPECT_EQ(make_cpu_reference_backend()->run(a, o).code(), StatusCode::kUnsupported);
  o.num_splits = 0;
  o.fp8_math = true;
  EXPECT_EQ(make_cpu_reference_backend()->run(a, o).code(), StatusCode::kUnsupported);
}

// The shape a backend plans from: sizes from the tensors, KV totals from the host seq_lens, and the
// mode from the call's options (a CUDA backend once planned deterministic calls as default ones).
TEST(ShapeOf, TakesSizesFromTheArgsAndTheModeFromTheOptions) {
  testing::Problem p = two_requests();
  std::vector<uint16_t> out(static_cast<size_t>(p.out_elems()));
  std::vector<float> lse(static_cast<size_t>(p.lse_elems()));
  const VerifyArgs a = p.host_args(TensorView(out.data(), DType::kBF16, {2, 4, 8, kHeadDimV}),
                                   TensorView(lse.data(), DType::kF32, {2, 4, 8}));
  VerifyOptions o;
  VerifyShape shape = shape_of(a, o);
  EXPECT_EQ(shape.batch, 2);
  EXPECT_EQ(shape.q_len, 4);
  EXPECT_EQ(shape.num_heads, 8);
  EXPECT_EQ(shape.page_size, 16);
  EXPECT_EQ(shape.max_seq_len, 40);
  EXPECT_EQ(shape.total_kv, 61);
  EXPECT_FALSE(shape.deterministic);
  o.deterministic = true;
  shape = shape_of(a, o);
  EXPECT_TRUE(shape.deterministic);
}

TEST(DeviceMetadata, CudaCallsNeedHostCopies) {
  testing::ProblemSpec s;
  testing::Problem p = testing::make_problem(s);
  std::vector<uint16_t> out(static_cast<size_t>(p.out_elems()));
  std::vector<float> lse(static_cast<size_t>(p.lse_elems()));
  VerifyArgs a =
      p.host_args(TensorView(out.data(), DType::kBF16, {1, 1, 16, kHeadDimV}, Device::kCUDA),
                  TensorView(lse.data(), DType::kF32, {1, 1, 16}, Device::kCUDA));
  // Pretend everything lives on the device (validation never dereferences device pointers).
  a.q = TensorView(a.q.data(), DType::kBF16, {1, 1, 16, kHeadDimQK}, Device::kCUDA);
  a.kv.pages =
      TensorView(a.kv.pages.data(), DType::kBF16, {p.num_pages, 64, kHeadDimQK}, Device::kCUDA);
  a.block_table = TensorView(p.block_table.data(), DType::kI32, {1, p.max_pages}, Device::kCUDA);
  a.seq_lens = TensorView(p.seq_lens.data(), DType::kI32, {1}, Device::kCUDA);
  Status st = validate_verify_args(a, Device::kCUDA);
  EXPECT_NE(st.message().find("pass its host copy in block_table_host"), std::string::npos)
      << st.message();
  a.block_table_host = TensorView(p.block_table.data(), DType::kI32, {1, p.max_pages});
  a.seq_lens_host = TensorView(p.seq_lens.data(), DType::kI32, {1});
  EXPECT_TRUE(validate_verify_args(a, Device::kCUDA).ok());
  p.block_table[0] = 999;
  EXPECT_EQ(validate_verify_args(a, Device::kCUDA).code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace mlaspec::attn
