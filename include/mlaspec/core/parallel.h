// A small parallel-for over an index range on a persistent pool of std::threads.
#pragma once

#include <cstdint>
#include <functional>

namespace mlaspec {

// Number of worker threads used by parallel_for (hardware concurrency unless MLASPEC_THREADS is
// set in the environment or set_num_threads was called).
int num_threads();
void set_num_threads(int n);

// Calls fn(i) for i in [begin, end), in chunks handed out to the calling thread and the pool's
// workers (created on first use, num_threads() - 1 of them, kept until exit). Blocks until all
// calls returned. The first exception thrown by fn is rethrown; the indices not started by then
// are skipped. The assignment of indices to threads never affects results as long as fn(i)
// writes only its own outputs. Runs inline (in order, on the calling thread) when one index or
// one thread is asked for, when called from inside fn (nested), and when another thread's call
// holds the pool at the moment: concurrent callers are safe and never wait for each other.
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn);

// The call's work below which waking the pool costs more than it saves (~2M multiply-adds, tens
// of microseconds on one core; a wake and join is several microseconds, more on a loaded machine).
inline constexpr int64_t kMinParallelWork = int64_t{1} << 21;

// parallel_for, run inline when `work` (the whole call's, in multiply-adds or element operations)
// is below kMinParallelWork: a forward's many per-row loops over a few rows (norms, RoPE,
// activations) then stay on the calling thread instead of paying a pool wake each.
void parallel_for(int64_t begin, int64_t end, int64_t work, const std::function<void(int64_t)>& fn);

}  // namespace mlaspec
