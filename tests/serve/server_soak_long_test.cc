// A bounded soak of the HTTP server (label long): rounds of mixed traffic on the shipped pair
// (streams, streams whose client leaves, non-streaming requests, bad requests) over loopback;
// after a warm-up round the process's open files and resident memory must not grow, and the pool
// must be empty between rounds. MLASPEC_SOAK_ROUNDS sets the rounds (default 20: a few minutes
// on two busy cores).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mlaspec/serve/server.h"

#if MLASPEC_SERVE_HTTP
#include <httplib.h>
#endif

namespace mlaspec::serve {
namespace {

#if MLASPEC_SERVE_HTTP

using json = nlohmann::json;

int open_files() {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

int64_t resident_bytes() {
  std::ifstream in("/proc/self/statm");
  int64_t size = 0, resident = 0;
  in >> size >> resident;
  return resident * 4096;
}

// One request; `leave_after` > 0: a stream whose client closes after that many bytes.
int request(int port, const json& body, size_t leave_after = 0) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_read_timeout(60, 0);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  size_t got = 0;
  req.content_receiver = [&](const char*, size_t n, uint64_t, uint64_t) {
    got += n;
    return leave_after == 0 || got < leave_after;
  };
  httplib::Result res = cli.send(req);
  return res ? res->status : 0;
}

TEST(ServeSoak, NoGrowthInOpenFilesOrMemory) {
  const std::string models = std::string(MLASPEC_TEST_DATA_DIR) + "/../../models";
  ServeOptions o;
  o.model_dir = models + "/target";
  o.draft = "dflash";
  o.draft_model_dir = models + "/drafter";
  o.port = 0;
  o.scheduler.max_running = 8;
  auto server = Server::create(o);
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  (*server)->start();
  const int port = (*server)->port();
  const char* env = std::getenv("MLASPEC_SOAK_ROUNDS");
  const int rounds = env ? std::max(2, std::atoi(env)) : 20;
  const std::string prompt =
      "<|bos|><|user|>Quinn is 14 years old. Quinn's cousin is 5 times as old. "
      "How old is the cousin?<|assistant|>";
  int files0 = 0;
  int64_t rss0 = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::thread> clients;
    std::vector<int> status(16, 0);
    for (int i = 0; i < 16; ++i) {
      clients.emplace_back([&, i] {
        const int kind = i % 4;
        json body = {{"prompt", prompt}, {"max_tokens", 12}};
        if (kind == 0) body["stream"] = true;
        if (kind == 1) {
          body["stream"] = true;
          body["max_tokens"] = 200;
          body["ignore_eos"] = true;
        }
        if (kind == 3) body["max_tokens"] = -5;
        status[i] = request(port, body, kind == 1 ? 1 : 0);
      });
    }
    for (std::thread& t : clients) t.join();
    for (int i = 0; i < 16; ++i) {
      if (i % 4 == 0 || i % 4 == 2) {
        EXPECT_EQ(status[i], 200) << "round " << r << " client " << i;
      }
      if (i % 4 == 3) {
        EXPECT_EQ(status[i], 400) << "round " << r << " client " << i;
      }
    }
    // Cancelled streams are freed within a step or two.
    for (int k = 0; k < 400 && (*server)->metrics().gauges().kv_pages_used != 0; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ((*server)->metrics().gauges().kv_pages_used, 0) << "round " << r;
    if (r == 0) {
      files0 = open_files();
      rss0 = resident_bytes();
    }
  }
  const int files = open_files();
  const int64_t rss = resident_bytes();
  std::printf("soak: %d rounds; open files %d -> %d; resident %.1f -> %.1f MiB\n", rounds, files0,
              files, rss0 / 1048576.0, rss / 1048576.0);
  EXPECT_LE(files, files0 + 2);
  // Allocator caches may settle a little after the warm-up; a leak per request would not.
  EXPECT_LT(rss - rss0, int64_t{32} << 20);
  (*server)->stop();
}

#else

TEST(ServeSoak, NotBuilt) {
  GTEST_SKIP() << "built without cpp-httplib (libcpp-httplib-dev)";
}

#endif

}  // namespace
}  // namespace mlaspec::serve
