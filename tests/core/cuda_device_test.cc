// The reason given when no CUDA GPU can be used.
#include "mlaspec/core/cuda_device.h"

#include <gtest/gtest.h>

#include "common/test_helpers.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec {
namespace {

TEST(CudaDevice, ReasonSaysWhatIsMissing) {
  const Status st = cuda_device_available();
  if (!built_with_cuda()) {
    EXPECT_EQ(st.code(), StatusCode::kUnsupported);
    EXPECT_EQ(st.message(), "mlaspec was built without CUDA");
    return;
  }
  if (st.ok()) GTEST_SKIP() << "a CUDA GPU is here";
  // A machine without a GPU (or without the NVIDIA driver) must hear that, not that its driver
  // is too old; the runtime's own answer stays in the parentheses.
  EXPECT_EQ(st.code(), StatusCode::kUnsupported);
  EXPECT_CONTAINS(st.message(), "cudaGetDeviceCount");
}

}  // namespace
}  // namespace mlaspec
