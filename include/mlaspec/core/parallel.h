// A small parallel-for over an index range on a pool of std::threads.
#pragma once

#include <cstdint>
#include <functional>

namespace mlaspec {

// Number of worker threads used by parallel_for (hardware concurrency unless MLASPEC_THREADS is
// set in the environment or set_num_threads was called).
int num_threads();
void set_num_threads(int n);

// Calls fn(i) for i in [begin, end), split in contiguous chunks over the workers. Blocks until all
// calls returned. The first exception thrown by fn is rethrown. The assignment of indices to
// threads never affects results as long as fn(i) writes only its own outputs.
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn);

}  // namespace mlaspec
