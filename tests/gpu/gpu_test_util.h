// Small helpers shared by the GPU tests (label gpu): whether a device is present, and host <->
// device copies of std::vector through mlaspec's Buffer.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <vector>

#include "mlaspec/core/status.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::testing {

inline bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// Skips the current test on a machine without a CUDA device.
#define MLASPEC_SKIP_WITHOUT_GPU() \
  if (!::mlaspec::testing::have_gpu()) GTEST_SKIP() << "no CUDA device"

template <typename T>
Buffer upload(const std::vector<T>& v) {
  Buffer b(v.size() * sizeof(T), Device::kCUDA);
  throw_if_error(b.copy_from_host(v.data(), v.size() * sizeof(T)));
  return b;
}

template <typename T>
std::vector<T> download(const Buffer& b) {
  std::vector<T> v(b.bytes() / sizeof(T));
  throw_if_error(b.copy_to_host(v.data(), b.bytes()));
  return v;
}

}  // namespace mlaspec::testing
