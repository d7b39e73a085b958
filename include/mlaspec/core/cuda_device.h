// Whether this process can use a CUDA GPU, and if not, a reason a user can act on.
#pragma once

#include "mlaspec/core/status.h"

namespace mlaspec {

// OK when the build has CUDA and the runtime sees at least one GPU. Otherwise kUnsupported:
// "mlaspec was built without CUDA", or "no CUDA GPU found (cudaGetDeviceCount: ...)" when the
// machine has no GPU or no NVIDIA driver at all: the runtime then answers "CUDA driver version is
// insufficient", which would send a user looking for a driver update on a machine without a GPU.
// A driver that is present but too old keeps the runtime's own message.
Status cuda_device_available();

}  // namespace mlaspec
