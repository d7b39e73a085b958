// PhaseTimer (runtime_impl.h): per-phase GPU and host times of the CUDA runtime's forward, on when
// MLASPEC_PHASES=1. `mlaspec bench-model` runs print the totals at exit (docs/perf/knowledge.md
// reads them to say where a step's time goes).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime_impl.h"

namespace mlaspec::model::gpu {
namespace {

double host_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

PhaseTimer::PhaseTimer() {
  const char* env = std::getenv("MLASPEC_PHASES");
  on_ = env != nullptr && std::strcmp(env, "0") != 0 && env[0] != '\0';
}

PhaseTimer::~PhaseTimer() {
  for (const Mark& m : pending_) {
    cudaEventDestroy(m.a);
    cudaEventDestroy(m.b);
  }
  for (cudaEvent_t e : free_) cudaEventDestroy(e);
}

cudaEvent_t PhaseTimer::event() {
  if (!free_.empty()) {
    cudaEvent_t e = free_.back();
    free_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  if (cudaEventCreate(&e) != cudaSuccess) return nullptr;
  return e;
}

void PhaseTimer::begin(const char* name) {
  if (open_ != nullptr) end();  // phases do not nest: a new one closes the open one
  open_ = name;
  open_event_ = event();
  open_host_ = host_ms();
  if (open_event_ != nullptr) cudaEventRecord(open_event_, stream_);
}

void PhaseTimer::end() {
  if (open_ == nullptr) return;
  cudaEvent_t b = event();
  if (b != nullptr) cudaEventRecord(b, stream_);
  if (open_event_ != nullptr && b != nullptr) {
    pending_.push_back({open_, open_event_, b, host_ms() - open_host_});
  }
  open_ = nullptr;
}

void PhaseTimer::resolve() {
  for (const Mark& m : pending_) {
    float ms = 0;
    if (cudaEventElapsedTime(&ms, m.a, m.b) != cudaSuccess) ms = 0;
    Total* t = nullptr;
    for (auto& [name, total] : totals_) {
      if (name == m.name) t = &total;
    }
    if (t == nullptr) t = &totals_.emplace_back(m.name, Total{}).second;
    t->gpu_ms += ms;
    t->host_ms += m.host_ms;
    ++t->calls;
    free_.push_back(m.a);
    free_.push_back(m.b);
  }
  pending_.clear();
}

std::string PhaseTimer::report() const {
  double gpu = 0;
  for (const auto& [name, t] : totals_) gpu += t.gpu_ms;
  std::string out =
      "cuda runtime phases (MLASPEC_PHASES): phase | GPU ms | host ms | calls | % of GPU\n";
  char line[160];
  for (const auto& [name, t] : totals_) {
    std::snprintf(line, sizeof(line), "  %-16s | %10.3f | %10.3f | %8lld | %5.1f%%\n", name.c_str(),
                  t.gpu_ms, t.host_ms, static_cast<long long>(t.calls),
                  gpu > 0 ? 100.0 * t.gpu_ms / gpu : 0.0);
    out += line;
  }
  return out;
}

Runtime::~Runtime() {
  if (phases_.on()) std::fputs(phases_.report().c_str(), stderr);
  graphs_.clear();
  if (blas_ != nullptr) cublasDestroy(blas_);
  if (blas_side_ != nullptr) cublasDestroy(blas_side_);
  if (uploaded_ != nullptr) cudaEventDestroy(uploaded_);
  if (fork_ != nullptr) cudaEventDestroy(fork_);
  if (join_ != nullptr) cudaEventDestroy(join_);
  if (side_ != nullptr) cudaStreamDestroy(side_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Runtime::Graphs::~Graphs() {
  for (cudaGraphExec_t e : exec) {
    if (e != nullptr) cudaGraphExecDestroy(e);
  }
}

}  // namespace mlaspec::model::gpu
