// CUDA-graph timing for the benchmark harness (compiled only with CUDA).
#pragma once

#include <functional>
#include <vector>

#include "mlaspec/core/status.h"

namespace mlaspec::bench {

// Captures `enqueue(stream)` (which issues `calls` back-to-back calls on `stream`) into a CUDA
// graph, replays it `warmup` times, then `reps` times with events around each replay. Returns
// the per-call time in microseconds of each timed replay.
Result<std::vector<double>> time_graph_replays(const std::function<Status(void* stream)>& enqueue,
                                               int calls, int warmup, int reps);

// Name of CUDA device 0 ("NVIDIA H200"), or an error when there is none.
Result<std::string> cuda_device_name();

}  // namespace mlaspec::bench
