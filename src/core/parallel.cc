#include "mlaspec/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mlaspec {
namespace {

int default_threads() {
  if (const char* env = std::getenv("MLASPEC_THREADS")) {
    const int n = std::atoi(env);
    if (n > 0) return n;
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

std::atomic<int>& thread_count() {
  static std::atomic<int> n{default_threads()};
  return n;
}

}  // namespace

int num_threads() {
  return thread_count().load();
}
void set_num_threads(int n) {
  thread_count().store(std::max(1, n));
}

// Threads are spawned per call: the reference and tests call this a few times per op, where
// spawn cost (~20 us) is noise next to the work, and it keeps the code free of pool lifetime
// issues.
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int workers = static_cast<int>(std::min<int64_t>(num_threads(), n));
  if (workers == 1) {
    for (int64_t i = begin; i < end; ++i) fn(i);
    return;
  }
  // Dynamic chunks balance uneven work (ragged sequence lengths).
  const int64_t chunk = std::max<int64_t>(1, n / (int64_t{workers} * 8));
  std::atomic<int64_t> next{begin};
  std::exception_ptr error;
  std::mutex error_mu;
  auto worker = [&] {
    for (;;) {
      const int64_t start = next.fetch_add(chunk);
      if (start >= end) return;
      const int64_t stop = std::min(end, start + chunk);
      try {
        for (int64_t i = start; i < stop; ++i) fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next.store(end);
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int t = 1; t < workers; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace mlaspec
