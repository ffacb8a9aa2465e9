// Trace spans of driver operations (<ral/trace.h>, category "driver"): the host side of a copy,
// fill, stream synchronization or semaphore wait, named after the operation ("copy", "fill",
// "synchronize", "semaphore_wait") with the device and what it moved or waited for in its args.
// Every driver opens one at the top of those calls, so a trace shows them alike for every device.
// When no trace records, a span costs one relaxed atomic load. Header-only; thread-safe.
#ifndef RAL_DRIVERS_COMMON_DRIVER_TRACE_H_
#define RAL_DRIVERS_COMMON_DRIVER_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "ral/driver.h"
#include "ral/trace.h"

namespace ral::drivers {

inline const char* copyKindName(CopyKind kind) {
  static_assert(static_cast<int>(CopyKind::kHostToDevice) == 0 &&
                    static_cast<int>(CopyKind::kHostToHost) == 3,
                "the names follow CopyKind's order");
  static constexpr const char* kNames[] = {"host_to_device", "device_to_host", "device_to_device",
                                           "host_to_host"};
  const auto i = static_cast<size_t>(kind);
  return i < 4 ? kNames[i] : "unknown";
}

// A copy (`kind` given) or fill of `bytes` on `device`.
inline trace::Scope transferSpan(const char* op, DeviceKind device, uint64_t bytes,
                                 const char* kind = nullptr) {
  return trace::Scope("driver", op, [=] {
    std::string args = "\"device\": \"" + std::string(deviceKindName(device)) +
                       "\", \"bytes\": " + std::to_string(bytes);
    if (kind != nullptr) args += ", \"kind\": \"" + std::string(kind) + "\"";
    return args;
  });
}

// A stream synchronization (value 0) or a semaphore wait for `value` on `device`.
inline trace::Scope waitSpan(const char* op, DeviceKind device, uint64_t value = 0) {
  return trace::Scope("driver", op, [=] {
    std::string args = "\"device\": \"" + std::string(deviceKindName(device)) + "\"";
    if (value != 0) args += ", \"value\": " + std::to_string(value);
    return args;
  });
}

}  // namespace ral::drivers

#endif  // RAL_DRIVERS_COMMON_DRIVER_TRACE_H_
