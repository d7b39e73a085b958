// LoadOptions::device: the CPU default, and a CUDA load refused with its reason in a build without
// CUDA (tests/gpu/model_cuda_test.cc covers the CUDA runtime itself).
#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace mlaspec::model::testing {
namespace {

TEST(ModelDevice, DefaultsToTheCpuAndItsPools) {
  Model& m = cached_model("v3_qlora_moe_yarn");
  EXPECT_EQ(m.device(), Device::kCPU);
  EXPECT_EQ(m.kv_pool_spec(4, 16, DType::kBF16).device, Device::kCPU);
}

TEST(ModelDevice, CudaWithoutACudaBuildIsRefused) {
#ifdef MLASPEC_WITH_CUDA
  GTEST_SKIP() << "built with CUDA";
#else
  LoadOptions o;
  o.device = Device::kCUDA;
  Result<Model> m = Model::load(models_dir() / "v3_qlora_moe_yarn", o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(m.status().message().find("built without CUDA"), std::string::npos)
      << m.status().to_string();
#endif
}

}  // namespace
}  // namespace mlaspec::model::testing
