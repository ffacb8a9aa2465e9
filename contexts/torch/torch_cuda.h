// The CUDA side of the torch context, kept out of torch_context.cc so that only this file needs
// torch's CUDA headers (which include the CUDA toolkit's). Built with them when torch has CUDA and
// the toolkit is found (RAL_TORCH_CUDA); otherwise every function reports that.
#ifndef RAL_CONTEXTS_TORCH_TORCH_CUDA_H_
#define RAL_CONTEXTS_TORCH_TORCH_CUDA_H_

#include <c10/core/Device.h>

#include "ral/context.h"
#include "ral/driver.h"
#include "ral/status.h"

namespace ral::torch_host {

// Whether this process's torch has CUDA and a usable device.
bool torchHasCuda();
// torch's current CUDA stream on `device` (a cudaStream_t).
StatusOr<void*> currentNativeCudaStream(c10::Device device);
// torch's current CUDA stream on `device` as a Stream of `context`'s CUDA driver, for
// ExecutionContext::setStream. The wrapper (Driver::wrapNativeStream, which never destroys torch's
// stream) is made once per (device, native stream) and kept by `context` until it is destroyed,
// so later calls only look it up. Thread-safe.
StatusOr<Stream*> currentCudaStream(Context& context, c10::Device device);
// The index of torch's current CUDA device.
StatusOr<int> currentCudaDevice();

}  // namespace ral::torch_host

#endif  // RAL_CONTEXTS_TORCH_TORCH_CUDA_H_
