// The device kernels' fatbin (PTX + SASS for sm_80 and sm_90), built by nvcc and embedded in
// libral.so.
#ifndef RAL_KERNELS_CUDA_EMBEDDED_FATBIN_H_
#define RAL_KERNELS_CUDA_EMBEDDED_FATBIN_H_

#include <cstddef>

namespace ral::kernels::cuda {

const void* embeddedFatbin();
size_t embeddedFatbinSize();
const char* embeddedFatbinMd5();

}  // namespace ral::kernels::cuda

#endif  // RAL_KERNELS_CUDA_EMBEDDED_FATBIN_H_
