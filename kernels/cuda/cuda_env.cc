#include "kernels/cuda/cuda_env.h"

namespace ral::kernels::cuda {

StatusOr<CudaEnv> cudaEnv(ExecutionContext* ctx) {
  RAL_ASSIGN_OR_RETURN(KernelEnv env, kernelEnv(ctx, DeviceKind::kCuda));
  RAL_ASSIGN_OR_RETURN(CudaQueueService * queue,
                       requireService<CudaQueueService>(env.driver, "a CUDA queue"));
  return CudaEnv{env.driver, queue, env.stream};
}

}  // namespace ral::kernels::cuda
