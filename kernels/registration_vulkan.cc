// registerKernels for device "vulkan": registers the ops written once for every device
// (kernels/generic_ops.h) and names every other kernel source with registrations for it, so a
// static link keeps them. A new op's vulkan file adds its anchor here.
#include "kernels/generic_ops.h"
#include "ral/registration.h"

RAL_REGISTER_GENERIC_OPS(vulkan, "vulkan")

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_rng_vulkan);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_topk_sort_vulkan);

namespace ral {

Status registerVulkanKernels() {
  RAL_KEEP_LINKED(kernels_gemm_vulkan);
  RAL_KEEP_LINKED(kernels_rng_vulkan);
  RAL_KEEP_LINKED(kernels_topk_sort_vulkan);
  return internal::registrationHealth();
}

}  // namespace ral
