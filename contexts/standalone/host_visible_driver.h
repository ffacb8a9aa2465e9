// A CPU driver whose memory comes from another device's host-visible allocations (pinned and
// mapped into the device's address space). Everything else runs on the built-in CPU driver.
// The standalone context installs it for a module whose code runs on a device (StandaloneContext
// ::device()), so every buffer it hands to the module (inputs copied at the boundary, ral_alloc,
// outputs) is reachable by that device's kernels and readable by the host once it synchronized.
#ifndef RAL_CONTEXTS_STANDALONE_HOST_VISIBLE_DRIVER_H_
#define RAL_CONTEXTS_STANDALONE_HOST_VISIBLE_DRIVER_H_

#include "ral/driver.h"

namespace ral::standalone {

// A factory for Context::setDriverFactory(DeviceKind::kCpu, ...). The memory comes from the
// Context's own `device` driver, created on the first allocation (an unavailable device fails
// that allocation with the driver's error; ral-run checks availability first). Fails at once
// when no `device` driver was built in.
DriverFactory hostVisibleCpuDriverFactory(DeviceKind device);

}  // namespace ral::standalone

#endif  // RAL_CONTEXTS_STANDALONE_HOST_VISIBLE_DRIVER_H_
