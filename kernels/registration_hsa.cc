// registerKernels for device "hsa": registers the ops written once for every device
// (kernels/generic_ops.h), the GPU library's ops (kernels/gpu_library_ops.h), and names every other
// kernel source with registrations for it, so a static link keeps them. A new op's hsa file adds
// its anchor here. The GPU library's ops (kernels/gpu) say at run time when the build has no code
// objects (RAL_ENABLE_MLIR=OFF).
#include "kernels/generic_ops.h"
#include "kernels/gpu_library_ops.h"
#include "ral/registration.h"

RAL_REGISTER_GENERIC_OPS(hsa, "hsa")
RAL_REGISTER_GPU_LIBRARY_OPS(hsa, "hsa")

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_hsa);

namespace ral {

Status registerHsaKernels() {
  RAL_KEEP_LINKED(kernels_gemm_hsa);
  return internal::registrationHealth();
}

}  // namespace ral
