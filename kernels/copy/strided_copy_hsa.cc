// readIndices for device "hsa" (kernels/copy/strided_copy.h); the copy and fill primitives are
// the GPU library's (strided_copy_gpu.cc).
#include "kernels/copy/strided_copy.h"

namespace ral::kernels {

// The HSA driver's copy finds each side's memory by its pools (kHostToHost only says neither side
// must be device memory): device memory, the driver's host memory and pageable host memory
// (locked for the copy) alike, so the indices are read the same way wherever they live.
Status readIndices(hsa::Tag, const KernelEnv& kenv, const int64_t* src, int64_t stride, int n,
                   int64_t* out) {
  for (int d = 0; d < n; ++d)
    RAL_RETURN_IF_ERROR(kenv.driver->copy(&out[d], src + d * stride, sizeof(int64_t),
                                          CopyKind::kHostToHost, kenv.stream));
  return kenv.driver->synchronize(kenv.stream);
}

}  // namespace ral::kernels
