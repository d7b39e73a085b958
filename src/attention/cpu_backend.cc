#include "mlaspec/attention/backend.h"
#include "mlaspec/attention/cpu_caps.h"
#include "mlaspec/attention/reference.h"

namespace mlaspec::attn {
namespace {

class CpuReferenceBackend final : public Backend {
 public:
  const BackendCaps& caps() const override { return kCpuReferenceCaps; }

  Status run(const VerifyArgs& args, const VerifyOptions& options) override {
    MLASPEC_RETURN_IF_ERROR(validate_verify_args(args, Device::kCPU));
    const VerifyShape shape = shape_of(args, options);
    MLASPEC_RETURN_IF_ERROR(can_serve(caps(), shape));
    if (options.num_splits != 0) {
      return unsupported("cpu_reference has no split-KV; num_splits must be 0, got " +
                         std::to_string(options.num_splits));
    }
    return options.fp8_math ? cpu_verify_fp8_math(args) : cpu_verify(args);
  }
};

}  // namespace

std::unique_ptr<Backend> make_cpu_reference_backend() {
  return std::make_unique<CpuReferenceBackend>();
}

}  // namespace mlaspec::attn
