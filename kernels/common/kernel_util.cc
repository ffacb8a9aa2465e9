// See kernel_util.h.
#include "kernels/common/kernel_util.h"

namespace ral::kernels {

Status checkDeviceAccess(const Driver& driver, std::pair<uintptr_t, uintptr_t> span,
                         const char* kernel, const char* what) {
  const auto [lo, hi] = span;
  if (lo == hi || driver.kernelsCanAccess(reinterpret_cast<const void*>(lo), hi - lo))
    return Status();
  return invalidArgument(kernel, ": the ", what, " [", reinterpret_cast<const void*>(lo), ", +",
                         hi - lo, " bytes) is not memory the ", deviceKindName(driver.kind()),
                         " device can access (host memory or another device's: allocate it with "
                         "the ", deviceKindName(driver.kind()), " driver)");
}

}  // namespace ral::kernels
