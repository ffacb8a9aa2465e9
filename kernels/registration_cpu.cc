// registerKernels for device "cpu": registers the ops written once for every device
// (kernels/generic_ops.h) and names every other kernel source with registrations for it, so a
// static link keeps them. A new op's cpu file adds its anchor here.
#include "kernels/generic_ops.h"
#include "ral/registration.h"

RAL_REGISTER_GENERIC_OPS(cpu, "cpu")

#ifdef RAL_ENABLE_DNNL
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_block_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_conv_scaled_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_qconv_cpu);
#endif
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_rng_cpu);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_topk_sort_cpu);

namespace ral {

Status registerCpuKernels() {
#ifdef RAL_ENABLE_DNNL
  RAL_KEEP_LINKED(kernels_conv_block_cpu);
  RAL_KEEP_LINKED(kernels_conv_cpu);
  RAL_KEEP_LINKED(kernels_conv_scaled_cpu);
  RAL_KEEP_LINKED(kernels_qconv_cpu);
#endif
  RAL_KEEP_LINKED(kernels_gemm_cpu);
  RAL_KEEP_LINKED(kernels_rng_cpu);
  RAL_KEEP_LINKED(kernels_topk_sort_cpu);
  return internal::registrationHealth();
}

}  // namespace ral
