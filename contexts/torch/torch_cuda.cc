#include "contexts/torch/torch_cuda.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#if RAL_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace ral::torch_host {

bool torchHasCuda() { return at::detail::getCUDAHooks().hasCUDA(); }

StatusOr<int> currentCudaDevice() {
  if (!torchHasCuda()) return unavailable("torch has no CUDA device (or was built without CUDA)");
  return static_cast<int>(
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getDevice().index());
}

StatusOr<void*> currentCudaStream(c10::Device device) {
  if (!torchHasCuda()) return unavailable("torch has no CUDA device (or was built without CUDA)");
#if RAL_TORCH_CUDA
  return static_cast<void*>(c10::cuda::getCurrentCUDAStream(device.index()).stream());
#else
  return unavailable(
      "ral_torch was built without the CUDA toolkit, so it cannot run on torch's "
      "current stream of ",
      device.str(), "; rebuild it where the CUDA toolkit is installed");
#endif
}

}  // namespace ral::torch_host
