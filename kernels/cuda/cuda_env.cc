#include "kernels/cuda/cuda_env.h"

namespace ral::kernels::cuda {

StatusOr<CudaEnv> cudaEnv(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCuda));
  RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                       requireService<CudaQueueService>(env.driver, "a CUDA queue"));
  return CudaEnv{env.driver, queue, env.stream};
}

DeviceScratch::~DeviceScratch() {
  if (ptr_ != nullptr) (void)driver_->deallocate(ptr_);
}

Status DeviceScratch::allocate(const CudaEnv& env, size_t bytes) {
  driver_ = env.driver;
  RAL_ASSIGN_OR_RETURN(ptr_, env.queue->allocateOn(bytes, env.stream));
  return Status();
}

}  // namespace ral::kernels::cuda
