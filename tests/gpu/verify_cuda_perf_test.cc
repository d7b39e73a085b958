// Perf mode of the verify driver: PERF.md's standard configurations on cuda_fold and cuda_rowwise,
// timed with CUDA events around graph replays (each replay = kCallsPerGraph back-to-back calls,
// median of 30 replays after warm-up), rotating between input sets so L2 does not flatter small
// configs. Prints floor, time, % of floor, and the ratio to FlashMLA's published number.
// Runs only with MLASPEC_VERIFY_PERF=1 (it is a measurement, not a test); correctness of the same
// kernels is the sweep's job. MLASPEC_VERIFY_PERF_ROWS="0,1,8" picks configurations.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/perf_fill.h"
#include "mlaspec/attention/backend.h"
#include "mlaspec/core/tensor.h"

namespace mlaspec::attn {
namespace {

struct PerfConfig {
  int id, batch, heads, q_len;
  int64_t seq;
  double flashmla_us;  // PERF.md, bf16; 0 = none
};

const std::vector<PerfConfig>& standard_configs() {
  static const std::vector<PerfConfig> c = {
      {0, 1, 16, 1, 131072, 69.9},  {1, 1, 16, 8, 131072, 82.6},    {2, 1, 16, 8, 1048576, 519.2},
      {3, 1, 16, 4, 131072, 75.6},  {4, 8, 16, 8, 65536, 253.0},    {5, 16, 16, 8, 32768, 254.3},
      {6, 64, 16, 1, 8192, 153.2},  {7, 1, 128, 1, 131072, 82.9},   {8, 1, 128, 8, 131072, 466.6},
      {9, 16, 128, 8, 8192, 455.3}, {10, 128, 128, 1, 4096, 259.8}, {11, 132, 16, 8, 16384, 1053.5},
      {12, 1, 16, 8, 4096, 21.7},   {13, 1, 16, 8, 16384, 38.5},    {14, 1, 16, 16, 131072, 128.7},
  };
  return c;
}

#define CUDA_OK(expr)                                                      \
  do {                                                                     \
    const cudaError_t e_ = (expr);                                         \
    ASSERT_EQ(e_, cudaSuccess) << #expr << ": " << cudaGetErrorString(e_); \
  } while (0)

struct InputSet {
  Buffer q, kv, bt, sl, out, lse;
  std::vector<int32_t> bt_host, sl_host;
};

TEST(CudaVerifyPerf, StandardConfigs) {
  const char* env = std::getenv("MLASPEC_VERIFY_PERF");
  if (env == nullptr || std::string(env) != "1") GTEST_SKIP() << "set MLASPEC_VERIFY_PERF=1";
  std::vector<int> pick;
  if (const char* rows = std::getenv("MLASPEC_VERIFY_PERF_ROWS")) {
    std::stringstream ss(rows);
    std::string tok;
    while (std::getline(ss, tok, ',')) pick.push_back(std::stoi(tok));
  }
  constexpr int kPage = 64, kCallsPerGraph = 10, kReplays = 30;
  const double kBw = 4.21e12, kFlops = 757e12;
  std::printf("%-3s %-4s %-5s %-7s %-4s %-9s %8s %8s %8s %6s %6s %8s %6s\n", "#", "B", "H", "S",
              "q", "kv", "floor", "fold", "rowwise", "%fl_f", "%fl_r", "FlashMLA", "xFMLA");
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (const PerfConfig& cfg : standard_configs()) {
    if (!pick.empty() && std::find(pick.begin(), pick.end(), cfg.id) == pick.end()) continue;
    for (DType kv : {DType::kBF16, DType::kFP8E4M3}) {
      for (bool det : {false, true}) {
        if (det && kv == DType::kFP8E4M3) continue;
        const int64_t pages_per_req = (cfg.seq + kPage - 1) / kPage;
        const int64_t pages = pages_per_req * cfg.batch;
        const int64_t kv_bytes = pages * kPage * kHeadDimQK * dtype_size(kv);
        const int sets =
            kv_bytes < 200'000'000 ? std::max<int>(2, static_cast<int>(400'000'000 / kv_bytes)) : 1;
        const int n_sets = std::min(sets, 8);
        std::vector<std::unique_ptr<InputSet>> in;
        std::mt19937 rng(cfg.id);
        for (int s = 0; s < n_sets; ++s) {
          auto x = std::make_unique<InputSet>();
          const int64_t q_elems = int64_t{cfg.batch} * cfg.q_len * cfg.heads * kHeadDimQK;
          const int64_t out_elems = int64_t{cfg.batch} * cfg.q_len * cfg.heads * kHeadDimV;
          x->q = Buffer(q_elems * 2, Device::kCUDA);
          x->kv = Buffer(kv_bytes, Device::kCUDA);
          x->out = Buffer(out_elems * 2, Device::kCUDA);
          x->lse = Buffer(int64_t{cfg.batch} * cfg.q_len * cfg.heads * 4, Device::kCUDA);
          CUDA_OK(perf::fill_random_bf16(x->q.data(), q_elems, 17 * s + 1));
          if (kv == DType::kBF16) {
            CUDA_OK(perf::fill_random_bf16(x->kv.data(), kv_bytes / 2, 17 * s + 2));
          } else {
            CUDA_OK(perf::fill_random_fp8(x->kv.data(), kv_bytes, 17 * s + 2, 0.5f));
          }
          std::vector<int32_t> perm(pages);
          std::iota(perm.begin(), perm.end(), 0);
          std::shuffle(perm.begin(), perm.end(), rng);
          x->bt_host = perm;  // [B, pages_per_req]
          x->sl_host.assign(cfg.batch, static_cast<int32_t>(cfg.seq));
          x->bt = Buffer(pages * 4, Device::kCUDA);
          x->sl = Buffer(cfg.batch * 4, Device::kCUDA);
          ASSERT_TRUE(x->bt.copy_from_host(x->bt_host.data(), pages * 4).ok());
          ASSERT_TRUE(x->sl.copy_from_host(x->sl_host.data(), cfg.batch * 4).ok());
          in.push_back(std::move(x));
        }
        CUDA_OK(cudaDeviceSynchronize());
        auto args_for = [&](InputSet& x) {
          VerifyArgs a;
          a.q = TensorView(x.q.data(), DType::kBF16, {cfg.batch, cfg.q_len, cfg.heads, kHeadDimQK},
                           Device::kCUDA);
          a.kv.pages = TensorView(x.kv.data(), kv, {pages, kPage, kHeadDimQK}, Device::kCUDA);
          a.kv.kv_scale = kv == DType::kBF16 ? 1.0f : 0.5f;
          a.block_table =
              TensorView(x.bt.data(), DType::kI32, {cfg.batch, pages_per_req}, Device::kCUDA);
          a.seq_lens = TensorView(x.sl.data(), DType::kI32, {cfg.batch}, Device::kCUDA);
          a.block_table_host =
              TensorView(x.bt_host.data(), DType::kI32, {cfg.batch, pages_per_req});
          a.seq_lens_host = TensorView(x.sl_host.data(), DType::kI32, {cfg.batch});
          a.sm_scale = 0.0416667f;
          a.out = TensorView(x.out.data(), DType::kBF16,
                             {cfg.batch, cfg.q_len, cfg.heads, kHeadDimV}, Device::kCUDA);
          a.lse = TensorView(x.lse.data(), DType::kF32, {cfg.batch, cfg.q_len, cfg.heads},
                             Device::kCUDA);
          return a;
        };
        double us[2] = {0, 0};
        for (int rw = 0; rw < 2; ++rw) {
          auto r = rw ? make_cuda_rowwise_backend() : make_cuda_fold_backend();
          ASSERT_TRUE(r.ok()) << r.status().to_string();
          std::unique_ptr<Backend> be = std::move(r.value());
          VerifyShape shape;
          shape.batch = cfg.batch;
          shape.q_len = cfg.q_len;
          shape.num_heads = cfg.heads;
          shape.page_size = kPage;
          shape.kv_dtype = kv;
          shape.max_seq_len = cfg.seq;
          shape.total_kv = cfg.seq * cfg.batch;
          shape.deterministic = det;
          ASSERT_TRUE(be->prepare(shape).ok());
          VerifyOptions o;
          o.deterministic = det;
          o.stream = stream;
          // Eager warm-up (also catches errors outside the capture).
          for (auto& x : in) {
            const Status st = be->run(args_for(*x), o);
            ASSERT_TRUE(st.ok()) << st.to_string();
          }
          CUDA_OK(cudaStreamSynchronize(stream));
          cudaGraph_t graph;
          CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
          for (int k = 0; k < kCallsPerGraph; ++k) {
            const Status st = be->run(args_for(*in[k % in.size()]), o);
            ASSERT_TRUE(st.ok()) << st.to_string();
          }
          CUDA_OK(cudaStreamEndCapture(stream, &graph));
          cudaGraphExec_t exec;
          CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
          for (int k = 0; k < 3; ++k) CUDA_OK(cudaGraphLaunch(exec, stream));
          cudaEvent_t e0, e1;
          CUDA_OK(cudaEventCreate(&e0));
          CUDA_OK(cudaEventCreate(&e1));
          std::vector<float> ms;
          for (int k = 0; k < kReplays; ++k) {
            CUDA_OK(cudaEventRecord(e0, stream));
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaEventRecord(e1, stream));
            CUDA_OK(cudaEventSynchronize(e1));
            float t = 0;
            CUDA_OK(cudaEventElapsedTime(&t, e0, e1));
            ms.push_back(t);
          }
          std::sort(ms.begin(), ms.end());
          us[rw] = ms[ms.size() / 2] * 1000.0 / kCallsPerGraph;
          cudaEventDestroy(e0);
          cudaEventDestroy(e1);
          cudaGraphExecDestroy(exec);
          cudaGraphDestroy(graph);
        }
        const double flops =
            2.0 * cfg.batch * cfg.q_len * cfg.heads * double(cfg.seq) * (576 + 512);
        const double bytes = double(cfg.batch) * cfg.seq * 576 * dtype_size(kv);
        const double floor_us = std::max(flops / kFlops, bytes / kBw) * 1e6;
        const bool fm = kv == DType::kBF16 && !det && cfg.flashmla_us > 0;
        std::printf(
            "%-3d %-4d %-5d %-7lld %-4d %-9s %8.1f %8.1f %8.1f %6.0f %6.0f %8.1f %6.2f\n", cfg.id,
            cfg.batch, cfg.heads, static_cast<long long>(cfg.seq), cfg.q_len,
            (std::string(kv == DType::kBF16 ? "bf16" : "fp8") + (det ? "-det" : "")).c_str(),
            floor_us, us[0], us[1], 100 * floor_us / us[0], 100 * floor_us / us[1],
            fm ? cfg.flashmla_us : 0.0, fm ? cfg.flashmla_us / std::min(us[0], us[1]) : 0.0);
        std::fflush(stdout);
      }
    }
  }
  cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace mlaspec::attn
