// registerKernels for device "cuda": names every kernel source with registrations for it, so
// a static link keeps them. A new op's cuda file adds its anchor here.
#include "ral/registration.h"

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_memory_ops_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_module_code_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_rng_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_topk_sort_cuda);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_transpose_cuda);

namespace ral {

Status registerCudaKernels() {
  RAL_KEEP_LINKED(kernels_conv_cuda);
  RAL_KEEP_LINKED(kernels_gemm_cuda);
  RAL_KEEP_LINKED(kernels_memory_ops_cuda);
  RAL_KEEP_LINKED(kernels_module_code_cuda);
  RAL_KEEP_LINKED(kernels_rng_cuda);
  RAL_KEEP_LINKED(kernels_topk_sort_cuda);
  RAL_KEEP_LINKED(kernels_transpose_cuda);
  return internal::registrationHealth();
}

}  // namespace ral
