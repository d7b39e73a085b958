// The attention backend registry and the dispatcher (docs/architecture.md, docs/dispatch.md).
//
// The registry lists every backend with its capabilities (constexpr caps built from the kernel's
// own traits: nothing here restates a limit) and a factory. Backends are created lazily; a backend
// whose factory fails, or whose prepare() fails for the smallest shape it serves (built without
// CUDA, no CUDA device, not a Hopper GPU), is *unavailable* with that reason. Listing capabilities
// never instantiates anything.
//
// The dispatcher turns a batch shape into a decision on the host:
//   - policy "auto": the cheapest backend by the cost model among those that are available, run on
//     the data's device and pass the guard. If none can serve, an error lists every reason. A
//     CUDA shape no CUDA backend can serve is an error, never a silent trip to the CPU.
//   - policy "<name>": that backend, or an error carrying the guard's reason.
// Every run is counted per backend (calls, rows, KV bytes) and the first decision per shape
// bucket (B, q_len, H, KV dtype, page, deterministic, log2 S) is logged.
//
// With CUDA graphs: capture one graph per (backend, batch bucket); per batch call select() on the
// host, replay the graph of decision.backend_index, and record_call() it for the counters.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/cost_model.h"
#include "mlaspec/core/status.h"

namespace mlaspec::attn {

struct BackendEntry {
  BackendCaps caps;  // from the kernel's traits
  KvReadPattern kv_reads = KvReadPattern::kOncePerRequest;
  std::function<Result<std::unique_ptr<Backend>>()> factory;
  // Which of the backend's kernels serves a shape, for explanations (the CUDA backends have two);
  // empty: the backend has one.
  std::function<std::string(const VerifyShape&)> kernel = {};
};

class BackendRegistry {
 public:
  BackendRegistry() = default;
  BackendRegistry(const BackendRegistry&) = delete;
  BackendRegistry& operator=(const BackendRegistry&) = delete;

  // cpu_reference, cuda_fold, cuda_rowwise (in that order).
  static std::unique_ptr<BackendRegistry> with_builtin_backends();

  // Adds a backend; kInvalidArgument if the name is empty or taken, or caps are inconsistent.
  Status add(BackendEntry entry);

  int size() const { return static_cast<int>(slots_.size()); }
  const BackendEntry& entry(int index) const { return slots_.at(index)->entry; }
  const BackendCaps& caps(int index) const { return entry(index).caps; }
  // Index of `name`, or kNotFound listing the known names.
  Result<int> index_of(std::string_view name) const;
  std::vector<std::string> names() const;

  // OK if the backend can be created and prepared here, else the reason (kUnsupported:
  // "cuda_fold is unavailable: mlaspec was built without CUDA ..."). Creates (and keeps) the
  // instance on the first call; later calls return the cached answer.
  Status availability(int index);
  // The registry's instance (created on first use), or the reason it is unavailable.
  Result<Backend*> get(int index);
  Result<Backend*> get(std::string_view name);
  // A fresh instance owned by the caller (e.g. one per stream or per captured graph).
  Result<std::unique_ptr<Backend>> create(std::string_view name) const;

 private:
  struct Slot {
    BackendEntry entry;
    std::once_flag once;
    std::unique_ptr<Backend> instance;
    Status status;  // of the first creation
  };
  Result<std::unique_ptr<Backend>> create_entry(const BackendEntry& e) const;
  std::vector<std::unique_ptr<Slot>> slots_;
};

// "auto" or a backend name.
struct DispatchPolicy {
  std::string forced;  // "" = auto
  bool is_auto() const { return forced.empty(); }
  std::string to_string() const { return is_auto() ? "auto" : forced; }
  static DispatchPolicy parse(std::string_view text);  // "auto" | "" -> auto, else a name
};

struct BackendVerdict {
  int index = -1;
  std::string_view name;
  // OK = can serve this shape here; else why not: unavailable on this machine, wrong device for
  // the data, or the guard's reason.
  Status status;
  // The device and the guard accept the shape (true even when the backend is unavailable here).
  bool capable = false;
  std::optional<double> est_us;  // nullopt: no cost model entry for this backend and dtype
  std::string est_derived;       // how est_us was derived, if not from an entry of the shape's
                                 // dtype (CostEstimate::derived; fp8_tile before calibration)
  std::string kernel;            // the kernel that would serve the shape (BackendEntry::kernel)
};

struct Decision {
  int backend_index = -1;
  std::string_view backend;              // the pick
  std::optional<double> est_us;          // its estimate
  std::string est_derived;               // how, if derived (BackendVerdict::est_derived)
  bool forced = false;                   // policy named the backend
  std::string reason;                    // one line: why this backend
  std::vector<BackendVerdict> verdicts;  // one per registered backend, registry order
  std::optional<Device> data_device;     // the device decided for (nullopt: forced, not given)
  // Multi-line table: backend, verdict, estimate (marked * when derived, with a note per such
  // backend below the table), the pick.
  std::string explain() const;
};

struct SelectOptions {
  // Device holding the call's tensors. nullopt: CUDA when a CUDA backend is available here, else
  // the CPU (auto then says once that it uses the CPU reference).
  std::optional<Device> data_device;
  // For `inspect --explain` on a machine without the GPU: decide as if every backend were
  // available (verdicts still name the unavailability; candidates are the `capable` ones).
  bool assume_available = false;
  // Do not log the first decision of this shape's bucket (`inspect --explain` prints it anyway).
  bool quiet = false;
};

struct BackendCounters {
  uint64_t calls = 0;
  uint64_t rows = 0;      // q_len * H * B per call
  uint64_t kv_bytes = 0;  // bytes the backend reads from the KV cache (its read pattern)
};

class Dispatcher {
 public:
  Dispatcher(BackendRegistry& registry, CostModel model, DispatchPolicy policy = {});

  BackendRegistry& registry() { return registry_; }
  const CostModel& cost_model() const { return model_; }
  const DispatchPolicy& policy() const { return policy_; }

  // Checks that a forced backend exists (kNotFound with the known names otherwise).
  Status validate_policy() const;
  // Changes the policy for the calls from now on (checked as validate_policy; on error the old
  // one stays). Not while another thread runs calls through this dispatcher. For measuring one
  // model under several policies in one load (bench-model --attention a,b).
  Status set_policy(DispatchPolicy policy);

  // Every backend's verdict and estimate for this shape, without picking (never fails;
  // backend_index stays -1). select() starts from this.
  Decision evaluate(const VerifyShape& shape, const SelectOptions& options = {});

  // Decides for one batch and logs the first decision per bucket; does not count. Errors: forced
  // backend unknown/unavailable/incapable (its reason), or no backend can serve (every reason).
  Result<Decision> select(const VerifyShape& shape, const SelectOptions& options = {});

  // select() for the call's shape and device, then runs the pick and counts it.
  Status run(const VerifyArgs& args, const VerifyOptions& options);
  // Same, also returning the decision.
  Result<Decision> run_explained(const VerifyArgs& args, const VerifyOptions& options);

  // Counts a call made outside run() (a CUDA-graph replay of backend `index`).
  void record_call(int index, const VerifyShape& shape);

  BackendCounters counters(int index) const;
  // "cuda_fold: 12 calls, 1536 rows, 1.81 GB KV; cuda_rowwise: 0 calls, ..."
  std::string counters_summary() const;
  void reset_counters();

 private:
  struct AtomicCounters {
    std::atomic<uint64_t> calls{0}, rows{0}, kv_bytes{0};
  };
  void log_first_decision(const VerifyShape& shape, const Decision& d);
  struct Availability {
    bool cuda = false;   // some CUDA backend can be created here
    std::string reason;  // else why not (the first CUDA backend's reason)
  };
  Availability cuda_availability();

  BackendRegistry& registry_;
  CostModel model_;
  DispatchPolicy policy_;
  std::vector<std::unique_ptr<AtomicCounters>> counters_;
  std::mutex log_mu_;
  std::set<std::tuple<int, int, int, int, int, int, int, int>> logged_buckets_;
  std::atomic<bool> said_cpu_{false};
};

// Everything a command or an engine needs for dispatch, set up one way: the built-in registry, the
// cost model for this machine and a dispatcher for `policy` ("auto" or a backend name).
struct DispatchSetupOptions {
  std::string policy = "auto";
  std::string profile_path;  // --profile; "" = default_profile_path() (missing/malformed: defaults)
  std::string gpu_name;      // "" = detect_gpu_name()
  bool log_warnings = true;  // log_warn() each of cost.warnings, log_debug() the notes
};
struct DispatchSetup {
  std::unique_ptr<BackendRegistry> registry;
  ResolvedCostModel cost;
  std::unique_ptr<Dispatcher> dispatcher;  // refers to *registry
};
// Errors: an unknown forced backend (kNotFound), an explicit --profile that cannot be used.
Result<DispatchSetup> make_dispatch(const DispatchSetupOptions& options = {});

}  // namespace mlaspec::attn
