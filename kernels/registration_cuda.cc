// registerKernels for device "cuda": registers the ops written once for every device
// (kernels/generic_ops.h), the GPU library's ops (kernels/gpu_library_ops.h), and names every other
// kernel source with registrations for it, so a static link keeps them. A new op's cuda file adds
// its anchor here.
#include "kernels/collective/nccl_staging.h"  // before generic_ops.h: CUDA collectives use NCCL
#include "kernels/generic_ops.h"
#include "kernels/gpu_library_ops.h"
#include "ral/registration.h"

RAL_REGISTER_GENERIC_OPS(cuda, "cuda")
RAL_REGISTER_GPU_LIBRARY_OPS(cuda, "cuda")

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_cuda);

namespace ral {

Status registerCudaKernels() {
  RAL_KEEP_LINKED(kernels_conv_cuda);
  RAL_KEEP_LINKED(kernels_gemm_cuda);
  return internal::registrationHealth();
}

}  // namespace ral
