// CudaDriver: the Driver for NVIDIA GPUs, over the CUDA driver API loaded at run
// time (cuda_library.h); this header uses no CUDA type, so kernels and hosts include it freely.
//  - device: $RAL_CUDA_DEVICE (default 0) and its primary context;
//  - memory: StreamOrderedAllocator (size buckets, stream-ordered reuse); copies and fills are
//    asynchronous on the given stream;
//  - executables: PTX, CUBIN and fatbin modules, loaded once per driver (one driver per Context
//    and device) and cached by name with their functions; launch is cuLaunchKernel;
//  - streams: non-blocking CUDA streams; nullptr means the driver's own default stream (never
//    CUDA's legacy stream, which would serialize with everything);
//  - semaphores: TimelineSemaphore with PendingQueueActions;
//  - kernels reach the CUDA specifics through CudaQueueService (ral/driver_services.h).
// Creation is lazy (on a Context's first use of "cuda") and fails with Unavailable, naming what
// was looked for, when libcuda.so.1 or a device is missing.
#ifndef RAL_DRIVERS_CUDA_CUDA_DRIVER_H_
#define RAL_DRIVERS_CUDA_CUDA_DRIVER_H_

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ral/device_uri.h"
#include "ral/driver.h"
#include "ral/driver_services.h"
#include "ral/status.h"

namespace ral::cuda {

class CudaDevice;
class CudaExecutable;
class CudaStream;
class KernelTimes;
class PendingQueueActions;
class StreamOrderedAllocator;
class CudaMemoryBackend;
struct SyncResources;

struct CudaDriverOptions {
  int device = -1;  // < 0: $RAL_CUDA_DEVICE, else 0
};

class CudaDriver : public Driver, public CudaQueueService {
 public:
  static constexpr DeviceKind kDeviceKind = DeviceKind::kCuda;

  static StatusOr<std::unique_ptr<CudaDriver>> create(CudaDriverOptions options = {});
  ~CudaDriver() override;

  DeviceKind kind() const override { return DeviceKind::kCuda; }
  std::string deviceName() const override;
  // cudaTargetRank (cuda_target.h) for this device's compute capability.
  int targetRank(ExecutableFormat format, std::string_view target) const override;

  StatusOr<void*> allocate(size_t bytes, size_t alignment = 64,
                           MemoryKind kind = MemoryKind::kDevice) override;
  Status deallocate(void* ptr) override;
  Status copy(void* dst, const void* src, size_t bytes, CopyKind kind,
              Stream* stream = nullptr) override;
  // Patterns of 1, 2, 4 or 8 bytes; `bytes` a multiple of the pattern size and `dst` aligned to
  // it.
  Status fill(void* dst, size_t bytes, const void* pattern, size_t pattern_size,
              Stream* stream = nullptr) override;
  MemoryStats memoryStats() const override;
  // Both ends are memory CUDA knows (device, pinned or mapped host memory, managed memory);
  // pageable host memory is not, even where HMM would let a kernel read it.
  bool kernelsCanAccess(const void* ptr, size_t bytes) const override;
  Status trim() override;

  // PTX (text, NUL-terminated or not), CUBIN or fatbin. Every entry point is resolved at load.
  StatusOr<Executable*> load(const ExecutableSpec& spec) override;
  Status launch(Executable* executable, uint32_t entry, const LaunchConfig& config,
                const KernelArgs& args, Stream* stream = nullptr) override;

  StatusOr<std::unique_ptr<Stream>> createStream() override;
  Status synchronize(Stream* stream = nullptr) override;
  StatusOr<std::shared_ptr<Semaphore>> createSemaphore(uint64_t initial_value = 0) override;
  Status queueSignal(Stream* stream, Semaphore* semaphore, uint64_t value) override;
  Status queueWait(Stream* stream, Semaphore* semaphore, uint64_t value) override;
  // `native` is a CUstream of this driver's context; the wrapper never destroys it.
  StatusOr<std::unique_ptr<Stream>> wrapNativeStream(void* native) override;
  void* queryService(ServiceId id) override {
    return id == ServiceId::kCudaQueue ? static_cast<CudaQueueService*>(this) : nullptr;
  }

  // ---- CUDA specifics (opaque handles: CUcontext, CUstream)
  int deviceOrdinal() const;
  int computeCapability() const;  // e.g. 80, 90
  void* contextHandle() const;
  // The CUstream behind a stream of this driver (nullptr: the default stream).
  StatusOr<void*> streamHandle(Stream* stream);
  // Allocation whose cached reuse is ordered on `stream`.
  StatusOr<void*> allocateOn(size_t bytes, Stream* stream,
                             MemoryKind kind = MemoryKind::kDevice) override;
  // `ptr` is also used by work on `stream`: freeing it waits for that work before reuse.
  Status recordUse(void* ptr, Stream* stream) override;
  // Queues work that talks to CUDA itself (e.g. a cuBLAS call) on `stream` in order: `issue`
  // runs with the CUstream now, or later, after the semaphore waits queued before it, on another
  // thread, so it must own what it uses. Its error is returned now or by synchronize().
  Status enqueue(Stream* stream, std::function<Status(void* cu_stream)> issue) override;
  // True for device memory, false for host memory (pageable, pinned or mapped).
  StatusOr<bool> isDevicePointer(const void* ptr) const override;
  // Operations held back on `stream` behind unsatisfied semaphore waits (0 when everything was
  // handed to the device; a wait on a recorded device signal is never held).
  StatusOr<size_t> heldBackCount(Stream* stream);
  // Makes the driver's context current on the calling thread.
  Status makeCurrent() const override;

 private:
  explicit CudaDriver(std::shared_ptr<CudaDevice> device);
  Status init();
  StatusOr<CudaStream*> resolveStream(Stream* stream);

  const std::shared_ptr<CudaDevice> device_;
  std::shared_ptr<SyncResources> sync_;
  std::shared_ptr<PendingQueueActions> queue_;
  std::unique_ptr<CudaMemoryBackend> memory_;
  std::unique_ptr<StreamOrderedAllocator> allocator_;
  std::unique_ptr<CudaStream> default_stream_;
  std::shared_ptr<KernelTimes> kernel_times_;  // shared with launches held back on streams
  std::mutex executables_mutex_;
  std::unordered_map<std::string, std::unique_ptr<CudaExecutable>> executables_;
};

// A factory for Context::setDriverFactory with `options`.
DriverFactory cudaDriverFactory(CudaDriverOptions options = {});

// Every CUDA device (for device URIs): ordinal, UUID, name, "sm_XY". Unavailable without a
// driver library.
StatusOr<std::vector<DeviceInfo>> listCudaDevices();

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_CUDA_DRIVER_H_
