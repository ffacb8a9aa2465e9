// registerKernels for device "hsa": names every kernel source with registrations for it, so a
// static link keeps them. A new op's hsa file adds its anchor here.
#include "ral/registration.h"

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_module_code_hsa);

namespace ral {

Status registerHsaKernels() {
  RAL_KEEP_LINKED(kernels_module_code_hsa);
  return internal::registrationHealth();
}

}  // namespace ral
