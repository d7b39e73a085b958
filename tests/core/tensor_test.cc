#include <gtest/gtest.h>

#include <vector>

#include "mlaspec/core/parallel.h"
#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec {
namespace {

TEST(Status, CarriesCodeAndMessage) {
  Status s = invalid_argument("q_len 0 is below the minimum 1");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.to_string(), "invalid_argument: q_len 0 is below the minimum 1");
  EXPECT_EQ(s.with_context("layer 3").message(), "layer 3: q_len 0 is below the minimum 1");
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_THROW(throw_if_error(s), Error);
  Result<int> r(s);
  EXPECT_FALSE(r.ok());
  EXPECT_THROW(r.value(), Error);
  Result<int> v(7);
  EXPECT_EQ(v.value(), 7);
}

TEST(TensorView, ContiguousStridesAndCheckedAccess) {
  std::vector<float> data(2 * 3 * 4);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  TensorView t(data.data(), DType::kF32, {2, 3, 4});
  EXPECT_EQ(t.ndim(), 3);
  EXPECT_EQ(t.stride(0), 12);
  EXPECT_EQ(t.stride(1), 4);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.at<float>({1, 2, 3}), 23.0f);
  EXPECT_EQ(t.span_bytes(), 96);
  EXPECT_THROW(t.at<float>({2, 0, 0}), Error);
  EXPECT_THROW(t.at<float>({0, 0}), Error);
  EXPECT_THROW(t.at<double>({0, 0, 0}), Error);
  EXPECT_THROW(t.size(3), Error);
  EXPECT_EQ(t.describe(), "[2, 3, 4] f32 cpu");
}

TEST(TensorView, ExplicitStridesAndExpect) {
  std::vector<uint16_t> data(100);
  TensorView t(data.data(), DType::kBF16, {2, 3}, {10, 1});
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.offset({1, 2}), 12);
  EXPECT_TRUE(t.expect("x", DType::kBF16, {2, -1}, Device::kCPU).ok());
  Status s = t.expect("x", DType::kBF16, {2, 4}, Device::kCPU);
  EXPECT_EQ(s.message(), "x dimension 1 is 3, expected 4 (shape [2, 3])");
  s = t.expect("x", DType::kF32, {2, 3}, Device::kCPU);
  EXPECT_EQ(s.message(), "x has dtype bf16, expected f32");
  s = t.expect("x", DType::kBF16, {2, 3}, Device::kCUDA);
  EXPECT_EQ(s.message(), "x is on cpu, expected cuda");
  TensorView strided(data.data(), DType::kBF16, {2, 3}, {10, 2});
  s = strided.expect("x", DType::kBF16, {2, 3}, Device::kCPU);
  EXPECT_EQ(s.message(), "x last dimension has stride 2, expected 1 (contiguous)");
  EXPECT_THROW(TensorView(data.data(), DType::kBF16, {2, -1}), Error);
  EXPECT_THROW(TensorView(data.data(), DType::kBF16, {2, 3}, {1}), Error);
}

TEST(TensorView, DeviceTensorsRefuseHostAccess) {
  int x = 0;
  TensorView t(&x, DType::kI32, {1}, Device::kCUDA);
  EXPECT_THROW(t.at<int32_t>({0}), Error);
}

TEST(Buffer, HostAllocationCopyFillAndViews) {
  Buffer b(1000, Device::kCPU);
  EXPECT_EQ(b.bytes(), 1000u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 256, 0u);
  ASSERT_TRUE(b.fill_bytes(0xab).ok());
  std::vector<uint8_t> back(1000);
  ASSERT_TRUE(b.copy_to_host(back.data(), 1000).ok());
  for (uint8_t v : back) ASSERT_EQ(v, 0xab);
  const uint8_t src[4] = {1, 2, 3, 4};
  ASSERT_TRUE(b.copy_from_host(src, 4, 996).ok());
  EXPECT_EQ(b.copy_from_host(src, 4, 998).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(b.view(DType::kF32, {250}).numel(), 250);
  EXPECT_THROW(b.view(DType::kF32, {251}), Error);
  Buffer moved = std::move(b);
  EXPECT_EQ(moved.bytes(), 1000u);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST(Buffer, DeviceMemoryWithoutCudaIsAClearError) {
  if (built_with_cuda()) GTEST_SKIP() << "built with CUDA: device allocation is tested on the GPU";
  Result<Buffer> r = Buffer::allocate(64, Device::kCUDA);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("without CUDA"), std::string::npos);
}

TEST(Parallel, CoversEveryIndexOnceAndRethrows) {
  std::vector<int> hits(10007, 0);
  parallel_for(0, 10007, [&](int64_t i) { hits[i] += 1; });
  for (int h : hits) ASSERT_EQ(h, 1);
  EXPECT_THROW(parallel_for(0, 100,
                            [](int64_t i) {
                              if (i == 57) throw Error(internal_error("x"));
                            }),
               Error);
  parallel_for(5, 5, [](int64_t) { FAIL(); });
}

}  // namespace
}  // namespace mlaspec
