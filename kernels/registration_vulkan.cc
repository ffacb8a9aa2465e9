// registerKernels for device "vulkan": names every kernel source with registrations for it, so
// a static link keeps them. A new op's vulkan file adds its anchor here.
#include "ral/registration.h"

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_memory_ops_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_module_code_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_rng_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_topk_sort_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_transpose_vulkan);

namespace ral {

Status registerVulkanKernels() {
  RAL_KEEP_LINKED(kernels_gemm_vulkan);
  RAL_KEEP_LINKED(kernels_memory_ops_vulkan);
  RAL_KEEP_LINKED(kernels_module_code_vulkan);
  RAL_KEEP_LINKED(kernels_rng_vulkan);
  RAL_KEEP_LINKED(kernels_topk_sort_vulkan);
  RAL_KEEP_LINKED(kernels_transpose_vulkan);
  return internal::registrationHealth();
}

}  // namespace ral
