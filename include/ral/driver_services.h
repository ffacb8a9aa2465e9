// Device-specific services a Driver may offer to kernels, looked up with Driver::service<T>():
// the few things a kernel needs that only one kind of device has. Each is an interface the
// driver implements (usually by inheriting it); the driver owns it, and it lives as long as the
// driver. Thread-safety is the driver's: every call here may be made from any thread.
#ifndef RAL_DRIVER_SERVICES_H_
#define RAL_DRIVER_SERVICES_H_

#include <cstddef>
#include <cstdint>
#include <functional>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral {

// CPU drivers: the size of the pool their host launches run on, so libraries with their own
// threads (OpenBLAS) can match it.
class HostThreadsService {
 public:
  static constexpr ServiceId kServiceId = ServiceId::kHostThreads;
  virtual int threadCount() const = 0;

 protected:
  ~HostThreadsService() = default;
};

// CUDA drivers: stream-ordered memory and work that talks to CUDA itself (cuBLAS).
class CudaQueueService {
 public:
  static constexpr ServiceId kServiceId = ServiceId::kCudaQueue;
  // Makes the driver's CUDA context current on the calling thread.
  virtual Status makeCurrent() const = 0;
  // Allocation whose cached reuse is ordered on `stream`.
  virtual StatusOr<void*> allocateOn(size_t bytes, Stream* stream,
                                     MemoryKind kind = MemoryKind::kDevice) = 0;
  // `ptr` is also used by work on `stream`: freeing it waits for that work before reuse.
  virtual Status recordUse(void* ptr, Stream* stream) = 0;
  // Queues `issue` on `stream` in order; it gets the CUstream, now or later on another thread
  // (after semaphore waits queued before it), so it must own what it uses.
  virtual Status enqueue(Stream* stream, std::function<Status(void* cu_stream)> issue) = 0;
  // True for device memory, false for host memory (pageable, pinned or mapped).
  virtual StatusOr<bool> isDevicePointer(const void* ptr) const = 0;

 protected:
  ~CudaQueueService() = default;
};

// Vulkan drivers: how kernel pointers become storage-buffer bindings.
class BufferBindingService {
 public:
  static constexpr ServiceId kServiceId = ServiceId::kBufferBinding;
  // The byte offset of `ptr` in its allocation; an error when [ptr, ptr + bytes) is not inside
  // one allocation of this driver.
  virtual StatusOr<uint64_t> allocationOffset(const void* ptr, size_t bytes) const = 0;
  // Bindings start at multiples of this many bytes of their allocation.
  virtual size_t bindingAlignment() const = 0;
  // The most bytes one binding may span.
  virtual uint64_t maxBindingRange() const = 0;

 protected:
  ~BufferBindingService() = default;
};

}  // namespace ral

#endif  // RAL_DRIVER_SERVICES_H_
