// Small helpers shared by the GPU tests (label gpu): whether a device is present, and host <->
// device copies of std::vector through mlaspec's Buffer.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
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

// A fresh seed for a test's random inputs, printed under `who`; MLASPEC_TEST_SEED=N replays a run.
inline uint32_t fresh_seed(const char* who) {
  const char* env = std::getenv("MLASPEC_TEST_SEED");
  const uint32_t seed = env != nullptr ? static_cast<uint32_t>(std::strtoul(env, nullptr, 10))
                                       : std::random_device{}();
  std::printf("[%s] seed %u (MLASPEC_TEST_SEED=%u replays it)\n", who, seed, seed);
  return seed;
}

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
