// Which CUDA executables a device of a given compute capability runs, and how well: the rule
// CudaDriver::targetRank applies (a pure function, so it is tested without a GPU).
#ifndef RAL_DRIVERS_CUDA_CUDA_TARGET_H_
#define RAL_DRIVERS_CUDA_CUDA_TARGET_H_

#include <string_view>

#include "ral/driver.h"

namespace ral::cuda {

// For a device of compute capability `cc` (e.g. 80 for sm_80): an empty target runs anywhere
// (rank 0); PTX for "sm_XY" runs when XY <= cc (the driver compiles it for the device), rank XY,
// so the newest PTX the device takes wins; an architecture-specific "sm_XYa" and a CUBIN run only
// when XY == cc. -1: it does not run (or the target is not "sm_" and a number).
int cudaTargetRank(ExecutableFormat format, std::string_view target, int cc);

}  // namespace ral::cuda

#endif  // RAL_DRIVERS_CUDA_CUDA_TARGET_H_
