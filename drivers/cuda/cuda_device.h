// CudaDevice: one CUDA device and its retained primary context (shared with the CUDA runtime, so
// RAL and a host framework see the same memory and streams), plus the EventBackend and
// MemoryBackend the driver's semaphores and allocator run on. Shared by the driver and every
// semaphore it created, so the context lives as long as any of them.
#ifndef RAL_DRIVERS_CUDA_CUDA_DEVICE_H_
#define RAL_DRIVERS_CUDA_CUDA_DEVICE_H_

#include <memory>
#include <string>

#include "drivers/cuda/cuda_library.h"
#include "drivers/cuda/event_backend.h"
#include "drivers/cuda/stream_allocator.h"
#include "ral/status.h"

namespace ral::cuda {

inline constexpr char kCudaDeviceEnv[] = "RAL_CUDA_DEVICE";

class CudaDevice {
 public:
  // `ordinal` < 0: $RAL_CUDA_DEVICE, else 0.
  static StatusOr<std::shared_ptr<CudaDevice>> open(int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const CudaLibrary& lib() const { return *lib_; }
  const CudaSymbols& cu() const { return lib_->symbols(); }
  CUcontext context() const { return context_; }
  int ordinal() const { return ordinal_; }
  const std::string& name() const { return name_; }
  int computeCapability() const { return cc_major_ * 10 + cc_minor_; }
  // Makes the primary context current on the calling thread (a no-op when it already is).
  Status makeCurrent() const {
    CUcontext current = nullptr;
    if (cu().cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == context_) return Status();
    return RAL_CUDA_CALL(*lib_, cuCtxSetCurrent, context_);
  }

 private:
  CudaDevice() = default;
  const CudaLibrary* lib_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int ordinal_ = 0;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  std::string name_;
};

class CudaEventBackend final : public EventBackend {
 public:
  explicit CudaEventBackend(std::shared_ptr<CudaDevice> device) : device_(std::move(device)) {}
  StatusOr<BackendEvent> createEvent() override;
  void destroyEvent(BackendEvent event) override;
  Status recordEvent(BackendEvent event, BackendStream stream) override;
  StatusOr<bool> queryEvent(BackendEvent event) override;
  Status synchronizeEvent(BackendEvent event) override;
  Status streamWaitEvent(BackendStream stream, BackendEvent event) override;
  Status launchHostFunc(BackendStream stream, HostFn fn, void* user) override;

 private:
  const std::shared_ptr<CudaDevice> device_;
};

class CudaMemoryBackend final : public MemoryBackend {
 public:
  explicit CudaMemoryBackend(std::shared_ptr<CudaDevice> device) : device_(std::move(device)) {}
  StatusOr<void*> allocate(size_t bytes, MemoryKind kind) override;
  void free(void* ptr, MemoryKind kind) override;
  Status synchronizeDevice() override;

 private:
  const std::shared_ptr<CudaDevice> device_;
};

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_CUDA_DEVICE_H_
