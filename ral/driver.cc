#include "ral/driver.h"

#include <cctype>
#include <mutex>
#include <string>

namespace ral {

Stream::~Stream() = default;
Executable::~Executable() = default;
Semaphore::~Semaphore() = default;
Driver::~Driver() = default;

StatusOr<std::unique_ptr<Stream>> Driver::wrapNativeStream(void*) {
  return unsupported("the ", deviceKindName(kind()), " driver (", deviceName(),
                     ") cannot wrap a native stream");
}

void* Driver::queryService(ServiceId) { return nullptr; }

bool Driver::kernelsCanAccess(const void*, size_t) const { return true; }

int Driver::targetRank(ExecutableFormat, std::string_view target) const {
  return target.empty() ? 0 : -1;
}

std::string_view deviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kCuda:
      return "cuda";
    case DeviceKind::kVulkan:
      return "vulkan";
    case DeviceKind::kHsa:
      return "hsa";
  }
  return "unknown";
}

StatusOr<DeviceKind> deviceKindFromName(std::string_view name) {
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int i = 0; i < kNumDeviceKinds; ++i) {
    const auto kind = static_cast<DeviceKind>(i);
    if (deviceKindName(kind) == lower) return kind;
  }
  if (lower == "gpu") return DeviceKind::kCuda;
  return invalidArgument("unknown device '", name, "' (expected cpu, cuda, vulkan or hsa)");
}

std::string_view executableFormatName(ExecutableFormat format) {
  switch (format) {
    case ExecutableFormat::kHostFunction:
      return "host";
    case ExecutableFormat::kPtx:
      return "ptx";
    case ExecutableFormat::kCubin:
      return "cubin";
    case ExecutableFormat::kFatbin:
      return "fatbin";
    case ExecutableFormat::kSpirv:
      return "spirv";
    case ExecutableFormat::kHsaco:
      return "hsaco";
  }
  return "unknown";
}

StatusOr<uint32_t> Executable::entryIndex(std::string_view entry) const {
  const auto& entries = spec().entries;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].name == entry) return static_cast<uint32_t>(i);
  return notFound("executable '", spec().name, "' has no entry point '", entry, "'");
}

namespace {
struct FactoryTable {
  std::mutex mutex;
  DriverFactory factories[kNumDeviceKinds];
};
FactoryTable& factoryTable() {
  static FactoryTable* table = new FactoryTable();
  return *table;
}
}  // namespace

Status registerDriverFactory(DeviceKind kind, DriverFactory factory) {
  auto& table = factoryTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto& slot = table.factories[static_cast<int>(kind)];
  if (slot) return alreadyExists("a driver for '", deviceKindName(kind), "' is already registered");
  slot = std::move(factory);
  return Status();
}

StatusOr<DriverFactory> defaultDriverFactory(DeviceKind kind) {
  auto& table = factoryTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  const auto& slot = table.factories[static_cast<int>(kind)];
  if (!slot)
    return unavailable("no '", deviceKindName(kind),
                       "' driver was built into this RAL library (enable it at configure time)");
  return slot;
}

namespace internal {
DriverRegistrar::DriverRegistrar(DeviceKind kind, DriverFactory factory,
                                 DeviceEnumerator enumerator) {
  (void)registerDriverFactory(kind, std::move(factory));
  (void)registerDeviceEnumerator(kind, std::move(enumerator));
}
}  // namespace internal

}  // namespace ral
