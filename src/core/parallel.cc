#include "mlaspec/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
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

// Set while this thread runs indices of a parallel_for (as the caller or as a worker): a nested
// call then runs inline, so a worker never waits on the pool it belongs to.
thread_local bool t_inside = false;

// Set once the pool's destructor has run (static destruction at exit): later calls, from
// destructors of statics built before the pool, run inline. Trivially destructible, so it
// outlives every other static.
std::atomic<bool> g_pool_gone{false};

// One parallel_for call, on the caller's stack. Indices are handed out in chunks from `next`:
// whoever is running takes the next chunk, so a worker that wakes late (the 2-core machine is
// shared) or a chunk that costs more (ragged sequence lengths) does not leave the others waiting.
struct Job {
  int64_t end = 0;
  int64_t chunk = 1;
  const std::function<void(int64_t)>* fn = nullptr;
  std::atomic<int64_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;

  void run() {
    for (;;) {
      const int64_t start = next.fetch_add(chunk, std::memory_order_relaxed);
      if (start >= end) return;
      const int64_t stop = std::min(end, start + chunk);
      try {
        for (int64_t i = start; i < stop; ++i) (*fn)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!error) error = std::current_exception();
        next.store(end, std::memory_order_relaxed);  // the others stop at their next chunk
        return;
      }
    }
  }
};

// Workers created on first use and kept until exit, woken per call. One call at a time holds the
// pool (`call_mu_`); a second thread calling meanwhile runs its range inline instead of waiting,
// so concurrent callers never block each other and the results are the same either way.
class Pool {
 public:
  ~Pool() {
    g_pool_gone.store(true);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    for (auto& w : workers_) w->wake.notify_one();
    for (auto& w : workers_) w->thread.join();
  }

  // False when another call holds the pool; the caller then runs inline.
  bool try_run(Job& job, int helpers) {
    std::unique_lock<std::mutex> call(call_mu_, std::try_to_lock);
    if (!call.owns_lock()) return false;
    // set_num_threads may have raised the count since the last call; workers are never removed
    // (a lowered count just wakes fewer of them).
    while (static_cast<int>(workers_.size()) < helpers) {
      auto w = std::make_unique<Worker>();
      const int id = static_cast<int>(workers_.size());
      w->thread = std::thread([this, id, &wake = w->wake] { work(id, wake); });
      workers_.push_back(std::move(w));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &job;
      helpers_ = helpers;
      ++epoch_;
      posted_.store(epoch_, std::memory_order_release);
    }
    // Only the workers this call uses: waking idle ones (left from a larger set_num_threads)
    // would cost context switches on every call.
    for (int i = 0; i < helpers; ++i) workers_[static_cast<size_t>(i)]->wake.notify_one();
    job.run();
    // Close the job before waiting: a worker that wakes after this skips it, so `job` (on the
    // caller's stack) is only touched by workers counted in active_.
    std::unique_lock<std::mutex> lock(mu_);
    job_ = nullptr;
    done_.wait(lock, [this] { return active_ == 0; });
    return true;
  }

 private:
  struct Worker {
    std::thread thread;
    std::condition_variable wake;
  };

  void work(int id, std::condition_variable& wake) {
    t_inside = true;
    uint64_t seen = 0;  // the last epoch this worker took part in
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!stop_ && epoch_ == seen) {
        lock.unlock();
        spin_for_next(seen);
        lock.lock();
      }
      wake.wait(lock,
                [&] { return stop_ || (job_ != nullptr && epoch_ != seen && id < helpers_); });
      if (stop_) return;
      seen = epoch_;
      Job* job = job_;
      ++active_;
      lock.unlock();
      job->run();
      lock.lock();
      if (--active_ == 0) done_.notify_one();
    }
  }

  // A forward calls parallel_for hundreds of times, back to back between short serial pieces:
  // a worker that spins a little after its job usually catches the next one without the futex
  // sleep and wake (~10-30 us on the loaded 2-core machine, as much as a small GEMM). Bounded,
  // so an idle pool sleeps and leaves the cores to others.
  void spin_for_next(uint64_t seen) const {
    constexpr auto kSpin = std::chrono::microseconds(50);
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 1;; ++i) {
      if (posted_.load(std::memory_order_relaxed) != seen) return;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return;
    }
  }

  std::mutex call_mu_;  // held by the one call using the workers
  std::mutex mu_;       // guards everything below
  std::condition_variable done_;
  uint64_t epoch_ = 0;  // bumped per call; a worker runs each epoch's job at most once
  Job* job_ = nullptr;  // the open job, null once its caller has finished its own share
  int helpers_ = 0;     // workers [0, helpers_) take part in the open job
  int active_ = 0;      // workers inside a job
  bool stop_ = false;
  std::atomic<uint64_t> posted_{0};               // epoch_, readable without mu_ for the spin
  std::vector<std::unique_ptr<Worker>> workers_;  // only the call_mu_ holder and ~Pool touch it
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int num_threads() {
  return thread_count().load();
}
void set_num_threads(int n) {
  thread_count().store(std::max(1, n));
}

void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn) {
  const int64_t n = end - begin;
  if (n <= 0) return;
  const int threads = static_cast<int>(std::min<int64_t>(num_threads(), n));
  if (threads == 1 || t_inside || g_pool_gone.load()) {
    for (int64_t i = begin; i < end; ++i) fn(i);
    return;
  }
  Job job;
  job.end = end;
  // ~8 chunks per thread: enough to even out uneven indices, few enough that handing them out
  // costs nothing next to the work.
  job.chunk = std::max<int64_t>(1, n / (int64_t{threads} * 8));
  job.fn = &fn;
  job.next.store(begin, std::memory_order_relaxed);
  t_inside = true;
  bool pooled = false;
  try {
    pooled = pool().try_run(job, threads - 1);
  } catch (...) {
    t_inside = false;  // std::thread creation failed; nothing ran
    throw;
  }
  if (!pooled) job.run();
  t_inside = false;
  if (job.error) std::rethrow_exception(job.error);
}

void parallel_for(int64_t begin, int64_t end, int64_t work,
                  const std::function<void(int64_t)>& fn) {
  if (work < kMinParallelWork) {
    for (int64_t i = begin; i < end; ++i) fn(i);
    return;
  }
  parallel_for(begin, end, fn);
}

}  // namespace mlaspec
