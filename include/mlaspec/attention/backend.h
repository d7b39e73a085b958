// Attention backends: what each can serve (capabilities), the guard, and the common interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "mlaspec/attention/verify.h"
#include "mlaspec/core/status.h"

namespace mlaspec::attn {

constexpr uint32_t dtype_bit(DType t) {
  return 1u << static_cast<uint32_t>(t);
}

// Compile-time description of what a backend can serve. Each backend's caps are a constexpr
// built from its kernel's traits (the single source of truth), never a separate table.
struct BackendCaps {
  std::string_view name;
  Device device = Device::kCPU;
  int min_q_len = 1, max_q_len = 1;
  int min_heads = 1, max_heads = 1;
  int max_batch = 1;
  int64_t max_seq_len = 0;
  uint32_t kv_dtypes = 0;       // OR of dtype_bit()
  uint64_t page_size_mask = 0;  // bit k set: page_size 2^k allowed; 0 = any page size >= 1
  bool deterministic = false;   // honours VerifyOptions::deterministic
  bool fp8_math = false;        // honours VerifyOptions::fp8_math (fp8 tensor-core math)
  bool split_kv = false;        // honours VerifyOptions::num_splits
  bool ragged = false;          // serves ragged batches (VerifyArgs::q_indptr)
};

// The guard: OK if `caps` can serve `shape`, else kUnsupported with a reason a user can act on
// ("q_len 40 exceeds cuda_fold's max 32").
Status can_serve(const BackendCaps& caps, const VerifyShape& shape);

// Human-readable one-line summary of caps ("q_len 1..32, H 8..128, kv bf16|fp8_e4m3, ...").
std::string describe_caps(const BackendCaps& caps);

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const BackendCaps& caps() const = 0;
  std::string_view name() const { return caps().name; }

  // Validates (contract + guard) and computes. On error writes nothing to out/lse.
  virtual Status run(const VerifyArgs& args, const VerifyOptions& options) = 0;

  // Makes run() for shapes up to `max_shape` allocation-free (workspace, plans), so it can be
  // captured in a CUDA graph. Default: nothing to prepare.
  virtual Status prepare(const VerifyShape& max_shape) {
    (void)max_shape;
    return Status::Ok();
  }

  // CUDA graphs: a graph captured from run(args, options) may be replayed for another call
  // exactly when the two calls' keys are equal: the same kernels, launch shapes and parameter
  // bytes (device pointers included; the device data they point to may differ). Checks what
  // run() checks, launches nothing. Empty: run() of this call must not be replayed (the default,
  // for backends that do not support it; the CUDA backends when run() would first grow their
  // split workspace, or for a ragged call). Keys of one backend instance compare with each other
  // only.
  virtual Result<std::string> replay_key(const VerifyArgs& args, const VerifyOptions& options) {
    (void)args;
    (void)options;
    return std::string();
  }
};

// The CPU reference backend: multi-threaded, fp32 accumulation, written for clarity.
std::unique_ptr<Backend> make_cpu_reference_backend();

// CUDA backends (cuda_fold, cuda_rowwise). Without CUDA support in the build these return an
// error saying so.
Result<std::unique_ptr<Backend>> make_cuda_fold_backend();
Result<std::unique_ptr<Backend>> make_cuda_rowwise_backend();

}  // namespace mlaspec::attn
