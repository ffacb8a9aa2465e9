// registerKernels for device "hsa": names every kernel source with registrations for it, so a
// static link keeps them. A new op's hsa file adds its anchor here. The library kernels (GEMM,
// RNG, copies) exist only when the build compiled their code objects (RAL_ENABLE_MLIR).
#include "ral/registration.h"

RAL_DECLARE_REGISTRATION_ANCHOR(kernels_module_code_hsa);
#ifdef RAL_HSA_LIBRARY_KERNELS
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_gemm_hsa);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_memory_ops_hsa);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_rng_hsa);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_topk_sort_hsa);
RAL_DECLARE_REGISTRATION_ANCHOR(kernels_transpose_hsa);
#endif

namespace ral {

Status registerHsaKernels() {
  RAL_KEEP_LINKED(kernels_module_code_hsa);
#ifdef RAL_HSA_LIBRARY_KERNELS
  RAL_KEEP_LINKED(kernels_gemm_hsa);
  RAL_KEEP_LINKED(kernels_memory_ops_hsa);
  RAL_KEEP_LINKED(kernels_rng_hsa);
  RAL_KEEP_LINKED(kernels_topk_sort_hsa);
  RAL_KEEP_LINKED(kernels_transpose_hsa);
#endif
  return internal::registrationHealth();
}

}  // namespace ral
