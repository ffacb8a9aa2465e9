// registerKernels for device "cpu": names every kernel source with registrations for it, so
// a static link keeps them. A new op's cpu file adds its anchor here.
#include "ral/registration.h"

#ifdef RAL_ENABLE_DNNL
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_block_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_scaled_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_qconv_cpu);
#endif
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_memory_ops_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_module_code_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_rng_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_topk_sort_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_transpose_cpu);

namespace ral {

Status registerCpuKernels() {
#ifdef RAL_ENABLE_DNNL
  RAL_KEEP_LINKED(kernels_conv_block_cpu);
  RAL_KEEP_LINKED(kernels_conv_cpu);
  RAL_KEEP_LINKED(kernels_conv_scaled_cpu);
  RAL_KEEP_LINKED(kernels_qconv_cpu);
#endif
  RAL_KEEP_LINKED(kernels_gemm_cpu);
  RAL_KEEP_LINKED(kernels_memory_ops_cpu);
  RAL_KEEP_LINKED(kernels_module_code_cpu);
  RAL_KEEP_LINKED(kernels_rng_cpu);
  RAL_KEEP_LINKED(kernels_topk_sort_cpu);
  RAL_KEEP_LINKED(kernels_transpose_cpu);
  return internal::registrationHealth();
}

}  // namespace ral
