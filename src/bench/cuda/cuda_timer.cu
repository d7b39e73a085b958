#include <cuda_runtime.h>

#include <string>

#include "mlaspec/bench/cuda_timer.h"
#include "mlaspec/core/cuda_device.h"

namespace mlaspec::bench {
namespace {

Status check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return Status::Ok();
  return internal_error(std::string(what) + ": " + cudaGetErrorString(err));
}

// Owns the CUDA objects of one timing session so every exit path releases them.
struct TimerResources {
  cudaStream_t stream = nullptr;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  ~TimerResources() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    if (stream) cudaStreamDestroy(stream);
  }
};

}  // namespace

Result<std::vector<double>> time_graph_replays(const std::function<Status(void* stream)>& enqueue,
                                               int calls, int warmup, int reps) {
  TimerResources r;
  MLASPEC_RETURN_IF_ERROR(
      check(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "cudaStreamCreate"));
  MLASPEC_RETURN_IF_ERROR(check(cudaEventCreate(&r.start), "cudaEventCreate"));
  MLASPEC_RETURN_IF_ERROR(check(cudaEventCreate(&r.stop), "cudaEventCreate"));
  // One eager pass first: lazy module loading and first-touch costs stay out of the capture.
  MLASPEC_RETURN_IF_ERROR(enqueue(r.stream));
  MLASPEC_RETURN_IF_ERROR(check(cudaStreamSynchronize(r.stream), "eager warm-up"));

  MLASPEC_RETURN_IF_ERROR(check(cudaStreamBeginCapture(r.stream, cudaStreamCaptureModeThreadLocal),
                                "cudaStreamBeginCapture"));
  const Status enqueued = enqueue(r.stream);
  const cudaError_t end_err = cudaStreamEndCapture(r.stream, &r.graph);
  MLASPEC_RETURN_IF_ERROR(enqueued.with_context("while capturing a CUDA graph"));
  MLASPEC_RETURN_IF_ERROR(check(end_err, "cudaStreamEndCapture"));
  MLASPEC_RETURN_IF_ERROR(check(cudaGraphInstantiate(&r.exec, r.graph, 0), "cudaGraphInstantiate"));

  for (int w = 0; w < warmup; ++w) {
    MLASPEC_RETURN_IF_ERROR(check(cudaGraphLaunch(r.exec, r.stream), "cudaGraphLaunch"));
  }
  MLASPEC_RETURN_IF_ERROR(check(cudaStreamSynchronize(r.stream), "graph warm-up"));

  std::vector<double> per_call_us;
  per_call_us.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    MLASPEC_RETURN_IF_ERROR(check(cudaEventRecord(r.start, r.stream), "cudaEventRecord"));
    MLASPEC_RETURN_IF_ERROR(check(cudaGraphLaunch(r.exec, r.stream), "cudaGraphLaunch"));
    MLASPEC_RETURN_IF_ERROR(check(cudaEventRecord(r.stop, r.stream), "cudaEventRecord"));
    MLASPEC_RETURN_IF_ERROR(check(cudaEventSynchronize(r.stop), "graph replay"));
    float ms = 0.0f;
    MLASPEC_RETURN_IF_ERROR(
        check(cudaEventElapsedTime(&ms, r.start, r.stop), "cudaEventElapsedTime"));
    per_call_us.push_back(1000.0 * ms / calls);
  }
  return per_call_us;
}

Result<std::string> cuda_device_name() {
  MLASPEC_RETURN_IF_ERROR(cuda_device_available());
  cudaDeviceProp prop{};
  MLASPEC_RETURN_IF_ERROR(check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties"));
  return std::string(prop.name);
}

}  // namespace mlaspec::bench
