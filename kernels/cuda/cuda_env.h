// What the CUDA kernels that talk to CUDA libraries (cuBLAS, cuDNN) share: the context's CUDA
// driver (through the Driver interface and its CudaQueueService), the execution's stream, and
// stream-ordered scratch memory. The GPU library's kernels use kernels/gpu/gpu_library.h.
// Thread-safe.
//
// The stream is the execution's stream (ExecutionContext::stream(), a Stream of the CUDA driver
// set by the host) or, when unset, the driver's default stream.
#ifndef RAL_KERNELS_CUDA_CUDA_ENV_H_
#define RAL_KERNELS_CUDA_CUDA_ENV_H_

#include <cstddef>

#include "kernels/common/devices.h"
#include "ral/driver_services.h"
#include "ral/execution_context.h"
#include "ral/status.h"

namespace ral::kernels::cuda {

struct CudaEnv {
  Driver* driver = nullptr;
  CudaQueueService* queue = nullptr;  // the same driver's CUDA specifics
  Stream* stream = nullptr;
};

// The CUDA driver and stream of this execution.
StatusOr<CudaEnv> cudaEnv(ExecutionContext* ctx);

// Device memory for one kernel's temporaries; freed on scope exit, which is safe at once because
// the allocator reuses it only for work queued later on the same stream.
class DeviceScratch {
 public:
  DeviceScratch() = default;
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  Status allocate(const CudaEnv& env, size_t bytes);
  void* get() const { return ptr_; }

 private:
  Driver* driver_ = nullptr;
  void* ptr_ = nullptr;
};

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_CUDA_CUDA_ENV_H_
