// The CUDA side of the torch context, kept out of torch_context.cc so that only this file needs
// torch's CUDA headers (which include the CUDA toolkit's). Built with them when torch has CUDA and
// the toolkit is found (RAL_TORCH_CUDA); otherwise every function reports that.
#ifndef RAL_CONTEXTS_TORCH_TORCH_CUDA_H_
#define RAL_CONTEXTS_TORCH_TORCH_CUDA_H_

#include <c10/core/Device.h>

#include "ral/status.h"

namespace ral::torch_host {

// Whether this process's torch has CUDA and a usable device.
bool torchHasCuda();
// torch's current CUDA stream on `device` (a cudaStream_t), for ExecutionContext::setStream.
StatusOr<void*> currentCudaStream(c10::Device device);
// The index of torch's current CUDA device.
StatusOr<int> currentCudaDevice();

}  // namespace ral::torch_host

#endif  // RAL_CONTEXTS_TORCH_TORCH_CUDA_H_
