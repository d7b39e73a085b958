// The microbenchmarks' shared helpers: the error check (a failed CUDA runtime call prints where
// and why, then exits: an experiment has nothing to recover) and the event timer.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

// The stream time, in ms, of body(0) .. body(n - 1) enqueued on s: events recorded before and
// after.
template <typename F>
float stream_ms(cudaStream_t s, int n, F&& body) {
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  CHECK(cudaEventRecord(t0, s));
  for (int i = 0; i < n; ++i) body(i);
  CHECK(cudaEventRecord(t1, s));
  CHECK(cudaEventSynchronize(t1));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, t0, t1));
  CHECK(cudaEventDestroy(t0));
  CHECK(cudaEventDestroy(t1));
  return ms;
}
