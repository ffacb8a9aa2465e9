// What the CUDA kernels that talk to CUDA libraries (cuBLAS, cuDNN) share: the context's CUDA
// driver (through the Driver interface and its CudaQueueService) and the execution's stream;
// their temporaries are kernels/common/device_scratch.h. The GPU library's kernels use
// kernels/gpu/gpu_library.h. Thread-safe.
//
// The stream is the execution's stream (ExecutionContext::stream(), a Stream of the CUDA driver
// set by the host) or, when unset, the driver's default stream.
#ifndef RAL_KERNELS_CUDA_CUDA_ENV_H_
#define RAL_KERNELS_CUDA_CUDA_ENV_H_

#include "kernels/common/device_scratch.h"
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

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_CUDA_CUDA_ENV_H_
