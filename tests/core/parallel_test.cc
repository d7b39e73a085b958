// parallel_for on the persistent pool: coverage, nesting, concurrent callers, exceptions, and
// the per-call cost that the CPU runtime's hundreds of GEMMs per step rely on.
#include "mlaspec/core/parallel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace mlaspec {
namespace {

// Restores the thread count a test changed.
class ParallelTest : public ::testing::Test {
 protected:
  void TearDown() override { set_num_threads(saved_); }
  const int saved_ = num_threads();
};

// Every index of [begin, end) exactly once, none outside it.
void expect_each_once(int64_t begin, int64_t end) {
  const int64_t n = end - begin;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n + 2));
  parallel_for(begin, end, [&](int64_t i) {
    const int64_t slot = std::clamp<int64_t>(i - begin + 1, 0, n + 1);  // 0, n + 1: out of range
    hits[static_cast<size_t>(slot)].fetch_add(1, std::memory_order_relaxed);
  });
  EXPECT_EQ(hits[0].load(), 0) << "an index below begin, range [" << begin << ", " << end << ")";
  EXPECT_EQ(hits[static_cast<size_t>(n + 1)].load(), 0)
      << "an index at or past end, range [" << begin << ", " << end << ")";
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(hits[static_cast<size_t>(i + 1)].load(), 1)
        << "index " << begin + i << " of [" << begin << ", " << end << ") with " << num_threads()
        << " threads";
  }
}

TEST_F(ParallelTest, EveryIndexOnceForManySizesAndThreadCounts) {
  // Thread counts go up and down: the pool grows for 8 and then wakes fewer workers.
  for (int threads : {1, 2, 3, 4, 8, 2, 1}) {
    set_num_threads(threads);
    for (int64_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 1000, 10007}) {
      expect_each_once(0, n);
      expect_each_once(-5, n - 5);
      expect_each_once(1'000'003, 1'000'003 + n);
    }
  }
  set_num_threads(4);
  parallel_for(5, 3, [](int64_t) { FAIL() << "an empty range called fn"; });
}

// Whether index 1 of a two-index call started while index 0 ran: index 0 waits (bounded) for it,
// and only a second thread can start it, since the calling thread is inside fn(0).
bool ran_at_once(const std::function<void(const std::function<void(int64_t)>&)>& call) {
  std::atomic<bool> second{false};
  bool saw_second = false;
  call([&](int64_t i) {
    if (i == 1) {
      second.store(true);
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!second.load() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    saw_second = second.load();
  });
  return saw_second;
}

TEST_F(ParallelTest, TwoThreadsRunAtOnce) {
  set_num_threads(2);
  EXPECT_TRUE(ran_at_once([](const auto& fn) { parallel_for(0, 2, fn); }))
      << "the second index did not start while the first ran";
}

TEST_F(ParallelTest, SmallWorkRunsInOrderOnTheCallerLargeWorkUsesThePool) {
  // Below kMinParallelWork every index runs on the calling thread, in order; at or above it the
  // call is a plain parallel_for.
  set_num_threads(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<int64_t> order;
  bool all_on_caller = true;
  parallel_for(0, 64, kMinParallelWork - 1, [&](int64_t i) {
    order.push_back(i);  // safe only because nothing runs on another thread
    all_on_caller = all_on_caller && std::this_thread::get_id() == caller;
  });
  EXPECT_TRUE(all_on_caller);
  ASSERT_EQ(order.size(), 64u);
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);

  EXPECT_TRUE(ran_at_once([](const auto& fn) { parallel_for(0, 2, kMinParallelWork, fn); }))
      << "large work did not reach the pool";
}

TEST_F(ParallelTest, NestedCallsRunAndCoverEveryIndex) {
  set_num_threads(4);
  constexpr int64_t kOuter = 16, kInner = 100;
  std::vector<std::atomic<int>> hits(kOuter * kInner);
  parallel_for(0, kOuter, [&](int64_t o) {
    parallel_for(0, kInner, [&](int64_t i) {
      parallel_for(0, 1, [&](int64_t) { hits[static_cast<size_t>(o * kInner + i)].fetch_add(1); });
    });
  });
  for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST_F(ParallelTest, ConcurrentCallersFromFourThreads) {
  set_num_threads(3);
  constexpr int kCallers = 4, kCalls = 300;
  constexpr int64_t kN = 517;
  std::vector<std::vector<int64_t>> sums(kCallers, std::vector<int64_t>(kN, 0));
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int k = 0; k < kCalls; ++k)
        parallel_for(0, kN, [&](int64_t i) { sums[c][static_cast<size_t>(i)] += i + k; });
    });
  }
  for (auto& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(sums[c][static_cast<size_t>(i)], i * kCalls + kCalls * (kCalls - 1) / 2)
          << "caller " << c << " index " << i;
    }
  }
}

TEST_F(ParallelTest, ExceptionPropagatesAndThePoolStaysUsable) {
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    for (int64_t bad : {int64_t{0}, int64_t{57}, int64_t{999}}) {
      try {
        parallel_for(0, 1000, [&](int64_t i) {
          if (i == bad) throw std::runtime_error("index " + std::to_string(i));
        });
        ADD_FAILURE() << "no exception with " << threads << " threads, bad index " << bad;
      } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), "index " + std::to_string(bad));
      }
      expect_each_once(0, 1000);
    }
  }
  // From a nested call, through the outer one.
  set_num_threads(2);
  EXPECT_THROW(parallel_for(0, 4,
                            [](int64_t) {
                              parallel_for(0, 4, [](int64_t j) {
                                if (j == 3) throw std::runtime_error("inner");
                              });
                            }),
               std::runtime_error);
}

TEST_F(ParallelTest, ManyTinyCallsAreCheap) {
  // The CPU runtime calls parallel_for hundreds of times per decode step. Starting threads per
  // call cost 20-80 us on the 2-core machine (2-8 s here); the pool wakes its workers instead.
  // The bound leaves room for a loaded machine and sanitizer builds.
  set_num_threads(2);
  constexpr int kCalls = 100'000;
  std::atomic<int64_t> total{0};
  const auto t0 = std::chrono::steady_clock::now();
  for (int c = 0; c < kCalls; ++c)
    parallel_for(0, 2, [&](int64_t i) { total.fetch_add(i + 1, std::memory_order_relaxed); });
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(total.load(), int64_t{3} * kCalls);
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "no time bound under ThreadSanitizer (each synchronisation costs ~20 us)";
#endif
  EXPECT_LT(s, 2.0) << kCalls << " calls took " << s << " s (" << 1e6 * s / kCalls << " us each)";
}

}  // namespace
}  // namespace mlaspec
