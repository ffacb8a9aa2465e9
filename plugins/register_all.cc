// registerAll(): every component built into this library (see ral/registration.h). Lives at the
// top layer because it names components of every layer below.
#include "ral/registration.h"

namespace ral {

Status registerAll() {
  for (Status (*component)() : {
         &registerHostApi, &registerCpuDriver, &registerCpuKernels,
#if RAL_WITH_VULKAN
             &registerVulkanDriver, &registerVulkanKernels,
#endif
#if RAL_WITH_CUDA
             &registerCudaDriver, &registerCudaKernels,
#endif
#if RAL_WITH_HSA
             &registerHsaDriver, &registerHsaKernels,
#endif
       }) {
    RAL_RETURN_IF_ERROR(component());
  }
  return Status();
}

}  // namespace ral
