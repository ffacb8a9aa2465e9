// Device URIs: the one way every tool and host names a device, for every driver.
//
//   cpu                 the kind alone: the driver's default device ($RAL_<KIND>_DEVICE, else 0)
//   cuda:1  hsa://1     an ordinal among the devices the driver enumerates (after the runtime's
//                       own visibility filters: CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES)
//   hsa://GPU-<hex>     a stable UUID, as the runtime reports it (case-insensitive; the "GPU-"
//   cuda://GPU-<hex>    prefix may be left out; dashes inside the hex are ignored)
//   vulkan://name=llvmpipe
//                       the first device whose name contains the text (case-insensitive)
//
// parseDeviceUri only checks the grammar; resolveDevice matches the URI against the devices the
// driver's enumerator reports and, when nothing matches, returns NotFound listing them. Drivers
// register their enumerator with their factory (RAL_REGISTER_DRIVER, ral/driver.h).
// Everything here is thread-safe.
#ifndef RAL_DEVICE_URI_H_
#define RAL_DEVICE_URI_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "ral/driver.h"
#include "ral/status.h"

namespace ral {

// "cuda:0  GPU-8f3a...  NVIDIA H100 (sm_90)": one line for lists in error messages.
std::string describeDevice(const DeviceInfo& device);

struct DeviceUri {
  enum class Selector : uint8_t { kDefault, kOrdinal, kUuid, kName };
  DeviceKind kind = DeviceKind::kCpu;
  Selector selector = Selector::kDefault;
  int ordinal = -1;  // kOrdinal
  std::string uuid;  // kUuid: lower-case hex digits only, without "GPU-" or dashes
  std::string name;  // kName
  std::string text;  // as the user wrote it, for messages
};

// InvalidArgument, quoting `text` and the grammar, when it is not a device URI.
StatusOr<DeviceUri> parseDeviceUri(std::string_view text);

// Unavailable when no driver of `kind` was built in, else what its enumerator returns
// (RAL_REGISTER_DRIVER registers it with the driver's factory).
StatusOr<std::vector<DeviceInfo>> enumerateDevices(DeviceKind kind);

// The device `uri` selects (kDefault: the first one listed). NotFound, listing every device of
// the kind, when nothing matches.
StatusOr<DeviceInfo> resolveDevice(const DeviceUri& uri);
// parseDeviceUri then resolveDevice.
StatusOr<DeviceInfo> resolveDevice(std::string_view text);

}  // namespace ral

#endif  // RAL_DEVICE_URI_H_
