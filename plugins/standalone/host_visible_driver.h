// A CPU driver whose memory comes from another device's host-visible allocations (pinned and
// mapped into the device's address space). Everything else runs on the built-in CPU driver.
// ral-run installs it for --device=cuda, vulkan (or another GPU), so every buffer the standalone
// context hands to a module (copied inputs, ral_alloc, outputs) is reachable by that device's
// kernels.
#ifndef RAL_PLUGINS_STANDALONE_HOST_VISIBLE_DRIVER_H_
#define RAL_PLUGINS_STANDALONE_HOST_VISIBLE_DRIVER_H_

#include "ral/driver.h"

namespace ral::standalone {

// A factory for Context::setDriverFactory(DeviceKind::kCpu, ...). The memory comes from the
// Context's own `device` driver, created on the first allocation (an unavailable device fails
// that allocation with the driver's error; ral-run checks availability first). Fails at once
// when no `device` driver was built in.
DriverFactory hostVisibleCpuDriverFactory(DeviceKind device);

}  // namespace ral::standalone

#endif  // RAL_PLUGINS_STANDALONE_HOST_VISIBLE_DRIVER_H_
