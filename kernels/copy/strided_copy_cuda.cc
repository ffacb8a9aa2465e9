// readIndices for device "cuda" (kernels/copy/strided_copy.h); the copy and fill primitives are
// the GPU library's (strided_copy_gpu.cc).
#include "kernels/copy/strided_copy.h"
#include "ral/driver_services.h"

namespace ral::kernels {

Status readIndices(cuda::Tag, const KernelEnv& kenv, const int64_t* src, int64_t stride, int n,
                   int64_t* out) {
  RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                       requireService<CudaQueueService>(kenv.driver, "a CUDA queue"));
  RAL_ASSIGN_OR_RETURN(const bool is_device, queue->isDevicePointer(src));
  if (!is_device) {
    for (int d = 0; d < n; ++d) out[d] = src[d * stride];
    return Status();
  }
  for (int d = 0; d < n; ++d)
    RAL_RETURN_IF_ERROR(kenv.driver->copy(&out[d], src + d * stride, sizeof(int64_t),
                                          CopyKind::kDeviceToHost, kenv.stream));
  return kenv.driver->synchronize(kenv.stream);
}

}  // namespace ral::kernels
