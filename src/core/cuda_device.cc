#include "mlaspec/core/cuda_device.h"

#include <string>

#if defined(MLASPEC_WITH_CUDA)
#include <cuda_runtime.h>
#endif

namespace mlaspec {

Status cuda_device_available() {
#if defined(MLASPEC_WITH_CUDA)
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err == cudaSuccess && count > 0) return Status::Ok();
  (void)cudaGetLastError();  // clear the sticky error so later calls report their own
  if (err == cudaSuccess) return unsupported("no CUDA GPU found (cudaGetDeviceCount: 0 devices)");
  const std::string what = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err);
  // With no driver installed the runtime reports an insufficient driver; cudaDriverGetVersion
  // then gives 0, which tells "no driver" from "a driver too old for this runtime".
  int driver = 0;
  const bool no_driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0;
  if (err == cudaErrorNoDevice || (err == cudaErrorInsufficientDriver && no_driver)) {
    return unsupported("no CUDA GPU found (" + what + ")");
  }
  return unsupported(what);
#else
  return unsupported("mlaspec was built without CUDA");
#endif
}

}  // namespace mlaspec
