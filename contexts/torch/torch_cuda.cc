#include "contexts/torch/torch_cuda.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <map>
#include <memory>
#include <mutex>
#include <utility>

#if RAL_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

namespace ral::torch_host {
namespace {

// The Context's wrappers of torch's streams, by (device index, cudaStream_t).
class WrappedStreams {
 public:
  StatusOr<Stream*> get(Driver& driver, int device, void* native) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = streams_.find({device, native});
    if (it != streams_.end()) return it->second.get();
    RAL_ASSIGN_OR_RETURN(std::unique_ptr<Stream> wrapped, driver.wrapNativeStream(native));
    Stream* stream = wrapped.get();
    streams_.emplace(std::make_pair(device, native), std::move(wrapped));
    return stream;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int, void*>, std::unique_ptr<Stream>> streams_;
};

}  // namespace

bool torchHasCuda() { return at::detail::getCUDAHooks().hasCUDA(); }

StatusOr<int> currentCudaDevice() {
  if (!torchHasCuda()) return unavailable("torch has no CUDA device (or was built without CUDA)");
  return static_cast<int>(
      c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA)->getDevice().index());
}

StatusOr<void*> currentNativeCudaStream(c10::Device device) {
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

StatusOr<Stream*> currentCudaStream(Context& context, c10::Device device) {
  RAL_ASSIGN_OR_RETURN(void* native, currentNativeCudaStream(device));
  RAL_ASSIGN_OR_RETURN(Driver * driver, context.driver(DeviceKind::kCuda));
  static const char kKey = 0;
  RAL_ASSIGN_OR_RETURN(
      WrappedStreams * streams,
      context.getOrCreate<WrappedStreams>(&kKey, []() -> StatusOr<std::unique_ptr<WrappedStreams>> {
        return std::make_unique<WrappedStreams>();
      }));
  return streams->get(*driver, device.index(), native);
}

}  // namespace ral::torch_host
